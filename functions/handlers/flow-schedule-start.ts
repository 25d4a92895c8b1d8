import middy from '@middy/core';
import type { ScheduleStartEvent } from '../adapters/aws/eventbridge-scheduler.js';
import { awsLambda, awsLogger, awsServices } from '../composition/aws.js';
import { requireApiUrl } from '../domain/flows/runs/api-url.js';

/**
 * Lambda entry invoked (asynchronously) by EventBridge Scheduler when a flow schedule is due, with
 * the input its schedule was created with: `{ blueprintUid, scheduleId }`. Starts the schedule's
 * run as its owner. A run that cannot start is logged, not thrown (a retry would start it twice);
 * failures before that (reading the schedule) throw, so Lambda retries them. Without
 * PUBLIC_API_URL it refuses to start anything (the run's token, links and asset URLs need it).
 */
const base = async (event: ScheduleStartEvent): Promise<void> => {
  if (!event || typeof event.blueprintUid !== 'string' || typeof event.scheduleId !== 'string') {
    awsLogger.warn('flow-schedule-start: ignoring an event without blueprintUid and scheduleId');
    return;
  }
  const services = await awsServices();
  const apiUrl = requireApiUrl(services.platform.settings);
  await services.schedules.fire(event.blueprintUid, event.scheduleId, apiUrl);
};

export const handler = middy<ScheduleStartEvent, void>(base).use(awsLambda.middlewares);
