import type { Logger } from '../../ports/logger.js';
import { defaultLogger } from '../common/powertools-logger.js';
import type { AssetStoredEvent, ImportFinishedEvent, ImportStartedEvent, UploadEvents } from '../../ports/upload-events.js';

/**
 * The embedded platform's events: delivered to the bound listener in this process. An asset
 * event does not hold up the upload's response (as an S3 notification would not); import events
 * are awaited so a waiting hook run exists as soon as the job does.
 */
export class InProcessUploadEvents implements UploadEvents {
  private listener?: UploadEvents;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly logger: Logger = defaultLogger) {}

  bind(listener: UploadEvents): void {
    this.listener = listener;
  }

  async assetStored(event: AssetStoredEvent): Promise<void> {
    if (!this.listener) return;
    const delivery = this.listener.assetStored(event).catch((e: Error) => this.logger.error('asset hook failed', { datasetId: event.datasetId, error: e.message }));
    this.pending.add(delivery);
    void delivery.finally(() => this.pending.delete(delivery));
  }

  async importStarted(event: ImportStartedEvent): Promise<void> {
    await this.listener?.importStarted(event);
  }

  async importFinished(event: ImportFinishedEvent): Promise<void> {
    await this.listener?.importFinished(event).catch((e: Error) => this.logger.error('data upload hook failed', { datasetId: event.datasetId, jobId: event.jobId, error: e.message }));
  }

  /** Waits for deliveries still going (the platform is closing). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
