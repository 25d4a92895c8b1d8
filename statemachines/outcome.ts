/**
 * Reading a finished execution of a compiled flow back as run and task statuses.
 *
 * - Succeeded: the output is the run document; `tasks.<id>.status` is `finished` or `skipped`.
 * - Failed with Error `Flow.failed`, `Flow.timeout` or `Flow.aborted`: a task ended the run;
 *   the Cause is that task's record (JSON) with its `taskId` and `status`.
 * - Aborted (Stop run on the run's page): the run is aborted.
 * - Failed with `Flow.aborted` and a plain Cause: the run ended before any task (its upload added
 *   no graph); the run is aborted with that reason.
 * - Failed with any other Error: the state machine itself went wrong; the run is failed.
 *
 * Statuses the state machine cannot know (tasks that ran in a branch cancelled by the end of the
 * run) come from the task worker's own records, passed as `known`. Tasks nobody reports never
 * started.
 */
import { runStatus, type RunStatus, type TaskStatus } from '../functions/domain/flows/runs/run-status.js';
import type { FlowDefinition } from '../functions/domain/flows/blueprints/model.js';

/**
 * The Error of the Fail state that ends a run early, by the run status it means. Written by the
 * compiler, read back here; defined here so the FlowExecutor port, which names ExecutionResult,
 * does not reach the compiler (and through it the task catalogue) in its imports.
 */
export const RUN_END_ERRORS = {
  failed: 'Flow.failed',
  timeout: 'Flow.timeout',
  aborted: 'Flow.aborted',
} as const satisfies Partial<Record<RunStatus, string>>;

export type ExecutionResult =
  | { kind: 'succeeded'; output: unknown }
  | { kind: 'failed'; error: string; cause?: string }
  | { kind: 'aborted' };

export interface RunOutcome {
  status: RunStatus;
  tasks: Record<string, TaskStatus>;
  /** The task that ended the run early, with its record (error details included). */
  endedBy?: { taskId: string; status: TaskStatus; record: Record<string, unknown> };
  /** For an unexpected state machine error. */
  error?: { error: string; cause?: string };
}

const STATUS_BY_ERROR = new Map<string, TaskStatus>(Object.entries(RUN_END_ERRORS).map(([status, error]) => [error, status as TaskStatus]));

export function readOutcome(
  flow: Pick<FlowDefinition, 'tasks'>,
  result: ExecutionResult,
  known: Readonly<Record<string, TaskStatus>> = {},
): RunOutcome {
  const tasks: Record<string, TaskStatus> = {};
  for (const task of flow.tasks) tasks[task.id] = known[task.id] ?? 'neverStarted';

  if (result.kind === 'succeeded') {
    const records = (result.output as { tasks?: Record<string, { status?: unknown }> } | null)?.tasks ?? {};
    for (const [id, record] of Object.entries(records)) {
      if (id in tasks && (record?.status === 'finished' || record?.status === 'skipped')) tasks[id] = record.status;
    }
    return { status: runStatus(Object.values(tasks)), tasks };
  }

  if (result.kind === 'aborted') {
    for (const [id, status] of Object.entries(tasks)) {
      if (status === 'running' || status === 'pending' || status === 'waiting') tasks[id] = 'aborted';
    }
    return { status: 'aborted', tasks };
  }

  const status = STATUS_BY_ERROR.get(result.error);
  const record = status ? parseRecord(result.cause) : undefined;
  if (status && record && typeof record.taskId === 'string' && record.taskId in tasks) {
    tasks[record.taskId] = status;
    // Tasks still running elsewhere were cancelled with the run.
    for (const [id, s] of Object.entries(tasks)) if (s === 'running') tasks[id] = 'aborted';
    return { status: runStatus(Object.values(tasks)), tasks, endedBy: { taskId: record.taskId, status, record } };
  }
  const error = { error: result.error, ...(result.cause !== undefined ? { cause: result.cause } : {}) };
  // Aborted before any task (a data upload hook's upload added no graph): the Cause says why.
  if (status === 'aborted') return { status: 'aborted', tasks, error };
  return { status: 'failed', tasks, error };
}

/**
 * The Cause is `States.JsonToString` of the task record. aws-local-stepfunctions 3.0.0 strips
 * every backslash from intrinsic results, so an error message with a quote in it leaves invalid
 * JSON; the task id (letters, digits, underscores) still reads from the text.
 */
function parseRecord(cause: string | undefined): Record<string, unknown> | undefined {
  if (!cause) return undefined;
  try {
    const parsed: unknown = JSON.parse(cause);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  const taskId = /"taskId":"([A-Za-z][A-Za-z0-9_]*)"/.exec(cause)?.[1];
  return taskId ? { taskId, cause } : undefined;
}
