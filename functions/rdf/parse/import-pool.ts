/**
 * The main thread's side of an import's worker threads (import-worker.ts): a parse worker and a
 * distinct-lines worker per running import, connected by a message channel, kept idle for the next
 * import after a clean run. The parent streams each file's bytes to the parse worker a few chunks
 * ahead (so it never waits and memory stays flat) and receives each graph's distinct canonical
 * lines from the other, which it writes (gzip, blob store) as they come; that writing paces the
 * workers, since no new chunk goes out before the lines of earlier ones are written.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { RdfSyntaxError } from './errors.js';
import { GraphLimitError } from './graph-lines.js';
import type { ImportWorkerError, ImportWorkerFile, ImportWorkerReply, ImportWorkerRequest } from './import-protocol.js';

/** Resolved beside this module; in a bundle that is the asset's index.mjs, where the build put the entry. */
const IMPORT_WORKER_URL = new URL('./import-worker.mjs', import.meta.url);
/** Pieces of input sent ahead of the parser, and their size. */
const WINDOW = 6;
const SEND_BYTES = 512 * 1024;
const MAX_IDLE = 2;
const idle: Worker[] = [];
const watched = new WeakSet<Worker>();

export interface ImportParseCallbacks {
  /** A graph's next distinct lines (UTF-8, complete lines); may return a write to wait for. */
  lines(graphName: string, bytes: Uint8Array, lines: number): Promise<void> | undefined;
  /** Statements parsed since the last call; may return a write to wait for. */
  statements(n: number): Promise<void> | undefined;
}

function toError(e: ImportWorkerError): Error {
  if (e.name === 'RdfSyntaxError') return new RdfSyntaxError(e.detail ?? e.message, { line: e.line, column: e.column, fileName: e.fileName, kind: e.kind });
  if (e.name === 'GraphLimitError') return new GraphLimitError(e.limit ?? 0);
  const error = new Error(e.message);
  error.name = e.name;
  return error;
}

function takeWorker(): Worker {
  let worker = idle.pop();
  while (worker && worker.threadId < 0) worker = idle.pop();
  return worker ?? new Worker(IMPORT_WORKER_URL);
}

/** One import's worker threads. */
export class ImportParser {
  /** The parse worker, then the distinct-lines worker. */
  private readonly workers: [Worker, Worker];
  /** Replies are handled one after the other (a write may have to drain first). */
  private chain: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  private credits = WINDOW;
  private wakeSender: (() => void) | null = null;
  private waiting: { resolve: (reply: ImportWorkerReply) => void; reject: (e: Error) => void; type: 'fileDone' | 'counts' } | null = null;
  private closed = false;
  private readonly onMessage = (reply: ImportWorkerReply) => {
    this.chain = this.chain.then(() => this.handle(reply)).catch((e: unknown) => this.fail(e as Error));
  };
  private readonly onError = (e: Error) => this.fail(new Error(`an import worker thread failed: ${e.message}`));
  private readonly onExit = (code: number) => this.fail(new Error(`an import worker thread exited with code ${code}`));

  constructor(
    defaultGraphName: string,
    maxGraphs: number,
    private readonly callbacks: ImportParseCallbacks,
  ) {
    this.workers = [takeWorker(), takeWorker()];
    for (const worker of this.workers) {
      worker.ref();
      worker.on('message', this.onMessage).on('error', this.onError).on('exit', this.onExit);
    }
    const { port1, port2 } = new MessageChannel();
    this.workers[0].postMessage({ type: 'begin', role: 'parse', defaultGraphName, maxGraphs, port: port1 } satisfies ImportWorkerRequest, [port1]);
    this.workers[1].postMessage({ type: 'begin', role: 'distinct', port: port2 } satisfies ImportWorkerRequest, [port2]);
  }

  /** To the parse worker. */
  private post(request: ImportWorkerRequest, transfer: ArrayBuffer[] = []): void {
    this.workers[0].postMessage(request, transfer);
  }

  private async handle(reply: ImportWorkerReply): Promise<void> {
    if (this.failure) return;
    switch (reply.type) {
      case 'ack': {
        if (reply.statements > 0) await this.callbacks.statements(reply.statements);
        this.credits++;
        this.wake();
        return;
      }
      case 'lines':
        await this.callbacks.lines(reply.graphName, reply.bytes, reply.lines);
        return;
      case 'failed':
        this.fail(toError(reply.error));
        return;
      default: {
        const waiting = this.waiting;
        if (waiting && waiting.type === reply.type) {
          this.waiting = null;
          waiting.resolve(reply);
        }
      }
    }
  }

  private fail(e: Error): void {
    if (this.failure) return;
    this.failure = e;
    this.wake();
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(e);
  }

  private wake(): void {
    const wake = this.wakeSender;
    this.wakeSender = null;
    wake?.();
  }

  private expect(type: 'fileDone' | 'counts'): Promise<ImportWorkerReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject, type }));
  }

  /** Parses one file (its decompressed bytes); rejects with the parser's error (RdfSyntaxError, GraphLimitError, ...). */
  async parseFile(input: AsyncIterable<Uint8Array>, file: ImportWorkerFile): Promise<void> {
    if (this.failure) throw this.failure;
    const done = this.expect('fileDone');
    done.catch(() => {});
    this.post({ type: 'file', ...file });
    // Input chunks are gathered into pieces of about SEND_BYTES (a copy, which is then transferred).
    let gathered: Uint8Array[] = [];
    let size = 0;
    const send = async () => {
      while (this.credits <= 0 && !this.failure) await new Promise<void>((resolve) => (this.wakeSender = resolve));
      if (this.failure) return;
      this.credits--;
      const piece = new Uint8Array(size);
      let at = 0;
      for (const chunk of gathered) {
        piece.set(chunk, at);
        at += chunk.length;
      }
      gathered = [];
      size = 0;
      this.post({ type: 'chunk', bytes: piece }, [piece.buffer]);
    };
    for await (const chunk of input) {
      gathered.push(chunk);
      size += chunk.length;
      if (size >= SEND_BYTES) await send();
      if (this.failure) break;
    }
    if (size > 0 && !this.failure) await send();
    if (this.failure) throw this.failure;
    this.post({ type: 'endFile' });
    await done;
    // Lines handed on before `fileDone` have been written: replies are handled in order.
  }

  /** Hands on the remaining lines; the distinct statements per graph name. */
  async finish(): Promise<Map<string, number>> {
    const counted = this.expect('counts');
    this.post({ type: 'finish' });
    const reply = await counted;
    await this.chain;
    if (this.failure) throw this.failure;
    return new Map((reply as Extract<ImportWorkerReply, { type: 'counts' }>).counts);
  }

  /** Back to the idle pool after a clean run, else terminated. */
  close(clean: boolean): void {
    if (this.closed) return;
    this.closed = true;
    for (const worker of this.workers) {
      worker.off('message', this.onMessage).off('error', this.onError).off('exit', this.onExit);
      if (clean && !this.failure && idle.length < MAX_IDLE) {
        worker.unref();
        idle.push(worker);
        // An idle worker that fails leaves the pool (one listener per worker, however often reused).
        if (!watched.has(worker)) {
          watched.add(worker);
          const drop = () => {
            const i = idle.indexOf(worker);
            if (i >= 0) idle.splice(i, 1);
          };
          worker.on('error', drop).on('exit', drop);
        }
      } else {
        worker.on('error', () => undefined);
        void worker.terminate();
      }
    }
  }
}
