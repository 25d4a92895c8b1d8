/**
 * sparqljs runs in a small pool of worker threads (sparql-parse-worker.mjs), never on the main
 * thread: even within the pre-scan's limits a 1 MB text takes seconds to parse (see
 * sparql-prescan.ts). Each job has a deadline for waiting for a thread and another, as long, for
 * its parse: a job still waiting at its deadline answers "busy"; one still parsing has its thread
 * terminated (sparqljs cannot be interrupted) and replaced, and answers "too complex".
 */
import { Worker } from 'node:worker_threads';

const WORKER_URL = new URL('./sparql-parse-worker.mjs', import.meta.url);

/** Threads parsing at once: requests keep being parsed while one slow text is. */
const DEFAULT_THREADS = 2;
/** The worst text the pre-scan lets through parses in about 4 s here; twice that and more. */
export const DEFAULT_PARSE_DEADLINE_MS = 10_000;
const MAX_WAITING = 256;
/** A parse that needs more heap than this is not a query anyone means to run. */
const WORKER_HEAP_MB = 512;

/** The parser refused the text (a syntax error); the message is sparqljs'. */
export class ParseRejectedError extends Error {
  override name = 'ParseRejectedError';
}
/** The text took too long or too much memory to parse. */
export class ParseTooComplexError extends Error {
  override name = 'ParseTooComplexError';
}
/** Too many texts wait for a parser; retry later. */
export class ParseBusyError extends Error {
  override name = 'ParseBusyError';
}

export type ParseJob =
  | { type: 'analyze' | 'parse'; text: string; baseIri?: string }
  | { type: 'instantiate'; text: string; values: [string, unknown][]; page?: { page: number; pageSize: number }; extraRows: number }
  | { type: 'probe'; text: string; values: [string, unknown][]; offset: number }
  | { type: 'withUsing'; text: string; baseIri?: string; defaultGraphs: string[]; namedGraphs: string[] }
  | { type: 'planLoads'; text: string; baseIri?: string; token: string };

interface Pending {
  job: ParseJob & { id: number };
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  thread?: ParseThread;
}

interface ParseThread {
  worker: Worker;
  current?: Pending;
}

export class SparqlParserPool {
  private readonly threads: ParseThread[] = [];
  private readonly waiting: Pending[] = [];
  private nextId = 0;
  private readonly threadCount: number;
  readonly deadlineMs: number;

  constructor(options: { threads?: number; deadlineMs?: number } = {}) {
    this.threadCount = options.threads ?? DEFAULT_THREADS;
    this.deadlineMs = options.deadlineMs ?? DEFAULT_PARSE_DEADLINE_MS;
  }

  run<T>(job: ParseJob): Promise<T> {
    if (this.waiting.length >= MAX_WAITING) {
      return Promise.reject(new ParseBusyError('The SPARQL parser is busy with other requests; retry in a moment.'));
    }
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        job: { ...job, id: this.nextId++ },
        resolve: resolve as (result: unknown) => void,
        reject,
        timer: setTimeout(() => this.expire(pending), this.deadlineMs),
      };
      this.waiting.push(pending);
      this.dispatch();
    });
  }

  /** Ends every thread (tests, shutdown); later jobs start fresh ones. */
  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  private seconds(): string {
    return `${Math.round(this.deadlineMs / 100) / 10} s`;
  }

  private expire(pending: Pending): void {
    const thread = pending.thread;
    if (!thread) {
      const i = this.waiting.indexOf(pending);
      if (i >= 0) this.waiting.splice(i, 1);
      pending.reject(new ParseBusyError(`The SPARQL parser stayed busy with other requests for ${this.seconds()}; retry in a moment.`));
      return;
    }
    // The thread is stuck in this parse: end it; the next job gets a fresh one.
    this.drop(thread);
    void thread.worker.terminate();
    pending.reject(new ParseTooComplexError(`The SPARQL text is too complex to parse in ${this.seconds()}; simplify it or split it into several requests.`));
    this.dispatch();
  }

  private drop(thread: ParseThread): void {
    const i = this.threads.indexOf(thread);
    if (i >= 0) this.threads.splice(i, 1);
    thread.current = undefined;
  }

  private spawn(): ParseThread {
    const thread: ParseThread = { worker: new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } }) };
    thread.worker.unref();
    thread.worker.on('message', (reply: { id: number; ok: boolean; result?: unknown; error?: string; tooDeep?: boolean }) => {
      const pending = thread.current;
      if (!pending || pending.job.id !== reply.id) return;
      thread.current = undefined;
      thread.worker.unref();
      clearTimeout(pending.timer);
      if (reply.ok) pending.resolve(reply.result);
      else if (reply.tooDeep) pending.reject(new ParseTooComplexError('The SPARQL text is too complex to parse (its expressions nest too deeply); simplify it, e.g. shorten long expressions or split it into several requests.'));
      else pending.reject(new ParseRejectedError(reply.error ?? 'the text does not parse'));
      this.dispatch();
    });
    const died = (why: string) => {
      const pending = thread.current;
      this.drop(thread);
      if (pending) {
        clearTimeout(pending.timer);
        pending.reject(new ParseTooComplexError(`The SPARQL text is too complex to parse (${why}); simplify it or split it into several requests.`));
      }
      this.dispatch();
    };
    // ERR_WORKER_OUT_OF_MEMORY arrives as an error, then the exit.
    thread.worker.on('error', (e) => died((e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'it needs too much memory' : 'the parser failed'));
    thread.worker.on('exit', () => {
      if (this.threads.includes(thread)) died('the parser stopped');
    });
    this.threads.push(thread);
    return thread;
  }

  private dispatch(): void {
    while (this.waiting.length) {
      const thread = this.threads.find((t) => !t.current) ?? (this.threads.length < this.threadCount ? this.spawn() : undefined);
      if (!thread) return;
      const pending = this.waiting.shift()!;
      pending.thread = thread;
      thread.current = pending;
      // The parse gets the whole deadline of its own: time spent waiting for a thread is not
      // held against the text (a valid query must not be killed as "too complex" under load).
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => this.expire(pending), this.deadlineMs);
      // Keep the process alive while a parse is under way; idle threads do not.
      thread.worker.ref();
      thread.worker.postMessage(pending.job);
    }
  }
}

/** The process's parser pool. */
export const sparqlParser = new SparqlParserPool();
