export default function FlowsPage(_props: Record<string, unknown>) {
  return <h1>FlowsPage</h1>;
}
