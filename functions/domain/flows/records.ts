/**
 * Flows as stored: the record types live with the FlowStore port (ports/records/flows.ts); this
 * file re-exports them for the domain and keeps the rules on them (lists, task instance ids).
 */
import type { HookType, StartedFromType } from '../../ports/records/flows.js';

export type {
  ActiveRunMarker,
  ArtifactRecord,
  FlowRecord,
  FlowRemovalRecord,
  FlowSwitches,
  FlowVersionRecord,
  HookRecord,
  HookType,
  MaskedValuesRecord,
  Recurrence,
  RunRecord,
  ScheduleRecord,
  StartedFrom,
  StartedFromType,
  TaskInstanceRecord,
} from '../../ports/records/flows.js';

export const STARTED_FROM_TYPES: readonly StartedFromType[] = ['manual', 'schedule', 'api', 'hook-asset', 'hook-index-job'];

export const taskInstanceId = (runId: string, taskId: string): string => `${runId}.${taskId}`;

export function parseTaskInstanceId(id: string): { runId: string; taskId: string } | null {
  const dot = id.indexOf('.');
  if (dot <= 0 || dot === id.length - 1) return null;
  return { runId: id.slice(0, dot), taskId: id.slice(dot + 1) };
}

export const HOOK_TYPES: readonly HookType[] = ['assetUpload', 'dataUpload'];
