/**
 * Removing one schedule: its trigger first, then its record. Its own module because removing a
 * flow (blueprints) and removing an owner or a schedule (schedules) both need it, and the
 * schedule service itself depends on blueprints.
 */
import type { ScheduleRecord } from '../records.js';
import type { Platform } from '../../shared/platform.js';

/** Stops a schedule's trigger, then forgets it (the flow's or the owner's removal uses this too). */
export async function removeSchedule(platform: Pick<Platform, 'scheduler' | 'flows'>, schedule: ScheduleRecord): Promise<void> {
  await platform.scheduler.remove(schedule);
  await platform.flows.deleteSchedule(schedule.blueprintUid, schedule.id);
}
