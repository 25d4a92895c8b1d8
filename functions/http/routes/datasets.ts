import { z } from 'zod';
import { ACCESS_LEVELS, datasetView, LICENSES } from '../../domain/datasets/datasets.js';
import { parsePageRequest } from '../../domain/shared/paging.js';
import type { AccountRecord } from '../../domain/accounts/accounts.js';
import type { DatasetRecord } from '../../domain/datasets/datasets.js';
import { datasetMatches, GLOBAL_PREFIXES } from '../../domain/datasets/global-prefixes.js';
import { NotFoundError, ValidationError } from '../../domain/shared/errors.js';
import type { OperationContext, Operations } from '../api.js';
import { jsonResponse } from '../errors.js';
import { allowQueryParams, flagParam, withoutQueryParams } from '../query-params.js';
import { listOrder, offsetLink, readAll, sortedPage, sortedSince } from '../list-order.js';
import { nextLink, parseJsonBody, singleQueryParam, validate } from '../request.js';

const text = (max: number) => z.string().max(max, `at most ${max} characters`);
const accessLevel = z.enum(ACCESS_LEVELS, 'must be "public", "internal" or "private"');
const license = z.enum(LICENSES, `must be one of ${LICENSES.join(', ')}`);
const prefix = z.object({ prefixLabel: z.string('is required'), iri: z.string('is required') });

/** Unknown fields are ignored: the TriplyDB client sends whole dataset objects here. */
export const NewDatasetBody = z.object({
  name: z.string('is required'),
  displayName: text(256).optional(),
  description: text(10_000).optional(),
  accessLevel: accessLevel.optional(),
  license: license.nullable().optional(),
  prefixes: z.union([z.array(prefix), z.record(z.string(), z.string())]).optional(),
});

export const DatasetPatchBody = z.object({
  name: z.string().optional(),
  displayName: text(256).optional(),
  description: text(10_000).optional(),
  accessLevel: accessLevel.optional(),
  license: license.nullable().optional(),
  exampleResources: z.array(z.string()).max(100).optional(),
  tags: z.array(text(64)).max(50).optional(),
});

export const PrefixesBody = z.union([z.array(prefix).max(500), z.record(z.string(), z.string())]);

/** Prefixes come as TriplyDB's array or as a plain `{label: iri}` map. */
const toPrefixList = (p: z.infer<typeof PrefixesBody>) =>
  Array.isArray(p) ? p.map(({ prefixLabel, iri }) => ({ prefixLabel, iri })) : Object.entries(p).map(([prefixLabel, iri]) => ({ prefixLabel, iri }));

const LIST_PARAMS = ['limit', 'after', 'q', 'verbose', 'sparql'];
const DATASET_SORT = ['createdAt', 'updatedAt', 'name'] as const;
const ListFilter = z.object({ q: z.string().max(256, 'at most 256 characters').optional() });
export const ToAccountBody = z.object({ toAccount: z.string('is required').max(40, 'an account name has at most 40 characters') });
export const PrefixIriBody = z.object({ iri: z.string('is required').max(2048, 'at most 2048 characters') });

/** The view of a dataset in a response: with its avatar, and with `verbose` its services too. */
async function view(ctx: OperationContext, d: DatasetRecord, owner: AccountRecord, verbose = false) {
  const v = datasetView(d, owner);
  if (d.avatarUpdatedAt) v.avatarUrl = `${ctx.apiUrl}/imgs/avatars/d/${d.id}?v=${Date.parse(d.avatarUpdatedAt)}`;
  if (verbose) {
    const services = await ctx.services.platform.store.listServices(d.id);
    v.services = services.map((s) => ({ name: s.name, type: s.type, status: s.status, endpoint: `${ctx.apiUrl}/datasets/${owner.accountName}/${d.name}/services/${s.name}/sparql` }));
  }
  return v;
}

