/**
 * What each task type does when the task worker runs it. Settings were validated on save; texts
 * are substituted here (`?name` → value) and checked again where a limit applies. Tasks act as the
 * run's starter: every dataset they touch goes through the same access checks as an HTTP request.
 */
import { Readable } from 'node:stream';
import type { SecretMask } from '../masking.js';
import { evaluateDecision } from './decision.js';
import { charLength, FLOW_LIMITS } from '../limits.js';
import type { DecisionSettings, TaskType } from '../blueprints/model.js';
import type { FlowSwitches, RunRecord } from '../records.js';
import { isSingleReference, substituteReferences } from '../blueprints/variables.js';
import { analyzeSparql } from '../../../rdf/sparql-analysis.js';
import { ntLine, parseNtLines, sanitizeBlankLabel } from '../../../rdf/nt.js';
import { parseRdf } from '../../../rdf/parse.js';
import { instantiate, type TermValue } from '../../../rdf/sparql-template.js';
import type { FetchedFile } from '../../../ports/url-fetcher.js';
import type { AccessService } from '../../datasets/access-service.js';
import type { Caller } from '../../shared/caller.js';
import type { DatasetService } from '../../datasets/dataset-service.js';
import type { DatasetRecord } from '../../datasets/datasets.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { GraphStager, swapInGraphs } from './graph-writes.js';
import { describeFormat, detectFormat, formatOfSetting, openDownload, readAsLines, type LoadFormat } from './load-file.js';
import { SHACL_MAX_STATEMENTS, TripleCollector, validateShacl } from './shacl-validation.js';
import type { GraphCatalog } from '../../data/graph-catalog.js';
import type { GraphEntry } from '../../data/graphs.js';
import { assertAbsoluteIri } from '../../shared/names.js';
import type { Platform } from '../../shared/platform.js';
import type { SavedQueryService } from '../../queries/saved-query-service.js';
import type { ServiceManager } from '../../sparql/service-manager.js';
import { isOutOfSync, serviceTypeOf, type ServiceRecord } from '../../sparql/services.js';
import type { ArtifactRecord } from '../records.js';

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
  /** The run's secrets (masked values, platform token), for text a task cuts before returning it. */
  secrets: SecretMask;
  addArtifact(fileName: string, contentType: string, body: string | Buffer): Promise<ArtifactRecord>;
  setDescription(description: string): Promise<void>;
}

export interface TaskServices {
  platform: Platform;
  access: AccessService;
  catalog: GraphCatalog;
  sparql: ServiceManager;
  savedQueries: SavedQueryService;
  datasets: DatasetService;
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
    const analysis = await analyzeSparql(query.text);
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

