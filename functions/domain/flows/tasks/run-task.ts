/**
 * Runs one task in the task worker: the instance's switches first, then the task type's runner
 * from the catalogue. Settings were validated on save; texts are substituted by each runner and
 * checked again where a limit applies. Tasks act as the run's starter: every dataset they touch
 * goes through the same access checks as an HTTP request.
 */
import type { TaskType } from '../blueprints/model.js';
import type { FlowSwitches } from '../records.js';
import { taskTypeOf } from './catalogue.js';
import { TaskFailure, type TaskContext, type TaskServices } from './task-context.js';

// The task worker (domain/flows/runs) imports these with runTaskOfType.
export { TaskFailure, type TaskContext, type TaskServices } from './task-context.js';

/** Runs one task; the switches decide whether the SPARQL update task may run at all. */
export async function runTaskOfType(type: TaskType, ctx: TaskContext, services: TaskServices, switches: FlowSwitches): Promise<unknown> {
  if (type === 'sparqlUpdate' && !switches.sparqlUpdateTaskEnabled) {
    throw new TaskFailure('The SPARQL update task is switched off on this instance.');
  }
  const definition = taskTypeOf(type);
  if (!definition) throw new TaskFailure(`The task type "${type}" is not available on this instance yet.`);
  return definition.run(ctx, services);
}
