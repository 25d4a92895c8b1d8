/**
 * The parse workers: oxigraph runs on untrusted input in worker threads (rdf-parse-worker.mjs),
 * kept in a small idle pool; a worker that traps, runs out of memory or exits is never reused.
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { RdfJsQuadLike } from '../nt.js';

/**
 * Resolved beside this module: in a Lambda bundle that is the asset's `index.mjs`, and
 * lib/constructs/app-function.ts copies the worker there.
 */
const PARSE_WORKER_URL = new URL('./rdf-parse-worker.mjs', import.meta.url);

/** The worker's JavaScript heap (quads in flight are few; WASM memory is not counted here). */
const PARSE_WORKER_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 };
/** Idle workers kept for the next parse (starting one costs the WASM module's load). */
const MAX_IDLE_PARSE_WORKERS = 2;
const idleParseWorkers: Worker[] = [];

export interface ParseWorkerMessage {
  type: 'need' | 'quads' | 'end' | 'error';
  quads?: RdfJsQuadLike[];
  message?: string;
  trapped?: boolean;
  panic?: string;
  outOfMemory?: boolean;
  offset?: number | null;
}

/**
 * One job on a parse worker. The worker posts a message and blocks until `reply`; `next` gives
 * its messages in order. A worker that fails (trap, out of memory, exit) reports one `error`
 * message with `trapped` and is never reused.
 */
/** Workers that carry the listener that drops them from the idle pool when they fail. */
const watchedIdleWorkers = new WeakSet<Worker>();

export class ParseWorkerJob {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly queue: ParseWorkerMessage[] = [];
  private waiter: ((m: ParseWorkerMessage) => void) | null = null;
  private failed = false;
  private released = false;
  private readonly onError = (e: Error & { code?: string }) => {
    this.failed = true;
    this.deliver({ type: 'error', trapped: true, message: e.message, outOfMemory: e.code === 'ERR_WORKER_OUT_OF_MEMORY' });
  };
  private readonly onExit = (code: number) => {
    this.failed = true;
    this.deliver({ type: 'error', trapped: true, message: `the parser thread exited with code ${code}` });
  };

  constructor(type: 'parse' | 'diagnoseLine' | 'locate', payload: Record<string, unknown>) {
    let worker = idleParseWorkers.pop();
    while (worker && worker.threadId < 0) worker = idleParseWorkers.pop();
    this.worker = worker ?? new Worker(PARSE_WORKER_URL, { resourceLimits: PARSE_WORKER_LIMITS });
    this.worker.ref();
    this.worker.on('error', this.onError);
    this.worker.on('exit', this.onExit);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    port1.on('message', (m: ParseWorkerMessage) => {
      if (m.type === 'error' && m.trapped) this.failed = true;
      this.deliver(m);
    });
    this.worker.postMessage({ ...payload, type, port: port2, signal: this.signal }, [port2]);
  }

  private deliver(message: ParseWorkerMessage): void {
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter) waiter(message);
    else this.queue.push(message);
  }

  next(): Promise<ParseWorkerMessage> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  reply(message: { chunk?: Uint8Array; done?: boolean; ack?: boolean }): void {
    this.port.postMessage(message);
    Atomics.add(this.signal, 0, 1);
    Atomics.notify(this.signal, 0);
  }

  /** Back to the idle pool when the job ended cleanly, else terminated (its memory may be corrupt). */
  release(reusable: boolean): void {
    if (this.released) return;
    this.released = true;
    this.port.close();
    this.worker.off('error', this.onError);
    this.worker.off('exit', this.onExit);
    if (reusable && !this.failed && idleParseWorkers.length < MAX_IDLE_PARSE_WORKERS) {
      this.worker.unref();
      // An idle worker that errors (or exits) leaves the pool; without a listener the error
      // would be thrown in the main thread.
      // Attached once per worker, not per job: a reused worker would otherwise pile them up.
      const worker = this.worker;
      if (!watchedIdleWorkers.has(worker)) {
        watchedIdleWorkers.add(worker);
        const drop = () => {
          const i = idleParseWorkers.indexOf(worker);
          if (i >= 0) idleParseWorkers.splice(i, 1);
        };
        worker.on('error', drop).on('exit', drop);
      }
      idleParseWorkers.push(worker);
    } else {
      // Swallow a late 'error' of a worker being thrown away.
      this.worker.on('error', () => undefined);
      void this.worker.terminate();
    }
  }
}

/** Runs a one-message job (diagnosis) on a parse worker. */
export async function runParseWorkerJob(type: 'diagnoseLine' | 'locate', payload: Record<string, unknown>): Promise<ParseWorkerMessage> {
  const job = new ParseWorkerJob(type, payload);
  let reusable = false;
  try {
    const message = await job.next();
    reusable = message.type === 'end';
    return message;
  } finally {
    job.release(reusable);
  }
}
