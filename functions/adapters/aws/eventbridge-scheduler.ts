import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  UpdateScheduleCommand,
  type CreateScheduleInput,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { awsScheduleExpression, nextRun } from '../../domain/flows/schedules/schedules.js';
import type { ScheduleRecord } from '../../domain/flows/records.js';
import type { FlowScheduler } from '../../ports/flow-scheduler.js';
import type { Clock } from '../../ports/clock.js';

/** Start of every flow schedule's name in the group; IAM is scoped to `<prefix>-*`. */
export const FLOW_SCHEDULE_NAME_PREFIX = 'flow-schedule';
/** EventBridge Scheduler names: at most 64 of `[0-9A-Za-z_.-]`. */
export const SCHEDULE_NAME_MAX = 64;

export interface EventBridgeSchedulerOptions {
  /** The schedule group every flow schedule goes in. */
  groupName: string;
  /** The schedule-start function; unset where schedules are only removed. */
  targetArn?: string;
  /** The role EventBridge Scheduler assumes to invoke the target. */
  roleArn?: string;
  namePrefix?: string;
}

export function scheduleName(scheduleId: string, namePrefix = FLOW_SCHEDULE_NAME_PREFIX): string {
  return `${namePrefix}-${scheduleId.replace(/[^0-9A-Za-z_.-]/g, '_')}`.slice(0, SCHEDULE_NAME_MAX);
}

/** What the schedule-start function receives from a flow schedule. */
export interface ScheduleStartEvent {
  blueprintUid: string;
  scheduleId: string;
}

/**
 * Each flow schedule is one EventBridge Scheduler schedule in the group, invoking the
 * schedule-start function with `{ blueprintUid, scheduleId }`. Disabled schedules stay, DISABLED.
 * Intervals are `rate(...)` expressions starting at the next run (which keeps their anchor on the
 * schedule's creation); the others are cron expressions in the schedule's time zone.
 */
export class EventBridgeScheduler implements FlowScheduler {
  constructor(
    private readonly client: SchedulerClient,
    private readonly clock: Clock,
    private readonly options: EventBridgeSchedulerOptions,
  ) {}

  private name(id: string): string {
    return scheduleName(id, this.options.namePrefix);
  }

  async upsert(schedule: ScheduleRecord): Promise<void> {
    const { targetArn, roleArn, groupName } = this.options;
    if (!targetArn || !roleArn) throw new Error('the schedule target and role are not set: this function cannot create schedules');
    const interval = schedule.recurrence.every === 'minutes' || schedule.recurrence.every === 'hours';
    const event: ScheduleStartEvent = { blueprintUid: schedule.blueprintUid, scheduleId: schedule.id };
    const input: CreateScheduleInput = {
      Name: this.name(schedule.id),
      GroupName: groupName,
      Description: `Flow schedule "${schedule.label}"`.slice(0, 512),
      ScheduleExpression: awsScheduleExpression(schedule.recurrence),
      ScheduleExpressionTimezone: schedule.timeZone,
      ...(interval ? { StartDate: nextRun(schedule, this.clock.now()) } : {}),
      State: schedule.enabled ? 'ENABLED' : 'DISABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: targetArn,
        RoleArn: roleArn,
        Input: JSON.stringify(event),
        // A run that starts an hour late is no longer the scheduled one.
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 5 },
      },
    };
    try {
      await this.client.send(new UpdateScheduleCommand(input));
    } catch (e) {
      if (!(e instanceof ResourceNotFoundException)) throw e;
      try {
        await this.client.send(new CreateScheduleCommand(input));
      } catch (created) {
        // Created meanwhile by a concurrent upsert: write ours over it.
        if (!(created instanceof ConflictException)) throw created;
        await this.client.send(new UpdateScheduleCommand(input));
      }
    }
  }

  async remove(schedule: Pick<ScheduleRecord, 'blueprintUid' | 'id'>): Promise<void> {
    try {
      await this.client.send(new DeleteScheduleCommand({ Name: this.name(schedule.id), GroupName: this.options.groupName }));
    } catch (e) {
      if (!(e instanceof ResourceNotFoundException)) throw e;
    }
  }
}
