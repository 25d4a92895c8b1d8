export default function RunsPage(_props: Record<string, unknown>) {
  return <h1>RunsPage</h1>;
}
