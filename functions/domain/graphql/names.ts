/**
 * GraphQL names from IRIs (the incumbent's rule): the part of the IRI after the last `#`, or
 * else after the last `/`, converted from kebab-case to camelCase. Scalars are named after their
 * datatype: a prefix for the well-known vocabularies and the local name in PascalCase
 * (`xsd:string` → `XsdString`; `rdf:langString` → `RdfsLangString`, as the incumbent names it).
 */

/** What GraphQL accepts as a name (spec §2.1.9), less the `__` prefix it reserves for introspection. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

export const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
export const XSD = 'http://www.w3.org/2001/XMLSchema#';
export const SH = 'http://www.w3.org/ns/shacl#';
export const RDF_LANG_STRING = `${RDF}langString`;
/** The incumbent's renaming predicate: on a class (types) or a property shape (fields). */
export const GRAPHQL_NAME = 'https://triplydb.com/Triply/GraphQL/def/graphqlName';

/** The IRI's part after the last `#`, else after the last `/`. */
export function localName(iri: string): string {
  const hash = iri.lastIndexOf('#');
  if (hash >= 0) return iri.slice(hash + 1);
  return iri.slice(iri.lastIndexOf('/') + 1);
}

/** `birth-place` → `birthPlace` (hyphens followed by a character: the character upper-cased). */
export const kebabToCamel = (name: string): string => name.replace(/-+([^-])/g, (_, c: string) => c.toUpperCase());

/** The GraphQL name an IRI gets (before any override). */
export const nameOfIri = (iri: string): string => kebabToCamel(localName(iri));

/** Why `name` cannot be a GraphQL name, or null when it can. */
export function illegalName(name: string): string | null {
  if (!NAME.test(name)) return `"${name}" is not a legal GraphQL name (letters, digits and _, not starting with a digit)`;
  if (name.startsWith('__')) return `"${name}" starts with "__", which GraphQL reserves for introspection`;
  return null;
}

const PREFIXES: [string, string][] = [
  [XSD, 'Xsd'],
  [RDF, 'Rdf'],
  ['http://www.w3.org/2000/01/rdf-schema#', 'Rdfs'],
  ['http://www.opengis.net/ont/geosparql#', 'Geo'],
  ['http://www.w3.org/2002/07/owl#', 'Owl'],
];

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/** The scalar a `sh:datatype` becomes. */
export function scalarNameOf(datatype: string): string {
  if (datatype === RDF_LANG_STRING) return 'RdfsLangString';
  for (const [ns, prefix] of PREFIXES) if (datatype.startsWith(ns)) return prefix + pascal(kebabToCamel(datatype.slice(ns.length)));
  return pascal(nameOfIri(datatype));
}

/** Names the generated schema uses itself; a type or scalar of these names would collide. */
export const BUILT_IN_TYPE_NAMES = new Set([
  'Query',
  'Mutation',
  'Subscription',
  'Node',
  'PageInfo',
  'ExternalIri',
  'ExternalIriFilter',
  'RdfsLangString',
  'RdfsLangStringInput',
  'RdfsLangStringFilter',
  'OrderDirection',
  'String',
  'Int',
  'Float',
  'Boolean',
  'ID',
]);

/** The names generated for an object type `T`. */
export const generatedNamesOf = (type: string): string[] => [`${type}Connection`, `${type}Edge`, `${type}Filter`, `${type}OrderBy`, `${type}OrderField`];

/** The names generated for a scalar `S`. */
export const scalarFilterName = (scalar: string): string => `${scalar}Filter`;
