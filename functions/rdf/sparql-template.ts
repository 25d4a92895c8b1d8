/**
 * Saved-query templates: API variables substituted into the query (with sparqljs, so a value can
 * never inject syntax) and pages cut out with LIMIT/OFFSET on top of the query's own. The work
 * runs in the SPARQL parser's worker threads (sparql-parse-worker.mjs), which also keep the
 * parsed templates, after the pre-scan's limits.
 */
import { assertSparqlLimits, parseFailure } from './sparql-analysis.js';
import { sparqlParser } from './sparql-parser-pool.js';

export interface TermValue {
  termType: 'NamedNode' | 'Literal';
  value: string;
  datatype?: string;
  language?: string;
}

export interface Page {
  /** 1-based. */
  page: number;
  pageSize: number;
}

const PREFIX = 'The saved query does not parse';

async function inWorker<T>(query: string, run: () => Promise<T>): Promise<T> {
  assertSparqlLimits(query, 'saved query');
  try {
    return await run();
  } catch (e) {
    throw parseFailure(e, PREFIX);
  }
}

/**
 * The query with `values` substituted and, when `page` is given, limited to that page plus one
 * row (so the caller knows whether a next page exists), respecting the query's own LIMIT/OFFSET.
 * Returns null when the page lies beyond the query's own LIMIT.
 */
export function instantiate(query: string, values: Map<string, TermValue>, page?: Page, extraRows = 1): Promise<string | null> {
  return inWorker(query, () => sparqlParser.run<string | null>({ type: 'instantiate', text: query, values: [...values], page, extraRows }));
}

/** A CONSTRUCT/DESCRIBE query's WHERE as `SELECT *`, to ask whether more solutions follow a page. */
export function solutionsProbe(query: string, values: Map<string, TermValue>, offset: number): Promise<string> {
  return inWorker(query, () => sparqlParser.run<string>({ type: 'probe', text: query, values: [...values], offset }));
}
