/**
 * The SPARQL setting the SPARQL query and SPARQL update tasks share: inline text or a saved
 * query. Its check on save (shape, size, syntax) and its text at run time, with flow values bound.
 */
import { analyzeShortSparqlNow, SparqlSyntaxError } from '../../../rdf/sparql-analysis.js';
import { instantiate, type TermValue } from '../../../rdf/sparql-template.js';
import { charLength, FLOW_LIMITS } from '../limits.js';
import type { CheckContext, SettingsReader } from './settings-reader.js';
import { substituted, TaskFailure, type TaskContext, type TaskServices } from './task-context.js';

/**
 * A SPARQL request: `{ "text": … }` inline (at most 10,000 characters), or
 * `{ "savedQuery": { "account", "name", "version"? } }`. Returns the inline text.
 */
export function sparqlSource(s: SettingsReader, key: string, ctx: CheckContext): string | undefined {
  const src = s.object(key, { required: true, what: 'the SPARQL ({ "text": … } or { "savedQuery": … })' });
  if (!src) return undefined;
  let text: string | undefined;
  if (src.has('text') === src.has('savedQuery')) {
    ctx.problem(src.path, 'invalid', 'Give exactly one of "text" (inline SPARQL) or "savedQuery" (a saved query).');
  }
  if (src.has('text')) {
    text = src.text('text', { required: true, max: FLOW_LIMITS.inlineSparql, what: 'the SPARQL text', references: false });
  }
  const saved = src.object('savedQuery', { what: 'a saved query ({ "account", "name", "version"? })' });
  if (saved) {
    saved.text('account', { required: true, what: 'the account owning the saved query' });
    saved.text('name', { required: true, what: 'the saved query name' });
    saved.integer('version', { min: 1, max: Number.MAX_SAFE_INTEGER });
    saved.finish();
  }
  src.finish();
  return text;
}

type Analysis = ReturnType<typeof analyzeShortSparqlNow>;

/** The query form of inline SPARQL, for checks; a syntax error is a problem at `path`. */
export function analyze(text: string, path: string, ctx: CheckContext): Analysis | undefined {
  if (text.trim() === '' || charLength(text) > FLOW_LIMITS.inlineSparql) return undefined;
  try {
    return analyzeShortSparqlNow(text, FLOW_LIMITS.inlineSparql);
  } catch (e) {
    if (e instanceof SparqlSyntaxError) {
      ctx.problem(path, 'invalid-sparql', e.message);
      return undefined;
    }
    throw e;
  }
}

/**
 * The SPARQL text of an inline or saved query, with flow values bound: a SPARQL variable named
 * like a flow value becomes that value as a term (an IRI when the value is an absolute IRI, else
 * a plain literal), substituted in the parsed query so a value can never change its syntax.
 */
export async function queryText(ctx: TaskContext, services: TaskServices, key: 'query' | 'update'): Promise<{ text: string; dataset?: { account: string; dataset: string } }> {
  const setting = (ctx.settings[key] ?? {}) as { text?: unknown; savedQuery?: { account?: unknown; name?: unknown; version?: unknown } };
  let raw: string;
  let dataset: { account: string; dataset: string } | undefined;
  if (typeof setting.text === 'string') raw = setting.text;
  else if (setting.savedQuery) {
    const account = substituted(ctx, setting.savedQuery.account);
    const name = substituted(ctx, setting.savedQuery.name);
    const version = setting.savedQuery.version === undefined ? undefined : Number(setting.savedQuery.version);
    const found = await services.savedQueries.get(ctx.caller, account, name, version);
    raw = found.version.query;
    if (found.dataset) dataset = { account: found.dataset.owner.accountName, dataset: found.dataset.dataset.name };
    ctx.log(`Using saved query ${account}/${name} version ${found.version.version}.`);
  } else throw new TaskFailure(`${key}: give "text" or "savedQuery".`);
  if (charLength(raw) > FLOW_LIMITS.inlineSparql && typeof setting.text === 'string') {
    throw new TaskFailure(`The SPARQL text has more than ${FLOW_LIMITS.inlineSparql} characters.`);
  }
  return { text: await bindValues(raw, ctx.values), dataset };
}

const ABSOLUTE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"{}|\\^`]*$/;

/** Binds every SPARQL variable that has a flow value; unset values leave the variable as it is. */
export async function bindValues(query: string, values: Readonly<Record<string, string>>): Promise<string> {
  const terms = new Map<string, TermValue>();
  for (const [name, value] of Object.entries(values)) {
    if (value === '' || name === 'system_platformToken') continue;
    terms.set(name, ABSOLUTE_IRI.test(value) ? { termType: 'NamedNode', value } : { termType: 'Literal', value });
  }
  try {
    return (await instantiate(query, terms)) ?? query;
  } catch (e) {
    throw new TaskFailure((e as Error).message);
  }
}
