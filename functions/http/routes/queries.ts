import { z } from 'zod';
import { ACCESS_LEVELS } from '../../domain/datasets/datasets.js';
import { ServiceUnavailableError, ValidationError } from '../../domain/shared/errors.js';
import { QueryExtras } from '../../domain/queries/query-extras.js';
import { allowQueryParams, withoutQueryParams } from '../query-params.js';
import { parsePageRequest } from '../../domain/shared/paging.js';
import { annotatedText, savedQueryView } from '../../domain/queries/saved-queries.js';
import { type Found, MAX_RUN_PAGE_SIZE, DEFAULT_RUN_PAGE_SIZE, QueryMovedError, type QueryValues } from '../../domain/queries/saved-query-service.js';
import { formatBySuffix, type QueryForm, type ResultFormat } from '../../rdf/formats.js';
import { toBindingObjects, toCsv, toTsv, toXml } from '../../rdf/sparql-results.js';
import type { Operation, OperationContext, Operations } from '../api.js';
import { jsonResponse } from '../errors.js';
import { chooseFormat } from '../negotiation.js';
import { nextLink, parseJsonBody, singleQueryParam } from '../request.js';
import type { HttpResponse } from '../types.js';

const variable = z.object({
  name: z.string('is required'),
  termType: z.enum(['NamedNode', 'Literal'], 'must be "NamedNode" or "Literal"'),
  datatype: z.string().optional(),
  language: z.string().optional(),
  defaultValue: z.string().optional(),
  required: z.boolean().optional(),
  allowedValues: z.array(z.string()).max(1000).optional(),
});

const requestConfig = z.object({
  payload: z.object({ query: z.string().optional(), update: z.string().optional() }),
  headers: z.record(z.string(), z.string()).optional(),
  ldFrame: z.record(z.string(), z.unknown()).optional(),
});
const renderConfig = z.object({ output: z.string().max(100).optional(), settings: z.record(z.string(), z.unknown()).optional() }).optional();
const serviceConfig = z.object({ type: z.string().optional() }).loose().optional();

export const CreateBody = z.object({
  name: z.string('is required'),
  displayName: z.string().max(256).optional(),
  description: z.string().max(10_000).optional(),
  accessLevel: z.enum(ACCESS_LEVELS).optional(),
  dataset: z.string().optional(),
  tags: z.array(z.string().max(64)).max(50).optional(),
  serviceConfig,
  requestConfig,
  renderConfig,
  variables: z.array(variable).optional(),
});
export const VersionBody = z.object({ requestConfig, renderConfig, variables: z.array(variable).optional() });
/** Metadata only: the fields of a new query that are not versioned, all optional. */
export const MetaBody = CreateBody.pick({ name: true, displayName: true, description: true, accessLevel: true, dataset: true, tags: true, serviceConfig: true }).partial();

const queryUrl = (ctx: OperationContext, found: Found) => `${ctx.apiUrl}/queries/${found.owner.accountName}/${found.query.name}`;

const extras = (ctx: OperationContext) => new QueryExtras(ctx.services.platform, ctx.services.access);

/** A query's view; `full` (one query, not a listing) adds its versions and how its last run went. */
async function view(ctx: OperationContext, found: Found, full = false) {
  const serviceName = await ctx.services.savedQueries.serviceName(found);
  const endpoint = ctx.services.savedQueries.endpointOf(found, ctx.apiUrl, serviceName);
  const v = savedQueryView(found.query, found.version, found.owner, found.dataset, { query: queryUrl(ctx, found), endpoint });
  const record = serviceName && found.dataset ? await ctx.services.platform.store.getService(found.dataset.dataset.id, serviceName) : null;
  v.serviceConfig = {
    type: found.query.serviceType,
    service: record ? { id: record.id, name: record.name, type: record.type } : found.query.serviceType === 'speedy' && found.dataset ? { id: found.dataset.dataset.id, name: 'sparql', type: 'speedy' } : undefined,
  };
  if (full) {
    const x = extras(ctx);
    const [versionsInformation, executionStats] = await Promise.all([x.versionsInformation(found.query), x.executionStats(found.query.id)]);
    v.versionsInformation = versionsInformation;
    v.executionStats = executionStats ?? { status: 'No information' };
  }
  return v;
}

