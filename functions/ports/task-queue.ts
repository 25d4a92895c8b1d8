/** TaskQueue port: runs long work outside the request (in-process locally; an async worker invocation on AWS). */
export interface TaskQueue {
  /** Resolves once the work is durably queued (on Lambda, before the response is sent). */
  enqueueImport(datasetId: string, jobId: string): Promise<void>;
  /** Loads (or checks) a service's snapshot and marks the service running. */
  enqueueServiceLoad(datasetId: string, serviceId: string): Promise<void>;
}
