/** What a SPARQL request is, read with sparqljs: its form, and whether it is an update. */
import sparqljs from 'sparqljs';
import type { QueryForm } from './sparql-formats.js';

export class SparqlSyntaxError extends Error {
  override name = 'SparqlSyntaxError';
}

export type Analysis = { kind: 'query'; form: QueryForm } | { kind: 'update' };

/** Parses the request; throws SparqlSyntaxError with the parser's message (line numbers included). */
export function analyzeSparql(text: string, baseIri?: string): Analysis {
  let parsed: sparqljs.SparqlQuery;
  try {
    parsed = new sparqljs.Parser({ baseIRI: baseIri }).parse(text);
  } catch (e) {
    throw new SparqlSyntaxError(`The SPARQL request does not parse: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`);
  }
  if (parsed.type === 'update') return { kind: 'update' };
  return { kind: 'query', form: parsed.queryType.toLowerCase() as QueryForm };
}
