export default function FlowEditor(_props: Record<string, unknown>) {
  return <h1>FlowEditor</h1>;
}
