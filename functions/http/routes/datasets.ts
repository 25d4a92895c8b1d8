import { z } from 'zod';
import { ACCESS_LEVELS, datasetView, LICENSES } from '../../domain/datasets/datasets.js';
import { parsePageRequest } from '../../domain/shared/paging.js';
import type { Operations } from '../api.js';
import { jsonResponse } from '../errors.js';
import { nextLink, parseJsonBody, singleQueryParam } from '../request.js';

const text = (max: number) => z.string().max(max, `at most ${max} characters`);
const accessLevel = z.enum(ACCESS_LEVELS, 'must be "public", "internal" or "private"');
const license = z.enum(LICENSES, `must be one of ${LICENSES.join(', ')}`);
const prefix = z.object({ prefixLabel: z.string('is required'), iri: z.string('is required') });

/** Unknown fields are ignored: the TriplyDB client sends whole dataset objects here. */
const NewDatasetBody = z.object({
  name: z.string('is required'),
  displayName: text(256).optional(),
  description: text(10_000).optional(),
  accessLevel: accessLevel.optional(),
  license: license.nullable().optional(),
  prefixes: z.union([z.array(prefix), z.record(z.string(), z.string())]).optional(),
});

const DatasetPatchBody = z.object({
  name: z.string().optional(),
  displayName: text(256).optional(),
  description: text(10_000).optional(),
  accessLevel: accessLevel.optional(),
  license: license.nullable().optional(),
  exampleResources: z.array(z.string()).max(100).optional(),
  tags: z.array(text(64)).max(50).optional(),
});

const PrefixesBody = z.union([z.array(prefix).max(500), z.record(z.string(), z.string())]);

/** Prefixes come as TriplyDB's array or as a plain `{label: iri}` map. */
const toPrefixList = (p: z.infer<typeof PrefixesBody>) =>
  Array.isArray(p) ? p.map(({ prefixLabel, iri }) => ({ prefixLabel, iri })) : Object.entries(p).map(([prefixLabel, iri]) => ({ prefixLabel, iri }));

export const datasetOperations: Operations = {
  async listAllDatasets({ req, services, caller, apiUrl }) {
    const page = parsePageRequest(singleQueryParam(req, 'limit'), singleQueryParam(req, 'after'));
    const result = await services.datasets.list(caller, null, page);
    return jsonResponse(200, result.items.map((d) => datasetView(d.dataset, d.owner)), nextLink(req, apiUrl, result.next));
  },

  async listAccountDatasets({ req, params, services, caller, apiUrl }) {
    const page = parsePageRequest(singleQueryParam(req, 'limit'), singleQueryParam(req, 'after'));
    const result = await services.datasets.list(caller, params.account!, page);
    return jsonResponse(200, result.items.map((d) => datasetView(d.dataset, d.owner)), nextLink(req, apiUrl, result.next));
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

  async getDataset({ params, services, caller }) {
    const { dataset, owner } = await services.datasets.get(caller, params.account!, params.dataset!);
    return jsonResponse(200, datasetView(dataset, owner));
  },

  async updateDataset({ req, params, services, caller }) {
    const body = parseJsonBody(req, DatasetPatchBody);
    const { dataset, owner } = await services.datasets.update(caller, params.account!, params.dataset!, body);
    return jsonResponse(200, datasetView(dataset, owner));
  },

  async deleteDataset({ params, services, caller }) {
    await services.datasets.delete(caller, params.account!, params.dataset!);
    return { status: 204, headers: {} };
  },

  async getPrefixes({ params, services, caller }) {
    const { dataset } = await services.datasets.get(caller, params.account!, params.dataset!);
    return jsonResponse(200, dataset.prefixes.map((p) => ({ ...p, scope: 'local' })));
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
