import { UnsupportedMediaTypeError, ValidationError } from '../domain/shared/errors.js';
import { analyzeSparql, withUsingGraphs } from '../rdf/sparql-analysis.js';
import { MAX_SPARQL_CHARS } from '../rdf/sparql-prescan.js';
import type { QueryForm } from '../rdf/formats.js';
import type { HttpRequest } from './types.js';

export type SparqlRequest =
  | {
      kind: 'query';
      text: string;
      form: QueryForm;
      /** The protocol's dataset, when default-graph-uri or named-graph-uri was given. */
      dataset?: { defaultGraphs: string[]; namedGraphs: string[] };
      definesDataset: boolean;
      baseIri: string;
    }
  | { kind: 'update'; text: string; usingGraphs: string[]; usingNamedGraphs: string[]; baseIri: string };

const mediaType = (req: HttpRequest) => (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

function exactlyOne(values: string[], name: string): string {
  if (values.length !== 1) throw new ValidationError(`Give exactly one "${name}" parameter (got ${values.length}).`);
  const value = values[0]!;
  if (value.length > MAX_SPARQL_CHARS) throw new ValidationError(`The ${name} is longer than ${MAX_SPARQL_CHARS} characters.`);
  if (!value.trim()) throw new ValidationError(`The "${name}" parameter is empty.`);
  return value;
}

/**
 * Reads a SPARQL 1.1 Protocol request: query via GET, URL-encoded POST or direct POST; update
 * via URL-encoded POST or direct POST (only where `allowUpdate`). Errors say what to send instead.
 */
export async function readSparqlRequest(req: HttpRequest, options: { allowUpdate: boolean; baseIri: string }): Promise<SparqlRequest> {
  const baseIri = options.baseIri;
  let params = req.query;
  let direct: { kind: 'query' | 'update'; text: string } | undefined;
  if (req.method === 'POST') {
    const type = mediaType(req);
    const body = req.body.toString('utf8');
    if (type === 'application/x-www-form-urlencoded') {
      params = new URLSearchParams(body);
      for (const [k, v] of req.query) params.append(k, v);
    } else if (type === 'application/sparql-query') {
      direct = { kind: 'query', text: body };
    } else if (type === 'application/sparql-update' && options.allowUpdate) {
      direct = { kind: 'update', text: body };
    } else {
      const accepted = ['application/sparql-query', 'application/x-www-form-urlencoded', ...(options.allowUpdate ? ['application/sparql-update'] : [])];
      throw new UnsupportedMediaTypeError(`Send the request as ${accepted.join(' or ')} (got "${type || 'no Content-Type'}").`);
    }
  }
  const queries = params.getAll('query');
  const updates = params.getAll('update');
  if (direct?.kind === 'query' && queries.length) throw new ValidationError('Give the query either in the body or as a "query" parameter, not both.');
  if (!direct && queries.length && updates.length) throw new ValidationError('Give either a "query" or an "update", not both.');

  const isUpdate = direct?.kind === 'update' || (!direct && updates.length > 0);
  if (isUpdate) {
    if (!options.allowUpdate) throw new ValidationError('This endpoint answers queries only; send updates to the dataset endpoint /datasets/{account}/{dataset}/sparql.');
    if (req.method !== 'POST') throw new ValidationError('Send updates with POST.');
    const text = direct ? direct.text : exactlyOne(updates, 'update');
    if (!text.trim()) throw new ValidationError('The update is empty.');
    const analysis = await analyzeSparql(text, baseIri, 'update');
    if (analysis.kind !== 'update') throw new ValidationError('The request is a query; send it as "query" (or application/sparql-query).');
    const usingGraphs = params.getAll('using-graph-uri');
    const usingNamedGraphs = params.getAll('using-named-graph-uri');
    for (const iri of [...usingGraphs, ...usingNamedGraphs]) {
      if (!/^[a-z][a-z0-9+.-]*:[^\s<>"{}|^`\\]*$/i.test(iri)) throw new ValidationError(`"${iri.slice(0, 200)}" is not an absolute IRI: using-graph-uri and using-named-graph-uri take graph IRIs.`);
    }
    // The protocol's dataset of an update becomes USING / USING NAMED in the text the engine runs.
    const runs = usingGraphs.length || usingNamedGraphs.length ? await withUsingGraphs(text, baseIri, usingGraphs, usingNamedGraphs) : text;
    return { kind: 'update', text: runs, usingGraphs, usingNamedGraphs, baseIri };
  }
  const text = direct ? direct.text : exactlyOne(queries, 'query');
  if (direct && !text.trim()) throw new ValidationError('The query in the body is empty.');
  const analysis = await analyzeSparql(text, baseIri, 'query');
  if (analysis.kind !== 'query') {
    throw new ValidationError(options.allowUpdate ? 'The request is an update; send it as "update" (or application/sparql-update) with POST.' : 'This endpoint answers queries only.');
  }
  const defaultGraphs = params.getAll('default-graph-uri');
  const namedGraphs = params.getAll('named-graph-uri');
  return {
    kind: 'query',
    text: analysis.text ?? text,
    form: analysis.form,
    dataset: defaultGraphs.length || namedGraphs.length ? { defaultGraphs, namedGraphs } : undefined,
    definesDataset: analysis.definesDataset,
    baseIri,
  };
}
