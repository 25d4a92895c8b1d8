import type { Logger } from '../../ports/logger.js';
import type { TaskQueue } from '../../ports/task-queue.js';
import { defaultLogger } from '../common/powertools-logger.js';

/**
 * Runs imports in this process, a few at a time, after the request that started them has been
 * answered. `drain()` waits for running work (used when the platform stops).
 */
export class InProcessTaskQueue implements TaskQueue {
  private readonly waiting: (() => Promise<void>)[] = [];
  private readonly running = new Set<Promise<void>>();
  private runImport?: (datasetId: string, jobId: string) => Promise<void>;
  private loadService?: (datasetId: string, serviceId: string) => Promise<void>;

  constructor(
    private readonly logger: Logger = defaultLogger,
    private readonly concurrency = 2,
  ) {}

  /** Wires the worker once the services exist (they need the queue, the queue needs them). */
  bind(workers: {
    runImport: (datasetId: string, jobId: string) => Promise<void>;
    loadService: (datasetId: string, serviceId: string) => Promise<void>;
  }): void {
    this.runImport = workers.runImport;
    this.loadService = workers.loadService;
  }

  async enqueueServiceLoad(datasetId: string, serviceId: string): Promise<void> {
    this.waiting.push(() => this.loadService!(datasetId, serviceId));
    setImmediate(() => this.pump());
  }

  async enqueueImport(datasetId: string, jobId: string): Promise<void> {
    this.waiting.push(() => this.runImport!(datasetId, jobId));
    setImmediate(() => this.pump());
  }

  private pump(): void {
    while (this.running.size < this.concurrency && this.waiting.length > 0) {
      const task = this.waiting.shift()!;
      const run: Promise<void> = task()
        .catch((e) => this.logger.error('background task failed', { error: e }))
        .finally(() => {
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }

  async drain(): Promise<void> {
    this.waiting.length = 0;
    await Promise.allSettled([...this.running]);
  }
}
