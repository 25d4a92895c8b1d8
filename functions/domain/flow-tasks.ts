/**
 * What each task type does when the task worker runs it. Settings were validated on save; texts
 * are substituted here (`?name` → value) and checked again where a limit applies. Tasks act as the
 * run's starter: every dataset they touch goes through the same access checks as an HTTP request.
 */
import { evaluateDecision } from './flows/decision.js';
import { charLength, FLOW_LIMITS } from './flows/limits.js';
import type { DecisionSettings, TaskType } from './flows/model.js';
import type { FlowSwitches, RunRecord } from './flows/records.js';
import { isSingleReference, substituteReferences } from './flows/variables.js';
import { analyzeSparql } from '../rdf/sparql-analysis.js';
import { ntLine, parseNtLines } from '../rdf/nt.js';
import { instantiate, type TermValue } from '../rdf/sparql-template.js';
import type { AccessService } from './access-service.js';
import type { Caller } from './caller.js';
import { graphBlobKey, type GraphCatalog } from './graph-catalog.js';
import { GraphBlobWriter } from './graph-writer.js';
import type { GraphEntry } from './graphs.js';
import { assertAbsoluteIri } from './names.js';
import type { Platform } from './platform.js';
import type { SavedQueryService } from './saved-query-service.js';
import type { ServiceManager } from './service-manager.js';
import type { ArtifactRecord } from './flows/records.js';

/** A task went wrong: the run fails with this message (already free of secrets). */
export class TaskFailure extends Error {
  override name = 'TaskFailure';
}

export interface TaskContext {
  run: RunRecord;
  taskId: string;
  settings: Record<string, unknown>;
  timeoutSeconds?: number;
  /** Every value the task may use: variables, outputs so far, masked values, system variables. */
  values: Record<string, string>;
  /** The run's starter, whose permissions the task has. */
  caller: Caller;
  apiUrl: string;
  log(line: string): void;
  addArtifact(fileName: string, contentType: string, body: string | Buffer): Promise<ArtifactRecord>;
  setDescription(description: string): Promise<void>;
}

export interface TaskServices {
  platform: Platform;
  access: AccessService;
  catalog: GraphCatalog;
  sparql: ServiceManager;
  savedQueries: SavedQueryService;
}

type TaskRunner = (ctx: TaskContext, services: TaskServices) => Promise<unknown>;

const text = (ctx: TaskContext, value: unknown): string => substituteReferences(String(value ?? ''), ctx.values);

