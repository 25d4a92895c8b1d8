import middy from '@middy/core';
import type { TaskInvocation } from '../../statemachines/local.js';
import { WAIT_FOR_UPLOAD_KIND } from '../../statemachines/compile.js';
import { awsLambda, awsServices } from '../composition/aws.js';
import type { UploadWaitInvocation } from '../ports/flow-executor.js';

type WorkerEvent = TaskInvocation | UploadWaitInvocation;

const isUploadWait = (event: WorkerEvent): boolean => {
  const payload = 'Payload' in event ? event.Payload : event;
  return (payload as { kind?: unknown })?.kind === WAIT_FOR_UPLOAD_KIND;
};

/**
 * Lambda entry of the flow task worker, invoked synchronously by every Task state of the flows'
 * state machines with the state's Parameters (see `statemachines/README.md`, "The task worker
 * contract"). What it returns becomes `tasks.<id>.output`; throwing fails the task (the state
 * machine's Catch records it and ends the run). A data upload hook's `upload.wait` state invokes
 * it through the task-token integration: it records the token and returns at once.
 */
const base = async (event: WorkerEvent, context?: { getRemainingTimeInMillis?: () => number }): Promise<unknown> => {
  const task = event as TaskInvocation;
  if (!event || (!isUploadWait(event) && (typeof task.taskId !== 'string' || typeof task.type !== 'string' || !task.state))) {
    throw new Error('flow-task-worker: the event is not a task invocation');
  }
  const services = await awsServices();
  // Step Functions needs a JSON value back; undefined would leave the task's output empty.
  // A task cannot outlive this function (15 minutes at most on AWS): it ends, recorded, just before.
  const timeLeftMs = context?.getRemainingTimeInMillis?.();
  return (await services.flowRuntime.runTask(event, timeLeftMs !== undefined ? { timeLeftMs } : {})) ?? {};
};

export const handler = middy<WorkerEvent, unknown>(base).use(awsLambda.middlewares);
