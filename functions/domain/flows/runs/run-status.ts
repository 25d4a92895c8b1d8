/**
 * Run status from task statuses (spec, "States and transitions"): the most severe status among
 * the tasks, most severe first: failed, timeout, aborted, running, pending, waiting, finished.
 * Skipped tasks (a Decision chose another branch) and never-started tasks (the run ended before
 * reaching them) do not count.
 */

import type { RunStatus, TaskStatus } from '../../../ports/records/flows.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type { RunStatus, TaskStatus } from '../../../ports/records/flows.js';

export const RUN_STATUS_SEVERITY: readonly RunStatus[] = [
  'failed',
  'timeout',
  'aborted',
  'running',
  'pending',
  'waiting',
  'finished',
];

export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['failed', 'timeout', 'aborted', 'finished'];

/**
 * The run's status. Beyond plain severity, one rule of the spec's table: "running" also covers
 * "some finished and others are yet to start", so finished next to pending reads as running.
 * With no counted task at all (an empty flow, or every task skipped) the run is finished.
 */
export function runStatus(taskStatuses: Iterable<TaskStatus>): RunStatus {
  const present = new Set<TaskStatus>(taskStatuses);
  if (present.has('pending') && present.has('finished') && !hasAny(present, ['failed', 'timeout', 'aborted'])) {
    return 'running';
  }
  for (const status of RUN_STATUS_SEVERITY) if (present.has(status)) return status;
  return 'finished';
}

function hasAny(set: Set<TaskStatus>, statuses: readonly TaskStatus[]): boolean {
  return statuses.some((s) => set.has(s));
}

export function isFinalRunStatus(status: RunStatus): boolean {
  return FINAL_RUN_STATUSES.includes(status);
}
