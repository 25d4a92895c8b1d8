import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { TaskQueue } from '../../ports/platform.js';

/** The payload the import worker function receives. */
export interface ImportTask {
  kind: 'import';
  datasetId: string;
  jobId: string;
}

/**
 * Starts background work as an asynchronous invocation of the worker function (Lambda retries
 * failed async invocations and the worker's run is idempotent: it only picks up pending jobs).
 */
export class LambdaTaskQueue implements TaskQueue {
  constructor(
    private readonly lambda: LambdaClient,
    private readonly workerFunctionName: string,
  ) {}

  async enqueueImport(datasetId: string, jobId: string): Promise<void> {
    const task: ImportTask = { kind: 'import', datasetId, jobId };
    await this.lambda.send(
      new InvokeCommand({ FunctionName: this.workerFunctionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(task)) }),
    );
  }
}
