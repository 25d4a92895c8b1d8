import { z } from 'zod';
import { GraphCatalog } from '../../domain/data/graph-catalog.js';
import { PipelineService } from '../../domain/pipelines/pipeline-service.js';
import { MAX_PIPELINE_QUERIES, pipelineView } from '../../domain/pipelines/pipelines.js';
import type { OperationContext, Operations } from '../api.js';
import { jsonResponse } from '../errors.js';
import { allowQueryParams } from '../query-params.js';
import { parseJsonBody } from '../request.js';

/** PipelineConfig v0.2, as the official client's `runPipeline` sends it. */
export const PipelineBody = z.strictObject({
  version: z.literal(0.2, 'must be 0.2'),
  queries: z
    .array(
      z.strictObject({
        name: z.string('is required ("account/query")').min(3).max(300),
        version: z.number().int().min(1).optional(),
        priority: z.number().optional(),
        variables: z.record(z.string(), z.string()).optional(),
      }),
    )
    .min(1, 'give at least one query')
    .max(MAX_PIPELINE_QUERIES),
  sourceDataset: z.string('is required ("account/dataset")').max(300),
  targetDataset: z.string('is required ("account/dataset")').max(300),
  targetGraphName: z.string().max(4000).optional(),
});

const service = (ctx: OperationContext) =>
  new PipelineService(ctx.services.platform, ctx.services.access, ctx.services.savedQueries, new GraphCatalog(ctx.services.platform));

export const pipelineOperations: Operations = {
  async createPipeline(ctx) {
    allowQueryParams(ctx.req, []);
    const body = parseJsonBody(ctx.req, PipelineBody);
    const record = await service(ctx).run(ctx.caller, ctx.params.account!, body, ctx.apiUrl);
    return jsonResponse(201, pipelineView(record));
  },

  async getPipeline(ctx) {
    allowQueryParams(ctx.req, []);
    return jsonResponse(200, pipelineView(await service(ctx).get(ctx.caller, ctx.params.account!, ctx.params.pipeline!)));
  },
};
