import { useState } from 'react';
import { api, call, enc } from '../api';
import { go, href } from '../router';
import { ErrorLine, Section, useAction, useLoad } from '../ui';
import { ResultsTable, type SparqlJsonResults } from './ResultsTable';

interface SavedQuery {
  name: string;
  version: number;
  numberOfVersions: number;
  accessLevel: string;
  dataset?: { name: string; owner?: { accountName: string } } | null;
  requestConfig: { payload: { query?: string } };
  variables?: { name: string; termType: string; defaultValue?: string; required?: boolean }[];
}
/** Saved queries: the list and a new one; one query's versions, a new version, its variables and a run. */
export default function SavedQueries({ account, query }: { account: string; query?: string }) {
  return query ? <OneQuery account={account} name={query} /> : <QueryList account={account} />;
}

function QueryList({ account }: { account: string }) {
  const list = useLoad(() => api<SavedQuery[]>('GET', `/queries/${enc(account)}`), [account]);
  const [name, setName] = useState('');
  const [dataset, setDataset] = useState('');
  const [text, setText] = useState('SELECT * WHERE { ?s ?p ?o } LIMIT 10');
  const [run, error, busy] = useAction();
  return (
    <>
      <h1>Saved queries of {account}</h1>
      <ErrorLine error={list.error} />
      <ul className="cards">
        {(list.data ?? []).map((q) => (
          <li key={q.name}>
            <a href={href('queries', account, q.name)}>{q.name}</a> · version {q.version} of {q.numberOfVersions} · {q.accessLevel}
          </li>
        ))}
      </ul>
      {list.data && list.data.length === 0 ? <p>No saved queries yet.</p> : null}
      <Section title="New saved query">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              await api('POST', `/queries/${enc(account)}`, {
                body: { name, dataset, accessLevel: 'private', serviceConfig: { type: 'speedy' }, requestConfig: { payload: { query: text } }, renderConfig: { output: 'Table' } },
              });
              go('queries', account, name);
            });
          }}
        >
          <div className="row">
            <label>
              Query name
              <input value={name} onChange={(e) => setName(e.target.value)} required />
            </label>
            <label>
              Dataset (account/dataset)
              <input value={dataset} onChange={(e) => setDataset(e.target.value)} required />
            </label>
          </div>
          <label>
            Query text
            <textarea className="editor" rows={6} value={text} onChange={(e) => setText(e.target.value)} />
          </label>
          <button type="submit" disabled={busy}>
            Save query
          </button>
        </form>
        <ErrorLine error={error} />
      </Section>
    </>
  );
}

function OneQuery({ account, name }: { account: string; name: string }) {
  const base = `/queries/${enc(account)}/${enc(name)}`;
  const [version, setVersion] = useState<number>();
  const q = useLoad(() => api<SavedQuery>('GET', version ? `${base}/${version}` : base), [base, version]);
  const [text, setText] = useState<string>();
  const [variablesText, setVariablesText] = useState<string>();
  const [values, setValues] = useState<Record<string, string>>({});
  const [results, setResults] = useState<SparqlJsonResults>();
  const [run, error, busy] = useAction();
  const current = q.data;
  const shown = text ?? current?.requestConfig.payload.query ?? '';
  const shownVariables = variablesText ?? JSON.stringify(current?.variables ?? [], null, 2);
  return (
    <>
      <h1>
        <a href={href('queries', account)}>Saved queries of {account}</a> / {name}
      </h1>
      <ErrorLine error={q.error} />
      {current ? (
        <>
          <div className="row">
            <label>
              Version
              <select value={version ?? current.version} onChange={(e) => (setVersion(Number(e.target.value)), setText(undefined), setResults(undefined))}>
                {Array.from({ length: current.numberOfVersions }, (_, i) => i + 1).map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <label>
            Query text
            <textarea className="editor" rows={8} value={shown} onChange={(e) => setText(e.target.value)} />
          </label>
          <label>
            Variables (JSON: name, termType NamedNode or Literal, defaultValue, required, allowedValues)
            <textarea className="editor" rows={4} value={shownVariables} onChange={(e) => setVariablesText(e.target.value)} />
          </label>
          {(current.variables ?? []).map((v) => (
            <label key={v.name}>
              Variable {v.name}
              {v.required ? ' (required)' : ''}
              <input placeholder={v.defaultValue} value={values[v.name] ?? ''} onChange={(e) => setValues({ ...values, [v.name]: e.target.value })} />
            </label>
          ))}
          <div className="row">
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                void run(async () => {
                  const params = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== ''));
                  const res = await call('GET', `${base}/${version ?? current.version}/run?${params}`, { headers: { accept: 'application/sparql-results+json' } });
                  setResults((await res.json()) as SparqlJsonResults);
                })
              }
            >
              Run version {version ?? current.version}
            </button>
            <button
              type="button"
              disabled={busy || (text === undefined && variablesText === undefined)}
              onClick={() =>
                void run(async () => {
                  let variables: unknown;
                  try {
                    variables = JSON.parse(shownVariables);
                  } catch (e) {
                    throw new Error(`Variables: not JSON (${(e as Error).message}).`);
                  }
                  const saved = await api<SavedQuery>('POST', base, { body: { requestConfig: { payload: { query: shown } }, variables } });
                  setText(undefined);
                  setVariablesText(undefined);
                  setVersion(saved.version);
                })
              }
            >
              Save as new version
            </button>
          </div>
          <ErrorLine error={error} />
          {results?.results ? <ResultsTable results={results} testId="saved-results" /> : null}
        </>
      ) : null}
    </>
  );
}
