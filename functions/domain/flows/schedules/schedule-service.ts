/**
 * Schedules: a flow's runs started at set times. Whoever sees a flow sees its schedules; adding,
 * changing and deleting them needs a console session and Manage flow blueprints. A schedule
 * belongs to its creator: its runs act as them and use its values, only they (or an instance
 * administrator) change it, and removing them removes it. Removing the flow removes it too.
 * The recurrence rules are in `flows/schedules.ts`; the trigger lives in the `FlowScheduler`.
 */
import type { AccountRecord } from '../../accounts/accounts.js';
import type { Caller } from '../../shared/caller.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../shared/errors.js';
import type { RunStarter } from '../runs/start.js';
import type { FlowService, VisibleFlow } from '../blueprints/blueprint-service.js';
import type { RunRecord, ScheduleRecord } from '../records.js';
import { checkLabel, checkRecurrence, checkTimeZone, DEFAULT_TIME_ZONE, defaultPresetValues, nextRun, scheduleValues } from './schedules.js';
import type { Platform } from '../../shared/platform.js';
import { removeSchedule } from './schedule-removal.js';
import { requireApiUrl } from '../runs/api-url.js';

export interface ScheduleInput {
  label?: unknown;
  recurrence?: unknown;
  timeZone?: unknown;
  values?: unknown;
  enabled?: unknown;
}

export interface ScheduleView {
  schedule: ScheduleRecord;
  owner?: AccountRecord;
  /** When it fires next; null while disabled. */
  nextRunAt: string | null;
}

export class FlowScheduleService {
  constructor(
    private readonly platform: Platform,
    private readonly flows: FlowService,
    private readonly runs: RunStarter,
  ) {}

  // ---- Managing schedules ----

  private async existing(found: VisibleFlow, scheduleId: string): Promise<ScheduleRecord> {
    const schedule = await this.platform.flows.getSchedule(found.flow.uid, scheduleId);
    if (!schedule) throw new NotFoundError(`Flow "${found.flow.flowId}" has no schedule "${scheduleId}".`);
    return schedule;
  }

  async view(schedule: ScheduleRecord): Promise<ScheduleView> {
    const owner = await this.platform.store.getAccount(schedule.ownerUid);
    return {
      schedule,
      ...(owner ? { owner } : {}),
      nextRunAt: schedule.enabled ? nextRun(schedule, this.platform.clock.now()).toISOString() : null,
    };
  }

  async list(caller: Caller | null, account: string, flowId: string): Promise<ScheduleView[]> {
    const who = await this.flows.requireEnabled(caller);
    const { flow } = await this.flows.visibleFlow(who, account, flowId);
    const schedules = await this.platform.flows.listSchedules(flow.uid);
    schedules.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
    return Promise.all(schedules.map((s) => this.view(s)));
  }

  async get(caller: Caller | null, account: string, flowId: string, scheduleId: string): Promise<ScheduleView> {
    const who = await this.flows.requireEnabled(caller);
    const found = await this.flows.visibleFlow(who, account, flowId);
    return this.view(await this.existing(found, scheduleId));
  }

  async create(caller: Caller | null, account: string, flowId: string, input: ScheduleInput): Promise<ScheduleView> {
    const { who, found } = await this.flows.manageableFlow(caller, account, flowId, 'add schedules');
    const definition = (await this.flows.version(found.flow, found.flow.latestVersion)).definition;
    if (input.recurrence === undefined) throw new ValidationError('recurrence: say when the schedule fires, e.g. {"every": "day", "at": "02:30"}.');
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean') throw new ValidationError('enabled: true or false.');
    const now = this.platform.clock.now().toISOString();
    const schedule: ScheduleRecord = {
      id: this.platform.ids.newId(),
      blueprintUid: found.flow.uid,
      ownerUid: who.uid,
      label: checkLabel(input.label),
      recurrence: checkRecurrence(input.recurrence),
      timeZone: input.timeZone === undefined ? DEFAULT_TIME_ZONE : checkTimeZone(input.timeZone),
      // Values left out come from the default preset, as in the console's schedule dialog.
      values: scheduleValues(definition, input.values, defaultPresetValues(definition)),
      enabled: input.enabled ?? true,
      createdAt: now,
      updatedAt: now,
    };
    await this.platform.flows.putSchedule(schedule);
    try {
      await this.platform.scheduler.upsert(schedule);
    } catch (e) {
      await this.platform.flows.deleteSchedule(schedule.blueprintUid, schedule.id);
      throw e;
    }
    return this.view(schedule);
  }

