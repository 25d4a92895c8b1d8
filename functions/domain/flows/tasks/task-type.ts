/**
 * The shape of one task type: its name and title, its settings check (on save) and its runner
 * (in the task worker). Each type lives in its own file, `tasks/<type>.ts`; `catalogue.ts` lists
 * them, so adding a type touches its file and the catalogue.
 */
import type { TaskType } from '../blueprints/model.js';
import type { CheckContext, SettingsReader } from './settings-reader.js';
import type { TaskContext, TaskServices } from './task-context.js';

export interface TaskTypeDefinition {
  type: TaskType;
  /** The name shown in the console. */
  title: string;
  kind: 'control' | 'data';
  /**
   * The work can outlast one function invocation (a big download, query, update or validation).
   * A task of such a type whose Timeout is longer than a function may run (FUNCTION_TASK_SECONDS in
   * statemachines/compile.ts) runs on the worker task on AWS (see README "Long tasks"); anywhere
   * else, and with a shorter Timeout, it runs where every task does.
   */
  mayRunLong?: true;
  /** Checks the settings when the flow is saved; problems go to `ctx`. */
  check(settings: SettingsReader, ctx: CheckContext): void;
  /** Does the task's work; what it returns is the task's output. */
  run(ctx: TaskContext, services: TaskServices): Promise<unknown>;
  /** Whether a task with these settings sets output variables (its output's `variables` feed the tasks after it). */
  setsVariables?(settings: Record<string, unknown>): boolean;
}
