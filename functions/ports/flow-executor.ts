import type { AslDefinition } from '../../statemachines/asl.js';
import type { TaskInvocation } from '../../statemachines/local.js';
import type { ExecutionResult } from '../../statemachines/outcome.js';

/** What a run's execution starts with: see `statemachines/README.md`, "Execution input". */
export interface ExecutionInput {
  /** `waitForUpload`: a data upload hook's first run, which waits for its upload to end. */
  run: { id: string; blueprintId: string; flowId: string; version: number; startedBy: string; waitForUpload?: boolean };
  variables: Record<string, string>;
}

/**
 * Runs compiled flows: Step Functions on AWS (one state machine per flow version, tasks invoke the
 * task-worker function), aws-local-stepfunctions on the embedded platform. The same ASL in both.
 */
export interface FlowExecutor {
  /**
   * Makes a compiled version runnable and returns its handle (AWS: the state machine ARN). Called
   * once per version, before its first run.
   */
  prepare(version: { blueprintUid: string; version: number; definition: AslDefinition }): Promise<string>;
  /** Starts an execution; returns its handle (AWS: the execution ARN). */
  start(executable: string, definition: AslDefinition, runId: string, input: ExecutionInput): Promise<string>;
  /** Stops a running execution; the execution then settles as `aborted`. */
  abort(executionRef: string): Promise<void>;
  /** The execution's result, or null while it still runs (or when it is unknown). */
  result(executionRef: string): Promise<ExecutionResult | null>;
  /**
   * Like `result`, but tells a running execution ('running') from one that does not exist
   * ('unknown'), for the watchdog that settles runs which stopped reporting.
   */
  status?(executionRef: string): Promise<ExecutionResult | 'running' | 'unknown'>;
  /** Removes what `prepare` made (AWS: deletes the state machine). */
  discard(executable: string): Promise<void>;
  /**
   * Ends a task-token wait (a data upload hook's `upload.wait` state) with its output or an error
   * (AWS: SendTaskSuccess / SendTaskFailure; embedded: the in-process wait holding that token). A
   * token nothing waits for any more (the execution ended, or it was released before) is ignored.
   */
  release(taskToken: string, outcome: { output: Record<string, unknown> } | { error: string; cause: string }): Promise<void>;
  /**
   * Tells a task-token wait its task is still working (AWS: SendTaskHeartbeat), for a long task on
   * the worker task; where waits have no heartbeat timeout there is nothing to tell.
   */
  heartbeat?(taskToken: string): Promise<void>;
}

/**
 * What a long task's state sends the worker (see WORKER_TASK_KIND in statemachines/compile.ts):
 * the task's invocation with its task token, as the Lambda integration's Payload.
 */
export type WorkerTaskInvocation = { Payload: TaskInvocation & { kind: 'onWorkerTask'; taskToken: string } };

/** What the `upload.wait` state sends the worker (directly, or as the Lambda integration's Payload). */
export type UploadWaitInvocation =
  | { kind: 'waitForUpload'; runId: string; taskToken: string }
  | { Payload: { kind: 'waitForUpload'; runId: string; taskToken: string } };

/**
 * What the executor calls back: the task worker for every Task state, and the settle hook when an
 * execution ends. On AWS these are the task-worker Lambda and the execution-status-change rule.
 */
export interface FlowRuntimeHooks {
  /**
   * `timeLeftMs`: how long the caller may still run (AWS: the task worker Lambda's remaining
   * time); a task still working shortly before then fails, saying so, while its record can be
   * written. Absent: no limit (the embedded platform).
   */
  runTask(invocation: TaskInvocation | UploadWaitInvocation | WorkerTaskInvocation, options?: { timeLeftMs?: number }): Promise<unknown>;
  /**
   * Runs a long task the task worker staged for the worker task (`stagedKey` in the artifacts
   * store), without a time limit, and ends its task-token wait with the output or the error.
   * Resolves to whether the task finished.
   */
  runStagedTask?(stagedKey: string): Promise<boolean>;
  settle(runId: string, result: ExecutionResult): Promise<void>;
}