/** Records how a run went (best effort: a failed write never fails the run). */
async function recordRun(ctx: OperationContext, queryId: string, started: number, outcome: { resultCount?: number; error?: Error }) {
  const clock = ctx.services.platform.clock;
  const err = outcome.error;
  await extras(ctx)
    .recordExecution(queryId, {
      executedAt: new Date(started).toISOString(),
      executionTimeInMs: Math.max(0, clock.now().getTime() - started),
      resultCount: outcome.resultCount,
      status: err ? (err instanceof ValidationError ? 'Parsing error' : err instanceof ServiceUnavailableError ? 'No suitable service' : 'Service error') : 'Success',
      errorMessage: err ? err.message.slice(0, 500) : undefined,
    })
    .catch((e: Error) => ctx.services.logger.warn('query statistics not recorded', { queryId, error: e.message }));
}

const versionParam = (ctx: OperationContext): number | undefined => {
  const raw = ctx.params.version;
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]{0,8}$/.test(raw)) throw new ValidationError(`"${raw}" is not a version number (versions count from 1).`);
  return Number(raw);
};

/** A renamed query answers with a permanent redirect to the same path under its new name. */
const followRenames = (operation: Operation): Operation => async (ctx) => {
  try {
    return await operation(ctx);
  } catch (e) {
    if (!(e instanceof QueryMovedError)) throw e;
    const prefix = `/queries/${ctx.params.account}/${ctx.params.query}`;
    const rest = ctx.req.path.slice(prefix.length);
    const query = ctx.req.query.toString();
    return jsonResponse(301, { message: e.message }, { location: `${ctx.apiUrl}/queries/${ctx.params.account}/${encodeURIComponent(e.newName)}${rest}${query ? `?${query}` : ''}` });
  }
};

function runPaging(ctx: OperationContext): { page: number; pageSize: number } {
  const pageRaw = singleQueryParam(ctx.req, 'page');
  const sizeRaw = singleQueryParam(ctx.req, 'pageSize');
  const page = pageRaw === null ? 1 : Number(pageRaw);
  const pageSize = sizeRaw === null ? DEFAULT_RUN_PAGE_SIZE : Number(sizeRaw);
  if (!Number.isInteger(page) || page < 1) throw new ValidationError('page: a whole number from 1.');
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_RUN_PAGE_SIZE) {
    throw new ValidationError(`pageSize: a whole number from 1 to ${MAX_RUN_PAGE_SIZE}.`);
  }
  return { page, pageSize };
}

