/** TaskQueue port: runs long work outside the request (in-process locally; an async worker invocation on AWS). */
export interface TaskQueue {
  /** Resolves once the work is durably queued (on Lambda, before the response is sent). */
  /**
   * `bytes`: the size of the job's uploaded files when known (a queue may run small jobs where
   * they start faster); absent for URL loads, whose size is known only once downloaded.
   */
  enqueueImport(datasetId: string, jobId: string, hint?: { bytes?: number }): Promise<void>;
  /** Loads (or checks) a service's snapshot and marks the service running. */
  enqueueServiceLoad(datasetId: string, serviceId: string): Promise<void>;
  /**
   * Where a job records the worker running it (ImportService.run's `worker`, an ECS task ARN on
   * AWS): why that worker has stopped (it can no longer end the job), or undefined while it runs.
   * Only queues whose workers can be asked have it.
   */
  workerStopped?(worker: string): Promise<string | undefined>;
  /**
   * Starts a long flow task on the worker (AWS: the worker task), given the key of its staged
   * invocation in the artifacts store. Queues without a worker for long tasks lack it: the task
   * then runs where every task does.
   */
  enqueueFlowTask?(stagedKey: string): Promise<void>;
}