  async update(caller: Caller | null, account: string, flowId: string, scheduleId: string, input: ScheduleInput): Promise<ScheduleView> {
    const { who, found } = await this.flows.manageableFlow(caller, account, flowId, 'change schedules');
    const current = await this.existing(found, scheduleId);
    if (current.ownerUid !== who.uid && !who.isAdmin) {
      const owner = await this.platform.store.getAccount(current.ownerUid);
      // Its runs act as its owner: nobody else chooses what they run with.
      throw new ForbiddenError(
        `Forbidden. Schedule "${scheduleId}" belongs to "${owner?.accountName ?? 'another account'}" and its runs act as them, so only they change it; delete it and create your own instead.`,
      );
    }
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean') throw new ValidationError('enabled: true or false.');
    const definition = input.values !== undefined ? (await this.flows.version(found.flow, found.flow.latestVersion)).definition : undefined;
    const next: ScheduleRecord = {
      ...current,
      ...(input.label !== undefined ? { label: checkLabel(input.label) } : {}),
      ...(input.recurrence !== undefined ? { recurrence: checkRecurrence(input.recurrence) } : {}),
      ...(input.timeZone !== undefined ? { timeZone: checkTimeZone(input.timeZone) } : {}),
      ...(definition ? { values: scheduleValues(definition, input.values, undefined) } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled as boolean } : {}),
      updatedAt: this.platform.clock.now().toISOString(),
    };
    await this.platform.flows.putSchedule(next);
    try {
      await this.platform.scheduler.upsert(next);
    } catch (e) {
      await this.platform.flows.putSchedule(current);
      throw e;
    }
    return this.view(next);
  }

  async delete(caller: Caller | null, account: string, flowId: string, scheduleId: string): Promise<void> {
    const { found } = await this.flows.manageableFlow(caller, account, flowId, 'delete schedules');
    await removeSchedule(this.platform, await this.existing(found, scheduleId));
  }

  /** Removes the schedules of a removed account (their owner): their runs would act as it. */
  async removeOfOwner(ownerUid: string): Promise<void> {
    for (const s of await this.platform.flows.listSchedulesOfOwner(ownerUid)) await removeSchedule(this.platform, s);
  }

  // ---- Firing ----

  /**
   * A schedule is due (its trigger fired): starts its run, acting as its owner with its values.
   * Nothing starts for a disabled schedule or while flows are switched off. A schedule whose flow
   * or owner is gone is removed (its trigger too). A run that cannot start is logged, not thrown:
   * the trigger's retry would otherwise start it twice.
   */
  async fire(blueprintUid: string, scheduleId: string, apiUrl = requireApiUrl(this.platform.settings)): Promise<RunRecord | null> {
    const schedule = await this.platform.flows.getSchedule(blueprintUid, scheduleId);
    if (!schedule) {
      // A trigger left behind: stop it.
      await this.platform.scheduler.remove({ blueprintUid, id: scheduleId });
      return null;
    }
    if (!schedule.enabled) return null;
    const [flow, owner] = await Promise.all([this.platform.flows.getFlowByUid(blueprintUid), this.platform.store.getAccount(schedule.ownerUid)]);
    if (!flow || !owner) {
      await removeSchedule(this.platform, schedule);
      return null;
    }
    if (!(await this.flows.getSwitches()).flowsEnabled) return null;
    const asOwner: Caller = { uid: owner.uid, accountName: owner.accountName, isAdmin: owner.isAdmin === true, credential: { kind: 'token', tokenId: '', readOnly: false } };
    if (!(await this.flows.visibleFlowByUid(asOwner, blueprintUid))) {
      this.platform.logger.warn('schedule skipped: its owner no longer sees the flow; no run started', { scheduleId, owner: owner.accountName, flowId: flow.flowId });
      return null;
    }
    try {
      // Values of variables the flow no longer has are left out.
      const definition = (await this.flows.version(flow, flow.latestVersion)).definition;
      const known = new Set(definition.variables.map((v) => v.name));
      const values = Object.fromEntries(Object.entries(schedule.values).filter(([name]) => known.has(name)));
      return await this.runs.startTriggered(flow, owner, { startedFrom: { type: 'schedule', scheduleId }, values }, apiUrl);
    } catch (e) {
      this.platform.logger.error('schedule could not start a run', { scheduleId, flowId: flow.flowId, error: (e as Error).message });
      return null;
    }
  }
}
