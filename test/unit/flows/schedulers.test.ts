/**
 * The two FlowScheduler adapters. EventBridge Scheduler has no local stand-in, so a fake
 * SchedulerClient records the commands: these tests check the calls we make, not the service.
 * The croner scheduler is driven with a manual clock and `tick()`.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  ThrottlingException,
  UpdateScheduleCommand,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { describe, expect, it } from 'vitest';
import { EventBridgeScheduler, FLOW_SCHEDULE_NAME_PREFIX, scheduleName } from '../../../functions/adapters/aws/eventbridge-scheduler.js';
import { CronerScheduler } from '../../../functions/adapters/local/croner-scheduler.js';
import { createLogger } from '../../../functions/adapters/common/powertools-logger.js';
import type { ScheduleRecord } from '../../../functions/domain/flows/records.js';
import { handler as scheduleStartHandler } from '../../../functions/handlers/flow-schedule-start.js';
import { systemClock } from '../../../functions/adapters/common/node-crypto.js';

const GROUP = 'LinkedDataPlatform-Stateless-flow-schedules';
const TARGET = 'arn:aws:lambda:eu-west-1:123456789012:function:flow-schedule-start';
const ROLE = 'arn:aws:iam::123456789012:role/FlowScheduleRole';
const meta = { $metadata: {} };

class ManualClock {
  // Only `now` is manual; waits are real.
  sleep = systemClock.sleep;
  after = systemClock.after;
  constructor(private t: number) {}
  now = () => new Date(this.t);
  set(iso: string) {
    this.t = Date.parse(iso);
  }
}

function record(extra: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    id: '0123456789abcdef01234567',
    blueprintUid: 'fedcba9876543210fedcba98',
    ownerUid: 'u1',
    label: 'Nightly',
    recurrence: { every: 'day', at: '02:30' },
    timeZone: 'Europe/Amsterdam',
    values: { target: 'prod' },
    enabled: true,
    createdAt: '2026-05-04T10:07:31.000Z',
    updatedAt: '2026-05-04T10:07:31.000Z',
    ...extra,
  };
}

/** A fake SchedulerClient: `send` records each command and answers with `respond` (throwing what it throws). */
function fakeClient(respond: (command: object, n: number) => unknown = () => meta) {
  const calls: { name: string; input: any }[] = [];
  const client = {
    async send(command: { input: unknown }) {
      calls.push({ name: command.constructor.name, input: command.input });
      return respond(command, calls.length);
    },
  };
  return { client: client as unknown as SchedulerClient, calls };
}

const notFound = () => new ResourceNotFoundException({ message: 'Schedule not found', Message: 'Schedule not found', $metadata: {} });

