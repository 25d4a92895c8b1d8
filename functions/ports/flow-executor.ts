import type { AslDefinition } from '../../statemachines/asl.js';
import type { TaskInvocation } from '../../statemachines/local.js';
import type { ExecutionResult } from '../../statemachines/outcome.js';

/** What a run's execution starts with: see `statemachines/README.md`, "Execution input". */
export interface ExecutionInput {
  run: { id: string; blueprintId: string; flowId: string; version: number; startedBy: string };
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
  /** Removes what `prepare` made (AWS: deletes the state machine). */
  discard(executable: string): Promise<void>;
}

/**
 * What the executor calls back: the task worker for every Task state, and the settle hook when an
 * execution ends. On AWS these are the task-worker Lambda and the execution-status-change rule.
 */
export interface FlowRuntimeHooks {
  runTask(invocation: TaskInvocation): Promise<unknown>;
  settle(runId: string, result: ExecutionResult): Promise<void>;
}
