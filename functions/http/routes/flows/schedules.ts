import { z } from 'zod';
import type { ScheduleView } from '../../../domain/flows/schedules/schedule-service.js';
import type { OperationContext, Operations } from '../../api.js';
import { jsonResponse } from '../../errors.js';
import { parseJsonBody } from '../../request.js';
import { checkQueryParams } from '../../query-params.js';

/** Field types here; the rules (label length, recurrence shapes, time zones, values) in the domain. */
export const ScheduleBody = z
  .object({
    label: z.string('give the label as text').optional(),
    recurrence: z.record(z.string(), z.unknown(), 'give an object such as {"every": "day", "at": "02:30"}').optional(),
    timeZone: z.string('give an IANA time zone name such as "Europe/Amsterdam"').optional(),
    values: z.record(z.string(), z.unknown(), 'give the variables as an object { "name": "value" }').optional(),
    enabled: z.boolean('true or false').optional(),
  })
  .strict();

const schedulesUrl = (ctx: OperationContext) =>
  `${ctx.apiUrl}/flows/blueprints/${encodeURIComponent(ctx.params.account!)}/${encodeURIComponent(ctx.params.flow!)}/schedules`;

function scheduleView(ctx: OperationContext, v: ScheduleView) {
  const { schedule } = v;
  return {
    id: schedule.id,
    label: schedule.label,
    recurrence: schedule.recurrence,
    timeZone: schedule.timeZone,
    values: schedule.values,
    enabled: schedule.enabled,
    owner: v.owner?.accountName,
    nextRunAt: v.nextRunAt,
    createdAt: schedule.createdAt,
    updatedAt: schedule.updatedAt,
    url: `${schedulesUrl(ctx)}/${schedule.id}`,
    runsUrl: `${ctx.apiUrl}/flows/runs?startedFromType=schedule&scheduleId=${schedule.id}`,
  };
}

/** Schedules of a flow: runs started at set times, acting as the schedule's owner. */
export const scheduleOperations: Operations = checkQueryParams({
  async listSchedules(ctx) {
    const schedules = await ctx.services.schedules.list(ctx.caller, ctx.params.account!, ctx.params.flow!);
    return jsonResponse(200, schedules.map((s) => scheduleView(ctx, s)));
  },

  async createSchedule(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const body = parseJsonBody(ctx.req, ScheduleBody);
    const created = await ctx.services.schedules.create(ctx.caller, ctx.params.account!, ctx.params.flow!, body);
    const view = scheduleView(ctx, created);
    return jsonResponse(201, view, { location: view.url });
  },

  async getSchedule(ctx) {
    return jsonResponse(200, scheduleView(ctx, await ctx.services.schedules.get(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.schedule!)));
  },

  async updateSchedule(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const body = parseJsonBody(ctx.req, ScheduleBody);
    const updated = await ctx.services.schedules.update(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.schedule!, body);
    return jsonResponse(200, scheduleView(ctx, updated));
  },

  async deleteSchedule(ctx) {
    await ctx.services.schedules.delete(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.schedule!);
    return { status: 204, headers: {} };
  },
});