describe('EventBridgeScheduler', () => {
  const clock = new ManualClock(Date.parse('2026-05-04T10:30:00Z'));
  const scheduler = (client: SchedulerClient, options: Partial<ConstructorParameters<typeof EventBridgeScheduler>[2]> = {}) =>
    new EventBridgeScheduler(client, clock, { groupName: GROUP, targetArn: TARGET, roleArn: ROLE, ...options });

  it('names schedules <prefix>-<schedule id> within 64 characters', () => {
    expect(scheduleName('0123456789abcdef01234567')).toBe(`${FLOW_SCHEDULE_NAME_PREFIX}-0123456789abcdef01234567`);
    expect(scheduleName('0123456789abcdef01234567').length).toBeLessThanOrEqual(64);
    expect(scheduleName('a b/c')).toBe(`${FLOW_SCHEDULE_NAME_PREFIX}-a_b_c`);
  });

  it('creates a new schedule (update answers not found): cron in the time zone, the start-run target with { blueprintUid, scheduleId }, no flexible window', async () => {
    const { client, calls } = fakeClient((c) => {
      if (c instanceof UpdateScheduleCommand) throw notFound();
      return meta;
    });
    await scheduler(client).upsert(record());
    expect(calls.map((c) => c.name)).toEqual(['UpdateScheduleCommand', 'CreateScheduleCommand']);
    const input = calls[1]!.input;
    expect(input).toEqual({
      Name: `${FLOW_SCHEDULE_NAME_PREFIX}-0123456789abcdef01234567`,
      GroupName: GROUP,
      Description: 'Flow schedule "Nightly"',
      ScheduleExpression: 'cron(30 2 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Amsterdam',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: TARGET,
        RoleArn: ROLE,
        Input: JSON.stringify({ blueprintUid: 'fedcba9876543210fedcba98', scheduleId: '0123456789abcdef01234567' }),
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 5 },
      },
    });
    expect(JSON.parse(input.Target.Input)).toEqual({ blueprintUid: 'fedcba9876543210fedcba98', scheduleId: '0123456789abcdef01234567' });
    // Same definition for the update it tried first.
    expect(calls[0]!.input).toEqual(input);
  });

  it('updates an existing schedule in place; a disabled one is kept, DISABLED', async () => {
    const { client, calls } = fakeClient();
    await scheduler(client).upsert(record({ enabled: false, recurrence: { every: 'week', at: '09:05', weekday: 1 }, timeZone: 'UTC' }));
    expect(calls.map((c) => c.name)).toEqual(['UpdateScheduleCommand']);
    expect(calls[0]!.input).toMatchObject({ State: 'DISABLED', ScheduleExpression: 'cron(5 9 ? * MON *)', ScheduleExpressionTimezone: 'UTC' });
  });

  it('gives intervals a rate() starting at the next run, which keeps them anchored on the creation', async () => {
    const { client, calls } = fakeClient();
    await scheduler(client).upsert(record({ recurrence: { every: 'minutes', interval: 15 } }));
    expect(calls[0]!.input).toMatchObject({ ScheduleExpression: 'rate(15 minutes)', StartDate: new Date('2026-05-04T10:37:00.000Z') });
    const { client: c2, calls: hours } = fakeClient();
    await scheduler(c2).upsert(record({ recurrence: { every: 'hours', interval: 1 } }));
    expect(hours[0]!.input).toMatchObject({ ScheduleExpression: 'rate(1 hour)', StartDate: new Date('2026-05-04T11:07:00.000Z') });
    // Cron schedules take no StartDate.
    const { client: c3, calls: daily } = fakeClient();
    await scheduler(c3).upsert(record());
    expect(daily[0]!.input).not.toHaveProperty('StartDate');
  });

  it('writes over a schedule created meanwhile (create answers conflict), and passes other errors on', async () => {
    const { client, calls } = fakeClient((c, n) => {
      if (c instanceof UpdateScheduleCommand && n === 1) throw notFound();
      if (c instanceof CreateScheduleCommand) throw new ConflictException({ message: 'exists', Message: 'exists', $metadata: {} });
      return meta;
    });
    await scheduler(client).upsert(record());
    expect(calls.map((c) => c.name)).toEqual(['UpdateScheduleCommand', 'CreateScheduleCommand', 'UpdateScheduleCommand']);

    const { client: failing } = fakeClient(() => {
      throw new ThrottlingException({ message: 'slow down', Message: 'slow down', $metadata: {} });
    });
    await expect(scheduler(failing).upsert(record())).rejects.toThrow(/slow down/);
  });

  it('refuses to create schedules where it has no target or role (functions that only remove them)', async () => {
    const { client, calls } = fakeClient();
    await expect(scheduler(client, { targetArn: undefined, roleArn: undefined }).upsert(record())).rejects.toThrow(/cannot create schedules/);
    expect(calls).toEqual([]);
  });

  it('deletes a schedule by name in the group; one already gone is fine', async () => {
    const { client, calls } = fakeClient();
    await scheduler(client, { targetArn: undefined, roleArn: undefined }).remove(record());
    expect(calls).toEqual([{ name: 'DeleteScheduleCommand', input: { Name: `${FLOW_SCHEDULE_NAME_PREFIX}-0123456789abcdef01234567`, GroupName: GROUP } }]);
    expect(calls[0]!.name).toBe(DeleteScheduleCommand.name);

    const { client: gone } = fakeClient(() => {
      throw notFound();
    });
    await expect(scheduler(gone).remove(record())).resolves.toBeUndefined();
    const { client: failing } = fakeClient(() => {
      throw new ThrottlingException({ message: 'slow down', Message: 'slow down', $metadata: {} });
    });
    await expect(scheduler(failing).remove(record())).rejects.toThrow(/slow down/);
  });
});

