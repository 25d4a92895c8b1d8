import { useEffect, useState, type FormEvent } from 'react';
import { api, call, enc } from '../api';
import { href } from '../router';
import { DeleteButton, ErrorLine, Section, TableHead, useAction, useLoad } from '../ui';
import { Upload } from './Upload';

interface Graph {
  id: string;
  graphName: string;
  numberOfStatements: number;
}
interface Service {
  id: string;
  name: string;
  type: string;
  status: string;
  outOfSync: boolean;
  error?: string;
  numberOfLoadedStatements?: number;
}

const EXPORTS = [
  ['N-Quads (gzip)', 'download.nq.gz'],
  ['TriG', 'download.trig'],
  ['N-Triples', 'download.nt'],
  ['Turtle', 'download.ttl'],
] as const;

export function DatasetPage({ account, dataset }: { account: string; dataset: string }) {
  const base = `/datasets/${enc(account)}/${enc(dataset)}`;
  const info = useLoad(() => api<{ name: string; accessLevel: string; statements?: number; graphCount?: number; description?: string }>('GET', base), [base]);
  const graphs = useLoad(() => api<Graph[]>('GET', `${base}/graphs`), [base]);
  const services = useLoad(() => api<Service[]>('GET', `${base}/services`), [base]);
  const assets = useLoad(() => api<{ assetName: string; identifier: string; fileSize: number; versions: unknown[] }[]>('GET', `${base}/assets`), [base]);
  const [jobsKey, setJobsKey] = useState(0);
  const refresh = () => (info.reload(), graphs.reload(), services.reload());
  // Services starting or updating are polled until they settle.
  const settling = (services.data ?? []).some((s) => s.status === 'starting' || s.status === 'updating');
  useEffect(() => {
    if (!settling) return;
    const timer = setTimeout(services.reload, 1_000);
    return () => clearTimeout(timer);
  }, [settling, services.data, services.reload]);

  return (
    <>
      <h1>
        <a href={href('datasets', account)}>{account}</a> / {dataset}
      </h1>
      <ErrorLine error={info.error} />
      {info.data ? (
        <p>
          {info.data.accessLevel} · <span data-testid="statement-count">{info.data.statements ?? 0}</span> statements in {info.data.graphCount ?? 0} graphs ·{' '}
          <a href={href('query', account, dataset)}>Query this dataset</a>
        </p>
      ) : null}
      <Section title="Upload data">
        <Upload base={base} onImported={() => (refresh(), setJobsKey((k) => k + 1))} />
        <Jobs base={base} reloadKey={jobsKey} />
      </Section>
      <Section title="Assets">
        <Upload base={base} kind="asset" onImported={assets.reload} />
        <ErrorLine error={assets.error} />
        <ul>
          {(assets.data ?? []).map((a) => (
            <li key={a.identifier}>
              <a href={`${base}/assets/${enc(a.identifier)}`} download={a.assetName}>
                {a.assetName}
              </a>{' '}
              ({a.fileSize} bytes, {a.versions.length} {a.versions.length === 1 ? 'version' : 'versions'})
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Graphs">
        <ErrorLine error={graphs.error} />
        <GraphTable base={base} graphs={graphs.data ?? []} onChange={refresh} />
      </Section>
      <Section title="Export">
        <ul className="links">
          {EXPORTS.map(([label, file]) => (
            <li key={file}>
              <a href={`${base}/${file}`} download>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Browse a resource">
        <Describe base={base} />
      </Section>
      <Section title="Services">
        <ErrorLine error={services.error} />
        <Services base={base} services={services.data ?? []} onChange={services.reload} />
      </Section>
    </>
  );
}

function GraphTable({ base, graphs, onChange }: { base: string; graphs: Graph[]; onChange: () => void }) {
  const [run, error] = useAction();
  const [editing, setEditing] = useState<{ id: string; name: string }>();
  if (graphs.length === 0) return <p>No graphs yet: upload data above.</p>;
  return (
    <>
      <ErrorLine error={error} />
      <table>
        <TableHead columns={['Graph', 'Statements']} />
        <tbody>
          {graphs.map((g) => (
            <tr key={g.id}>
              <td>
                {editing?.id === g.id ? (
                  <form
                    className="row"
                    onSubmit={(e) => {
                      e.preventDefault();
                      void run(async () => {
                        await api('PATCH', `${base}/graphs/${enc(g.id)}`, { body: { graphName: editing.name } });
                        setEditing(undefined);
                        onChange();
                      });
                    }}
                  >
                    <label>
                      New name of {g.graphName}
                      <input value={editing.name} onChange={(e) => setEditing({ id: g.id, name: e.target.value })} />
                    </label>
                    <button type="submit">Save name</button>
                    <button type="button" onClick={() => setEditing(undefined)}>
                      Cancel
                    </button>
                  </form>
                ) : (
                  <code>{g.graphName}</code>
                )}
              </td>
              <td>{g.numberOfStatements}</td>
              <td className="actions">
                <button type="button" aria-label={`Rename graph ${g.graphName}`} onClick={() => setEditing({ id: g.id, name: g.graphName })}>
                  Rename
                </button>
                <DeleteButton what={`graph ${g.graphName}`} onConfirm={() => void run(async () => (await api('DELETE', `${base}/graphs/${enc(g.id)}`), onChange()))} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** One N-Triples line as subject, predicate, object (terms as written). */
const TRIPLE = /^(<[^>]*>|_:\S+)\s+(<[^>]*>)\s+(.*?)\s*\.\s*$/;

/** A linked-data browser for one resource: its description as a table; IRIs open their own description. */
function Describe({ base }: { base: string }) {
  const [resource, setResource] = useState('');
  const [triples, setTriples] = useState<string[][]>();
  const [run, error, busy] = useAction();
  const describe = (iri: string) =>
    void run(async () => {
      setResource(iri);
      const res = await call('GET', `${base}/describe?resource=${enc(iri)}`, { headers: { accept: 'application/n-triples' } });
      const lines = (await res.text()).split('\n').map((l) => TRIPLE.exec(l)).filter((m): m is RegExpExecArray => m !== null);
      setTriples(lines.map((m) => [m[1]!, m[2]!, m[3]!]));
    });
  const term = (t: string) =>
    t.startsWith('<') ? (
      <button type="button" className="link" onClick={() => describe(t.slice(1, -1))}>
        {t.slice(1, -1)}
      </button>
    ) : (
      <span>{t}</span>
    );
  return (
    <>
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          describe(resource);
        }}
        className="row"
      >
        <label>
          Resource IRI
          <input type="url" value={resource} onChange={(e) => setResource(e.target.value)} required placeholder="https://example.org/thing" />
        </label>
        <button type="submit" disabled={busy}>
          Describe
        </button>
      </form>
      <ErrorLine error={error} />
      {triples ? (
        triples.length === 0 ? (
          <p>Nothing is said about this resource.</p>
        ) : (
          <table data-testid="describe">
            <thead>
              <tr>
                <th>Subject</th>
                <th>Predicate</th>
                <th>Object</th>
              </tr>
            </thead>
            <tbody>
              {triples.map(([s, p, o], i) => (
                <tr key={i}>
                  <td>{term(s!)}</td>
                  <td>{term(p!)}</td>
                  <td>{term(o!)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </>
  );
}

/** The dataset's import jobs with their progress, polled while any of them goes on. */
function Jobs({ base, reloadKey }: { base: string; reloadKey: number }) {
  const jobs = useLoad(
    () => api<{ jobId: string; status: string; createdAt: string; indexingProgress?: number; numberOfStatements?: number; files: { fileName: string }[] }[]>('GET', `${base}/jobs`),
    [base, reloadKey],
  );
  const going = (jobs.data ?? []).some((j) => !['finished', 'error', 'canceled', 'created'].includes(j.status));
  useEffect(() => {
    if (!going) return;
    const timer = setTimeout(jobs.reload, 1_000);
    return () => clearTimeout(timer);
  }, [going, jobs.data, jobs.reload]);
  if (!jobs.data?.length) return <ErrorLine error={jobs.error} />;
  return (
    <table data-testid="jobs">
      <thead>
        <tr>
          <th>Job</th>
          <th>Files</th>
          <th>Status</th>
          <th>Statements</th>
        </tr>
      </thead>
      <tbody>
        {jobs.data.map((j) => (
          <tr key={j.jobId}>
            <td>{new Date(j.createdAt).toLocaleString()}</td>
            <td>{j.files.map((f) => f.fileName).join(', ')}</td>
            <td>
              {j.status}
              {j.status === 'indexing' && j.indexingProgress !== undefined ? (
                <progress max={1} value={j.indexingProgress} aria-label={`Import progress of ${j.files.map((f) => f.fileName).join(', ')}`} />
              ) : null}
            </td>
            <td>{j.numberOfStatements ?? 0}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Services({ base, services, onChange }: { base: string; services: Service[]; onChange: () => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState('virtuoso');
  const [run, error, busy] = useAction();
  const act = (s: Service, action: string) => run(async () => (await api('POST', `${base}/services/${enc(s.name)}`, { body: { [action]: true } }), onChange()));
  return (
    <>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => (await api('POST', `${base}/services`, { body: { name, type } }), setName(''), onChange()));
        }}
      >
        <label>
          Service name
          <input value={name} onChange={(e) => setName(e.target.value)} required />
        </label>
        <label>
          Type
          <select value={type} onChange={(e) => setType(e.target.value)}>
            <option value="virtuoso">virtuoso</option>
            <option value="jena">jena</option>
            <option value="elasticSearch">elasticSearch</option>
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Create service
        </button>
        <button type="button" onClick={onChange}>
          Refresh
        </button>
      </form>
      <ErrorLine error={error} />
      <table>
        <TableHead columns={['Service', 'Type', 'Status', 'In sync']} />
        <tbody>
          {services.map((s) => (
            <tr key={s.id}>
              <td>{s.name}</td>
              <td>{s.type}</td>
              <td>
                <span data-testid={`status-${s.name}`}>{s.status}</span>
                {s.error ? <span className="error"> {s.error}</span> : null}
              </td>
              <td data-testid={`sync-${s.name}`}>{s.outOfSync ? 'out of sync' : 'in sync'}</td>
              <td className="actions">
                {s.outOfSync ? (
                  <button type="button" onClick={() => void act(s, 'sync')} aria-label={`Sync service ${s.name}`}>
                    Sync
                  </button>
                ) : null}
                {s.status === 'stopped' ? (
                  <button type="button" onClick={() => void act(s, 'start')} aria-label={`Start service ${s.name}`}>
                    Start
                  </button>
                ) : (
                  <button type="button" onClick={() => void act(s, 'stop')} aria-label={`Stop service ${s.name}`}>
                    Stop
                  </button>
                )}
                <DeleteButton what={`service ${s.name}`} onConfirm={() => void run(async () => (await api('DELETE', `${base}/services/${enc(s.name)}`), onChange()))} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
