import type { JobRecord } from './jobs.js';
import type { Platform } from '../shared/platform.js';

/** How often a running import writes its progress to the job record (not per statement or chunk): every second, so a job of a few seconds reports as it goes. One conditional write each. */
export const PROGRESS_EVERY_MS = 1_000;

/**
 * A running import's progress: bytes downloaded, bytes of its files read and statements indexed,
 * counted as they go and written to the job record at most every `everyMs` (the clock decides,
 * checked when something was counted: no timers). Each write also refreshes `updatedAt`, so a job
 * whose worker keeps working never looks stalled. The write is conditional on the job's status:
 * a job canceled or ended meanwhile makes it throw ConflictError, which stops the import.
 */
export class JobProgress {
  private lastWrite: number;
  private downloaded: number;
  private indexed: number;
  private counted: number;

  constructor(
    private readonly platform: Platform,
    private current: JobRecord,
    private readonly everyMs = PROGRESS_EVERY_MS,
  ) {
    this.lastWrite = platform.clock.now().getTime();
    this.downloaded = current.downloadedBytes ?? 0;
    this.indexed = 0;
    this.counted = 0;
  }

  /** The job as last written (by the import's own transitions or a progress write). */
  get job(): JobRecord {
    return this.current;
  }

  /** Writes a status change (or the final record) with the progress so far. */
  async transition(next: JobRecord, expected: readonly JobRecord['status'][]): Promise<JobRecord> {
    const record = this.withCounts(next);
    await this.platform.store.updateJob(record, expected);
    this.current = record;
    this.lastWrite = this.platform.clock.now().getTime();
    return record;
  }

  downloadedBytes(n: number): Promise<void> | undefined {
    this.downloaded += n;
    return this.due();
  }

  indexedBytes(n: number): Promise<void> | undefined {
    this.indexed += n;
    return this.due();
  }

  statements(n: number): Promise<void> | undefined {
    this.counted += n;
    return this.due();
  }

  /** A write when the last one is `everyMs` old; undefined (nothing to wait for) otherwise. */
  private due(): Promise<void> | undefined {
    const now = this.platform.clock.now();
    if (now.getTime() - this.lastWrite < this.everyMs) return undefined;
    this.lastWrite = now.getTime();
    return this.write(now.toISOString());
  }

  private async write(updatedAt: string): Promise<void> {
    const record = { ...this.withCounts(this.current), updatedAt };
    await this.platform.store.updateJob(record, [this.current.status]);
    this.current = record;
  }

  private withCounts(job: JobRecord): JobRecord {
    const counts: Partial<JobRecord> = {};
    if (this.downloaded > 0) counts.downloadedBytes = this.downloaded;
    if (job.status === 'indexing') {
      counts.indexedBytes = this.indexed;
      counts.statements = this.counted;
    }
    return { ...job, ...counts };
  }
}
