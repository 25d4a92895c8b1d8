/**
 * A SparqlEngine backed by an external SPARQL store reached over the SPARQL 1.1 Protocol (queries,
 * updates) and, when usable, the SPARQL 1.1 Graph Store Protocol (loading): Amazon Neptune on AWS,
 * Virtuoso elsewhere. Tested against Virtuoso 7 (Debian's virtuoso-opensource-7).
 *
 * Snapshots side by side. Every snapshot gets a random id; its graph `<g>` is stored in the
 * external store as `<urn:x-snapshot:ID:g>` (default-graph statements, which sources do not
 * normally have, go to `<urn:x-snapshot:ID#default>`: in the union default graph, never a named
 * graph). A new snapshot therefore loads beside the old one, which keeps answering until it is
 * closed: swapping services is atomic, and close() drops only the old snapshot's graphs.
 *
 * Queries see only their snapshot. Each query is parsed with sparqljs and rewritten:
 *  - its dataset is always spelled out as FROM / FROM NAMED clauses of snapshot graphs: the
 *    request's default/named graphs when either is given (exactly those), else the query's own
 *    FROM / FROM NAMED, else the union of the snapshot's graphs as default graph and all of them
 *    as named graphs. Protocol parameters are not used for this: Virtuoso merges
 *    `default-graph-uri` with the query's FROM instead of overriding it, and without FROM NAMED
 *    it lets GRAPH ?g range over every graph in the store. An empty graph list becomes one
 *    FROM (NAMED) of a graph that does not exist.
 *  - `GRAPH <g>` becomes `GRAPH <urn:x-snapshot:ID:g>`; SERVICE and function IRIs other than XSD
 *    casts are refused (Virtuoso runs SQL procedures for them; they would reach beyond the snapshot).
 * Graph names in results are mapped back by removing the snapshot prefix from IRIs (and from
 * literal text, e.g. STR(?g)). This relies on the prefix, which contains 96 random bits, never
 * occurring in the data. Other IRI constants are not rewritten: `FILTER(?g = <g>)` or
 * `VALUES ?g { <g> }` compare against the stored (prefixed) names and so do not match.
 *
 * Results. SELECT/ASK are fetched as SPARQL JSON, CONSTRUCT/DESCRIBE as N-Triples (Virtuoso's
 * CSV/TSV are not the W3C formats and its Turtle abbreviates the prefixed names), normalised
 * (blank node labels, xsd:boolean `1`/`0`, Virtuoso's `typed-literal`, its `_star_fake` column)
 * and serialised here: tabular formats by the writers in results.ts, RDF formats by oxigraph (the
 * serialiser the embedded engine uses), except N-Triples that need no term mapping, which are
 * normalised line by line to oxigraph's spelling (results.ts: passThroughNTriples).
 *
 * Loading. The N-Quads chunks are parsed with oxigraph. Statements without blank nodes go per
 * graph in batches: Graph Store Protocol POSTs of N-Triples when the endpoint is configured and
 * accepts them (the first refusal with 401/403/404/405/415/501 switches to SPARQL Update for the
 * rest of the load), else `INSERT DATA` requests (Virtuoso's parser gives out a little above
 * 4 000 statements per request). Blank nodes are scoped to one request in both protocols, and
 * Virtuoso refuses blank nodes in INSERT DATA, so statements with blank nodes are held back,
 * grouped into connected components (statements linked by shared blank nodes) and each component
 * is sent whole: by GSP when it lies in one graph, else as `INSERT { GRAPH .. } WHERE {}`.
 * A component larger than Virtuoso's per-request limit (about 1 000 statements with blank nodes
 * for INSERT..WHERE) fails the load with Virtuoso's message. Blank-node statements stay in memory
 * until the end of the load. Blank node labels are global to the snapshot (not per chunk).
 * If a load fails, what it wrote is dropped; graphs of a process that died are left behind.
 *
 * Reasoning (RDFS/OWL) materialises the same rules as the embedded engine, as SPARQL updates run
 * to a fixpoint, into the snapshot's `<urn:x-platform:inferred>` graph.
 *
 * Timeouts: the fetch is aborted at `timeoutMs` and the server is asked to stop too (Virtuoso's
 * `timeout` parameter; Virtuoso then answers partial results flagged `X-SQL-State: S1TAT`, which
 * are reported as a timeout, never returned). SELECT results cut at Virtuoso's ResultSetMaxRows
 * (flagged `X-SPARQL-MaxRows`) are refused as EngineQueryError; CONSTRUCT results are cut
 * silently, so configure that limit well above the platform's own.
 *
 * Files: endpoints.ts (HTTP), load.ts (loading), rewrite.ts (query rewriting), results.ts
 * (result conversion), snapshot-names.ts (stored graph names), options.ts; this file holds the
 * engine, its per-snapshot store and the reasoning rules.
 *
 * Hosts (issue 19): `load` is open() that also describes the loaded snapshot (its id and graph
 * names), which a SPARQL host records on its service; `attach` makes a store over such a snapshot
 * in another process (the SPARQL functions): nothing is loaded, and its close() drops nothing.
 *
 * Not provided: `update()` (dataset updates need the embedded engine) and `replicas` (the external
 * store scales on its own; `maxConcurrentQueries` bounds what one snapshot sends at once).
 */
