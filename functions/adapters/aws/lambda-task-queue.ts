import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { TaskQueue } from '../../ports/task-queue.js';

/** The payload the import worker function receives. */
export type WorkerTask = { kind: 'import'; datasetId: string; jobId: string } | { kind: 'service'; datasetId: string; serviceId: string };

/**
 * Starts background work as an asynchronous invocation of the worker function (Lambda retries
 * failed async invocations and the worker's run is idempotent: it only picks up pending jobs).
 */
export class LambdaTaskQueue implements TaskQueue {
  constructor(
    private readonly lambda: LambdaClient,
    private readonly workerFunctionName: string,
  ) {}

  enqueueImport(datasetId: string, jobId: string): Promise<void> {
    return this.invoke({ kind: 'import', datasetId, jobId });
  }

  enqueueServiceLoad(datasetId: string, serviceId: string): Promise<void> {
    return this.invoke({ kind: 'service', datasetId, serviceId });
  }

  private async invoke(task: WorkerTask): Promise<void> {
    await this.lambda.send(
      new InvokeCommand({ FunctionName: this.workerFunctionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(task)) }),
    );
  }
}