async function listDatasets(ctx: OperationContext, account: string | null) {
  const { req, services, caller, apiUrl } = ctx;
  // TriplyDB documents `sortBy` for an account's datasets only; `since` is its name for our cursor `after`.
  allowQueryParams(req, account === null ? [...LIST_PARAMS, 'since', 'sortDirection'] : [...LIST_PARAMS, 'since', 'sortDirection', 'sortBy']);
  const after = singleQueryParam(req, 'after');
  const since = singleQueryParam(req, 'since');
  if (after !== null && since !== null) throw new ValidationError('since: give either since or after (the same cursor), not both.');
  const sortedOffset = sortedSince(since);
  const page = parsePageRequest(singleQueryParam(req, 'limit'), sortedOffset === null ? (since ?? after) : null);
  const { q } = validate(ListFilter, { q: singleQueryParam(req, 'q') ?? undefined });
  const sparqlOnly = flagParam(req, 'sparql');
  const matches = (d: DatasetRecord) => datasetMatches(d, q) && (!sparqlOnly || d.serviceCount > 0);
  const verbose = flagParam(req, 'verbose');
  const order = listOrder(req, DATASET_SORT, 'createdAt', sortedOffset);
  if (order) {
    // Sorted in memory, paged by an offset cursor (`since=o<offset>`, http/list-order.ts).
    if (page.after) throw new ValidationError('since: a cursor of the unsorted listing does not page a sorted one; follow the Link header.');
    const all = await readAll((p) => services.datasets.list(caller, account, p, matches));
    const sorted = sortedPage(all, (d) => d.dataset[order.sortBy], order, page.limit);
    const link = sorted.more ? offsetLink(req, apiUrl, 'since', order.offset + page.limit) : undefined;
    return jsonResponse(200, await Promise.all(sorted.items.map((d) => view(ctx, d.dataset, d.owner, verbose))), link);
  }
  const result = await services.datasets.list(caller, account, page, matches);
  return jsonResponse(200, await Promise.all(result.items.map((d) => view(ctx, d.dataset, d.owner, verbose))), nextLink(req, apiUrl, result.next));
}

const prefixList = (d: DatasetRecord) => d.prefixes.map((p) => ({ ...p, scope: 'local' }));