const RUNNERS: Partial<Record<TaskType, TaskRunner>> = {
  async setVariables(ctx) {
    const set = (ctx.settings.values ?? {}) as Record<string, string>;
    const variables = Object.fromEntries(Object.entries(set).map(([name, value]) => [name, text(ctx, value)]));
    for (const name of Object.keys(variables)) ctx.log(`Set ?${name}.`);
    return { variables };
  },

  async decision(ctx) {
    const branch = evaluateDecision(ctx.settings as unknown as DecisionSettings, ctx.values);
    ctx.log(branch ? `Chose "${branch}".` : 'No branch holds: every task after this decision is skipped.');
    return { branch };
  },

  async stopRun(ctx) {
    const reason = text(ctx, ctx.settings.reason);
    ctx.log(reason ? `Stop run: ${reason}` : 'Stop run.');
    return { reason };
  },

  async setDescription(ctx) {
    const description = text(ctx, ctx.settings.description);
    if (charLength(description) > FLOW_LIMITS.runDescription) {
      throw new TaskFailure(`The description has ${charLength(description)} characters after substitution; at most ${FLOW_LIMITS.runDescription} are allowed.`);
    }
    await ctx.setDescription(description);
    ctx.log('Set the run description.');
    return { description };
  },

  async wait(ctx) {
    const raw = ctx.settings.seconds;
    const written = typeof raw === 'number' ? String(raw) : text(ctx, raw);
    const seconds = Number(written.trim());
    if (written.trim() === '' || !Number.isInteger(seconds) || seconds < 0) {
      throw new TaskFailure(`Wait: "${written}" is not a whole number of seconds${typeof raw === 'string' && isSingleReference(raw) ? ` (from ${raw.trim()})` : ''}.`);
    }
    ctx.log(`Waiting ${seconds} s.`);
    return { seconds };
  },

  async sparqlQuery(ctx, services) {
    const query = await queryText(ctx, services, 'query');
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset', query.dataset);
    const analysis = analyzeSparql(query.text);
    if (analysis.kind !== 'query') throw new TaskFailure('The SPARQL query task needs a query (SELECT, ASK, CONSTRUCT or DESCRIBE), not an update.');
    const output = (ctx.settings.output ?? {}) as Record<string, unknown>;
    const form = analysis.form.toUpperCase();
    if (output.to === 'graph') {
      if (form !== 'CONSTRUCT' && form !== 'DESCRIBE') throw new TaskFailure(`Writing to a graph needs a CONSTRUCT or DESCRIBE query; this is ${form}.`);
      const target = datasetOf(ctx, output.dataset, 'output.dataset');
      const graphName = text(ctx, output.graph);
      try {
        assertAbsoluteIri(graphName, 'output.graph');
      } catch (e) {
        throw new TaskFailure((e as Error).message);
      }
      const result = await services.sparql.queryDataset(ctx.caller, account, dataset, { query: query.text, format: 'application/n-triples' });
      const written = await writeGraph(ctx, services, target.account, target.dataset, graphName, result, output.overwrite === true);
      ctx.log(`Wrote ${written.numberOfStatements} statements to <${graphName}> in ${target.account}/${target.dataset}.`);
      return { graph: graphName, statements: written.numberOfStatements };
    }
    if (form !== 'SELECT' && form !== 'ASK') throw new TaskFailure(`Saving a file needs a SELECT or ASK query; this is ${form}.`);
    const format = form === 'ASK' ? 'json' : output.format === 'csv' ? 'csv' : 'json';
    const mediaType = format === 'csv' ? 'text/csv' : 'application/sparql-results+json';
    const result = await services.sparql.queryDataset(ctx.caller, account, dataset, { query: query.text, format: mediaType });
    const fileName = text(ctx, output.fileName) || `${ctx.taskId}.${format}`;
    const artifact = await ctx.addArtifact(fileName, mediaType, result);
    ctx.log(`Saved the results as "${fileName}" (${artifact.size} bytes).`);
    return { artifact: artifact.id, fileName };
  },

  async httpRequest(ctx) {
    const method = String(ctx.settings.method ?? 'GET');
    const url = text(ctx, ctx.settings.url);
    if (!/^https?:\/\//i.test(url)) throw new TaskFailure(`The URL "${url}" is not an http(s) URL; check the variables it uses.`);
    const headers = Object.fromEntries(Object.entries((ctx.settings.headers ?? {}) as Record<string, string>).map(([k, v]) => [k, text(ctx, v)]));
    const body = ctx.settings.body === undefined || method === 'GET' || method === 'HEAD' ? undefined : text(ctx, ctx.settings.body);
    const timeoutMs = Math.min((ctx.timeoutSeconds ?? HTTP_DEFAULT_TIMEOUT_SECONDS) * 1000, HTTP_DEFAULT_TIMEOUT_SECONDS * 1000);
    ctx.log(`${method} ${url}`);
    let response: Response;
    try {
      response = await fetch(url, { method, headers, body, redirect: 'follow', signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      const cause = (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
      throw new TaskFailure(`${method} ${url} failed: ${cause}`);
    }
    const responseText = await boundedText(response, HTTP_MAX_BODY_CHARS);
    ctx.log(`Answered ${response.status} ${response.statusText} (${responseText.length} characters kept).`);
    if (response.status >= 400) throw new TaskFailure(`${method} ${url} answered ${response.status} ${response.statusText}.`);
    return { status: response.status, body: responseText };
  },

  async sparqlUpdate(ctx, services) {
    const update = await queryText(ctx, services, 'update');
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset', update.dataset);
    if (analyzeSparql(update.text).kind !== 'update') throw new TaskFailure('The SPARQL update task needs an update (INSERT, DELETE, ...), not a query.');
    const result = await services.sparql.updateDataset(ctx.caller, account, dataset, update.text, ctx.apiUrl);
    ctx.log(`Updated ${account}/${dataset}: ${result.graphCount} graphs, ${result.statements} statements now.`);
    return { graphs: result.graphCount, statements: result.statements };
  },
};

/** Runs one task; the switches decide whether the SPARQL update task may run at all. */
export async function runTaskOfType(type: TaskType, ctx: TaskContext, services: TaskServices, switches: FlowSwitches): Promise<unknown> {
  if (type === 'sparqlUpdate' && !switches.sparqlUpdateTaskEnabled) {
    throw new TaskFailure('The SPARQL update task is switched off on this instance.');
  }
  const runner = RUNNERS[type];
  if (!runner) throw new TaskFailure(`The task type "${type}" is not available on this instance yet.`);
  return runner(ctx, services);
}

// ---- Helpers ----

/** An HTTP request task waits at most this long unless its Timeout is shorter. */
const HTTP_DEFAULT_TIMEOUT_SECONDS = 300;
/** The response body kept in the task's output (it travels in the run document). */
const HTTP_MAX_BODY_CHARS = 10_000;

async function boundedText(response: Response, maxChars: number): Promise<string> {
  if (!response.body) return '';
  const decoder = new TextDecoder();
  let out = '';
  const reader = response.body.getReader();
  try {
    while (out.length < maxChars) {
      const { done, value } = await reader.read();
      if (done) break;
      out += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return out.slice(0, maxChars);
}

function datasetOf(ctx: TaskContext, value: unknown, path: string, fallback?: { account: string; dataset: string }): { account: string; dataset: string } {
  if ((value === undefined || value === null) && fallback) return fallback;
  const ref = (value ?? {}) as { account?: unknown; dataset?: unknown };
  const account = text(ctx, ref.account);
  const dataset = text(ctx, ref.dataset);
  if (!account || !dataset) throw new TaskFailure(`${path}: the dataset is not set (account "${account}", dataset "${dataset}"); check the variables it uses.`);
  return { account, dataset };
}

/**
 * The SPARQL text of an inline or saved query, with flow values bound: a SPARQL variable named
 * like a flow value becomes that value as a term (an IRI when the value is an absolute IRI, else
 * a plain literal), substituted in the parsed query so a value can never change its syntax.
 */
async function queryText(ctx: TaskContext, services: TaskServices, key: 'query' | 'update'): Promise<{ text: string; dataset?: { account: string; dataset: string } }> {
  const setting = (ctx.settings[key] ?? {}) as { text?: unknown; savedQuery?: { account?: unknown; name?: unknown; version?: unknown } };
  let raw: string;
  let dataset: { account: string; dataset: string } | undefined;
  if (typeof setting.text === 'string') raw = setting.text;
  else if (setting.savedQuery) {
    const account = text(ctx, setting.savedQuery.account);
    const name = text(ctx, setting.savedQuery.name);
    const version = setting.savedQuery.version === undefined ? undefined : Number(setting.savedQuery.version);
    const found = await services.savedQueries.get(ctx.caller, account, name, version);
    raw = found.version.query;
    if (found.dataset) dataset = { account: found.dataset.owner.accountName, dataset: found.dataset.dataset.name };
    ctx.log(`Using saved query ${account}/${name} version ${found.version.version}.`);
  } else throw new TaskFailure(`${key}: give "text" or "savedQuery".`);
  if (charLength(raw) > FLOW_LIMITS.inlineSparql && typeof setting.text === 'string') {
    throw new TaskFailure(`The SPARQL text has more than ${FLOW_LIMITS.inlineSparql} characters.`);
  }
  return { text: bindValues(raw, ctx.values), dataset };
}

const ABSOLUTE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"{}|\\^`]*$/;

/** Binds every SPARQL variable that has a flow value; unset values leave the variable as it is. */
export function bindValues(query: string, values: Readonly<Record<string, string>>): string {
  const terms = new Map<string, TermValue>();
  for (const [name, value] of Object.entries(values)) {
    if (value === '' || name === 'system_platformToken') continue;
    terms.set(name, ABSOLUTE_IRI.test(value) ? { termType: 'NamedNode', value } : { termType: 'Literal', value });
  }
  try {
    return instantiate(query, terms) ?? query;
  } catch (e) {
    throw new TaskFailure((e as Error).message);
  }
}

/**
 * Writes N-Triples into one graph of a dataset: replaces the graph (`overwrite`) or adds to it.
 * A new dataset version, swapped in like an import, so a failure changes nothing.
 */
async function writeGraph(
  ctx: TaskContext,
  services: TaskServices,
  account: string,
  datasetName: string,
  graphName: string,
  ntriples: string,
  overwrite: boolean,
): Promise<GraphEntry> {
  const { platform, access, catalog } = services;
  const { dataset } = await access.writableDataset(ctx.caller, account, datasetName, 'write graphs');
  // Blank nodes from this run must not merge with the graph's own.
  const prefix = `r${ctx.run.id.slice(0, 8)}${ctx.taskId}`;
  const quads = parseNtLines(ntriples).map((q) => ({
    subject: q.subject.startsWith('_:') ? `_:${prefix}${q.subject.slice(2)}` : q.subject,
    predicate: q.predicate,
    object: q.object.startsWith('_:') ? `_:${prefix}${q.object.slice(2)}` : q.object,
    graph: null,
  }));
  let entry: GraphEntry | undefined;
  const written: string[] = [];
  try {
    const result = await catalog.swap(dataset.id, async (current) => {
      const writer = new GraphBlobWriter(platform.blobs.data, graphBlobKey(dataset.id, platform.ids.newId()));
      written.push(writer.blobKey);
      const old = current.graphs.find((g) => g.graphName === graphName);
      if (old && !overwrite) {
        for await (const line of await catalog.lines(old.blobKey)) {
          const draining = line ? writer.add(line) : undefined;
          if (draining) await draining;
        }
      }
      for (const q of quads) {
        // The writer takes lines without their newline (and so drops statements the graph holds).
        const draining = writer.add(ntLine(q).slice(0, -1));
        if (draining) await draining;
      }
      await writer.end();
      entry = {
        id: old?.id ?? platform.ids.newId(),
        graphName,
        numberOfStatements: writer.statements,
        importedAt: platform.clock.now().toISOString(),
        blobKey: writer.blobKey,
      };
      const others = current.graphs.filter((g) => g.graphName !== graphName);
      return { graphs: entry.numberOfStatements > 0 ? [...others, entry] : others };
    });
    await catalog.collect(dataset.id, result.previous);
    for (const key of written) if (key !== entry?.blobKey) await platform.blobs.data.delete(key).catch(() => {});
  } catch (e) {
    for (const key of written) await platform.blobs.data.delete(key).catch(() => {});
    throw e;
  }
  return entry!;
}
