/** What a SPARQL request is, read with sparqljs: its form, and whether it is an update. */
import sparqljs from 'sparqljs';
import type { QueryForm } from './formats.js';
import { EngineOverloadedError } from './sparql-errors.js';
import { ByteBoundedLru } from './sparql-lru.mjs';
import { ParseBusyError, ParseRejectedError, ParseTooComplexError, sparqlParser } from './sparql-parser-pool.js';
import { sparqlLimitProblem, withoutLiterals } from './sparql-prescan.js';

export class SparqlSyntaxError extends Error {
  override name = 'SparqlSyntaxError';
}

export type Analysis =
  /** `text`: the query to run when it differs from the one sent (SELECT * with its variables in query order). */
  | { kind: 'query'; form: QueryForm; definesDataset: boolean; text?: string }
  | { kind: 'update' };

const UPDATE_KEYWORDS = /^(INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)$/i;

/**
 * The first keyword of the request, skipping comments, IRIs, strings and prologue: enough to tell
 * the form when sparqljs rejects a request the engine accepts (e.g. \u escapes inside IRIs).
 */
function formByKeyword(text: string): Analysis | null {
  // Linear: a regular expression for strings is quadratic on `"\"\"\"…` without a closing quote.
  const stripped = withoutLiterals(text);
  for (const word of stripped.match(/[A-Za-z]+/g) ?? []) {
    if (/^(PREFIX|BASE)$/i.test(word)) continue;
    if (/^(SELECT|ASK|CONSTRUCT|DESCRIBE)$/i.test(word)) {
      return { kind: 'query', form: word.toLowerCase() as QueryForm, definesDataset: /\bFROM\b/i.test(stripped) };
    }
    if (UPDATE_KEYWORDS.test(word)) return { kind: 'update' };
  }
  return null;
}

/** Analyses by text: the same texts come again and again (saved queries, dashboards). */
const ANALYSIS_CACHE_BYTES = 16 * 1024 * 1024;
/** An analysis is a few small fields. */
const ANALYSIS_BYTES = 64;
const analyses = new ByteBoundedLru<Analysis>(ANALYSIS_CACHE_BYTES, (a) => ANALYSIS_BYTES + 2 * (a.kind === 'query' ? (a.text?.length ?? 0) : 0));

/** How full the analysis cache is (bytes are estimates: keys as UTF-16, a constant per analysis). */
export function analysisCacheUsage(): { bytes: number; maxBytes: number; entries: number } {
  return { bytes: analyses.bytes, maxBytes: analyses.maxBytes, entries: analyses.size };
}

/** Refuses a text beyond the pre-scan's limits (size, nesting) with a 400 naming the limit. */
export function assertSparqlLimits(text: string, what = 'SPARQL request'): void {
  const problem = sparqlLimitProblem(text, what);
  if (problem) throw new SparqlSyntaxError(problem);
}

/** The pool's failures as the platform's errors: the text's fault is a 400, a full pool a 503. */
export function parseFailure(e: unknown, prefix: string): Error {
  if (e instanceof ParseRejectedError) return new SparqlSyntaxError(`${prefix}: ${e.message.split('\n').slice(0, 3).join(' ')}`);
  if (e instanceof ParseTooComplexError) return new SparqlSyntaxError(e.message);
  if (e instanceof ParseBusyError) return new EngineOverloadedError(e.message);
  return e as Error;
}

/**
 * Parses the request (off the main thread, after the pre-scan); throws SparqlSyntaxError with the
 * parser's message (line numbers included). When sparqljs fails but the form is plain from the
 * first keyword, the engine gets the last word.
 */
export async function analyzeSparql(text: string, baseIri?: string, what?: string): Promise<Analysis> {
  const key = `${baseIri ?? ''}\u0000${text}`;
  const cached = analyses.get(key);
  if (cached) return cached;
  assertSparqlLimits(text, what);
  let analysis: Analysis;
  try {
    analysis = await sparqlParser.run<Analysis>({ type: 'analyze', text, baseIri });
  } catch (e) {
    const byKeyword = e instanceof ParseRejectedError && /\\u|\\U/.test(text) ? formByKeyword(text) : null;
    if (!byKeyword) throw parseFailure(e, 'The SPARQL request does not parse');
    analysis = byKeyword;
  }
  analyses.set(key, analysis);
  return analysis;
}

