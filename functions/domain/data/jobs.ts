/** Import jobs, with TriplyDB's IndexJob field names and statuses. */
export type JobStatus = 'created' | 'downloading' | 'pending' | 'indexing' | 'finished' | 'canceled' | 'error';
export type JobType = 'upload' | 'download';

export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['finished', 'canceled', 'error'];

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

export const jobView = (job: JobRecord, files: JobFileRecord[], jobUrl: string): Record<string, unknown> => ({
  jobId: job.jobId,
  status: job.status,
  type: job.type,
  datasetId: job.datasetId,
  jobUrl,
  defaultGraphName: job.defaultGraphName,
  baseIRI: job.baseIRI,
  overwriteAll: job.overwriteAll,
  mergeGraphs: job.mergeGraphs,
  downloadUrls: job.downloadUrls,
  files: files.map((f) => ({ fileName: f.fileName, fileSize: f.fileSize, sourceFileId: f.fileId })),
  createdAt: job.createdAt,
  updatedAt: job.updatedAt,
  error: job.error,
  graphNames: job.graphNames,
  indexedGraphCount: job.indexedGraphCount ?? 0,
  numberOfStatements: job.statements,
  indexingProgress: job.status === 'finished' ? 1 : 0,
  downloadingProgress: job.type === 'download' && job.status !== 'created' && job.status !== 'downloading' ? 1 : 0,
  skippedFileCount: 0,
  skippedFileNames: [],
});
