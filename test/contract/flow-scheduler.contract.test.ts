/**
 * The FlowScheduler contract, run against both adapters: croner in-process (driven by a manual
 * clock and `tick()`, never by waiting) and EventBridge Scheduler. EventBridge Scheduler has no
 * local stand-in, so a recording fake keeps the schedules it was given (create, update, delete,
 * with its not-found and conflict answers); "what fires" is then the enabled schedule's target
 * input, which is what the schedule-start function receives. The calls themselves are checked in
 * test/unit/flows/schedulers.test.ts.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleInput,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBridgeScheduler, type ScheduleStartEvent } from '../../functions/adapters/aws/eventbridge-scheduler.js';
import { systemClock } from '../../functions/adapters/common/node-crypto.js';
import { CronerScheduler } from '../../functions/adapters/local/croner-scheduler.js';
import type { Clock } from '../../functions/ports/clock.js';
import type { FlowScheduler } from '../../functions/ports/flow-scheduler.js';
import type { ScheduleRecord } from '../../functions/ports/records/flows.js';

const START = '2026-05-04T10:07:31.000Z';

/** Only `now` is manual; sleep and after are the system's (the scheduler's own timer is unref'd). */
class ManualClock implements Clock {
  sleep = systemClock.sleep;
  after = systemClock.after;
  constructor(private t: number) {}
  now = () => new Date(this.t);
  set(date: Date) {
    this.t = date.getTime();
  }
}

interface SchedulerHarness {
  scheduler: FlowScheduler;
  /** What fires for the schedule when it is due: the start event, or null when nothing would. */
  firing(schedule: Pick<ScheduleRecord, 'blueprintUid' | 'id'>): Promise<ScheduleStartEvent | null>;
  close(): Promise<void>;
}

function cronerHarness(): SchedulerHarness {
  const clock = new ManualClock(Date.parse(START));
  const scheduler = new CronerScheduler(clock);
  const fired: ScheduleStartEvent[] = [];
  scheduler.bind(async (s) => {
    fired.push({ blueprintUid: s.blueprintUid, scheduleId: s.id });
  });
  return {
    scheduler,
    async firing(schedule) {
      const next = scheduler.nextRunOf(schedule);
      if (!next) return null;
      clock.set(next);
      fired.length = 0;
      await scheduler.tick();
      return fired.find((f) => f.blueprintUid === schedule.blueprintUid && f.scheduleId === schedule.id) ?? null;
    },
    close: () => scheduler.stop(),
  };
}

/** A recording fake of EventBridge Scheduler that keeps schedules by group and name, as the service does. */
function fakeScheduler() {
  const schedules = new Map<string, CreateScheduleInput>();
  const calls: string[] = [];
  const notFound = () => new ResourceNotFoundException({ message: 'Schedule not found', Message: 'Schedule not found', $metadata: {} });
  const client = {
    async send(command: { input: CreateScheduleInput }) {
      calls.push(command.constructor.name);
      const key = `${command.input.GroupName}/${command.input.Name}`;
      if (command instanceof CreateScheduleCommand) {
        if (schedules.has(key)) throw new ConflictException({ message: 'exists', Message: 'exists', $metadata: {} });
        schedules.set(key, command.input);
      } else if (command instanceof UpdateScheduleCommand) {
        if (!schedules.has(key)) throw notFound();
        schedules.set(key, command.input);
      } else if (command instanceof DeleteScheduleCommand) {
        if (!schedules.delete(key)) throw notFound();
      } else {
        throw new Error(`unexpected Scheduler call ${command.constructor.name}`);
      }
      return { $metadata: {} };
    },
  };
  return { client: client as unknown as SchedulerClient, schedules, calls };
}

const GROUP = 'LinkedDataPlatform-Stateless-flow-schedules';

