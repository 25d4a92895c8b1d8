import { z } from 'zod';
import { DatasetWebhooks } from '../../domain/datasets/dataset-webhooks.js';
import { ValidationError } from '../../domain/shared/errors.js';
import { MAX_PAGE_SIZE } from '../../domain/shared/paging.js';
import type { Operations, OperationContext } from '../api.js';
import { jsonResponse } from '../errors.js';
import { allowQueryParams, withoutQueryParams } from '../query-params.js';
import { parseJsonBody, singleQueryParam } from '../request.js';

export const HookBody = z.object({
  url: z.string('is required').max(2048, 'at most 2048 characters'),
  active: z.boolean('must be true or false').default(true),
  payloadFormat: z.enum(['JSON', 'formEncoded'], 'must be "JSON" or "formEncoded"').default('JSON'),
  onEvents: z.object({ graphImport: z.boolean().optional(), linkedDataUpload: z.boolean().optional(), fileUpload: z.boolean().optional() }).strict().default({ graphImport: true }),
});
export const HookPatch = z.object({
  url: z.string().max(2048).optional(),
  active: z.boolean().optional(),
  payloadFormat: z.enum(['JSON', 'formEncoded']).optional(),
  onEvents: z.object({ graphImport: z.boolean().optional(), linkedDataUpload: z.boolean().optional(), fileUpload: z.boolean().optional() }).strict().optional(),
});

const webhooks = (ctx: OperationContext) => new DatasetWebhooks(ctx.services.platform, ctx.services.access);
const at = (ctx: OperationContext) => [ctx.caller, ctx.params.account!, ctx.params.dataset!] as const;

const operations: Operations = {
  async listDatasetHooks(ctx) {
    allowQueryParams(ctx.req, []);
    return jsonResponse(200, await webhooks(ctx).list(...at(ctx)));
  },
  async createDatasetHook(ctx) {
    const body = parseJsonBody(ctx.req, HookBody);
    return jsonResponse(201, await webhooks(ctx).create(...at(ctx), body));
  },
  async getDatasetHook(ctx) {
    allowQueryParams(ctx.req, []);
    return jsonResponse(200, await webhooks(ctx).get(...at(ctx), ctx.params.hookId!));
  },
  async updateDatasetHook(ctx) {
    const body = parseJsonBody(ctx.req, HookPatch);
    return jsonResponse(200, await webhooks(ctx).update(...at(ctx), ctx.params.hookId!, body));
  },
  async deleteDatasetHook(ctx) {
    await webhooks(ctx).delete(...at(ctx), ctx.params.hookId!);
    return { status: 204, headers: {} };
  },
  async getDatasetHookRecords(ctx) {
    allowQueryParams(ctx.req, ['limit', 'offset']);
    const limit = Number(singleQueryParam(ctx.req, 'limit') ?? 30);
    const offset = Number(singleQueryParam(ctx.req, 'offset') ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) throw new ValidationError(`limit: must be a whole number from 1 to ${MAX_PAGE_SIZE}.`);
    if (!Number.isInteger(offset) || offset < 0 || offset > 10_000) throw new ValidationError('offset: must be a whole number from 0 to 10000.');
    return jsonResponse(200, await webhooks(ctx).records(...at(ctx), ctx.params.hookId!, limit, offset));
  },
};

/** Writes take no query parameters. */
export const datasetHookOperations: Operations = withoutQueryParams(operations, ['createDatasetHook', 'updateDatasetHook', 'deleteDatasetHook']);
