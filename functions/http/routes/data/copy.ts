import { z } from 'zod';
import { datasetView } from '../../../domain/datasets/datasets.js';
import type { Operations } from '../../api.js';
import { jsonResponse } from '../../errors.js';
import { allowQueryParams } from '../../query-params.js';
import { parseJsonBody } from '../../request.js';

/** `POST …/copy` body, as the TriplyDB client sends it. */
export const CopyBody = z.object({ toAccount: z.string('toAccount: the account to copy the dataset to').min(1).max(256), name: z.string().min(1).max(256).optional() });

/** `PATCH …/imports` body: graphs of other datasets to add (`to` defaults to `from`). */
export const ImportsBody = z
  .array(
    z.object({
      dataset: z.object({ ownerName: z.string().min(1).max(256), datasetName: z.string().min(1).max(256) }, 'dataset: {ownerName, datasetName} of the dataset to import from'),
      graphs: z.array(z.object({ from: z.string().min(1).max(4096), to: z.string().min(1).max(4096).optional(), overwrite: z.boolean().optional() })).max(5000),
    }),
    'the body is an array of {dataset: {ownerName, datasetName}, graphs: [{from, to, overwrite}]}',
  )
  .max(100);

export const copyOperations: Operations = {
  async copyDataset(ctx) {
    allowQueryParams(ctx.req, []);
    const body = parseJsonBody(ctx.req, CopyBody);
    const { dataset, owner } = await ctx.services.datasetCopier.copy(ctx.caller, ctx.params.account!, ctx.params.dataset!, body.toAccount, body.name, ctx.apiUrl);
    return jsonResponse(201, datasetView(dataset, owner));
  },

  async getImports(ctx) {
    allowQueryParams(ctx.req, []);
    return jsonResponse(200, await ctx.services.datasetCopier.imports(ctx.caller, ctx.params.account!, ctx.params.dataset!));
  },

  async updateImports(ctx) {
    allowQueryParams(ctx.req, []);
    const body = parseJsonBody(ctx.req, ImportsBody);
    return jsonResponse(200, await ctx.services.datasetCopier.addImports(ctx.caller, ctx.params.account!, ctx.params.dataset!, body));
  },
};
