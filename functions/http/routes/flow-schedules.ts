import { ValidationError } from '../../domain/errors.js';
import type { Operations } from '../api.js';

const notYet = async () => {
  throw new ValidationError('Schedules are not available yet.');
};

/** Schedules of a flow (placeholder until the schedules change lands). */
export const scheduleOperations: Operations = {
  listSchedules: notYet,
  createSchedule: notYet,
  getSchedule: notYet,
  updateSchedule: notYet,
  deleteSchedule: notYet,
};
