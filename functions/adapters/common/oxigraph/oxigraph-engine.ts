import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import {
  type EngineQuery,
  EngineOverloadedError,
  EngineExecutionError,
  EngineQueryError,
  EngineTimeoutError,
  type Reasoner,
  type SnapshotChange,
  type SnapshotSource,
  type SparqlEngine,
  type SparqlStore,
} from '../../../ports/sparql-engine.js';
import type { Logger } from '../../../ports/logger.js';
import { ntIri } from '../../../rdf/nt.js';
import { defaultLogger } from '../powertools-logger.js';

const WORKER_URL = new URL('./worker.mjs', import.meta.url);
const MAX_WAITING = 256;
/** Chunks of a load sent ahead of the worker (a few, so a moment's delay on either side does not stall the other). */
const CHUNKS_AHEAD = 3;
/** A query that got a replica with less time than this left is refused as busy, not started. */
const MIN_QUERY_TIME_MS = 250;

interface Reply {
  id: number;
  ok: boolean;
  error?: string;
  /** The engine trapped (see isTrap in worker.mjs): the thread must not serve again. */
  fatal?: boolean;
  result?: string;
  size?: number;
  graphs?: string[];
  hasDefault?: boolean;
}

/** One worker thread holding one copy of the store; one request at a time. */
class Replica {
  private worker!: Worker;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  busy = false;
  ready = false;
  /** The snapshot version it holds (OxigraphStore.serving: the one queries go to). */
  version = 0;

  constructor(private readonly onExit: (replica: Replica) => void) {
    this.spawn();
  }

  private spawn(): void {
    this.worker = new Worker(WORKER_URL);
    this.worker.on('message', (reply: Reply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      p.resolve(reply);
    });
    this.worker.on('error', (e) => this.failAll(e));
    this.worker.on('exit', (code) => {
      this.failAll(new Error(`the query worker stopped (exit code ${code})`));
      this.ready = false;
      this.onExit(this);
    });
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  send(message: Record<string, unknown>, transfer: MessagePort[] = []): Promise<Reply> {
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id }, transfer);
    });
  }

  /**
   * Streams N-Quads chunks into the store as one load (one blank-node scope). The worker
   * acknowledges each chunk as it takes it; at most CHUNKS_AHEAD are unacknowledged.
   */
  async load(chunks: AsyncIterable<string>): Promise<void> {
    const { port1, port2 } = new MessageChannel();
    const acks: (() => void)[] = [];
    port1.on('message', () => acks.shift()?.());
    // Counts chunks sent, so the worker, blocked waiting for the next one, wakes the moment it is sent.
    const sent = new Int32Array(new SharedArrayBuffer(4));
    const done = this.send({ type: 'loadStream', port: port2, sent }, [port2]);
    const failed = done.then((r) => (r.ok ? null : new Error(r.error)));
    // Read only while chunks flow; a worker that dies later rejects `done`, which is awaited below.
    failed.catch(() => {});
    try {
      const unacked: Promise<void>[] = [];
      for await (const chunk of chunks) {
        unacked.push(new Promise<void>((resolve) => acks.push(resolve)));
        port1.postMessage({ chunk });
        Atomics.add(sent, 0, 1);
        Atomics.notify(sent, 0);
        if (unacked.length < CHUNKS_AHEAD) continue;
        // A failed load answers instead of acknowledging.
        const error = await Promise.race([unacked.shift()!.then(() => null), failed]);
        if (error) throw error;
      }
      port1.postMessage({ done: true });
      Atomics.add(sent, 0, 1);
      Atomics.notify(sent, 0);
      const reply = await done;
      if (!reply.ok) throw new Error(reply.error);
    } finally {
      port1.close();
    }
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}

/**
 * The snapshot loaded into `replicas` worker threads (2 by default). A query goes to an idle
 * replica; a query that outlives its timeout has its thread terminated (oxigraph cannot be
 * interrupted) and answers a timeout, while the other replicas keep serving and a fresh replica
 * reloads the snapshot in the background.
 */
class OxigraphStore implements SparqlStore {
  private readonly replicas: Replica[] = [];
  private readonly waiting: { resolve: (r: Replica) => void; reject: (e: Error) => void }[] = [];
  private closed = false;
  statements = 0;
  /** The snapshot version queries go to; a sync's change moves it on once one replica holds it. */
  private serving = 0;
  /** The last change applied (from version `from`), for replicas that were busy or loading meanwhile. */
  private lastChange: { from: number; message: Record<string, unknown> } | undefined;
  /** Changes are applied one at a time. */
  private applying: Promise<void> = Promise.resolve();

