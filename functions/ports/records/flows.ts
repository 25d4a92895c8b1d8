/**
 * Flows as stored: blueprints, their versions, masked values, runs, task instances, switches,
 * schedules and hooks; the records the FlowStore and FlowScheduler ports read and write. Types
 * only; the rules live in domain/flows (run status in runs/run-status.ts, ids in records.ts).
 */
import type { FlowAccessLevel, FlowDefinition, TaskType } from './flow-definition.js';

/** Most severe first: see domain/flows/runs/run-status.ts, which derives a run's status from its tasks'. */
export type RunStatus = 'failed' | 'timeout' | 'aborted' | 'running' | 'pending' | 'waiting' | 'finished';
export type TaskStatus = RunStatus | 'skipped' | 'neverStarted';

/** A flow blueprint: the flow's identity and its newest version number. */
export interface FlowRecord {
  /** Internal id, unique on the instance (runs point to it as `blueprintId`). */
  uid: string;
  ownerUid: string;
  /** The flow ID of the definition and the URL; unique per owner (case-insensitive). */
  flowId: string;
  name: string;
  accessLevel: FlowAccessLevel;
  latestVersion: number;
  createdAt: string;
  updatedAt: string;
  createdByUid: string;
}

/** One saved version; every save makes a new one. */
export interface FlowVersionRecord {
  blueprintUid: string;
  version: number;
  definition: FlowDefinition;
  createdAt: string;
  createdByUid: string;
  /** How the executor runs this version (AWS: the state machine ARN), once prepared. */
  executable?: string;
  /** Set when this version was made by restoring an older one. */
  restoredFrom?: number;
}

/** The values of a flow's masked values, kept apart from its definition. */
export interface MaskedValuesRecord {
  blueprintUid: string;
  values: Record<string, string>;
  updatedAt: string;
}

export type StartedFromType = 'manual' | 'schedule' | 'api' | 'hook-asset' | 'hook-index-job';

export interface StartedFrom {
  type: StartedFromType;
  scheduleId?: string;
  hookId?: string;
  assetId?: string;
}

/**
 * A flow being removed: written before the flow record goes, deleted when everything of the flow
 * (state machines, versions, values, hooks, runs) is gone. While it exists, the removal resumes
 * (the next request of an account deletion, or the watchdog) until it completes.
 */
export interface FlowRemovalRecord {
  blueprintUid: string;
  ownerUid: string;
  flowId: string;
  requestedAt: string;
  /** Why the last attempt stopped (a state machine that could not be deleted, ...). */
  lastError?: string;
}

/** A run not yet ended, as the watchdog finds it: checked once `checkAfter` has passed. */
export interface ActiveRunMarker {
  runId: string;
  createdAt: string;
  checkAfter: string;
}

export interface RunRecord {
  id: string;
  blueprintUid: string;
  flowId: string;
  ownerUid: string;
  version: number;
  status: RunStatus;
  startedFrom: StartedFrom;
  /** Whoever started the run (a schedule's or hook's owner for those); the run acts as them. */
  startedByUid: string;
  /** The preset the run was started with, if any. */
  preset?: string;
  /** The values the run started with, after precedence; never masked values or the token. */
  variables: Record<string, string>;
  /** Set by a Set description task. */
  description?: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Why the run ended early (failed, timeout, aborted). */
  error?: { taskId?: string; message: string };
  /** Final statuses of every task, written when the run settles. */
  taskStatuses?: Record<string, TaskStatus>;
  /** The import a data upload hook's run belongs to. */
  importJobId?: string;
  /** A waiting run's task token (AWS), recorded when its execution reaches the wait. */
  uploadTaskToken?: string;
  /** How a waiting run's upload ended: the graph the run is for, or why there is none. */
  uploadOutcome?: { graph: string } | { none: string };
  /** The API URL the run was started through (default graph names, links in emails). */
  apiUrl?: string;
  /** The executor's handle of the execution (AWS: execution ARN). */
  executionRef?: string;
  /** The run's platform token (`?system_platformToken`), revoked when the run ends. */
  platformTokenId?: string;
}

export interface ArtifactRecord {
  id: string;
  fileName: string;
  contentType: string;
  size: number;
  blobKey: string;
  createdAt: string;
}

export interface TaskInstanceRecord {
  /** `<runId>.<taskId>`: unique, and leads back to its run. */
  id: string;
  runId: string;
  taskId: string;
  label: string;
  type: TaskType;
  status: TaskStatus;
  startedAt?: string;
  finishedAt?: string;
  /** Log lines with masked values replaced by `****`. */
  log: string[];
  error?: string;
  output?: unknown;
  artifacts: ArtifactRecord[];
}

/** Instance switches of the flows feature, set by an administrator. */
export interface FlowSwitches {
  flowsEnabled: boolean;
  sparqlUpdateTaskEnabled: boolean;
}

/** How often a schedule fires: every N minutes or hours, or every day, week or month at a time. */
export type Recurrence =
  | { every: 'minutes' | 'hours'; interval: number }
  | { every: 'day'; at: string }
  | { every: 'week'; at: string; weekday: number }
  | { every: 'month'; at: string; dayOfMonth: number };

/** A schedule belongs to its creator; its runs act as them and use its values. */
export interface ScheduleRecord {
  id: string;
  blueprintUid: string;
  ownerUid: string;
  label: string;
  recurrence: Recurrence;
  /** IANA time zone of the schedule's times, e.g. `Europe/Amsterdam`. */
  timeZone: string;
  values: Record<string, string>;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  /** When the embedded scheduler fires it next (ISO), recomputed after each firing. */
  nextRunAt?: string;
  lastRunAt?: string;
}

export type HookType = 'assetUpload' | 'dataUpload';

/** A hook belongs to its creator; its runs act as them and use its values (or a preset's). */
export interface HookRecord {
  id: string;
  blueprintUid: string;
  ownerUid: string;
  label: string;
  enabled: boolean;
  type: HookType;
  datasetId: string;
  values: Record<string, string>;
  /** The preset the values were filled from, if any (the values are copied at save). */
  preset?: string;
  createdAt: string;
  updatedAt: string;
}
