import type { AccessService } from '../datasets/access-service.js';
import type { Caller } from '../shared/caller.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import type { Platform } from '../shared/platform.js';
import type { ImportService } from './import-service.js';
import type { JobRecord } from './jobs.js';

/** Statuses a job is cleared from by `DELETE …/jobs`: ended in error or canceled, or not yet indexing. */
const CLEARED: readonly JobRecord['status'][] = ['error', 'canceled', 'created', 'pending', 'downloading'];

/**
 * Housekeeping of a dataset's import jobs beyond their run (ImportService): clearing the jobs
 * that failed or never ran, resetting a job to take files again, removing one file from a job.
 * All of them need write access to the dataset.
 */
export class JobAdmin {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
    private readonly imports: ImportService,
  ) {}

  private now(): string {
    return this.platform.clock.now().toISOString();
  }

  private async writableJob(caller: Caller | null, account: string, datasetName: string, jobId: string) {
    const { dataset } = await this.access.writableDataset(caller, account, datasetName, 'manage import jobs');
    const job = await this.platform.store.getJob(dataset.id, jobId);
    if (!job) throw new NotFoundError(`Job "${jobId}" does not exist.`);
    return job;
  }

  private async dropFiles(job: JobRecord): Promise<void> {
    for (const f of await this.platform.store.listJobFiles(job.datasetId, job.jobId)) {
      await this.platform.blobs.uploads.delete(f.blobKey).catch(() => {});
      await this.platform.blobs.uploads.delete(`${f.blobKey}.json`).catch(() => {});
      await this.platform.store.deleteJobFile(job.datasetId, job.jobId, f.fileId);
    }
  }

  /**
   * Deletes the jobs that ended in error or were canceled, and cancels and deletes those that have
   * not begun indexing; indexing and finished jobs stay. Answers the ids deleted.
   */
  async clear(caller: Caller | null, account: string, datasetName: string): Promise<string[]> {
    const { dataset } = await this.access.writableDataset(caller, account, datasetName, 'manage import jobs');
    const deleted: string[] = [];
    for (const job of await this.platform.store.listJobs(dataset.id)) {
      if (!CLEARED.includes(job.status)) continue;
      try {
        // Cancel first (its files and its hooks' runs go), then the record.
        if (job.status !== 'error' && job.status !== 'canceled') await this.imports.cancel(caller, account, datasetName, job.jobId);
        await this.dropFiles(job);
        await this.platform.store.deleteJob(dataset.id, job.jobId);
        deleted.push(job.jobId);
      } catch (e) {
        // Began indexing meanwhile: it stays.
        if (!(e instanceof ConflictError)) throw e;
      }
    }
    return deleted;
  }

  /**
   * Back to `created`, without files, errors or progress, to take files and start again: for an
   * upload job that ended in error or was canceled (or is still being filled). 409 otherwise.
   */
  async reset(caller: Caller | null, account: string, datasetName: string, jobId: string): Promise<JobRecord> {
    const job = await this.writableJob(caller, account, datasetName, jobId);
    const resettable: readonly JobRecord['status'][] = ['created', 'error', 'canceled'];
    if (job.type !== 'upload' || !resettable.includes(job.status)) {
      const why = job.type !== 'upload' ? 'a URL import cannot take files' : `it is ${job.status}`;
      throw new ConflictError(`Job "${jobId}" cannot be reset: ${why}. Only upload jobs in error, canceled or not started can; otherwise create a new job.`);
    }
    const now = this.now();
    const reset: JobRecord = {
      jobId: job.jobId,
      datasetId: job.datasetId,
      type: job.type,
      status: 'created',
      defaultGraphName: job.defaultGraphName,
      baseIRI: job.baseIRI,
      overwriteAll: job.overwriteAll,
      mergeGraphs: job.mergeGraphs,
      createdAt: job.createdAt,
      updatedAt: now,
    };
    await this.platform.store.updateJob(reset, [job.status]);
    await this.dropFiles(job);
    return reset;
  }

  /** Removes one file (its `sourceFileId`) from a job that has not started. */
  async removeFile(caller: Caller | null, account: string, datasetName: string, jobId: string, fileId: string): Promise<void> {
    const job = await this.writableJob(caller, account, datasetName, jobId);
    if (job.status !== 'created') throw new ConflictError(`Job "${jobId}" is ${job.status}; files can only be removed before it starts.`);
    const file = (await this.platform.store.listJobFiles(job.datasetId, jobId)).find((f) => f.fileId === fileId);
    if (!file) throw new NotFoundError(`Job "${jobId}" has no file "${fileId}".`);
    await this.platform.store.deleteJobFile(job.datasetId, jobId, fileId);
    await this.platform.blobs.uploads.delete(file.blobKey).catch(() => {});
    await this.platform.blobs.uploads.delete(`${file.blobKey}.json`).catch(() => {});
  }
}
