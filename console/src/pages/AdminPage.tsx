export default function AdminPage(_props: Record<string, unknown>) {
  return <h1>AdminPage</h1>;
}
