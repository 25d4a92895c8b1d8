/**
 * The task catalogue: every task type, by name. Each type's settings check and runner live in
 * its own file (`tasks/<type>.ts`, shaped by `task-type.ts`), so adding a type touches that file
 * and this list. Flow validation, the ASL compiler and the task worker look types up here.
 */
import type { TaskType } from '../blueprints/model.js';
import { decision } from './decision.js';
import { httpRequest } from './http-request.js';
import { loadFromUrl } from './load-from-url.js';
import { sendEmail } from './send-email.js';
import { serviceAction } from './service-action.js';
import { setAccessLevel } from './set-access-level.js';
import { setDescription } from './set-description.js';
import { setVariables } from './set-variables.js';
import { shaclValidation } from './shacl-validation.js';
import { sparqlQuery } from './sparql-query.js';
import { sparqlUpdate } from './sparql-update.js';
import { stopRun } from './stop-run.js';
import type { TaskTypeDefinition } from './task-type.js';
import { wait } from './wait.js';

export const TASK_CATALOGUE: Readonly<Record<TaskType, TaskTypeDefinition>> = {
  setVariables,
  decision,
  stopRun,
  setDescription,
  wait,
  sparqlQuery,
  sparqlUpdate,
  loadFromUrl,
  shaclValidation,
  httpRequest,
  sendEmail,
  setAccessLevel,
  serviceAction,
};

/** The definition of a type name, or undefined when the catalogue has no such type. */
export function taskTypeOf(type: string): TaskTypeDefinition | undefined {
  return Object.hasOwn(TASK_CATALOGUE, type) ? TASK_CATALOGUE[type as TaskType] : undefined;
}

/** Whether a task sets output variables (its output's `variables` feed the tasks after it). */
export function setsVariables(task: { type: string; settings: Record<string, unknown> }): boolean {
  return taskTypeOf(task.type)?.setsVariables?.(task.settings) ?? false;
}

/** The task types as the console shows them (GET /flows/taskTypes): the SPARQL update task only while the administrator allows it. */
export function taskTypeList(switches: { sparqlUpdateTaskEnabled: boolean }): { type: TaskType; title: string; kind: 'control' | 'data'; mayRunLong: boolean; enabled: boolean }[] {
  return Object.values(TASK_CATALOGUE).map((t) => ({
    type: t.type,
    title: t.title,
    kind: t.kind,
    mayRunLong: t.mayRunLong === true,
    enabled: t.type !== 'sparqlUpdate' || switches.sparqlUpdateTaskEnabled,
  }));
}
