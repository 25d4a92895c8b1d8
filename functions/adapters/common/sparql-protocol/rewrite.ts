/**
 * Query rewriting for the external store: each query is parsed with sparqljs (off the main
 * thread), its dataset spelled out as FROM / FROM NAMED of the snapshot's graphs, GRAPH names
 * mapped to stored names, and SERVICE or non-XSD function calls refused (see engine.ts).
 */
import * as oxigraph from 'oxigraph';
import sparqljs from 'sparqljs';
import { type EngineQuery, EngineQueryError } from '../../../ports/sparql-engine.js';
import { assertSparqlLimits, parseFailure } from '../../../rdf/sparql-analysis.js';
import { ParseRejectedError, sparqlParser } from '../../../rdf/sparql-parser-pool.js';
import type { SnapshotNames } from './snapshot-names.js';

type QueryForm = 'SELECT' | 'ASK' | 'CONSTRUCT' | 'DESCRIBE';

/**
 * Function IRIs a query may call: XSD casts. Virtuoso maps any other IRI to an SQL procedure
 * (`<urn:f>(..)` calls `DB.DBA.urn:f`, `bif:`/`sql:` reach its built-ins), and the embedded
 * engine has no custom functions either.
 */
const ALLOWED_FUNCTION = /^http:\/\/www\.w3\.org\/2001\/XMLSchema#/;

/** Replaces GRAPH <g> names and refuses what reaches outside the snapshot, in place. */
function rewritePatterns(node: unknown, names: SnapshotNames): void {
  if (Array.isArray(node)) {
    for (const n of node) rewritePatterns(n, names);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if ('termType' in o) return;
  if (o.type === 'service') throw new EngineQueryError('SERVICE (federated query) is not supported by this service.');
  if (o.type === 'functionCall') {
    const fn = o.function as { value?: string } | string | undefined;
    const iri = typeof fn === 'string' ? fn : (fn?.value ?? '');
    if (!ALLOWED_FUNCTION.test(iri)) throw new EngineQueryError(`The function <${iri}> is not supported by this service.`);
  }
  if (o.type === 'graph') {
    const name = o.name as { termType?: string; value: string } | undefined;
    if (name?.termType === 'NamedNode') o.name = oxigraph.namedNode(names.stored(name.value));
  }
  for (const [key, value] of Object.entries(o)) {
    if (key === 'name' && o.type === 'graph') continue;
    rewritePatterns(value, names);
  }
}

export interface Rewritten {
  text: string;
  form: QueryForm;
  /** The last answer to this query was large (Endpoints.query's `fresh`); kept by the store's cache. */
  large?: boolean;
}

/** Parsed off the main thread (after the pre-scan's limits); the tree comes back as plain data. */
const parse = (text: string, baseIri?: string): Promise<sparqljs.SparqlQuery> => sparqlParser.run<sparqljs.SparqlQuery>({ type: 'parse', text, baseIri });

/** `<...\u0041...>` → `<...A...>` (only inside IRI references, where sparqljs does not accept escapes). */
function decodeIriEscapes(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/<([^<>"{}|^`\x00-\x20]*)>/g, (whole, body: string) =>
    body.includes('\\') ? `<${body.replace(/\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})/g, (_, a?: string, b?: string) => String.fromCodePoint(parseInt(a ?? b!, 16)))}>` : whole,
  );
}

export async function rewriteQuery(request: EngineQuery, names: SnapshotNames): Promise<Rewritten> {
  assertSparqlLimits(request.query, 'query');
  let parsed: sparqljs.SparqlQuery;
  try {
    parsed = await parse(request.query, request.baseIri);
  } catch (e) {
    if (!(e instanceof ParseRejectedError)) throw parseFailure(e, 'The query does not parse');
    // sparqljs does not read \u escapes inside IRIs; SPARQL processes them before parsing.
    const decoded = decodeIriEscapes(request.query);
    try {
      if (decoded === request.query) throw e;
      // Decoding may turn escaped characters into real brackets: the limits apply to it too.
      assertSparqlLimits(decoded, 'query');
      parsed = await parse(decoded, request.baseIri);
    } catch (again) {
      if (!(again instanceof ParseRejectedError)) throw parseFailure(again, 'The query does not parse');
      throw new EngineQueryError(`The query does not parse: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`);
    }
  }
  if (parsed.type !== 'query') throw new EngineQueryError('Only queries can be run here, not updates.');
  const own = parsed.from ?? { default: [], named: [] };
  const everything = [...[...names.graphs].map((g) => names.stored(g)), ...(names.hasDefault ? [names.defaultBucket] : [])];
  const named = [...names.graphs].map((g) => names.stored(g));
  let defaults: string[];
  let nameds: string[];
  if (request.defaultGraphs !== undefined || request.namedGraphs !== undefined) {
    // The protocol's dataset is the whole dataset: what it does not list is not there.
    defaults = (request.defaultGraphs ?? []).map((g) => names.stored(g));
    nameds = (request.namedGraphs ?? []).map((g) => names.stored(g));
  } else if (own.default.length || own.named.length) {
    // The query's own dataset (SPARQL 1.1 §13.2: no FROM NAMED means no named graphs, and vice versa).
    defaults = own.default.map((g) => names.stored(g.value));
    nameds = own.named.map((g) => names.stored(g.value));
  } else {
    defaults = everything;
    nameds = named;
  }
  const iri = (v: string): sparqljs.IriTerm => oxigraph.namedNode(v) as unknown as sparqljs.IriTerm;
  parsed.from = {
    default: (defaults.length ? defaults : [names.none]).map(iri),
    named: (nameds.length ? nameds : [names.none]).map(iri),
  };
  rewritePatterns(parsed.where, names);
  rewritePatterns((parsed as { template?: unknown }).template, names);
  if (parsed.queryType === 'SELECT') rewritePatterns(parsed.variables, names);
  rewritePatterns((parsed as { having?: unknown }).having, names);
  rewritePatterns((parsed as { order?: unknown }).order, names);
  rewritePatterns((parsed as { group?: unknown }).group, names);
  let text: string;
  try {
    text = new sparqljs.Generator().stringify(parsed);
  } catch (e) {
    throw new EngineQueryError(`The query cannot be run: ${(e as Error).message}`);
  }
  return { text, form: parsed.queryType };
}
