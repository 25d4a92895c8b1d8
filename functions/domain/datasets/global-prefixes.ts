import type { DatasetRecord, Prefix } from './datasets.js';

/** The instance's global prefixes (`GET /prefixes`): well-known vocabularies every dataset may use. */
export const GLOBAL_PREFIXES: readonly Prefix[] = [
  { prefixLabel: 'dcat', iri: 'http://www.w3.org/ns/dcat#' },
  { prefixLabel: 'dct', iri: 'http://purl.org/dc/terms/' },
  { prefixLabel: 'foaf', iri: 'http://xmlns.com/foaf/0.1/' },
  { prefixLabel: 'owl', iri: 'http://www.w3.org/2002/07/owl#' },
  { prefixLabel: 'prov', iri: 'http://www.w3.org/ns/prov#' },
  { prefixLabel: 'rdf', iri: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#' },
  { prefixLabel: 'rdfs', iri: 'http://www.w3.org/2000/01/rdf-schema#' },
  { prefixLabel: 'schema', iri: 'https://schema.org/' },
  { prefixLabel: 'sh', iri: 'http://www.w3.org/ns/shacl#' },
  { prefixLabel: 'skos', iri: 'http://www.w3.org/2004/02/skos/core#' },
  { prefixLabel: 'xsd', iri: 'http://www.w3.org/2001/XMLSchema#' },
];

/** Whether a dataset matches the listing's `q`: a case-insensitive part of its name, display name, description or tags. */
export function datasetMatches(d: DatasetRecord, q: string | undefined): boolean {
  if (!q) return true;
  const needle = q.toLowerCase();
  return [d.name, d.displayName, d.description, ...d.tags].some((f) => f.toLowerCase().includes(needle));
}
