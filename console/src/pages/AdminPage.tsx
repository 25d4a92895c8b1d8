import { api } from '../api';
import { ErrorLine, useAction, useLoad } from '../ui';

/** The administrator's switches: flows on or off, and the SPARQL update task. */
export default function AdminPage() {
  const switches = useLoad(() => api<{ flowsEnabled: boolean; sparqlUpdateTaskEnabled: boolean }>('GET', '/admin/flows'), []);
  const [run, error] = useAction();
  const set = (patch: Record<string, boolean>) => run(async () => (await api('PATCH', '/admin/flows', { body: patch }), switches.reload()));
  return (
    <>
      <h1>Administration</h1>
      <ErrorLine error={switches.error ?? error} />
      {switches.data ? (
        <>
          <label className="inline">
            <input type="checkbox" checked={switches.data.flowsEnabled} onChange={(e) => void set({ flowsEnabled: e.target.checked })} />
            Flows enabled
          </label>
          <label className="inline">
            <input type="checkbox" checked={switches.data.sparqlUpdateTaskEnabled} onChange={(e) => void set({ sparqlUpdateTaskEnabled: e.target.checked })} />
            SPARQL update task enabled
          </label>
        </>
      ) : null}
    </>
  );
}
