/**
 * A dataset's data as stored: import jobs (TriplyDB's IndexJob field names and statuses), their
 * files, and assets with their versions. Types only; views and rules live in domain/data.
 */

export type JobStatus = 'created' | 'downloading' | 'pending' | 'indexing' | 'finished' | 'canceled' | 'error';
export type JobType = 'upload' | 'download';

export interface JobRecord {
  jobId: string;
  datasetId: string;
  type: JobType;
  status: JobStatus;
  defaultGraphName: string;
  baseIRI?: string;
  overwriteAll: boolean;
  mergeGraphs: boolean;
  downloadUrls?: string[];
  createdAt: string;
  updatedAt: string;
  error?: { message: string };
  graphNames?: string[];
  indexedGraphCount?: number;
  statements?: number;
  /** Set while a worker owns the job, so a second start cannot run it twice. */
  startedAt?: string;
  /** Progress while a worker runs it (written every few seconds): bytes of the job's URLs downloaded so far. */
  downloadedBytes?: number;
  /** Progress while indexing: bytes of the job's files read so far (`statements` counts what they held). */
  indexedBytes?: number;
  /**
   * The worker that took the job when it is one the watchdog can ask about (an ECS task ARN on
   * AWS): a job whose worker stopped before ending it ends in error.
   */
  worker?: string;
  finishedAt?: string;
}

export interface JobFileRecord {
  jobId: string;
  datasetId: string;
  fileId: string;
  fileName: string;
  fileSize: number;
  /** Key of the uploaded bytes in the uploads bucket. */
  blobKey: string;
  createdAt: string;
}

/** Assets: files stored with a dataset, with versions (TriplyDB's Asset model). */
export interface AssetVersion {
  id: string;
  uploadedAt: string;
  fileSize: number;
  blobKey: string;
  contentType?: string;
}

export interface AssetRecord {
  identifier: string;
  datasetId: string;
  assetName: string;
  createdAt: string;
  updatedAt: string;
  /** Oldest first; the last one is the latest. */
  versions: AssetVersion[];
}
