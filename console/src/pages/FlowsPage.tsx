import { useState, type FormEvent } from 'react';
import { api, call, enc } from '../api';
import { go, href } from '../router';
import { ErrorLine, Section, useAction, useLoad } from '../ui';
import { emptyDefinition } from '../flows/types';

interface FlowSummary {
  id: string;
  name: string;
  accessLevel: string;
  latestVersion: number;
  blueprintId: string;
  updatedAt: string;
}
interface RunSummary {
  id: string;
  status: string;
  createdAt: string;
}

/** An account's flows with their last runs as traffic lights; a new flow, or one pasted as Turtle. */
export default function FlowsPage({ account }: { account: string }) {
  const flows = useLoad(async () => {
    const list = await api<FlowSummary[]>('GET', `/flows/blueprints/${enc(account)}`);
    const runs = await Promise.all(
      list.map((f) => api<RunSummary[]>('GET', `/flows/runs?blueprintId=${enc(f.blueprintId)}&limit=5`).catch(() => [] as RunSummary[])),
    );
    return list.map((f, i) => ({ ...f, runs: runs[i] ?? [] }));
  }, [account]);
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [turtle, setTurtle] = useState('');
  const [create, createError, creating] = useAction();
  const [paste, pasteError, pasting] = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create(async () => {
      const made = await api<{ id: string }>('POST', `/flows/blueprints/${enc(account)}`, { body: emptyDefinition(id, name || id) });
      go('flows', account, made.id);
    });
  };
  return (
    <>
      <h1>Flows of {account}</h1>
      <Section title="Flows">
        <ErrorLine error={flows.error} />
        {flows.data && flows.data.length === 0 ? <p>No flows yet.</p> : null}
        <table>
          <thead>
            <tr>
              <th>Flow</th>
              <th>Version</th>
              <th>Last runs (newest first)</th>
            </tr>
          </thead>
          <tbody>
            {(flows.data ?? []).map((f) => (
              <tr key={f.id}>
                <td>
                  <a href={href('flows', account, f.id)}>{f.name}</a> <span className="hint">({f.id})</span>
                </td>
                <td>{f.latestVersion}</td>
                <td>
                  {f.runs.length === 0 ? <span className="hint">never run</span> : null}
                  {f.runs.map((r) => (
                    <span key={r.id} className={`lamp ${r.status}`} role="img" aria-label={`Run ${r.id}: ${r.status}`} title={`${r.status} · ${new Date(r.createdAt).toLocaleString()}`} />
                  ))}{' '}
                  <a href={href('runs', account, f.id)}>Runs</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="New flow">
        <form onSubmit={submit} className="row">
          <label>
            Flow ID
            <input value={id} onChange={(e) => setId(e.target.value)} required />
          </label>
          <label>
            Flow name
            <input value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <button type="submit" disabled={creating}>
            Create flow
          </button>
        </form>
        <ErrorLine error={createError} />
      </Section>
      <Section title="Paste a flow as Turtle">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void paste(async () => {
              const res = await call('POST', `/flows/blueprints/${enc(account)}`, { headers: { 'content-type': 'text/turtle' }, raw: turtle });
              const made = (await res.json()) as { id: string };
              go('flows', account, made.id);
            });
          }}
        >
          <label>
            Flow in Turtle (from “Copy as Turtle”)
            <textarea className="editor" rows={8} value={turtle} onChange={(e) => setTurtle(e.target.value)} required />
          </label>
          <button type="submit" disabled={pasting}>
            Paste as new flow
          </button>
        </form>
        <ErrorLine error={pasteError} />
      </Section>
    </>
  );
}
