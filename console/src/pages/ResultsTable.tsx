/** SPARQL JSON results (application/sparql-results+json): a SELECT's rows, or an ASK's answer. */
export interface SparqlJsonResults {
  head: { vars?: string[] };
  results?: { bindings: Record<string, { type: string; value: string }>[] };
  boolean?: boolean;
}

/** A SELECT's rows, one column per variable; IRIs as code, unbound cells empty. */
export function ResultsTable({ results, testId }: { results: SparqlJsonResults; testId: string }) {
  const vars = results.head.vars ?? [];
  return (
    <table data-testid={testId}>
      <thead>
        <tr>
          {vars.map((v) => (
            <th key={v}>{v}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {(results.results?.bindings ?? []).map((b, i) => (
          <tr key={i}>
            {vars.map((v) => (
              <td key={v}>{b[v] ? b[v].type === 'uri' ? <code>{b[v].value}</code> : b[v].value : ''}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
