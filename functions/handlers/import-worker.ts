import type { ImportTask } from '../adapters/aws/lambda-task-queue.js';
import { awsServices } from '../composition/aws.js';

/** Lambda entry of the import worker: runs one job, invoked asynchronously by the imports family. */
export const handler = async (task: ImportTask): Promise<void> => {
  if (task?.kind !== 'import' || typeof task.datasetId !== 'string' || typeof task.jobId !== 'string') {
    console.error('import worker: ignoring malformed task');
    return;
  }
  const services = await awsServices();
  await services.imports.run(task.datasetId, task.jobId);
};
