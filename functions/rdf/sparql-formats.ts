/**
 * The SPARQL result formats of the spec's table: which media type and path suffix serve which
 * query forms. The SPARQL protocol routes, saved queries and the dataset endpoint read it.
 */
import Negotiator from 'negotiator';

export type QueryForm = 'select' | 'ask' | 'construct' | 'describe';

export interface ResultFormat {
  mediaType: string;
  suffix: string;
  forms: readonly QueryForm[];
  /** The name oxigraph serializes to. */
  engineFormat: string;
}

const TABULAR: QueryForm[] = ['select', 'ask'];
const GRAPH: QueryForm[] = ['construct', 'describe'];

/** In order of preference for any-type Accept: SPARQL JSON for tables, Turtle for graphs. */
export const RESULT_FORMATS: readonly ResultFormat[] = [
  { mediaType: 'application/sparql-results+json', suffix: 'srj', forms: TABULAR, engineFormat: 'application/sparql-results+json' },
  { mediaType: 'text/turtle', suffix: 'ttl', forms: GRAPH, engineFormat: 'text/turtle' },
  { mediaType: 'application/json', suffix: 'json', forms: TABULAR, engineFormat: 'application/sparql-results+json' },
  { mediaType: 'application/sparql-results+xml', suffix: 'srx', forms: TABULAR, engineFormat: 'application/sparql-results+xml' },
  { mediaType: 'text/csv', suffix: 'csv', forms: ['select'], engineFormat: 'text/csv' },
  { mediaType: 'text/tab-separated-values', suffix: 'tsv', forms: ['select'], engineFormat: 'text/tab-separated-values' },
  { mediaType: 'application/n-triples', suffix: 'nt', forms: GRAPH, engineFormat: 'application/n-triples' },
  { mediaType: 'application/n-quads', suffix: 'nq', forms: GRAPH, engineFormat: 'application/n-quads' },
  { mediaType: 'application/trig', suffix: 'trig', forms: GRAPH, engineFormat: 'application/trig' },
  { mediaType: 'application/ld+json', suffix: 'jsonld', forms: GRAPH, engineFormat: 'application/ld+json' },
];

export const RESULT_SUFFIXES = RESULT_FORMATS.map((f) => f.suffix);

export const formatsFor = (form: QueryForm): ResultFormat[] => RESULT_FORMATS.filter((f) => f.forms.includes(form));

export const formatBySuffix = (suffix: string): ResultFormat | undefined => RESULT_FORMATS.find((f) => f.suffix === suffix);

/** Keeps only `q` among media-range parameters (`text/csv;charset=utf-8` still means CSV). */
function simplify(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const [type, ...params] = range.split(';');
      const q = params.find((p) => /^\s*q\s*=/i.test(p));
      return q ? `${type!.trim()};${q.trim()}` : type!.trim();
    })
    .filter(Boolean)
    .join(', ');
}

/** The format for a query form from an Accept header (q-values, wildcards); null when none suits. */
export function negotiateResultFormat(accept: string | undefined, form: QueryForm): ResultFormat | null {
  const offered = formatsFor(form);
  if (!accept || !accept.trim()) return offered[0]!;
  const chosen = new Negotiator({ headers: { accept: simplify(accept) } }).mediaType(offered.map((f) => f.mediaType));
  return chosen ? (offered.find((f) => f.mediaType === chosen.toLowerCase()) ?? null) : null;
}