const operations: Operations = {
  listAllDatasets: (ctx) => listDatasets(ctx, null),
  listAccountDatasets: (ctx) => listDatasets(ctx, ctx.params.account!),

  async getGlobalPrefixes({ req }) {
    allowQueryParams(req, ['scope']);
    return jsonResponse(200, singleQueryParam(req, 'scope') === 'local' ? [] : GLOBAL_PREFIXES.map((p) => ({ ...p, scope: 'global' })));
  },

  async getGlobalPrefix({ req, params }) {
    allowQueryParams(req, []);
    const found = GLOBAL_PREFIXES.find((p) => p.prefixLabel === params.prefix);
    if (!found) throw new NotFoundError(`Prefix "${params.prefix}" does not exist.`);
    return jsonResponse(200, found.iri);
  },

  async addDatasetPrefixes({ req, params, services, caller }) {
    const body = parseJsonBody(req, PrefixesBody);
    const { dataset } = await services.datasets.addPrefixes(caller, params.account!, params.dataset!, toPrefixList(body));
    return jsonResponse(200, prefixList(dataset));
  },

  async replaceDatasetPrefixes({ req, params, services, caller }) {
    const body = parseJsonBody(req, PrefixesBody);
    const { dataset } = await services.datasets.replacePrefixes(caller, params.account!, params.dataset!, toPrefixList(body));
    return jsonResponse(200, prefixList(dataset));
  },

  async getDatasetPrefix({ req, params, services, caller }) {
    allowQueryParams(req, []);
    const { dataset } = await services.datasets.get(caller, params.account!, params.dataset!);
    const found = dataset.prefixes.find((p) => p.prefixLabel === params.prefix) ?? GLOBAL_PREFIXES.find((p) => p.prefixLabel === params.prefix);
    if (!found) throw new NotFoundError(`Prefix "${params.prefix}" does not exist.`);
    return jsonResponse(200, found.iri);
  },

  async putDatasetPrefix({ req, params, services, caller }) {
    const body = parseJsonBody(req, PrefixIriBody);
    const { dataset } = await services.datasets.addPrefixes(caller, params.account!, params.dataset!, [{ prefixLabel: params.prefix!, iri: body.iri }]);
    return jsonResponse(200, dataset.prefixes.find((p) => p.prefixLabel === params.prefix)!.iri);
  },

  async chownDataset(ctx) {
    const body = parseJsonBody(ctx.req, ToAccountBody);
    const { dataset, owner } = await ctx.services.datasets.chown(ctx.caller, ctx.params.account!, ctx.params.dataset!, body.toAccount);
    return jsonResponse(200, await view(ctx, dataset, owner));
  },

  async createDataset({ req, params, services, caller, apiUrl }) {
    const body = parseJsonBody(req, NewDatasetBody);
    const { dataset, owner } = await services.datasets.create(caller, params.account!, {
      ...body,
      license: body.license ?? undefined,
      prefixes: body.prefixes ? toPrefixList(body.prefixes) : undefined,
    }, apiUrl);
    return jsonResponse(201, datasetView(dataset, owner));
  },

  async getDataset(ctx) {
    allowQueryParams(ctx.req, ['verbose']);
    const { dataset, owner } = await ctx.services.datasets.get(ctx.caller, ctx.params.account!, ctx.params.dataset!);
    return jsonResponse(200, await view(ctx, dataset, owner, flagParam(ctx.req, 'verbose')));
  },

  async updateDataset(ctx) {
    const body = parseJsonBody(ctx.req, DatasetPatchBody);
    const { dataset, owner } = await ctx.services.datasets.update(ctx.caller, ctx.params.account!, ctx.params.dataset!, body);
    return jsonResponse(200, await view(ctx, dataset, owner));
  },

  async deleteDataset({ params, services, caller }) {
    await services.datasets.delete(caller, params.account!, params.dataset!);
    return { status: 204, headers: {} };
  },

  /**
   * Every prefix the dataset uses, as TriplyDB lists them: its own (`local`) and the instance's
   * global ones its own do not override; `?scope=local|global` one kind only.
   */
  async getPrefixes({ req, params, services, caller }) {
    allowQueryParams(req, ['scope']);
    const scope = validate(z.enum(['local', 'global'], 'scope: must be "local" or "global"').optional(), singleQueryParam(req, 'scope') ?? undefined);
    const { dataset } = await services.datasets.get(caller, params.account!, params.dataset!);
    const local = scope === 'global' ? [] : prefixList(dataset);
    const global = scope === 'local' ? [] : GLOBAL_PREFIXES.filter((g) => !dataset.prefixes.some((p) => p.prefixLabel === g.prefixLabel)).map((p) => ({ ...p, scope: 'global' }));
    return jsonResponse(200, [...local, ...global]);
  },

  async updatePrefixes({ req, params, services, caller }) {
    const body = parseJsonBody(req, PrefixesBody);
    const { dataset } = await services.datasets.addPrefixes(caller, params.account!, params.dataset!, toPrefixList(body));
    return jsonResponse(200, dataset.prefixes.map((p) => ({ ...p, scope: 'local' })));
  },

  async deletePrefix({ params, services, caller }) {
    await services.datasets.removePrefix(caller, params.account!, params.dataset!, params.prefix!);
    return { status: 204, headers: {} };
  },
};

/** Writes take no query parameters. */
export const datasetOperations: Operations = withoutQueryParams(operations, [
  'createDataset',
  'updateDataset',
  'deleteDataset',
  'updatePrefixes',
  'deletePrefix',
  'addDatasetPrefixes',
  'replaceDatasetPrefixes',
  'putDatasetPrefix',
  'chownDataset',
]);
