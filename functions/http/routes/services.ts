import { z } from 'zod';
import { serviceView, type ServiceRecord } from '../../domain/sparql/service-types.js';
import { ValidationError } from '../../domain/shared/errors.js';
import type { OperationContext, Operations } from '../api.js';
import { jsonResponse } from '../errors.js';
import { parseJsonBody } from '../request.js';
import { chooseFormat } from '../negotiation.js';
import { readSparqlRequest, type SparqlRequest } from '../sparql-protocol.js';
import { checkQueryParams } from '../query-params.js';

export const CreateBody = z.object({
  name: z.string('is required'),
  type: z.string().optional(),
  config: z.object({ reasonerType: z.string().optional(), reasoner: z.string().optional() }).loose().optional(),
});

/** TriplyDB's actions; V1 clients sent `recreate` for a sync. */
export const ActionBody = z.object({
  sync: z.boolean().optional(),
  recreate: z.boolean().optional(),
  start: z.boolean().optional(),
  restart: z.boolean().optional(),
  stop: z.boolean().optional(),
});

export const RenameBody = z.object({ name: z.string('is required') });

const datasetUrl = (ctx: OperationContext) => `${ctx.apiUrl}/datasets/${ctx.params.account}/${ctx.params.dataset}`;

const view = (ctx: OperationContext, service: ServiceRecord, manifest: string | undefined) => serviceView(service, manifest, datasetUrl(ctx));

export const serviceOperations: Operations = checkQueryParams({
  async listServices(ctx) {
    const { dataset, services } = await ctx.services.sparqlServices.list(ctx.caller, ctx.params.account!, ctx.params.dataset!);
    return jsonResponse(200, services.map((s) => view(ctx, s, dataset.graphsManifest)));
  },

  async createService(ctx) {
    const body = parseJsonBody(ctx.req, CreateBody);
    const { dataset, service } = await ctx.services.sparqlServices.create(ctx.caller, ctx.params.account!, ctx.params.dataset!, body);
    return jsonResponse(201, view(ctx, service, dataset.graphsManifest));
  },

  async getService(ctx) {
    const { dataset, service } = await ctx.services.sparqlServices.get(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.service!);
    return jsonResponse(200, view(ctx, service, dataset.graphsManifest));
  },

  async serviceAction(ctx) {
    const body = parseJsonBody(ctx.req, ActionBody);
    const chosen = (['sync', 'recreate', 'start', 'restart', 'stop'] as const).filter((a) => body[a] === true);
    if (chosen.length !== 1) throw new ValidationError('Send exactly one action: {"sync": true}, {"start": true}, {"restart": true} or {"stop": true}.');
    const action = chosen[0] === 'recreate' ? 'sync' : chosen[0]!;
    const { dataset, service } = await ctx.services.sparqlServices.act(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.service!, action);
    return jsonResponse(200, view(ctx, service, dataset.graphsManifest));
  },

  async renameService(ctx) {
    const body = parseJsonBody(ctx.req, RenameBody);
    const { dataset, service } = await ctx.services.sparqlServices.rename(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.service!, body.name);
    return jsonResponse(200, view(ctx, service, dataset.graphsManifest));
  },

  async deleteService(ctx) {
    await ctx.services.sparqlServices.delete(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.service!);
    return { status: 204, headers: {} };
  },

  async serviceGraphs(ctx) {
    return jsonResponse(200, await ctx.services.sparqlServices.graphs(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.service!));
  },
});

/** The endpoint's own URL (without a format suffix): the base IRI of queries sent to it. */
const endpointUrl = (ctx: OperationContext) => `${ctx.apiUrl}${ctx.req.path.replace(/\.[a-z]+$/, '')}`;

const engineQuery = (request: Extract<SparqlRequest, { kind: 'query' }>, format: string) => ({
  query: request.text,
  format,
  defaultGraphs: request.dataset?.defaultGraphs,
  namedGraphs: request.dataset?.namedGraphs,
  queryDefinesDataset: request.definesDataset,
  baseIri: request.baseIri,
});

/** SPARQL 1.1 Protocol over a service (queries only). */
export const sparqlOperations: Operations = {
  async serviceSparql(ctx) {
    const request = await readSparqlRequest(ctx.req, { allowUpdate: false, baseIri: endpointUrl(ctx) });
    if (request.kind !== 'query') throw new ValidationError('This endpoint answers queries only.');
    const { format } = chooseFormat(ctx.req, { kind: 'results', form: request.form });
    const body = await ctx.services.sparqlServices.query(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.service!, engineQuery(request, format.engineFormat));
    return { status: 200, headers: { 'content-type': `${format.mediaTypes[0]}; charset=utf-8`, vary: 'Accept' }, body };
  },
};

/** The dataset's own endpoint: queries over its current graphs, and SPARQL Update for writers. */
export const datasetSparqlOperations: Operations = {
  async datasetSparql(ctx) {
    const request = await readSparqlRequest(ctx.req, { allowUpdate: true, baseIri: endpointUrl(ctx) });
    if (request.kind === 'update') {
      const result = await ctx.services.sparqlServices.updateDataset(ctx.caller, ctx.params.account!, ctx.params.dataset!, request.text, ctx.apiUrl, request.baseIri);
      return jsonResponse(200, result);
    }
    const { format } = chooseFormat(ctx.req, { kind: 'results', form: request.form });
    const body = await ctx.services.sparqlServices.queryDataset(ctx.caller, ctx.params.account!, ctx.params.dataset!, engineQuery(request, format.engineFormat));
    return { status: 200, headers: { 'content-type': `${format.mediaTypes[0]}; charset=utf-8`, vary: 'Accept' }, body };
  },
};
