/**
 * Running a compiled flow in-process with aws-local-stepfunctions (embedded platform, tests).
 * Pure helpers over the definition; the runner itself is the caller's.
 *
 * aws-local-stepfunctions 3.0.0 on Node 20 needs a `Promise.withResolvers` polyfill loaded first,
 * and it supports neither JSONata nor `.waitForTaskToken` (the compiler uses neither).
 */
import type { TaskType } from '../functions/domain/flows/blueprints/model.js';
import type { TaskRecord } from '../functions/domain/flows/blueprints/variables.js';
import type { AslDefinition, AslState, JsonValue } from './asl.js';

/**
 * The `kind` of a long task's invocation (statemachines/compile.ts, "Long tasks"); here, not in
 * compile.ts, so the runners need not import the compiler (and its task catalogue).
 */
export const WORKER_TASK_KIND = 'onWorkerTask';

/** The run document every state passes on: see README "Run document". */
export interface RunDocument {
  run: JsonValue;
  variables: Record<string, string>;
  tasks: Record<string, TaskRecord>;
}

/** What the task worker receives: the Parameters of the task's Task state. */
export interface TaskInvocation {
  taskId: string;
  type: TaskType;
  label: string;
  settings: Record<string, unknown>;
  timeoutSeconds?: number;
  variableSources?: string[];
  state: RunDocument;
}

export type TaskHandler = (invocation: TaskInvocation, stateName: string) => unknown;
export type LocalHandlers = Record<string, (input: JsonValue) => Promise<JsonValue>>;

/**
 * `overrides.taskResourceLocalHandlers` for aws-local-stepfunctions, which keys them by state
 * name (not by Resource): every Task state, in every Parallel branch, calls `handler`. A long
 * task's state (WORKER_TASK_KIND: on AWS, a task-token wait the worker task ends) runs here as
 * every task does: its handler gets the plain invocation and its answer is the state's result.
 */
export function localTaskHandlers(definition: AslDefinition, handler: TaskHandler): LocalHandlers {
  const handlers: LocalHandlers = {};
  for (const [name] of taskStates(definition)) {
    handlers[name] = async (input) => ((await handler(localInvocation(input), name)) ?? {}) as JsonValue;
  }
  return handlers;
}

function localInvocation(input: JsonValue): TaskInvocation {
  const payload = (input as { Payload?: { kind?: unknown } } | null)?.Payload;
  if (payload?.kind !== WORKER_TASK_KIND) return input as unknown as TaskInvocation;
  const { kind: _kind, taskToken: _token, ...task } = payload as Record<string, unknown>;
  return task as unknown as TaskInvocation;
}

/** Every Task state with its name, depth first. */
export function taskStates(definition: AslDefinition): [string, AslState][] {
  const found: [string, AslState][] = [];
  const visit = (machine: AslDefinition) => {
    for (const [name, state] of Object.entries(machine.States)) {
      if (state.Type === 'Task') found.push([name, state]);
      if (state.Type === 'Parallel') state.Branches.forEach(visit);
    }
  };
  visit(definition);
  return found;
}

/**
 * The longest Task timeout a local run can honour: Node timers hold at most 2^31-1 ms (longer
 * ones fire at once).
 */
export const LOCAL_MAX_TIMEOUT_SECONDS = 2_147_483;

/**
 * The definition as a local run needs it. Step Functions lets a Task without `TimeoutSeconds`
 * run for a year, but aws-local-stepfunctions times it out after 60 s; so every Task state
 * gets an explicit timeout, capped to what a Node timer holds.
 */
export function forLocalRun(definition: AslDefinition): AslDefinition {
  const copy = structuredClone(definition);
  const visit = (machine: AslDefinition) => {
    for (const state of Object.values(machine.States)) {
      if (state.Type === 'Task') state.TimeoutSeconds = Math.min(state.TimeoutSeconds ?? LOCAL_MAX_TIMEOUT_SECONDS, LOCAL_MAX_TIMEOUT_SECONDS);
      if (state.Type === 'Parallel') state.Branches.forEach(visit);
    }
  };
  visit(copy);
  return copy;
}