function eventBridgeHarness(): SchedulerHarness {
  const { client, schedules } = fakeScheduler();
  const scheduler = new EventBridgeScheduler(client, new ManualClock(Date.parse(START)), {
    groupName: GROUP,
    targetArn: 'arn:aws:lambda:eu-west-1:123456789012:function:flow-schedule-start',
    roleArn: 'arn:aws:iam::123456789012:role/FlowScheduleRole',
  });
  return {
    scheduler,
    async firing(schedule) {
      const found = [...schedules.values()].find((s) => s.State === 'ENABLED' && JSON.parse(s.Target!.Input!).scheduleId === schedule.id);
      return found ? (JSON.parse(found.Target!.Input!) as ScheduleStartEvent) : null;
    },
    close: async () => {},
  };
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
    createdAt: START,
    updatedAt: START,
    ...extra,
  };
}

const ADAPTERS: [string, () => SchedulerHarness][] = [
  ['CronerScheduler', cronerHarness],
  ['EventBridgeScheduler (recording fake of EventBridge Scheduler)', eventBridgeHarness],
];

describe.each(ADAPTERS)('FlowScheduler contract: %s', (_name, create) => {
  let h: SchedulerHarness;
  afterEach(async () => {
    await h?.close();
  });
  const event = (s: ScheduleRecord): ScheduleStartEvent => ({ blueprintUid: s.blueprintUid, scheduleId: s.id });

  it('an enabled schedule fires a start of its own flow and schedule', async () => {
    h = create();
    const daily = record();
    const quarterly = record({ id: 'aaaaaaaaaaaaaaaaaaaaaaaa', recurrence: { every: 'minutes', interval: 15 } });
    await h.scheduler.upsert(daily);
    await h.scheduler.upsert(quarterly);
    expect(await h.firing(daily)).toEqual(event(daily));
    expect(await h.firing(quarterly)).toEqual(event(quarterly));
  });

  it('a disabled schedule never fires', async () => {
    h = create();
    const off = record({ enabled: false });
    await h.scheduler.upsert(off);
    expect(await h.firing(off)).toBeNull();
  });

  it('upsert replaces the trigger: disabling stops it, enabling again restarts it', async () => {
    h = create();
    await h.scheduler.upsert(record());
    await h.scheduler.upsert(record({ enabled: false }));
    expect(await h.firing(record())).toBeNull();
    await h.scheduler.upsert(record({ recurrence: { every: 'week', at: '09:05', weekday: 1 } }));
    expect(await h.firing(record())).toEqual(event(record()));
  });

  it('remove stops the trigger, and leaves the other schedules of the flow alone', async () => {
    h = create();
    const other = record({ id: 'bbbbbbbbbbbbbbbbbbbbbbbb' });
    await h.scheduler.upsert(record());
    await h.scheduler.upsert(other);
    await h.scheduler.remove(record());
    expect(await h.firing(record())).toBeNull();
    expect(await h.firing(other)).toEqual(event(other));
  });

  it('removing a schedule that has no trigger (removed before, or never made) is fine', async () => {
    h = create();
    await h.scheduler.upsert(record());
    await h.scheduler.remove(record());
    await expect(h.scheduler.remove(record())).resolves.toBeUndefined();
    await expect(h.scheduler.remove({ blueprintUid: 'nobody', id: 'never' })).resolves.toBeUndefined();
  });

  it('can make a trigger again after removing it', async () => {
    h = create();
    await h.scheduler.upsert(record());
    await h.scheduler.remove(record());
    await h.scheduler.upsert(record());
    expect(await h.firing(record())).toEqual(event(record()));
  });
});

describe('EventBridgeScheduler against the stateful fake', () => {
  it('keeps one schedule per flow schedule: a second upsert updates it in place', async () => {
    const { client, schedules, calls } = fakeScheduler();
    const scheduler = new EventBridgeScheduler(client, systemClock, { groupName: GROUP, targetArn: 'arn:aws:lambda:eu-west-1:1:function:f', roleArn: 'arn:aws:iam::1:role/r' });
    await scheduler.upsert(record());
    await scheduler.upsert(record({ label: 'Nightly, renamed' }));
    expect(schedules.size).toBe(1);
    expect([...schedules.values()][0]!.Description).toBe('Flow schedule "Nightly, renamed"');
    expect(calls).toEqual(['UpdateScheduleCommand', 'CreateScheduleCommand', 'UpdateScheduleCommand']);
  });
});
