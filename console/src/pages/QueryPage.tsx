import { useState, type FormEvent } from 'react';
import { call, enc } from '../api';
import { href } from '../router';
import { ErrorLine, useAction } from '../ui';
import { BarChart, chartColumns } from './BarChart';
import { ResultsTable, type SparqlJsonResults } from './ResultsTable';
import { SparqlEditor } from './SparqlEditor';

const START = 'SELECT * WHERE {\n  ?s ?p ?o\n}\nLIMIT 100';

/**
 * The SPARQL editor (loaded on demand): the dataset's SPARQL endpoint, results as a table, and the
 * same query as a CSV download (the endpoint's .csv suffix).
 */
export default function QueryPage({ account, dataset }: { account: string; dataset: string }) {
  const endpoint = `/datasets/${enc(account)}/${enc(dataset)}/sparql`;
  const [query, setQuery] = useState(START);
  const [results, setResults] = useState<SparqlJsonResults>();
  const [graphText, setGraphText] = useState<string>();
  const [ran, setRan] = useState<string>();
  const [run, error, busy] = useAction();
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    void run(async () => {
      setResults(undefined);
      setGraphText(undefined);
      const res = await call('POST', endpoint, {
        form: new URLSearchParams({ query }),
        headers: { accept: 'application/sparql-results+json, text/turtle;q=0.9' },
      });
      if ((res.headers.get('content-type') ?? '').includes('json')) setResults((await res.json()) as SparqlJsonResults);
      else setGraphText(await res.text());
      setRan(query);
    });
  };
  const vars = results?.head.vars ?? [];
  const chart = results?.results ? chartColumns(vars, results.results.bindings) : undefined;
  const [showChart, setShowChart] = useState(false);
  return (
    <>
      <h1>
        Query <a href={href('datasets', account, dataset)}>{`${account}/${dataset}`}</a>
      </h1>
      <form onSubmit={submit}>
        <SparqlEditor label="SPARQL query" value={query} onChange={setQuery} onRun={() => submit()} />
        <div className="row">
          <button type="submit" disabled={busy}>
            Run query
          </button>
          <span className="hint">Ctrl+Enter in the editor runs it.</span>
          {ran ? (
            <a className="button" href={`${endpoint}.csv?query=${enc(ran)}`} download="results.csv">
              Download CSV
            </a>
          ) : null}
          {ran ? (
            <a className="button" href={`${endpoint}.json?query=${enc(ran)}`} download="results.json">
              Download JSON
            </a>
          ) : null}
        </div>
      </form>
      <ErrorLine error={error} />
      {results?.boolean !== undefined ? <p role="status">Answer: {String(results.boolean)}</p> : null}
      {results?.results ? (
        <>
          <p role="status">{results.results.bindings.length} results</p>
          {chart ? (
            <button type="button" aria-pressed={showChart} onClick={() => setShowChart(!showChart)}>
              {showChart ? 'Hide chart' : 'Show chart'}
            </button>
          ) : null}
          {chart && showChart ? <BarChart rows={results.results.bindings} label={chart.label} value={chart.value} /> : null}
          <div className="scroll">
            <ResultsTable results={results} testId="results" />
          </div>
        </>
      ) : null}
      {graphText !== undefined ? <pre className="describe">{graphText}</pre> : null}
    </>
  );
}
