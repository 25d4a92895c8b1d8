/**
 * The one serialization table of the platform (spec: "Serialization is chosen ... by an Accept
 * header or by a path extension"). Import, export, describe and (later) SPARQL results read it.
 */
export type RdfFormatName = 'turtle' | 'trig' | 'ntriples' | 'nquads' | 'jsonld' | 'rdfxml';

export interface RdfFormat {
  name: RdfFormatName;
  /** Canonical media type, first; then aliases accepted on input. */
  mediaTypes: readonly string[];
  /** Canonical extension first (without dot); then aliases accepted on input. */
  extensions: readonly string[];
  /** Can carry named graphs. */
  quads: boolean;
  /** Offered by the export routes (the spec's table). */
  exportable: boolean;
}

export const RDF_FORMATS: readonly RdfFormat[] = [
  { name: 'trig', mediaTypes: ['application/trig', 'application/x-trig'], extensions: ['trig'], quads: true, exportable: true },
  { name: 'ntriples', mediaTypes: ['application/n-triples', 'text/plain'], extensions: ['nt'], quads: false, exportable: true },
  { name: 'nquads', mediaTypes: ['application/n-quads', 'text/x-nquads'], extensions: ['nq'], quads: true, exportable: true },
  { name: 'turtle', mediaTypes: ['text/turtle', 'application/x-turtle'], extensions: ['ttl', 'turtle'], quads: false, exportable: true },
  { name: 'jsonld', mediaTypes: ['application/ld+json'], extensions: ['jsonld', 'json'], quads: true, exportable: true },
  { name: 'rdfxml', mediaTypes: ['application/rdf+xml', 'application/xml', 'text/xml'], extensions: ['rdf', 'owl', 'rdfs', 'xml', 'owx'], quads: false, exportable: false },
];

export const EXPORT_FORMATS = RDF_FORMATS.filter((f) => f.exportable);

export const formatByName = (name: RdfFormatName): RdfFormat => RDF_FORMATS.find((f) => f.name === name)!;