import { ntIri, ntQuoted } from '../../../rdf/nt.js';
import { PREFIXES, rulesFor } from '../oxigraph/reasoning-rules.mjs';
import {
  type EngineQuery,
  EngineOverloadedError,
  EngineQueryError,
  EngineTimeoutError,
  type Reasoner,
  type SnapshotSource,
  type SparqlEngine,
  type SparqlStore,
} from '../../../ports/sparql-engine.js';
import type { HostedSnapshot } from '../../../ports/records/sparql.js';
import { EndpointError, Endpoints, failure, LARGE_ANSWER_BYTES, N_TRIPLES, RESULTS_JSON, TimeoutSignal, UnreachableError } from './endpoints.js';
import { Loader } from './load.js';
import type { SparqlProtocolEngineOptions } from './options.js';
import { convertGraph, convertTabular, TABULAR_FORMATS } from './results.js';
import { type Rewritten, rewriteQuery } from './rewrite.js';
import { SnapshotNames } from './snapshot-names.js';
import { defaultLogger } from '../powertools-logger.js';

export type { EndpointAuth, SparqlProtocolEngineOptions } from './options.js';

const INFERRED_GRAPH = 'urn:x-platform:inferred';
/** Rewritten queries a store keeps (by text, base IRI and protocol dataset), and the longest text it keeps. */
const REWRITE_CACHE_ENTRIES = 256;
const REWRITE_CACHE_MAX_CHARS = 16_384;

// ---------------------------------------------------------------------------------------------
// Reasoning: the embedded engine's rules, as updates over this snapshot's graphs.

function reasoningRules(level: Reasoner, names: SnapshotNames): string[] {
  const inferred = ntIri(names.stored(INFERRED_GRAPH));
  const ours = (v: string): string => `FILTER(STRSTARTS(STR(${v}), ${ntQuoted(names.root)}))`;
  return rulesFor(level).map(({ head, patterns, filter }) => {
    const body = patterns.map((p, i) => `GRAPH ?g${i} { ${p} } ${ours(`?g${i}`)}`).join(' ');
    return `${PREFIXES}
      INSERT { GRAPH ${inferred} { ${head} } } WHERE { ${body} ${filter ? `FILTER(${filter})` : ''} FILTER NOT EXISTS { GRAPH ?known { ${head} } ${ours('?known')} } }`;
  });
}

// ---------------------------------------------------------------------------------------------
// The store

/** At most `limit` at once; the rest wait, up to `maxWaiting`. */
class Limiter {
  private active = 0;
  private readonly waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}
  get busy(): number {
    return this.active;
  }
  acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(new EngineOverloadedError('The service is busy with other queries; retry in a moment.'));
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next.resolve();
    else this.active--;
  }
  rejectAll(error: Error): void {
    for (const w of this.waiting.splice(0)) w.reject(error);
  }
}

class ProtocolStore implements SparqlStore {
  readonly names: SnapshotNames;
  statements = 0;
  private closed = false;
  private readonly limiter: Limiter;
  private readonly idle = new Set<() => void>();
  /**
   * Queries already rewritten for this snapshot, most recently used last: a query sent again (an
   * application's, a saved query's) skips the parse, rewrite and serialisation (0.3–0.6 ms).
   */
  private readonly rewrites = new Map<string, Rewritten>();

  /** `attached`: a snapshot another process loaded (close() then leaves its graphs alone). */
  constructor(
    private readonly endpoints: Endpoints,
    private readonly options: SparqlProtocolEngineOptions,
    private readonly attached?: HostedSnapshot,
  ) {
    this.limiter = new Limiter(options.maxConcurrentQueries ?? 8, options.maxWaitingQueries ?? 256);
    this.names = new SnapshotNames(attached);
    this.statements = attached?.statements ?? 0;
  }

