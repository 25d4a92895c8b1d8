import middy from '@middy/core';
import type { WorkerTask } from '../adapters/aws/lambda-task-queue.js';
import { awsLambda, awsLogger, awsServices } from '../composition/aws.js';

/**
 * Lambda entry of the background worker, invoked asynchronously: runs an import job, or checks a
 * service's snapshot and marks it running (the SPARQL function loads it on its first query).
 */
const base = async (task: WorkerTask): Promise<void> => {
  const services = await awsServices();
  if (task?.kind === 'import' && typeof task.jobId === 'string') return void (await services.imports.run(task.datasetId, task.jobId));
  if (task?.kind === 'service' && typeof task.serviceId === 'string') return services.sparqlServices.prepare(task.datasetId, task.serviceId, { warm: false });
  awsLogger.warn('worker: ignoring a malformed task');
};

export const handler = middy<WorkerTask, void>(base).use(awsLambda.middlewares);
