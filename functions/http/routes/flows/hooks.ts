import { z } from 'zod';
import type { HookView } from '../../../domain/flows/hooks/hook-service.js';
import type { OperationContext, Operations } from '../../api.js';
import { jsonResponse } from '../../errors.js';
import { parseJsonBody } from '../../request.js';
import { checkQueryParams } from '../../query-params.js';

export const HookBody = z
  .object({
    label: z.string().optional(),
    enabled: z.boolean().optional(),
    type: z.enum(['assetUpload', 'dataUpload'], 'use "assetUpload" or "dataUpload"').optional(),
    dataset: z.object({ account: z.string(), dataset: z.string() }, 'give {"account": ..., "dataset": ...}').optional(),
    values: z.record(z.string(), z.unknown()).optional(),
    preset: z.string().optional(),
  })
  .strict();

function hookView(ctx: OperationContext, v: HookView) {
  const { hook } = v;
  return {
    id: hook.id,
    label: hook.label,
    enabled: hook.enabled,
    type: hook.type,
    dataset: v.dataset ?? null,
    values: hook.values,
    ...(hook.preset !== undefined ? { preset: hook.preset } : {}),
    owner: v.owner?.accountName,
    createdAt: hook.createdAt,
    updatedAt: hook.updatedAt,
    runsUrl: `${ctx.apiUrl}/flows/runs?hookId=${hook.id}`,
  };
}

/** Hooks of a flow: runs started by asset or data uploads to one dataset. */
export const hookOperations: Operations = checkQueryParams({
  async listHooks(ctx) {
    const hooks = await ctx.services.hooks.list(ctx.caller, ctx.params.account!, ctx.params.flow!);
    return jsonResponse(200, hooks.map((h) => hookView(ctx, h)));
  },

  async createHook(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const body = parseJsonBody(ctx.req, HookBody);
    const created = await ctx.services.hooks.create(ctx.caller, ctx.params.account!, ctx.params.flow!, body);
    return jsonResponse(201, hookView(ctx, created));
  },

  async getHook(ctx) {
    return jsonResponse(200, hookView(ctx, await ctx.services.hooks.get(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.hook!)));
  },

  async updateHook(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const body = parseJsonBody(ctx.req, HookBody);
    return jsonResponse(200, hookView(ctx, await ctx.services.hooks.update(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.hook!, body)));
  },

  async deleteHook(ctx) {
    await ctx.services.hooks.delete(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.hook!);
    return { status: 204, headers: {} };
  },
});