  /** What a host records so that other processes can attach to this snapshot. */
  describe(): HostedSnapshot {
    return { snapshotId: this.names.id, graphs: [...this.names.graphs], hasDefault: this.names.hasDefault, statements: this.statements };
  }

  async load(source: SnapshotSource, reasoner: Reasoner): Promise<void> {
    const loader = new Loader(this.endpoints, this.names, this.options);
    for await (const chunk of source.chunks()) await loader.add(chunk);
    await loader.finish();
    const rules = reasoningRules(reasoner, this.names);
    if (rules.length) {
      this.names.graphs.add(INFERRED_GRAPH);
      let size = -1;
      for (let round = 0; round < 50; round++) {
        for (const r of rules) await this.endpoints.update(r);
        const now = await this.count([this.names.stored(INFERRED_GRAPH)]);
        if (now === size) break;
        size = now;
      }
      if (size === 0) this.names.graphs.delete(INFERRED_GRAPH);
    }
    this.statements = await this.count(this.names.allStored());
  }

  private async count(graphs: string[]): Promise<number> {
    if (!graphs.length) return 0;
    const from = graphs.map((g) => `FROM NAMED ${ntIri(g)}`).join('\n');
    const rows = await this.endpoints.select(`SELECT (COUNT(*) AS ?n)\n${from}\nWHERE { GRAPH ?g { ?s ?p ?o } }`);
    return Number(rows[0]?.n?.value ?? 0);
  }

  async query(request: EngineQuery): Promise<string> {
    if (this.closed) throw new EngineOverloadedError('The service is stopping; retry in a moment.');
    const started = Date.now();
    const timeoutMessage = (): string => `The query ran longer than ${Math.round(request.timeoutMs / 1000)} s and was stopped.`;
    const format = request.format.split(';')[0]!.trim().toLowerCase();
    // The slot is taken before the query is parsed (off the main thread, so it takes a turn of
    // the event loop): a close() from then on waits for this query instead of dropping its graphs.
    await this.limiter.acquire();
    let timeout: TimeoutSignal | undefined;
    try {
      const rewritten = await this.rewrite(request);
      const { text, form } = rewritten;
      const tabular = form === 'SELECT' || form === 'ASK';
      if (tabular !== TABULAR_FORMATS.has(format)) throw new EngineQueryError(`${form} results cannot be written as ${format}.`);
      const remaining = request.timeoutMs - (Date.now() - started);
      timeout = new TimeoutSignal(remaining);
      if (remaining <= 0) throw new EngineTimeoutError(timeoutMessage());
      // Graphs are usually large answers, tables large when this query's last one was.
      const sent = await this.endpoints.query(text, tabular ? RESULTS_JSON : N_TRIPLES, timeout, remaining, !tabular || rewritten.large === true);
      if (tabular) rewritten.large = sent.text.length >= LARGE_ANSWER_BYTES;
      const state = sent.headers.get('x-sql-state') ?? '';
      // Virtuoso's "anytime" answer: partial results when its timeout struck.
      if (state.startsWith('S1T')) throw new EngineTimeoutError(timeoutMessage());
      if (sent.status < 200 || sent.status >= 300) throw this.engineError(failure(sent), timeoutMessage);
      // Virtuoso cuts SELECT results at its ResultSetMaxRows and says so only in this header.
      const maxRows = sent.headers.get('x-sparql-maxrows');
      if (maxRows) throw new EngineQueryError(`The query has more results than the SPARQL store returns at once (${maxRows} rows); use LIMIT and OFFSET.`);
      return tabular ? convertTabular(sent.text, format, this.names) : convertGraph(sent.text, format, this.names);
    } catch (e) {
      if (timeout?.timedOut) throw new EngineTimeoutError(timeoutMessage());
      if (e instanceof EngineQueryError || e instanceof EngineTimeoutError || e instanceof EngineOverloadedError) throw e;
      if (e instanceof UnreachableError) throw new EngineOverloadedError(`The SPARQL store is unreachable: ${e.message}`);
      if (e instanceof TypeError && e.message === 'fetch failed') {
        // fetch failed: the store is unreachable.
        throw new EngineOverloadedError(`The SPARQL store is unreachable: ${(e.cause as Error | undefined)?.message ?? e.message}`);
      }
      throw e;
    } finally {
      timeout?.clear();
      this.limiter.release();
      if (this.limiter.busy === 0) for (const wake of this.idle) wake();
    }
  }

