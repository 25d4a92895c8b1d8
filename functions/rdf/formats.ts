/**
 * The one format table of the platform (spec: "Serialization is chosen ... by an Accept header or
 * by a path extension"): every serialization it reads or writes, RDF (import, export, describe)
 * and SPARQL results (the query endpoints and saved-query runs), with media types, file
 * extensions, path suffixes and what each serves. Negotiation (negotiate.ts), import detection,
 * the serializers and the route table's `download.<ext>`, `sparql.<suffix>` and `run.<suffix>`
 * paths all read it.
 */
export type QueryForm = 'select' | 'ask' | 'construct' | 'describe';

export type RdfFormatName = 'turtle' | 'trig' | 'ntriples' | 'nquads' | 'jsonld' | 'rdfxml';
/** Formats that only carry SPARQL results (tables and booleans). */
export type ResultOnlyFormatName = 'sparql-json' | 'json' | 'sparql-xml' | 'csv' | 'tsv';
export type FormatName = RdfFormatName | ResultOnlyFormatName;

export interface Format {
  name: FormatName;
  /** Canonical media type, first; then aliases accepted on input (and in RDF negotiation). */
  mediaTypes: readonly string[];
  /** RDF file extensions (without dot), canonical first, then aliases accepted on input; none for result-only formats. */
  extensions: readonly string[];
  /** An RDF serialization the importers parse (by file extension or Content-Type). */
  importable: boolean;
  /** Offered by the export routes (the spec's table), `download.<first extension>`. */
  exportable: boolean;
  /** Can carry named graphs. */
  quads: boolean;
  /** SPARQL result path suffix (`sparql.<suffix>`, `run.<suffix>`); absent when no query answers in it. */
  suffix?: string;
  /** The SPARQL query forms whose results it can carry. */
  forms: readonly QueryForm[];
  /** The results format the SPARQL engines (oxigraph, the external store adapter) are asked for. */
  engineFormat?: string;
}

export type RdfFormat = Format & { name: RdfFormatName };
export type ResultFormat = Format & { suffix: string; engineFormat: string };

const TABULAR: QueryForm[] = ['select', 'ask'];
const GRAPH: QueryForm[] = ['construct', 'describe'];
const RESULTS_JSON = 'application/sparql-results+json';

/** RDF serializations in the order export offers them (the first is the default), then result-only formats. */
export const FORMATS: readonly Format[] = [
  { name: 'trig', mediaTypes: ['application/trig', 'application/x-trig'], extensions: ['trig'], importable: true, exportable: true, quads: true, suffix: 'trig', forms: GRAPH, engineFormat: 'application/trig' },
  { name: 'ntriples', mediaTypes: ['application/n-triples', 'text/plain'], extensions: ['nt'], importable: true, exportable: true, quads: false, suffix: 'nt', forms: GRAPH, engineFormat: 'application/n-triples' },
  { name: 'nquads', mediaTypes: ['application/n-quads', 'text/x-nquads'], extensions: ['nq'], importable: true, exportable: true, quads: true, suffix: 'nq', forms: GRAPH, engineFormat: 'application/n-quads' },
  { name: 'turtle', mediaTypes: ['text/turtle', 'application/x-turtle'], extensions: ['ttl', 'turtle'], importable: true, exportable: true, quads: false, suffix: 'ttl', forms: GRAPH, engineFormat: 'text/turtle' },
  { name: 'jsonld', mediaTypes: ['application/ld+json'], extensions: ['jsonld', 'json'], importable: true, exportable: true, quads: true, suffix: 'jsonld', forms: GRAPH, engineFormat: 'application/ld+json' },
  { name: 'rdfxml', mediaTypes: ['application/rdf+xml', 'application/xml', 'text/xml'], extensions: ['rdf', 'owl', 'rdfs', 'xml', 'owx'], importable: true, exportable: false, quads: false, forms: [] },
  { name: 'sparql-json', mediaTypes: [RESULTS_JSON], extensions: [], importable: false, exportable: false, quads: false, suffix: 'srj', forms: TABULAR, engineFormat: RESULTS_JSON },
  // Plain JSON asks for SPARQL JSON (saved-query runs answer TriplyDB's own JSON shape instead).
  { name: 'json', mediaTypes: ['application/json'], extensions: [], importable: false, exportable: false, quads: false, suffix: 'json', forms: TABULAR, engineFormat: RESULTS_JSON },
  { name: 'sparql-xml', mediaTypes: ['application/sparql-results+xml'], extensions: [], importable: false, exportable: false, quads: false, suffix: 'srx', forms: TABULAR, engineFormat: 'application/sparql-results+xml' },
  { name: 'csv', mediaTypes: ['text/csv'], extensions: [], importable: false, exportable: false, quads: false, suffix: 'csv', forms: ['select'], engineFormat: 'text/csv' },
  { name: 'tsv', mediaTypes: ['text/tab-separated-values'], extensions: [], importable: false, exportable: false, quads: false, suffix: 'tsv', forms: ['select'], engineFormat: 'text/tab-separated-values' },
];

export function formatByName(name: RdfFormatName): RdfFormat;
export function formatByName(name: FormatName): Format;
export function formatByName(name: FormatName): Format {
  return FORMATS.find((f) => f.name === name)!;
}

/** Every RDF serialization the platform parses. */
export const RDF_FORMATS = FORMATS.filter((f): f is RdfFormat => f.importable);

export const EXPORT_FORMATS = RDF_FORMATS.filter((f) => f.exportable);

/**
 * SPARQL result formats in order of preference for an any-type Accept (SPARQL JSON for tables,
 * Turtle for graphs); a query form offers those that suit it, in this order.
 */
export const RESULT_FORMATS = (['sparql-json', 'turtle', 'json', 'sparql-xml', 'csv', 'tsv', 'ntriples', 'nquads', 'trig', 'jsonld'] as const).map(
  (name) => formatByName(name) as ResultFormat,
);

export const RESULT_SUFFIXES = RESULT_FORMATS.map((f) => f.suffix);

export const formatsFor = (form: QueryForm): ResultFormat[] => RESULT_FORMATS.filter((f) => f.forms.includes(form));

export const formatBySuffix = (suffix: string): ResultFormat | undefined => RESULT_FORMATS.find((f) => f.suffix === suffix);
