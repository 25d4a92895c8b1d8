import middy from '@middy/core';
import type { TaskInvocation } from '../../statemachines/local.js';
import { awsServices } from '../composition/aws.js';

/**
 * Lambda entry of the flow task worker, invoked synchronously by every Task state of the flows'
 * state machines with the state's Parameters (see `statemachines/README.md`, "The task worker
 * contract"). What it returns becomes `tasks.<id>.output`; throwing fails the task (the state
 * machine's Catch records it and ends the run).
 */
const base = async (event: TaskInvocation): Promise<unknown> => {
  if (!event || typeof event.taskId !== 'string' || typeof event.type !== 'string' || !event.state) {
    throw new Error('flow-task-worker: the event is not a task invocation');
  }
  const services = await awsServices();
  // Step Functions needs a JSON value back; undefined would leave the task's output empty.
  return (await services.flowRuntime.runTask(event)) ?? {};
};

export const handler = middy<TaskInvocation, unknown>(base);