  /** rewriteQuery, remembered per query (the snapshot's names never change). */
  private async rewrite(request: EngineQuery): Promise<Rewritten> {
    if (request.query.length > REWRITE_CACHE_MAX_CHARS) return rewriteQuery(request, this.names);
    const key = JSON.stringify([request.query, request.baseIri ?? null, request.defaultGraphs ?? null, request.namedGraphs ?? null]);
    const known = this.rewrites.get(key);
    if (known) {
      this.rewrites.delete(key);
      this.rewrites.set(key, known);
      return known;
    }
    const rewritten = await rewriteQuery(request, this.names);
    this.rewrites.set(key, rewritten);
    if (this.rewrites.size > REWRITE_CACHE_ENTRIES) this.rewrites.delete(this.rewrites.keys().next().value!);
    return rewritten;
  }

  private engineError(e: EndpointError, timeoutMessage: () => string): Error {
    const message = this.names.unmapText(e.message);
    const state = e.sqlState ?? '';
    if (state.startsWith('S1T') || state === 'HYT00' || e.status === 504) return new EngineTimeoutError(timeoutMessage());
    if (state === '40001' || state.startsWith('08') || e.status === 503 || e.status === 429) return new EngineOverloadedError(`The SPARQL store is busy: ${message}`);
    if (e.status >= 400 && e.status < 500) return new EngineQueryError(message);
    if (/^(37|42|22|21|HY|S0|SP|SR)/.test(state)) return new EngineQueryError(message);
    return new Error(`the SPARQL store failed (HTTP ${e.status}): ${message}`);
  }

  /** Drops the snapshot's graphs (DROP SILENT GRAPH, a few per request). */
  async dropGraphs(afterFailure = false): Promise<void> {
    const graphs = afterFailure ? this.names.allPossiblyStored() : this.names.allStored();
    for (let i = 0; i < graphs.length; i += 20) {
      await this.endpoints.update(
        graphs
          .slice(i, i + 20)
          .map((g) => `DROP SILENT GRAPH ${ntIri(g)}`)
          .join(' ;\n'),
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.limiter.rejectAll(new EngineOverloadedError('The service stopped.'));
    // Queries already sent finish first (each is bounded by its own timeout).
    if (this.limiter.busy > 0) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.idle.delete(wake);
          resolve();
        };
        this.idle.add(wake);
      });
    }
    // An attached snapshot belongs to its host: only the host's own store drops it.
    if (!this.attached) await this.dropGraphs();
  }
}

/** See the module comment. One instance per external store; it keeps no state between snapshots. */
export class SparqlProtocolEngine implements SparqlEngine {
  private readonly endpoints: Endpoints;

  constructor(private readonly options: SparqlProtocolEngineOptions) {
    this.endpoints = new Endpoints(options);
  }

  async open(source: SnapshotSource, options: { reasoner: Reasoner; replicas?: number }): Promise<SparqlStore> {
    return this.load(source, options.reasoner);
  }

  /**
   * Loads a snapshot as open() does, and returns it with `describe()`: what a host records so that
   * other processes can `attach` (issue 19: the SPARQL host's loader).
   */
  async load(source: SnapshotSource, reasoner: Reasoner): Promise<SparqlStore & { describe(): HostedSnapshot }> {
    const store = new ProtocolStore(this.endpoints, this.options);
    try {
      await store.load(source, reasoner);
    } catch (e) {
      // Remove whatever part of the snapshot made it in.
      await store.dropGraphs(true).catch((cleanup: Error) => (this.options.logger ?? defaultLogger).error('dropping a half-loaded snapshot failed', { error: cleanup.message }));
      const message = e instanceof EndpointError ? `loading the snapshot into the SPARQL store failed: ${e.message}` : (e as Error).message;
      throw e instanceof EndpointError ? new Error(message) : e;
    }
    return store;
  }

  /**
   * A store over a snapshot another process loaded into this engine's endpoint (a SPARQL host):
   * queries only; nothing is loaded, and close() drops nothing (the host's loader owns the data).
   */
  attach(snapshot: HostedSnapshot): SparqlStore {
    return new ProtocolStore(this.endpoints, this.options, snapshot);
  }
}