  async httpRequest(ctx, services) {
    const method = String(ctx.settings.method ?? 'GET');
    const url = text(ctx, ctx.settings.url);
    if (!/^https?:\/\//i.test(url)) throw new TaskFailure(`The URL "${url}" is not an http(s) URL; check the variables it uses.`);
    const headers = Object.fromEntries(Object.entries((ctx.settings.headers ?? {}) as Record<string, string>).map(([k, v]) => [k, text(ctx, v)]));
    const body = ctx.settings.body === undefined || method === 'GET' || method === 'HEAD' ? undefined : text(ctx, ctx.settings.body);
    const timeoutMs = Math.min((ctx.timeoutSeconds ?? HTTP_DEFAULT_TIMEOUT_SECONDS) * 1000, HTTP_DEFAULT_TIMEOUT_SECONDS * 1000);
    ctx.log(`${method} ${url}`);
    let response: Response;
    try {
      response = await services.platform.fetcher.request(url, { method, headers, ...(body !== undefined ? { body } : {}), timeoutMs });
    } catch (e) {
      const cause = (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
      throw new TaskFailure(`${method} ${url} failed: ${cause}`);
    }
    // Read past the cut by the longest secret, so a secret straddling it is masked whole.
    const responseText = ctx.secrets.cut(await boundedText(response, HTTP_MAX_BODY_CHARS + ctx.secrets.longest), HTTP_MAX_BODY_CHARS);
    ctx.log(`Answered ${response.status} ${response.statusText} (${responseText.length} characters kept).`);
    if (response.status >= 400) throw new TaskFailure(`${method} ${url} answered ${response.status} ${response.statusText}.`);
    const variables: Record<string, string> = {};
    if (typeof ctx.settings.statusVariable === 'string') variables[ctx.settings.statusVariable] = String(response.status);
    if (typeof ctx.settings.bodyVariable === 'string') variables[ctx.settings.bodyVariable] = responseText;
    return { status: response.status, body: responseText, ...(Object.keys(variables).length > 0 ? { variables } : {}) };
  },

  async sparqlUpdate(ctx, services) {
    const update = await queryText(ctx, services, 'update');
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset', update.dataset);
    if ((await analyzeSparql(update.text)).kind !== 'update') throw new TaskFailure('The SPARQL update task needs an update (INSERT, DELETE, ...), not a query.');
    const result = await services.sparql.updateDataset(ctx.caller, account, dataset, update.text, ctx.apiUrl);
    ctx.log(`Updated ${account}/${dataset}: ${result.graphCount} graphs, ${result.statements} statements now.`);
    return { graphs: result.graphCount, statements: result.statements };
  },

  async loadFromUrl(ctx, services) {
    const url = httpUrlOf(ctx, ctx.settings.url, 'url');
    const target = datasetOf(ctx, ctx.settings.dataset, 'dataset');
    const graphName = iriOf(ctx, ctx.settings.graph, 'graph') || url;
    const explicit = formatOfSetting(String(ctx.settings.format ?? 'auto'));
    const overwrite = ctx.settings.overwrite === true;
    const dataset = await targetDataset(ctx, services, target, ctx.settings.createDataset === true);
    const fetched = await download(ctx, services, url, headersOf(ctx), LOAD_MAX_BYTES);
    const stager = new GraphStager(services.platform, dataset.id, MAX_LOAD_GRAPHS);
    stager.touch(graphName);
    let staged;
    try {
      const file = await openDownload(fetched.body, fetched.fileName);
      const format = explicit ?? detectFormat(fetched.fileName, fetched.contentType, file.head);
      if (!format) {
        throw new TaskFailure(`Cannot tell the format of ${url} (file "${fetched.fileName}", content type "${fetched.contentType ?? 'none'}"); set the task's format.`);
      }
      ctx.log(`Reading "${fetched.fileName}" as ${describeFormat(format)}${explicit ? '' : ' (detected)'}.`);
      const lines = readAsLines(file.body, format, { graph: graphName, baseIRI: url, blankNodePrefix: blankPrefixOf(ctx), fileName: fetched.fileName });
      for await (const batch of lines) {
        const graph = batch.graph ?? graphName;
        for (const line of batch.lines) {
          const draining = stager.add(graph, line);
          if (draining) await draining;
        }
      }
      staged = await stager.finish();
    } catch (e) {
      fetched.body.destroy();
      await stager.discard();
      throw e instanceof TaskFailure ? e : new TaskFailure(`Loading ${url} failed: ${(e as Error).message}`);
    }
    const entries = await swapInGraphs(services.platform, services.catalog, dataset, staged, overwrite);
    const statements = staged.reduce((n, s) => n + s.statements, 0);
    for (const [i, part] of staged.entries()) {
      if (part.graphName !== graphName && part.statements === 0) continue;
      ctx.log(`${overwrite ? 'Replaced' : 'Added to'} <${part.graphName}> in ${target.account}/${target.dataset}: ${part.statements} statements loaded, ${entries[i]!.numberOfStatements} in the graph.`);
    }
    const graphs = staged.filter((s) => s.graphName !== graphName).map((s) => s.graphName);
    return { graph: graphName, statements, ...(graphs.length > 0 ? { graphs: [graphName, ...graphs] } : {}) };
  },

  async shaclValidation(ctx, services) {
    const data = datasetOf(ctx, ctx.settings.dataset, 'dataset');
    const graph = iriOf(ctx, ctx.settings.graph, 'graph') || null;
    const shapesSetting = (ctx.settings.shapes ?? {}) as Record<string, unknown>;
    const shapes = new TripleCollector('shapes');
    if (shapesSetting.url !== undefined) {
      const url = httpUrlOf(ctx, shapesSetting.url, 'shapes.url');
      const fetched = await download(ctx, services, url, {}, SHAPES_MAX_BYTES);
      try {
        const file = await openDownload(fetched.body, fetched.fileName);
        const format: LoadFormat | null = detectFormat(fetched.fileName, fetched.contentType, file.head);
        if (format?.kind !== 'rdf') {
          throw new TaskFailure(`The shapes at ${url} are not in an RDF format (file "${fetched.fileName}", content type "${fetched.contentType ?? 'none'}"); serve them as Turtle, N-Triples, RDF/XML, JSON-LD, TriG or N-Quads.`);
        }
        const batches = parseRdf(Readable.from(file.body), { format: format.format, baseIRI: url, blankNodePrefix: blankPrefixOf(ctx), fileName: fetched.fileName });
        for await (const batch of batches) for (const q of batch) shapes.addQuad(q);
      } catch (e) {
        fetched.body.destroy();
        throw e instanceof TaskFailure ? e : new TaskFailure(`Reading the shapes from ${url} failed: ${(e as Error).message}`);
      }
    } else {
      const ref = datasetOf(ctx, shapesSetting.dataset, 'shapes.dataset');
      await readGraphsInto(ctx, services, ref, iriOf(ctx, shapesSetting.graph, 'shapes.graph') || null, shapes, 'shapes');
    }
    const dataStore = new TripleCollector('data');
    await readGraphsInto(ctx, services, data, graph, dataStore, 'data');
    ctx.log(`Validating ${dataStore.store.size} statements against ${shapes.store.size} statements of shapes.`);
    let outcome;
    try {
      outcome = await validateShacl(shapes.store, dataStore.store);
    } catch (e) {
      throw new TaskFailure(`The SHACL validation failed: ${(e as Error).message}`);
    }
    const artifact = await ctx.addArtifact(SHACL_REPORT, 'text/turtle', outcome.turtle);
    ctx.log(`${outcome.conforms ? 'The data conforms to the shapes' : `The data does not conform: ${outcome.violations} violation${outcome.violations === 1 ? '' : 's'}`}; the report is "${SHACL_REPORT}" (${artifact.size} bytes).`);
    if (!outcome.conforms && ctx.settings.failOnViolation === true) {
      throw new TaskFailure(`The data does not conform to the shapes: ${outcome.violations} violation${outcome.violations === 1 ? '' : 's'} (see ${SHACL_REPORT}).`);
    }
    return { conforms: outcome.conforms, violations: outcome.violations };
  },

  async sendEmail(ctx, services) {
    const lists = Object.fromEntries(
      (['to', 'cc', 'bcc'] as const).map((key) => {
        const written = Array.isArray(ctx.settings[key]) ? (ctx.settings[key] as unknown[]) : [];
        // A value may hold several addresses, separated by commas or semicolons.
        const addresses = written.flatMap((entry) => text(ctx, entry).split(/[,;]/)).map((a) => a.trim()).filter((a) => a !== '');
        for (const address of addresses) {
          if (!EMAIL.test(address)) throw new TaskFailure(`${key}: "${address}" is not an email address; check the variables it uses.`);
        }
        return [key, addresses];
      }),
    ) as Record<'to' | 'cc' | 'bcc', string[]>;
    const recipients = lists.to.length + lists.cc.length + lists.bcc.length;
    if (recipients === 0) throw new TaskFailure('The email has no recipients after substitution; check the variables it uses.');
    if (recipients > FLOW_LIMITS.emailRecipients) {
      throw new TaskFailure(`The email has ${recipients} recipients after substitution, counted across to, cc and bcc; at most ${FLOW_LIMITS.emailRecipients} are allowed.`);
    }
    // A line break in a subject would start a header of its own.
    const subject = text(ctx, ctx.settings.subject).replace(/[\r\n]+/g, ' ');
    const body = text(ctx, ctx.settings.body);
    if (charLength(body) > FLOW_LIMITS.emailBody) {
      throw new TaskFailure(`The email body has ${charLength(body)} characters after substitution; at most ${FLOW_LIMITS.emailBody} are allowed.`);
    }
    let sent: { messageId: string };
    try {
      sent = await services.platform.mailer.send({ to: lists.to, ...(lists.cc.length ? { cc: lists.cc } : {}), ...(lists.bcc.length ? { bcc: lists.bcc } : {}), subject, text: body });
    } catch (e) {
      throw new TaskFailure(`Sending the email failed: ${(e as Error).message}`);
    }
    ctx.log(`Sent the email to ${recipients} recipient${recipients === 1 ? '' : 's'} (message ${sent.messageId}).`);
    return { messageId: sent.messageId, recipients };
  },

  async setAccessLevel(ctx, services) {
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset');
    const written = text(ctx, ctx.settings.accessLevel).trim();
    const accessLevel = ACCESS_LEVELS.find((level) => level === written.toLowerCase());
    if (!accessLevel) {
      throw new TaskFailure(`"${written}" is not an access level; use Public, Internal or Private${typeof ctx.settings.accessLevel === 'string' && isSingleReference(ctx.settings.accessLevel) ? ` (from ${ctx.settings.accessLevel.trim()})` : ''}.`);
    }
    const before = (await services.access.writableDataset(ctx.caller, account, dataset, 'change datasets')).dataset.accessLevel;
    await services.datasets.update(ctx.caller, account, dataset, { accessLevel });
    ctx.log(before === accessLevel ? `${account}/${dataset} is already ${accessLevel}.` : `Changed ${account}/${dataset} from ${before} to ${accessLevel}.`);
    return { accessLevel, previous: before };
  },

  async serviceAction(ctx, services) {
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset');
    const name = text(ctx, ctx.settings.service).trim();
    if (!name) throw new TaskFailure('service: the service name is empty; check the variables it uses.');
    const action = String(ctx.settings.action) as 'start' | 'stop' | 'sync';
    const serviceType = ctx.settings.serviceType === undefined ? undefined : String(ctx.settings.serviceType);
    if (serviceType === 'textSearch') throw new TaskFailure('Text search services are not available on this instance.');
    const manager = services.sparql;
    // Reading the dataset first: a missing or unreadable dataset fails here, a missing service below.
    const { dataset: record } = await services.access.readableDataset(ctx.caller, account, dataset);
    const existing = await manager.get(ctx.caller, account, dataset, name).then(
      (found) => found.service,
      (e: unknown) => {
        if (e instanceof NotFoundError) return null;
        throw e;
      },
    );
    const label = `service "${name}" of ${account}/${dataset}`;
    if (!existing) {
      if (action !== 'start') throw new TaskFailure(`Cannot ${action} the ${label}: it does not exist.`);
      await manager.create(ctx.caller, account, dataset, { name, type: serviceType ?? 'Sparql' });
      ctx.log(`Created the ${label} (${serviceType ?? 'Sparql'}).`);
    } else if (action === 'sync' && !isOutOfSync(existing, record.graphsManifest)) {
      ctx.log(`The ${label} already serves the dataset's current data.`);
    } else {
      if (serviceType && serviceTypeOf(serviceType) !== existing.type) ctx.log(`The ${label} is of type ${existing.type}; the task's type ${serviceType} applies only when it creates the service.`);
      await manager.act(ctx.caller, account, dataset, name, action);
      ctx.log(`${action === 'stop' ? 'Stopped' : action === 'start' ? 'Starting' : 'Syncing'} the ${label}.`);
    }
    if (action === 'stop') return { service: name, status: 'stopped' };
    const service = await untilSettled(ctx, services, account, dataset, name, label);
    if (service.status !== 'running') {
      throw new TaskFailure(`The ${label} did not ${action}: ${service.error?.message ?? `it is ${service.status}`}.`);
    }
    // A failed sync leaves the service running on its old data.
    if (action === 'sync' && service.snapshot.manifestKey !== (record.graphsManifest ?? null) && service.error) {
      throw new TaskFailure(`The ${label} did not sync: ${service.error.message}`);
    }
    ctx.log(`The ${label} is running.`);
    return { service: name, status: service.status };
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

/** A Load from URL task reads at most this many bytes (after decompression they may be more). */
const LOAD_MAX_BYTES = 1024 * 1024 * 1024;
/** Graphs one file may write (TriG, N-Quads, JSON-LD name their graphs). */
const MAX_LOAD_GRAPHS = 5000;
/** Downloads take at most this long unless the task's Timeout is shorter. */
const DOWNLOAD_TIMEOUT_SECONDS = 30 * 60;
/** Shapes files are small. */
const SHAPES_MAX_BYTES = 100 * 1024 * 1024;
const SHACL_REPORT = 'shacl-report.ttl';
/** Service actions wait at most this long for the service to run, unless the Timeout is shorter. */
const SERVICE_WAIT_SECONDS = 600;
const SERVICE_POLL_MS = 250;
/** The catalogue's check of an address. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ACCESS_LEVELS = ['public', 'internal', 'private'] as const;

function httpUrlOf(ctx: TaskContext, value: unknown, path: string): string {
  const url = text(ctx, value).trim();
  if (!/^https?:\/\/[^\s]+$/i.test(url)) throw new TaskFailure(`${path}: "${url}" is not an http(s) URL; check the variables it uses.`);
  return url;
}

/** An optional IRI setting: '' when not given. */
function iriOf(ctx: TaskContext, value: unknown, path: string): string {
  if (value === undefined || value === null) return '';
  const iri = text(ctx, value).trim();
  if (iri === '') return '';
  try {
    return assertAbsoluteIri(iri, path);
  } catch (e) {
    throw new TaskFailure((e as Error).message);
  }
}

/** Request headers with values substituted (they may hold masked values: never log them). */
function headersOf(ctx: TaskContext): Record<string, string> {
  return Object.fromEntries(Object.entries((ctx.settings.headers ?? {}) as Record<string, unknown>).map(([name, value]) => [name, text(ctx, value)]));
}

/** A blank node label prefix unique to this task of this run. */
const blankPrefixOf = (ctx: TaskContext): string => sanitizeBlankLabel(`r${ctx.run.id.slice(0, 8)}${ctx.taskId}x`);

/** Fetches a URL through the platform's fetcher, bounded in size and time. */
async function download(ctx: TaskContext, services: TaskServices, url: string, headers: Record<string, string>, maxBytes: number): Promise<FetchedFile> {
  const timeoutMs = Math.min(ctx.timeoutSeconds ?? DOWNLOAD_TIMEOUT_SECONDS, DOWNLOAD_TIMEOUT_SECONDS) * 1000;
  const names = Object.keys(headers);
  ctx.log(`GET ${url}${names.length ? ` (headers: ${names.join(', ')})` : ''}`);
  try {
    return await services.platform.fetcher.fetch(url, { maxBytes, timeoutMs, headers });
  } catch (e) {
    const cause = (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
    throw new TaskFailure(`Downloading ${url} failed: ${cause}`);
  }
}

/** The dataset a load writes to, created (private) when missing and allowed. */
async function targetDataset(ctx: TaskContext, services: TaskServices, ref: { account: string; dataset: string }, create: boolean): Promise<DatasetRecord> {
  const writable = async () => (await services.access.writableDataset(ctx.caller, ref.account, ref.dataset, 'write graphs')).dataset;
  try {
    return await writable();
  } catch (e) {
    if (!create || !(e instanceof NotFoundError) || !(await services.platform.store.getAccountByName(ref.account))) throw e;
  }
  try {
    const { dataset } = await services.datasets.create(ctx.caller, ref.account, { name: ref.dataset, accessLevel: 'private' });
    ctx.log(`Created the dataset ${ref.account}/${ref.dataset} (private).`);
    return dataset;
  } catch (e) {
    // Created meanwhile (or there but not visible to the starter): the ordinary check answers.
    if (e instanceof ConflictError) return writable();
    throw e;
  }
}

/** Reads a dataset's graphs (or one) into a collector, after checking their size. */
async function readGraphsInto(
  ctx: TaskContext,
  services: TaskServices,
  ref: { account: string; dataset: string },
  graphName: string | null,
  into: TripleCollector,
  what: string,
): Promise<void> {
  const { dataset } = await services.access.readableDataset(ctx.caller, ref.account, ref.dataset);
  const { graphs } = await services.catalog.manifest(dataset);
  const chosen = graphName === null ? graphs : graphs.filter((g) => g.graphName === graphName);
  if (graphName !== null && chosen.length === 0) throw new TaskFailure(`Graph <${graphName}> does not exist in ${ref.account}/${ref.dataset}.`);
  const statements = chosen.reduce((n, g) => n + g.numberOfStatements, 0);
  if (statements > SHACL_MAX_STATEMENTS) {
    throw new TaskFailure(`The ${what} (${graphName ? `<${graphName}> of ` : ''}${ref.account}/${ref.dataset}) hold ${statements} statements; a SHACL validation reads at most ${SHACL_MAX_STATEMENTS}.`);
  }
  for (const g of chosen) for await (const line of await services.catalog.lines(g.blobKey)) into.addLine(line);
  ctx.log(`Read ${statements} statements of ${what} from ${graphName ? `<${graphName}> of ` : ''}${ref.account}/${ref.dataset}.`);
}

/** Polls a service until it is no longer starting or updating (bounded by the Timeout). */
async function untilSettled(ctx: TaskContext, services: TaskServices, account: string, dataset: string, name: string, label: string): Promise<ServiceRecord> {
  const seconds = Math.min(ctx.timeoutSeconds ?? SERVICE_WAIT_SECONDS, SERVICE_WAIT_SECONDS);
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const { service } = await services.sparql.get(ctx.caller, account, dataset, name);
    if (service.status !== 'starting' && service.status !== 'updating') return service;
    if (Date.now() >= deadline) throw new TaskFailure(`The ${label} is still ${service.status} after ${seconds} s.`);
    await new Promise((resolve) => setTimeout(resolve, SERVICE_POLL_MS));
  }
}

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
  const stager = new GraphStager(platform, dataset.id);
  stager.touch(graphName);
  let staged;
  try {
    for (const q of parseNtLines(ntriples)) {
      const line = ntLine({
        subject: q.subject.startsWith('_:') ? `_:${prefix}${q.subject.slice(2)}` : q.subject,
        predicate: q.predicate,
        object: q.object.startsWith('_:') ? `_:${prefix}${q.object.slice(2)}` : q.object,
        graph: null,
      });
      // The writer takes lines without their newline (and so drops statements the graph holds).
      const draining = stager.add(graphName, line.slice(0, -1));
      if (draining) await draining;
    }
    staged = await stager.finish();
  } catch (e) {
    await stager.discard();
    throw e;
  }
  const [entry] = await swapInGraphs(platform, catalog, dataset, staged, overwrite);
  return entry!;
}