describe('the schedule-start Lambda entry', () => {
  it('ignores an event without blueprintUid and scheduleId (without building services)', async () => {
    const context = {} as Parameters<typeof scheduleStartHandler>[1];
    await expect(scheduleStartHandler({} as never, context)).resolves.toBeUndefined();
    await expect(scheduleStartHandler({ blueprintUid: 'x' } as never, context)).resolves.toBeUndefined();
  });
});

describe('CronerScheduler', () => {
  const start = '2026-05-04T10:07:31.000Z';

  function setup() {
    const clock = new ManualClock(Date.parse(start));
    const scheduler = new CronerScheduler(clock);
    const fired: string[] = [];
    scheduler.bind(async (s) => {
      fired.push(`${s.id}@${clock.now().toISOString()}`);
    });
    return { clock, scheduler, fired };
  }

  it('fires what is due at the clock, once per due time, and computes the next run', async () => {
    const { clock, scheduler, fired } = setup();
    await scheduler.upsert(record({ id: 'q', recurrence: { every: 'minutes', interval: 15 }, createdAt: start }));
    await scheduler.upsert(record({ id: 'd', recurrence: { every: 'day', at: '12:00' }, timeZone: 'UTC' }));
    expect(scheduler.nextRunOf({ blueprintUid: record().blueprintUid, id: 'q' })?.toISOString()).toBe('2026-05-04T10:22:00.000Z');
    expect(await scheduler.tick()).toBe(0);
    clock.set('2026-05-04T10:21:59.999Z');
    expect(await scheduler.tick()).toBe(0);
    clock.set('2026-05-04T10:22:00.000Z');
    expect(await scheduler.tick()).toBe(1);
    expect(await scheduler.tick()).toBe(0);
    clock.set('2026-05-04T12:00:00.000Z');
    // Both due; the missed quarter hours collapse into one run.
    expect(await scheduler.tick()).toBe(2);
    expect(fired).toEqual(['q@2026-05-04T10:22:00.000Z', 'q@2026-05-04T12:00:00.000Z', 'd@2026-05-04T12:00:00.000Z']);
    expect(scheduler.nextRunOf({ blueprintUid: record().blueprintUid, id: 'q' })?.toISOString()).toBe('2026-05-04T12:07:00.000Z');
    await scheduler.stop();
  });

  it('never fires a disabled or removed schedule, and overlapping ticks fire a due schedule once', async () => {
    const { clock, scheduler, fired } = setup();
    await scheduler.upsert(record({ id: 'off', enabled: false, recurrence: { every: 'minutes', interval: 1 }, createdAt: start }));
    await scheduler.upsert(record({ id: 'gone', recurrence: { every: 'minutes', interval: 1 }, createdAt: start }));
    await scheduler.upsert(record({ id: 'on', recurrence: { every: 'minutes', interval: 1 }, createdAt: start }));
    await scheduler.remove({ blueprintUid: record().blueprintUid, id: 'gone' });
    expect(scheduler.nextRunOf({ blueprintUid: record().blueprintUid, id: 'off' })).toBeNull();
    clock.set('2026-05-04T10:08:00.000Z');
    const counts = await Promise.all([scheduler.tick(), scheduler.tick(), scheduler.tick()]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(fired).toEqual(['on@2026-05-04T10:08:00.000Z']);
    await scheduler.stop();
    clock.set('2026-05-04T11:00:00.000Z');
    expect(await scheduler.tick()).toBe(0);
  });

  it('loads stored schedules, and a failing start does not stop the others', async () => {
    const clock = new ManualClock(Date.parse(start));
    const errors: unknown[] = [];
    // The scheduler's failures go to its logger: capture the lines it writes.
    const logger = createLogger({ write: (line) => errors.push(JSON.parse(line).message) });
    const scheduler = new CronerScheduler(clock, logger);
    scheduler.load([record({ id: 'a', recurrence: { every: 'minutes', interval: 5 }, createdAt: start }), record({ id: 'b', recurrence: { every: 'minutes', interval: 5 }, createdAt: start })]);
    const fired: string[] = [];
    try {
      scheduler.bind(async (s) => {
        if (s.id === 'a') throw new Error('boom');
        fired.push(s.id);
      });
      clock.set('2026-05-04T10:12:00.000Z');
      expect(await scheduler.tick()).toBe(2);
    } finally {
      await scheduler.stop();
    }
    expect(fired).toEqual(['b']);
    expect(errors.join('\n')).toMatch(/schedule a could not start a run: boom/);
  });
});