/** `Link` with next (only while more rows exist), prev and first, keeping every other parameter. */
function pageLinks(ctx: OperationContext, page: number, hasMore: boolean): Record<string, string> {
  const link = (n: number, rel: string) => {
    const q = new URLSearchParams(ctx.req.query);
    q.set('page', String(n));
    return `<${ctx.apiUrl}${ctx.req.path}?${q.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (page > 1) links.push(link(page - 1, 'prev'));
  if (hasMore) links.push(link(page + 1, 'next'));
  return { link: links.join(', ') };
}

/**
 * The run format: the suffix wins, else Accept. `null` means TriplyDB's default shape: a JSON array
 * of bindings for SELECT (also for `.json` and `application/json`), `{head, boolean}` for ASK.
 * CONSTRUCT/DESCRIBE default to N-Triples, as the TriplyDB client reads them.
 */
function runFormat(ctx: OperationContext, form: QueryForm): ResultFormat | null {
  const file = ctx.req.path.split('/').pop() ?? '';
  if (!file.includes('.')) {
    const accept = ctx.req.headers.accept;
    const anything = !accept || /^\s*\*\/\*\s*$/.test(accept);
    if (anything) return form === 'construct' || form === 'describe' ? formatBySuffix('nt')! : null;
  }
  const { format } = chooseFormat(ctx.req, { kind: 'results', form });
  return format.suffix === 'json' ? null : format;
}

/** The query string by name, every value kept (the service refuses a variable given twice). */
function queryValues(query: URLSearchParams): QueryValues {
  const values = new Map<string, string[]>();
  for (const [name, value] of query) values.set(name, [...(values.get(name) ?? []), value]);
  return values;
}

async function run(ctx: OperationContext): Promise<HttpResponse> {
  const { savedQueries } = ctx.services;
  const paging = runPaging(ctx);
  const request = { version: versionParam(ctx), values: queryValues(ctx.req.query), ...paging };
  const found = await savedQueries.get(ctx.caller, ctx.params.account!, ctx.params.query!, request.version);
  const form = await savedQueries.formOf(found);
  if (ctx.req.method === 'POST') return jsonResponse(200, await savedQueries.runUpdate(ctx.caller, found, request, ctx.apiUrl));
  if (form === 'update') throw new ValidationError('This saved query is an update; run it with POST.');
  const format = runFormat(ctx, form);
  const started = ctx.services.platform.clock.now().getTime();
  let result: Awaited<ReturnType<typeof savedQueries.run>>;
  try {
    result = await savedQueries.run(ctx.caller, found, request, format?.engineFormat ?? 'application/n-triples');
  } catch (e) {
    await recordRun(ctx, found.query.id, started, { error: e as Error });
    throw e;
  }
  await recordRun(ctx, found.query.id, started, { resultCount: result.kind === 'graph' ? undefined : (result.results.results?.bindings.length ?? (result.results.boolean === undefined ? 0 : 1)) });
  const links = pageLinks(ctx, paging.page, result.hasMore);
  if (result.kind === 'graph') {
    return { status: 200, headers: { 'content-type': `${format!.mediaTypes[0]}; charset=utf-8`, ...links }, body: result.body };
  }
  const r = result.results;
  if (format === null) return jsonResponse(200, result.form === 'ask' ? { head: {}, boolean: r.boolean === true } : toBindingObjects(r), links);
  const bodies: Record<string, () => string> = { srj: () => JSON.stringify(r), tsv: () => toTsv(r), csv: () => toCsv(r), srx: () => toXml(r) };
  return { status: 200, headers: { 'content-type': `${format.mediaTypes[0]}; charset=utf-8`, ...links }, body: bodies[format.suffix]!() };
}

const operations: Operations = {
  async listQueries(ctx) {
    allowQueryParams(ctx.req, ['limit', 'after']);
    const page = parsePageRequest(singleQueryParam(ctx.req, 'limit'), singleQueryParam(ctx.req, 'after'));
    const result = await ctx.services.savedQueries.list(ctx.caller, null, page);
    return jsonResponse(200, await Promise.all(result.items.map((f) => view(ctx, f))), nextLink(ctx.req, ctx.apiUrl, result.next));
  },

  async listAccountQueries(ctx) {
    allowQueryParams(ctx.req, ['limit', 'after']);
    const page = parsePageRequest(singleQueryParam(ctx.req, 'limit'), singleQueryParam(ctx.req, 'after'));
    const result = await ctx.services.savedQueries.list(ctx.caller, ctx.params.account!, page);
    return jsonResponse(200, await Promise.all(result.items.map((f) => view(ctx, f))), nextLink(ctx.req, ctx.apiUrl, result.next));
  },

  async createQuery(ctx) {
    const body = parseJsonBody(ctx.req, CreateBody);
    const found = await ctx.services.savedQueries.create(ctx.caller, ctx.params.account!, {
      ...body,
      query: body.requestConfig.payload.query ?? body.requestConfig.payload.update ?? '',
      headers: body.requestConfig.headers,
      ldFrame: body.requestConfig.ldFrame,
      output: body.renderConfig?.output,
      settings: body.renderConfig?.settings,
      serviceType: body.serviceConfig?.type as string | undefined,
      variables: body.variables?.map((v) => ({ ...v, required: v.required ?? false, allowedValues: v.allowedValues ?? [] })),
    });
    return jsonResponse(201, await view(ctx, found, true));
  },

  getQuery: followRenames(async (ctx) => {
    allowQueryParams(ctx.req, ['verbose']);
    const found = await ctx.services.savedQueries.get(ctx.caller, ctx.params.account!, ctx.params.query!, versionParam(ctx));
    if (/^\s*text\/plain/.test(ctx.req.headers.accept ?? '')) {
      const endpoint = ctx.services.savedQueries.endpointOf(found, ctx.apiUrl, await ctx.services.savedQueries.serviceName(found));
      return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: annotatedText(found.query.description, endpoint, found.version.query) };
    }
    return jsonResponse(200, await view(ctx, found, true));
  }),

  addQueryVersion: followRenames(async (ctx) => {
    const body = parseJsonBody(ctx.req, VersionBody);
    const found = await ctx.services.savedQueries.addVersion(ctx.caller, ctx.params.account!, ctx.params.query!, {
      query: body.requestConfig.payload.query ?? body.requestConfig.payload.update ?? '',
      headers: body.requestConfig.headers,
      ldFrame: body.requestConfig.ldFrame,
      output: body.renderConfig?.output,
      settings: body.renderConfig?.settings,
      variables: body.variables?.map((v) => ({ ...v, required: v.required ?? false, allowedValues: v.allowedValues ?? [] })),
    });
    // TriplyDB answers a new version with 200 (the query exists already).
    return jsonResponse(200, await view(ctx, found, true));
  }),

  updateQuery: followRenames(async (ctx) => {
    const body = parseJsonBody(ctx.req, MetaBody);
    const found = await ctx.services.savedQueries.update(ctx.caller, ctx.params.account!, ctx.params.query!, {
      ...body,
      serviceType: body.serviceConfig?.type as string | undefined,
    });
    return jsonResponse(200, await view(ctx, found, true));
  }),

  /** `POST …/chown {toAccount}`: moves the query (a new id; its versions go with it). */
  chownQuery: followRenames(async (ctx) => {
    const body = parseJsonBody(ctx.req, z.object({ toAccount: z.string('is required').max(40, 'an account name has at most 40 characters') }));
    const found = await ctx.services.savedQueries.get(ctx.caller, ctx.params.account!, ctx.params.query!);
    const moved = await extras(ctx).chown(ctx.caller, found.query, found.owner, body.toAccount);
    const again = await ctx.services.savedQueries.get(ctx.caller, moved.owner.accountName, moved.query.name);
    return jsonResponse(200, await view(ctx, again, true));
  }),

  deleteQuery: followRenames(async (ctx) => {
    const { query } = await ctx.services.savedQueries.get(ctx.caller, ctx.params.account!, ctx.params.query!);
    await ctx.services.savedQueries.delete(ctx.caller, ctx.params.account!, ctx.params.query!);
    await extras(ctx).forget(query.id);
    return { status: 204, headers: {} };
  }),

  queryText: followRenames(async (ctx) => {
    const text = await ctx.services.savedQueries.text(ctx.caller, ctx.params.account!, ctx.params.query!, versionParam(ctx), queryValues(ctx.req.query));
    return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: text };
  }),

  runQuery: followRenames(run),
};

/** Writes take no query parameters (runs and texts take variables). */
export const queryOperations: Operations = withoutQueryParams(operations, ['createQuery', 'addQueryVersion', 'updateQuery', 'deleteQuery', 'chownQuery']);
