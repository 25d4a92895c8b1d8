import { ValidationError } from '../shared/errors.js';
import { XSD } from './names.js';

/**
 * SPARQL text from values a GraphQL query supplies. Every IRI and literal is checked or escaped
 * here, so a GraphQL argument can never change the shape of the SPARQL query it becomes.
 */

/** IRIREF of the SPARQL grammar: no spaces, controls or `<>"{}|^\``, and a scheme. */
const IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\u0000-\u0020<>"{}|^`\\]*$/;
const LANG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;

export function iri(value: string, what = 'id'): string {
  if (!IRI.test(value)) throw new ValidationError(`${what}: "${value.slice(0, 200)}" is not an absolute IRI.`);
  return `<${value}>`;
}

export function assertLanguageTag(tag: string, what = 'language'): string {
  if (!LANG.test(tag)) throw new ValidationError(`${what}: "${tag.slice(0, 50)}" is not a language tag (e.g. "en" or "en-GB").`);
  return tag;
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

export const stringLiteral = (value: string): string => `"${value.replace(/[\\"\n\r\t\b\f]/g, (c) => ESCAPES[c]!)}"`;

/** A literal of `datatype` (plain for xsd:string), or with a language tag. */
export function literal(value: string, options: { datatype?: string; language?: string } = {}): string {
  if (options.language !== undefined) return `${stringLiteral(value)}@${assertLanguageTag(options.language)}`;
  if (!options.datatype || options.datatype === `${XSD}string`) return stringLiteral(value);
  return `${stringLiteral(value)}^^${iri(options.datatype, 'datatype')}`;
}

/** A term of a SPARQL JSON result. */
export interface ResultTerm {
  type: 'uri' | 'literal' | 'typed-literal' | 'bnode';
  value: string;
  datatype?: string;
  'xml:lang'?: string;
}

export type ResultRow = Record<string, ResultTerm | undefined>;

/** Rows of an `application/sparql-results+json` answer. */
export function resultRows(text: string): ResultRow[] {
  const parsed = JSON.parse(text) as { results?: { bindings?: ResultRow[] } };
  return parsed.results?.bindings ?? [];
}