  constructor(
    private source: SnapshotSource,
    private readonly reasoner: Reasoner,
    private readonly replicaCount: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Ready once the first replica holds the snapshot; the others load behind it (one core loads
   * while the other already answers), and take queries as they become ready.
   */
  async start(): Promise<void> {
    for (let i = 0; i < this.replicaCount; i++) this.replicas.push(this.newReplica());
    const [first, ...rest] = this.replicas;
    await this.load([first!]);
    if (rest.length) {
      void this.load(rest).catch((e) => {
        if (!this.closed) this.logger.error('loading a query replica failed', { error: (e as Error).message });
      });
    }
  }

  private newReplica(): Replica {
    return new Replica((dead) => void this.replace(dead));
  }

  /** Streams the snapshot into each replica (in parallel, one read of the source each), then reasons. */
  private async load(replicas: Replica[]): Promise<void> {
    const version = this.serving;
    const source = this.source;
    try {
      await Promise.all(replicas.map((r) => r.load(source.chunks())));
    } catch (e) {
      if (version !== this.serving && !this.closed) {
        // A sync moved the store on while these loaded the old snapshot, whose graph blobs may
        // be gone by now: they end, and their replacements load the current snapshot.
        for (const r of replicas) void r.terminate();
        return;
      }
      throw new Error(`loading the snapshot failed: ${(e as Error).message}`);
    }
    const finals = await Promise.all(replicas.map((r) => r.send({ type: 'reason', level: this.reasoner })));
    const failed = finals.find((r) => !r.ok);
    if (failed) throw new Error(`reasoning failed: ${failed.error}`);
    if (version === this.serving) this.statements = finals[0]?.size ?? 0;
    for (const r of replicas) {
      r.ready = true;
      r.version = version;
      this.release(r);
    }
  }

  private async replace(dead: Replica): Promise<void> {
    const i = this.replicas.indexOf(dead);
    if (i < 0 || this.closed) return;
    const fresh = this.newReplica();
    this.replicas[i] = fresh;
    try {
      await this.load([fresh]);
    } catch (e) {
      if (!this.closed) this.logger.error('reloading a query replica failed', { error: (e as Error).message });
    }
  }

  private release(replica: Replica): void {
    replica.busy = false;
    if (replica.ready && replica.version !== this.serving) {
      void this.catchUp(replica);
      return;
    }
    const next = this.waiting.shift();
    if (next) {
      replica.busy = true;
      next.resolve(replica);
    }
  }

  /**
   * An idle replica; waiting for one at most `timeoutMs` (then 503), so queries never queue
   * forever behind runaway ones or a replica that is reloading.
   */
  private acquire(timeoutMs?: number): Promise<Replica> {
    const idle = this.replicas.find((r) => r.ready && !r.busy && r.version === this.serving);
    if (idle) {
      idle.busy = true;
      return Promise.resolve(idle);
    }
    if (this.waiting.length >= MAX_WAITING) {
      return Promise.reject(new EngineOverloadedError('The service is busy with other queries; retry in a moment.'));
    }
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = {
        resolve: (r: Replica) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.waiting.push(waiter);
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(
            new EngineOverloadedError(
              `All ${this.replicaCount} query threads of this endpoint stayed busy for ${Math.round(timeoutMs / 1000)} s; retry in a moment.`,
            ),
          );
        }, Math.max(timeoutMs, 1));
      }
    });
  }

  async query(request: EngineQuery): Promise<string> {
    if (this.closed) throw new EngineOverloadedError('The service is stopping; retry in a moment.');
    const started = Date.now();
    const replica = await this.acquire(request.timeoutMs);
    const remaining = request.timeoutMs - (Date.now() - started);
    if (remaining < MIN_QUERY_TIME_MS) {
      // The wait used up the time: answer busy rather than give the query a moment and then
      // terminate a healthy replica (whose reload would make the queue longer still).
      this.release(replica);
      throw new EngineOverloadedError('The service is busy with other queries; retry in a moment.');
    }
    let timer: NodeJS.Timeout | undefined;
    let broken = false;
    try {
      const reply = await Promise.race([
        replica.send({
          type: 'query',
          query: request.query,
          format: request.format,
          defaultGraphs: request.defaultGraphs,
          namedGraphs: request.namedGraphs,
          queryDefinesDataset: request.queryDefinesDataset,
          baseIri: request.baseIri,
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new EngineTimeoutError(`The query ran longer than ${Math.round(request.timeoutMs / 1000)} s and was stopped.`)), Math.max(remaining, 1));
        }),
      ]);
      if (!reply.ok && reply.fatal) {
        broken = true;
        throw new EngineQueryError(
          `The query is too complex for the SPARQL engine (${reply.error ?? 'it failed'}); simplify it, e.g. shorten long expressions, paths or pattern lists.`,
        );
      }
      if (!reply.ok) throw new EngineQueryError(reply.error ?? 'query failed');
      this.release(replica);
      return reply.result ?? '';
    } catch (e) {
      if (e instanceof EngineTimeoutError || broken) {
        // Its thread is stuck in the query, or its engine trapped: end it; the exit handler
        // starts a replacement that reloads the snapshot.
        replica.ready = false;
        void replica.terminate();
      } else {
        this.release(replica);
      }
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A sync that costs what changed: the change goes to one replica while the others keep
   * answering from the old snapshot; then queries go to that replica, and each other replica takes
   * the change as soon as it is idle (one behind by more than this change reloads whole).
   */
  apply(change: SnapshotChange, next: SnapshotSource): Promise<void> {
    const run = this.applying.then(() => this.applyNow(change, next));
    this.applying = run.catch(() => {});
    return run;
  }

  private async applyNow(change: SnapshotChange, next: SnapshotSource): Promise<void> {
    if (this.closed) throw new EngineOverloadedError('The service stopped.');
    const message = { type: 'apply', dropGraphs: change.dropGraphs.map(ntIri), removed: change.removed, added: change.added };
    const replica = await this.acquire();
    let reply: Reply;
    try {
      reply = await replica.send(message);
    } catch (e) {
      reply = { id: -1, ok: false, error: (e as Error).message };
    }
    if (!reply.ok) {
      // Half applied, perhaps: this replica reloads the old snapshot; the others never saw the change.
      replica.ready = false;
      void replica.terminate();
      throw new Error(`applying the change failed: ${reply.error}`);
    }
    this.lastChange = { from: this.serving, message };
    this.source = next;
    this.serving++;
    this.statements = reply.size ?? this.statements;
    replica.version = this.serving;
    this.release(replica);
    for (const r of this.replicas) if (r.ready && !r.busy && r.version !== this.serving) void this.catchUp(r);
  }

  /** An idle replica on an older snapshot takes the last change, or reloads when it is further behind. */
  private async catchUp(replica: Replica): Promise<void> {
    replica.busy = true;
    const change = this.lastChange;
    const reply = change && change.from === replica.version ? await replica.send(change.message).catch((e: Error) => ({ ok: false, error: e.message }) as Reply) : undefined;
    if (reply?.ok) {
      replica.version = change!.from + 1;
      this.release(replica);
      return;
    }
    // The exit handler starts a replacement that loads the current snapshot.
    replica.ready = false;
    void replica.terminate();
  }

  /** Applies an update on the first replica (update stores have one) and dumps every graph. */
  async update(update: string, baseIri?: string): Promise<Map<string, string>> {
    const replica = await this.acquire();
    try {
      const applied = await replica.send({ type: 'update', update, baseIri });
      if (!applied.ok && applied.fatal) throw new EngineQueryError(`The update is too complex for the SPARQL engine (${applied.error ?? 'it failed'}); simplify it.`);
      if (!applied.ok) {
        const message = applied.error ?? 'update failed';
        // The graph rules of CLEAR / DROP / CREATE / COPY / MOVE / ADD without SILENT: the update
        // parsed and ran into the dataset's state; anything else is the update's own fault.
        throw / graph <[^>]*> (does not exist|already exists)/i.test(message) ? new EngineExecutionError(message) : new EngineQueryError(message);
      }
      const listed = await replica.send({ type: 'graphs' });
      if (!listed.ok) throw new Error(listed.error);
      const result = new Map<string, string>();
      const names: (string | null)[] = [...(listed.graphs ?? []), ...(listed.hasDefault ? [null] : [])];
      for (const graph of names) {
        const dumped = await replica.send({ type: 'dump', graph });
        if (!dumped.ok) throw new Error(dumped.error);
        result.set(graph ?? '', dumped.result ?? '');
      }
      return result;
    } finally {
      this.release(replica);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(new EngineOverloadedError('The service stopped.'));
    await Promise.all(this.replicas.map((r) => r.terminate()));
  }
}

/** The embedded engine; `logger` gets the replicas' background failures. */
export const createOxigraphEngine = (logger: Logger): SparqlEngine => ({
  async open(source, options) {
    const store = new OxigraphStore(source, options.reasoner, options.replicas ?? 2, logger);
    try {
      await store.start();
    } catch (e) {
      await store.close();
      throw e;
    }
    return store;
  },
});

export const oxigraphEngine: SparqlEngine = createOxigraphEngine(defaultLogger);
