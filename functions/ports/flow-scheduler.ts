import type { ScheduleRecord } from './records/flows.js';

/**
 * Fires flow schedules: EventBridge Scheduler on AWS (one schedule per flow schedule, invoking the
 * schedule-start function), croner in the embedded platform's process. Both fire the same
 * recurrences at the same instants (see `functions/domain/flows/schedules/schedules.ts`); when one fires,
 * the runtime calls `FlowScheduleService.fire(blueprintUid, scheduleId)`.
 */
export interface FlowScheduler {
  /** Creates or replaces the schedule's trigger; a disabled schedule's trigger never fires. */
  upsert(schedule: ScheduleRecord): Promise<void>;
  /** Removes the trigger; nothing happens when there is none. */
  remove(schedule: Pick<ScheduleRecord, 'blueprintUid' | 'id'>): Promise<void>;
}