/**
 * The update as the protocol's using-graph-uri / using-named-graph-uri say: their graphs become
 * the USING / USING NAMED of every operation with a WHERE. Refused (400) when the update has
 * USING or WITH of its own, as the protocol requires.
 */
export async function withUsingGraphs(text: string, baseIri: string | undefined, defaultGraphs: string[], namedGraphs: string[]): Promise<string> {
  try {
    return await sparqlParser.run<string>({ type: 'withUsing', text, baseIri, defaultGraphs, namedGraphs });
  } catch (e) {
    if (e instanceof ParseRejectedError && e.message.startsWith('USING_CONFLICT')) {
      throw new SparqlSyntaxError(
        'The update names its dataset with USING or WITH and the request with using-graph-uri / using-named-graph-uri; the protocol allows only one of them: drop the parameters or the clauses.',
      );
    }
    throw parseFailure(e, 'The SPARQL update does not parse');
  }
}

export interface LoadPlan {
  /** The update with each LOAD written as an INSERT DATA of its placeholder triple. */
  text: string;
  /** In order: the source, SILENT, and the exact placeholder text to replace with the triples (N-Triples lines). */
  loads: { source: string; silent: boolean; placeholder: string }[];
}

/** The update's LOAD operations, to be carried out by the caller (`token`: [A-Za-z0-9], unguessable). */
export async function planLoads(text: string, baseIri: string | undefined, token: string): Promise<LoadPlan> {
  try {
    return await sparqlParser.run<LoadPlan>({ type: 'planLoads', text, baseIri, token });
  } catch (e) {
    throw parseFailure(e, 'The SPARQL update does not parse');
  }
}

/**
 * The same on the calling thread, for flow validation, which is synchronous and only reads
 * inline texts of at most 10,000 characters: within the pre-scan's limits the slowest such text
 * measured here parses in about 100 ms (10 KB of `||` terms or of 62-deep FILTERs; VALUES rows
 * 12 ms), and only a signed-in flow editor sends one. Everything else uses analyzeSparql.
 */
export function analyzeShortSparqlNow(text: string, maxChars: number): Analysis {
  // `maxChars` counts code points; a string holds at most two UTF-16 units per code point.
  if (text.length > 2 * maxChars) throw new SparqlSyntaxError(`The SPARQL text has more than ${maxChars} characters.`);
  const key = `\u0000${text}`;
  const cached = analyses.get(key);
  if (cached) return cached;
  const failed = failedAhead.get(key);
  if (failed !== undefined) throw new SparqlSyntaxError(failed);
  assertSparqlLimits(text, 'SPARQL text');
  let parsed: sparqljs.SparqlQuery;
  try {
    parsed = new sparqljs.Parser().parse(text);
  } catch (e) {
    const byKeyword = /\\u|\\U/.test(text) ? formByKeyword(text) : null;
    if (byKeyword) return byKeyword;
    throw new SparqlSyntaxError(`The SPARQL request does not parse: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`);
  }
  const from = (parsed as { from?: { default?: unknown[]; named?: unknown[] } }).from;
  const analysis: Analysis =
    // A text of only comments and prologue parses without a form: an empty update, by the grammar.
    parsed.type === 'update' || !parsed.queryType
      ? { kind: 'update' }
      : { kind: 'query', form: parsed.queryType.toLowerCase() as QueryForm, definesDataset: (from?.default?.length ?? 0) + (from?.named?.length ?? 0) > 0 };
  analyses.set(key, analysis);
  return analysis;
}

/** Why texts analysed ahead failed, so the synchronous path does not parse them again. */
const failedAhead = new ByteBoundedLru<string>(4 * 1024 * 1024, (message, key) => 2 * (key.length + message.length) + 64);

/**
 * Analyses texts off the main thread, one after the other, ahead of a synchronous validation that
 * will ask analyzeShortSparqlNow about them: a flow of 200 tasks would otherwise parse up to 200
 * inline queries on the event loop. Texts longer than `maxChars` are left to the validation's
 * own length check; a busy pool leaves the work to the synchronous path.
 */
export async function analyzeSparqlAhead(texts: Iterable<string>, maxChars: number): Promise<void> {
  for (const text of new Set(texts)) {
    if (text.trim() === '' || text.length > 2 * maxChars) continue;
    try {
      await analyzeSparql(text);
    } catch (e) {
      if (e instanceof SparqlSyntaxError) failedAhead.set(`\u0000${text}`, e.message);
      else if (!(e instanceof EngineOverloadedError)) throw e;
    }
  }
}
