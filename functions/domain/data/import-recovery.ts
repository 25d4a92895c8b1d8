/**
 * Jobs whose worker is gone: the watchdog that ends jobs which stopped reporting (where workers
 * have a hard time limit, AWS), and the recovery after a restart of a single-process runtime
 * (embedded), which also removes what killed jobs left behind.
 */
import { ConflictError } from '../shared/errors.js';
import type { GraphCatalog } from './graph-catalog.js';
import type { GraphEntry } from './graphs.js';
import type { JobRecord } from './jobs.js';
import type { Platform } from '../shared/platform.js';

/** Statuses of a job a worker has yet to end. */
const ACTIVE_JOB_STATUSES: readonly JobRecord['status'][] = ['pending', 'downloading', 'indexing'];

export class ImportRecovery {
  constructor(
    private readonly platform: Platform,
    private readonly catalog: GraphCatalog,
  ) {}

  private now(): string {
    return this.platform.clock.now().toISOString();
  }

  /**
   * The watchdog's sweep (for a scheduled worker): every dataset's jobs are checked as a read
   * would, and its graph trash emptied of what is due, until `deadline` (epoch ms). Nothing to do
   * where workers have no time limit.
   */
  async endStalledJobs(deadline: number): Promise<{ datasets: number; ended: number }> {
    let datasets = 0;
    let ended = 0;
    if (!this.platform.settings.imports) return { datasets, ended };
    let after: string | undefined;
    for (let round = 0; round < 10_000 && this.platform.clock.now().getTime() < deadline; round++) {
      const batch = await this.platform.store.listDatasets(null, { after, batch: 100 });
      for (const { item: dataset } of batch.items) {
        datasets++;
        for (const job of await this.platform.store.listJobs(dataset.id)) {
          let checked = await this.endIfStalled(job);
          // A worker that cannot be asked now (a throttled DescribeTasks) is asked again next sweep.
          if (checked === job) {
            checked = await this.endIfWorkerStopped(job).catch((e: unknown) => {
              this.platform.logger.warn('asking about an import job\'s worker failed', { datasetId: job.datasetId, jobId: job.jobId, error: (e as Error)?.message ?? String(e) });
              return job;
            });
          }
          if (checked !== job && checked.status === 'error') ended++;
        }
        // After the jobs: trash that a job ended just now held (graph-catalog.ts) may go in this sweep.
        await this.catalog.emptyTrash(dataset.id).catch(() => {});
      }
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) break;
      after = last.cursor;
    }
    return { datasets, ended };
  }

  /**
   * The watchdog, checked whenever a job is read: where workers have a hard time limit (AWS), a
   * job not yet ended that has not reported for longer than that has lost its worker (cut off at
   * its limit, or never started), so it ends in error instead of staying `indexing` forever. Its
   * dataset was never changed (the graph swap is the worker's last step). The worker writes
   * `updatedAt` when it takes the job, so only a dead worker's job can be this old.
   */
  async endIfStalled(job: JobRecord): Promise<JobRecord> {
    const limits = this.platform.settings.imports;
    // A job whose worker can be asked (a worker task, no time limit) ends when that worker stops: endIfWorkerStopped.
    if (!limits || !ACTIVE_JOB_STATUSES.includes(job.status) || job.worker) return job;
    const now = this.platform.clock.now();
    if (now.getTime() - Date.parse(job.updatedAt) <= limits.stalledAfterMs) return job;
    const minutes = Math.round(limits.stalledAfterMs / 60_000);
    const message =
      `The job stopped reporting while ${job.status} (nothing for over ${minutes} minutes): its worker was cut off at its time limit. ` +
      'The dataset was not changed. Import the data in smaller jobs, or start it again.';
    return this.endInError(job, message);
  }

  /**
   * The watchdog's check of a job that records its worker (a worker task on AWS, which has no time
   * limit): when the task queue says that worker stopped while the job was not yet ended (the
   * task crashed, ran out of memory or was stopped), the job ends in error; its dataset was never
   * changed. Asked only by the sweep, not on reads.
   */
  async endIfWorkerStopped(job: JobRecord): Promise<JobRecord> {
    if (!job.worker || !ACTIVE_JOB_STATUSES.includes(job.status) || !this.platform.tasks.workerStopped) return job;
    const reason = await this.platform.tasks.workerStopped(job.worker);
    if (reason === undefined) return job;
    const message = `The job's worker stopped while the job was ${job.status} (${reason}). The dataset was not changed. Start the import again.`;
    return this.endInError(job, message);
  }

  private async endInError(job: JobRecord, message: string): Promise<JobRecord> {
    const now = this.platform.clock.now();
    const ended: JobRecord = { ...job, status: 'error', error: { message }, updatedAt: now.toISOString(), finishedAt: now.toISOString() };
    try {
      await this.platform.store.updateJob(ended, [job.status]);
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
      return (await this.platform.store.getJob(job.datasetId, job.jobId)) ?? job;
    }
    this.platform.logger.warn('import job lost its worker; ended in error', { datasetId: job.datasetId, jobId: job.jobId, status: job.status, reason: message });
    await this.removeUploads(job).catch(() => {});
    await this.platform.events.importFinished({ datasetId: job.datasetId, jobId: job.jobId, graphs: [], ok: false });
    return ended;
  }

  /** Removes a job's uploaded files (ended, canceled or stalled jobs). */
  async removeUploads(job: JobRecord): Promise<void> {
    for (const f of await this.platform.store.listJobFiles(job.datasetId, job.jobId)) {
      await this.platform.blobs.uploads.delete(f.blobKey).catch(() => {});
      await this.platform.blobs.uploads.delete(`${f.blobKey}.json`).catch(() => {});
    }
  }

  /**
   * After a restart of a single-process runtime: jobs that were indexing when the process stopped
   * end in error (their dataset was never changed); what killed jobs left behind (staged
   * downloads and uploads no live job owns, graph blobs no manifest lists) is removed; then queued
   * jobs are queued again. Runs before anything else can write, so nothing removed is in use.
   */
  async recoverInterrupted(): Promise<void> {
    const queued: { datasetId: string; jobId: string }[] = [];
    const ownedUploads = new Set<string>();
    let scanned = false;
    let after: string | undefined;
    for (let round = 0; round < 10_000; round++) {
      const batch = await this.platform.store.listDatasets(null, { after, batch: 100 });
      for (const { item: dataset } of batch.items) {
        for (const job of await this.platform.store.listJobs(dataset.id)) {
          if (job.status === 'pending' || job.status === 'downloading') queued.push({ datasetId: dataset.id, jobId: job.jobId });
          if (job.status === 'indexing') {
            const message = 'The platform stopped while this job was indexing; the dataset was not changed. Start a new job.';
            await this.platform.store
              .updateJob({ ...job, status: 'error', error: { message }, updatedAt: this.now(), finishedAt: this.now() }, ['indexing'])
              .catch(() => {});
            await this.removeUploads(job);
          }
          if (job.status === 'created' || job.status === 'pending' || job.status === 'downloading') {
            for (const f of await this.platform.store.listJobFiles(dataset.id, job.jobId)) ownedUploads.add(f.blobKey);
          }
        }
        // Cleaning is best effort: a dataset whose manifest cannot be read keeps its blobs, and
        // the platform still starts.
        await this.removeUnlistedGraphBlobs(dataset.id).catch((e: unknown) =>
          this.platform.logger.error('removing unlisted graph blobs failed', { datasetId: dataset.id, error: (e as Error)?.message ?? String(e) }),
        );
      }
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) {
        scanned = true;
        break;
      }
      after = last.cursor;
    }
    // Staged downloads (`jobs/<jobId>/`) and multipart files (`incoming/`); tus keeps its own folder.
    // Only after a complete scan: otherwise a live job's files might look unowned.
    for (const prefix of scanned ? ['jobs/', 'incoming/'] : []) {
      for await (const blob of this.platform.blobs.uploads.list(prefix)) {
        if (!ownedUploads.has(blob.key)) await this.platform.blobs.uploads.delete(blob.key).catch(() => {});
      }
    }
    for (const { datasetId, jobId } of queued) await this.platform.tasks.enqueueImport(datasetId, jobId);
  }

  /** Graph blobs of a dataset that neither its manifest nor a service's snapshot lists (a killed import's). */
  private async removeUnlistedGraphBlobs(datasetId: string): Promise<void> {
    const candidates: GraphEntry[] = [];
    // The folder graphBlobKey writes into.
    for await (const blob of this.platform.blobs.data.list(`datasets/${datasetId}/graphs/`)) {
      if (blob.key.endsWith('.nt.gz')) candidates.push({ blobKey: blob.key } as GraphEntry);
    }
    if (candidates.length > 0) await this.catalog.collect(datasetId, { graphs: candidates });
  }
}
