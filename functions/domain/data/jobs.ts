/** Import jobs, with TriplyDB's IndexJob field names and statuses. */
import type { JobFileRecord, JobRecord, JobStatus } from '../../ports/records/data.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type { JobFileRecord, JobRecord, JobStatus, JobType } from '../../ports/records/data.js';

export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['finished', 'canceled', 'error'];

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
  indexingProgress: indexingProgress(job, files),
  /** Bytes of the job's files read so far (numberOfStatements counts what they gave while indexing runs). */
  indexedBytes: job.status === 'finished' ? files.reduce((n, f) => n + f.fileSize, 0) : (job.indexedBytes ?? 0),
  downloadingProgress: job.type === 'download' && job.status !== 'created' && job.status !== 'downloading' ? 1 : 0,
  downloadedBytes: job.downloadedBytes ?? 0,
  skippedFileCount: 0,
  skippedFileNames: [],
});

/**
 * 1 once finished; while indexing, the share of the job's file bytes read so far (written by the
 * worker every few seconds), kept below 1 until the job ends; 0 before.
 */
function indexingProgress(job: JobRecord, files: JobFileRecord[]): number {
  if (job.status === 'finished') return 1;
  const total = files.reduce((n, f) => n + f.fileSize, 0);
  if (job.status !== 'indexing' || !job.indexedBytes || total <= 0) return 0;
  return Math.min(0.99, Math.round((job.indexedBytes / total) * 1000) / 1000);
}
