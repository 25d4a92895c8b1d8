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
 * and serialised here: tabular formats by the writers below, RDF formats by oxigraph (the
 * serialiser the embedded engine uses).
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
 * Not provided: `update()` (dataset updates need the embedded engine) and `replicas` (the external
 * store scales on its own; `maxConcurrentQueries` bounds what one snapshot sends at once).
 */
import { randomBytes } from 'node:crypto';
import * as oxigraph from 'oxigraph';
import sparqljs from 'sparqljs';
import { assertSparqlLimits, parseFailure } from '../../../rdf/sparql-analysis.js';
import { ParseRejectedError, sparqlParser } from '../../../rdf/sparql-parser-pool.js';
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
} from '../../../ports/platform.js';

export type EndpointAuth =
  | { type: 'basic'; username: string; password: string }
  /** Computes extra headers per request, e.g. an AWS SigV4 signature for Neptune IAM auth. */
  | {
      type: 'headers';
      headers: (request: { method: string; url: string; headers: Record<string, string>; body: string }) => Promise<Record<string, string>> | Record<string, string>;
    };

export interface SparqlProtocolEngineOptions {
  /** SPARQL 1.1 Protocol query endpoint, e.g. `http://127.0.0.1:8890/sparql`. */
  queryEndpoint: string;
  /** SPARQL 1.1 Update endpoint; default: the query endpoint. */
  updateEndpoint?: string;
  /** Graph Store Protocol endpoint (Virtuoso: `/sparql-graph-crud`); without it loads use SPARQL Update. */
  graphStoreEndpoint?: string;
  auth?: EndpointAuth;
  /** Per request of loading, counting, reasoning and dropping (default 300 s). */
  requestTimeoutMs?: number;
  /** Protocol parameter asking the server to stop a query after N ms (Virtuoso: `timeout`, the default); null: none. */
  serverTimeoutParameter?: string | null;
  /** Queries sent at once per snapshot (default 8); more wait, and past `maxWaitingQueries` (256) are refused. */
  maxConcurrentQueries?: number;
  maxWaitingQueries?: number;
  /** Statements per Graph Store Protocol request (default 20 000). */
  gspBatchStatements?: number;
  /** Statements per INSERT DATA request (default 1 000). */
  updateBatchStatements?: number;
  /** Statements with blank nodes per INSERT..WHERE request (default 400; Virtuoso fails above ~1 000). */
  blankNodeBatchStatements?: number;
  /** Load requests in flight at once (default 2). */
  loadConcurrency?: number;
  fetch?: typeof fetch;
}

const XSD = 'http://www.w3.org/2001/XMLSchema#';
const XSD_STRING = `${XSD}string`;
const XSD_BOOLEAN = `${XSD}boolean`;
const XSD_DURATION = `${XSD}duration`;
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';
const RDF_DIR_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString';
const INFERRED_GRAPH = 'urn:x-platform:inferred';
const RESULTS_JSON = 'application/sparql-results+json';
const N_TRIPLES = 'application/n-triples';
const FORM_TYPE = 'application/x-www-form-urlencoded; charset=UTF-8';
/** Statuses by which a Graph Store Protocol endpoint says it cannot be used (here, anonymously). */
const GSP_UNUSABLE = new Set([401, 403, 404, 405, 415, 501]);

// ---------------------------------------------------------------------------------------------
// HTTP

class TimeoutSignal {
  readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  timedOut = false;
  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, Math.max(ms, 1));
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  clear(): void {
    clearTimeout(this.timer);
  }
}

/** A failed request to the external store, before mapping to the engine's errors. */
class EndpointError extends Error {
  override name = 'EndpointError';
  constructor(
    message: string,
    readonly status: number,
    readonly sqlState?: string,
  ) {
    super(message);
  }
}

interface Sent {
  status: number;
  headers: Headers;
  text: string;
}

class Endpoints {
  private readonly fetchImpl: typeof fetch;
  readonly updateEndpoint: string;
  constructor(readonly options: SparqlProtocolEngineOptions) {
    this.fetchImpl = options.fetch ?? fetch;
    this.updateEndpoint = options.updateEndpoint ?? options.queryEndpoint;
  }

  /** Sends a request and reads the whole body; aborted (TimeoutSignal.timedOut) after `timeoutMs`. */
  async send(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeout: TimeoutSignal): Promise<Sent> {
    const all: Record<string, string> = { ...headers };
    const auth = this.options.auth;
    if (auth?.type === 'basic') all.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    else if (auth?.type === 'headers') Object.assign(all, await auth.headers({ method, url, headers: { ...all }, body: body ?? '' }));
    const response = await this.fetchImpl(url, { method, headers: all, body, signal: timeout.signal });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text };
  }

  /** A form-encoded SPARQL Update; throws EndpointError unless 2xx. */
  async update(text: string): Promise<string> {
    const timeout = new TimeoutSignal(this.options.requestTimeoutMs ?? 300_000);
    try {
      const sent = await this.send('POST', this.updateEndpoint, { 'content-type': FORM_TYPE, accept: RESULTS_JSON }, new URLSearchParams({ update: text }).toString(), timeout);
      if (sent.status < 200 || sent.status >= 300) throw failure(sent);
      return sent.text;
    } catch (e) {
      if (timeout.timedOut) throw new Error(`a SPARQL update ran longer than ${this.options.requestTimeoutMs ?? 300_000} ms`);
      throw e;
    } finally {
      timeout.clear();
    }
  }

  /** A form-encoded query with an explicit Accept; returns the raw response (any status). */
  async query(text: string, accept: string, timeout: TimeoutSignal, serverTimeoutMs?: number): Promise<Sent> {
    const form = new URLSearchParams({ query: text });
    const parameter = this.options.serverTimeoutParameter === undefined ? 'timeout' : this.options.serverTimeoutParameter;
    if (parameter && serverTimeoutMs !== undefined) form.set(parameter, String(Math.max(1, Math.floor(serverTimeoutMs))));
    return this.send('POST', this.options.queryEndpoint, { 'content-type': FORM_TYPE, accept }, form.toString(), timeout);
  }

  /** A query for internal use (counts): JSON results, throws on failure. */
  async select(text: string): Promise<Binding[]> {
    const timeout = new TimeoutSignal(this.options.requestTimeoutMs ?? 300_000);
    try {
      const sent = await this.query(text, RESULTS_JSON, timeout);
      if (sent.status < 200 || sent.status >= 300 || sent.headers.get('x-sql-state')?.startsWith('S1T')) throw failure(sent);
      return (JSON.parse(sent.text) as { results: { bindings: Binding[] } }).results.bindings;
    } catch (e) {
      if (timeout.timedOut) throw new Error(`a SPARQL query ran longer than ${this.options.requestTimeoutMs ?? 300_000} ms`);
      throw e;
    } finally {
      timeout.clear();
    }
  }

  /** POSTs N-Triples into a graph; returns the status when the endpoint refused as unusable. */
  async graphStorePost(graph: string, ntriples: string): Promise<'ok' | 'unusable'> {
    const url = new URL(this.options.graphStoreEndpoint!);
    url.searchParams.set('graph', graph);
    const timeout = new TimeoutSignal(this.options.requestTimeoutMs ?? 300_000);
    try {
      const sent = await this.send('POST', url.toString(), { 'content-type': `${N_TRIPLES}; charset=utf-8`, accept: '*/*' }, ntriples, timeout);
      if (sent.status >= 200 && sent.status < 300) return 'ok';
      if (GSP_UNUSABLE.has(sent.status)) return 'unusable';
      throw failure(sent);
    } catch (e) {
      if (timeout.timedOut) throw new Error(`a Graph Store Protocol POST ran longer than ${this.options.requestTimeoutMs ?? 300_000} ms`);
      throw e;
    } finally {
      timeout.clear();
    }
  }
}

/** The message of a failed response: Virtuoso's `Virtuoso 37000 Error SP030: ...` line(s), without the echoed query. */
function failure(sent: Sent): EndpointError {
  let text = sent.text;
  if (/^\s*<(!DOCTYPE|html)/i.test(text)) text = text.replace(/<[^>]*>/g, ' ');
  text = text.split(/\n\s*SPARQL query:/)[0]!.replace(/\s+/g, ' ').trim();
  const state = sent.headers.get('x-sql-state') ?? /^Virtuoso (\w{5}) Error/.exec(text)?.[1];
  const message = sent.headers.get('x-sql-message') ?? text;
  return new EndpointError(message.slice(0, 2000) || `HTTP ${sent.status}`, sent.status, state ?? undefined);
}

// ---------------------------------------------------------------------------------------------
// Terms as N-Triples (also valid in SPARQL INSERT DATA)

// eslint-disable-next-line no-control-regex
const IRI_UNSAFE = /[\x00-\x20<>"{}|^`\\]/g;
const ntIri = (iri: string): string => `<${iri.replace(IRI_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`)}>`;
const quoted = (s: string): string => `"${s.replace(/[\\"\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '"' ? '\\"' : c === '\n' ? '\\n' : '\\r'))}"`;

function ntLiteral(value: string, language: string | undefined, datatype: string | undefined): string {
  // RDF 1.2 base directions have no equivalent in the external stores: the direction is dropped.
  if (language) return `${quoted(value)}@${language}`;
  if (!datatype || datatype === XSD_STRING || datatype === RDF_LANG_STRING || datatype === RDF_DIR_LANG_STRING) return quoted(value);
  return `${quoted(value)}^^${ntIri(datatype)}`;
}

// ---------------------------------------------------------------------------------------------
// Loading

/** Union-find over blank node labels (indices). */
class Components {
  private readonly parent: number[] = [];
  add(): number {
    this.parent.push(this.parent.length);
    return this.parent.length - 1;
  }
  find(i: number): number {
    const parent = this.parent;
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[ra] = rb;
  }
}

interface HeldStatement {
  graph: string;
  line: string;
  blank: number;
}

/** A snapshot's graph names in the external store. */
class SnapshotNames {
  readonly id = randomBytes(12).toString('hex');
  /** `urn:x-snapshot:ID` — starts every graph name of this snapshot, and of no other. */
  readonly root = `urn:x-snapshot:${this.id}`;
  readonly prefix = `${this.root}:`;
  readonly defaultBucket = `${this.root}#default`;
  /** Graph names the query dataset uses for "no graph at all". */
  readonly none = `${this.root}#none`;
  /** Holds a marker statement during the load (see Loader.insertWhere). */
  readonly scratch = `${this.root}#load`;
  /** Original names of the loaded graphs. */
  readonly graphs = new Set<string>();
  hasDefault = false;

  stored(graph: string): string {
    return this.prefix + graph;
  }
  /** Stored names of everything loaded (what close() drops). */
  allStored(): string[] {
    return [...[...this.graphs].map((g) => this.stored(g)), ...(this.hasDefault ? [this.defaultBucket] : [])];
  }
  /** What a failed load may have left behind. */
  allPossiblyStored(): string[] {
    return [...this.allStored(), this.scratch];
  }
  unmapIri(iri: string): string {
    return iri.startsWith(this.prefix) ? iri.slice(this.prefix.length) : iri;
  }
  unmapText(text: string): string {
    return text.includes(this.prefix) ? text.split(this.prefix).join('') : text;
  }
}

/** Groups (kept whole) into batches of about `limit` statements; a group over the limit goes alone. */
function batches<T>(groups: T[][], limit: number): T[][][] {
  const out: T[][][] = [];
  let current: T[][] = [];
  let size = 0;
  for (const g of groups) {
    if (current.length && size + g.length > limit) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(g);
    size += g.length;
  }
  if (current.length) out.push(current);
  return out;
}

class Loader {
  private readonly buffers = new Map<string, string[]>();
  private readonly held: HeldStatement[] = [];
  private readonly labels = new Map<string, number>();
  private readonly components = new Components();
  private readonly inFlight = new Set<Promise<void>>();
  private failed: Error | undefined;
  private buffered = 0;
  private gsp: boolean;
  private usedScratch = false;
  statements = 0;

  constructor(
    private readonly endpoints: Endpoints,
    private readonly names: SnapshotNames,
    private readonly options: SparqlProtocolEngineOptions,
  ) {
    this.gsp = Boolean(options.graphStoreEndpoint);
  }

  private get batch(): number {
    return this.gsp ? (this.options.gspBatchStatements ?? 20_000) : (this.options.updateBatchStatements ?? 1000);
  }

  private blank(label: string): number {
    let i = this.labels.get(label);
    if (i === undefined) {
      i = this.components.add();
      this.labels.set(label, i);
    }
    return i;
  }

  private term(t: oxigraph.Quad['subject'] | oxigraph.Quad['predicate'] | oxigraph.Quad['object']): string {
    switch (t.termType) {
      case 'NamedNode':
        return ntIri(t.value);
      case 'BlankNode':
        return `_:b${this.blank(t.value)}`;
      case 'Literal':
        return ntLiteral(t.value, t.language || undefined, t.datatype.value);
      default:
        throw new Error(`statements with ${t.termType} terms (RDF 1.2 triple terms) cannot be loaded into the external SPARQL store`);
    }
  }

  async add(chunk: string): Promise<void> {
    for (const quad of oxigraph.parse(chunk, { format: 'application/n-quads', lenient: true })) {
      let graph: string;
      if (quad.graph.termType === 'DefaultGraph') {
        graph = this.names.defaultBucket;
        this.names.hasDefault = true;
      } else if (quad.graph.termType === 'NamedNode') {
        this.names.graphs.add(quad.graph.value);
        graph = this.names.stored(quad.graph.value);
      } else {
        throw new Error('blank node graph names cannot be loaded into the external SPARQL store');
      }
      const line = `${this.term(quad.subject)} ${this.term(quad.predicate)} ${this.term(quad.object)} .`;
      this.statements++;
      const blank = quad.subject.termType === 'BlankNode' ? this.labels.get(quad.subject.value)! : quad.object.termType === 'BlankNode' ? this.labels.get(quad.object.value)! : -1;
      if (blank >= 0) {
        if (quad.subject.termType === 'BlankNode' && quad.object.termType === 'BlankNode') {
          this.components.union(this.labels.get(quad.subject.value)!, this.labels.get(quad.object.value)!);
        }
        this.held.push({ graph, line, blank });
        continue;
      }
      let buffer = this.buffers.get(graph);
      if (!buffer) this.buffers.set(graph, (buffer = []));
      buffer.push(line);
      if (++this.buffered >= this.batch) await this.flush();
    }
  }

  /** Sends the buffered statements without blank nodes (one GSP POST per graph, or INSERT DATA batches). */
  private async flush(): Promise<void> {
    const entries = [...this.buffers];
    this.buffers.clear();
    this.buffered = 0;
    if (!entries.length) return;
    if (this.gsp) {
      for (const [graph, lines] of entries) await this.schedule(() => this.sendGraph(graph, lines));
    } else {
      await this.schedule(() => this.insertData(entries));
    }
  }

  async finish(): Promise<void> {
    await this.flush();
    await this.drain();
    // Statements with blank nodes: whole connected components per request.
    const byComponent = new Map<number, HeldStatement[]>();
    for (const h of this.held) {
      const root = this.components.find(h.blank);
      let list = byComponent.get(root);
      if (!list) byComponent.set(root, (list = []));
      list.push(h);
    }
    this.held.length = 0;
    const single = new Map<string, HeldStatement[][]>();
    const multi: HeldStatement[][] = [];
    for (const component of byComponent.values()) {
      const graph = component[0]!.graph;
      if (component.every((h) => h.graph === graph)) {
        let list = single.get(graph);
        if (!list) single.set(graph, (list = []));
        list.push(component);
      } else {
        multi.push(component);
      }
    }
    for (const [graph, components] of single) {
      for (const batch of batches(components, this.batch)) await this.schedule(() => this.sendComponents(graph, batch));
    }
    for (const batch of batches(multi, this.blankLimit)) await this.schedule(() => this.insertWhere(batch.flat()));
    await this.drain();
    if (this.usedScratch) await this.endpoints.update(`DROP SILENT GRAPH ${ntIri(this.names.scratch)}`);
  }

  private get blankLimit(): number {
    return this.options.blankNodeBatchStatements ?? 400;
  }

  private async schedule(task: () => Promise<void>): Promise<void> {
    if (this.failed) throw this.failed;
    while (this.inFlight.size >= Math.max(1, this.options.loadConcurrency ?? 2)) await Promise.race(this.inFlight);
    if (this.failed) throw this.failed;
    const p: Promise<void> = task()
      .catch((e: Error) => {
        this.failed ??= e;
      })
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async drain(): Promise<void> {
    await Promise.all(this.inFlight);
    if (this.failed) throw this.failed;
  }

  /** POSTs to the Graph Store Protocol endpoint; false once it has refused (then SPARQL Update is used). */
  private async tryGraphStore(graph: string, lines: string[]): Promise<boolean> {
    if (!this.gsp) return false;
    if ((await this.endpoints.graphStorePost(graph, `${lines.join('\n')}\n`)) === 'ok') return true;
    if (this.gsp) console.warn('The Graph Store Protocol endpoint refused the load; loading with SPARQL Update instead.', { endpoint: this.options.graphStoreEndpoint });
    this.gsp = false;
    return false;
  }

  /** Statements without blank nodes of one graph: a GSP POST, or INSERT DATA batches. */
  private async sendGraph(graph: string, lines: string[]): Promise<void> {
    if (await this.tryGraphStore(graph, lines)) return;
    await this.insertData([[graph, lines]]);
  }

  /** INSERT DATA requests of at most `updateBatchStatements` statements, several graphs per request. */
  private async insertData(entries: [string, string[]][]): Promise<void> {
    const size = Math.max(1, this.options.updateBatchStatements ?? 1000);
    let blocks: string[] = [];
    let count = 0;
    const send = async (): Promise<void> => {
      if (blocks.length) await this.endpoints.update(`INSERT DATA {\n${blocks.join('\n')}\n}`);
      blocks = [];
      count = 0;
    };
    for (const [graph, lines] of entries) {
      for (let i = 0; i < lines.length; ) {
        const piece = lines.slice(i, i + size - count);
        blocks.push(`GRAPH ${ntIri(graph)} {\n${piece.join('\n')}\n}`);
        count += piece.length;
        i += piece.length;
        if (count >= size) await send();
      }
    }
    await send();
  }

  /** Blank-node components within one graph: a GSP POST (one document), or INSERT..WHERE batches. */
  private async sendComponents(graph: string, components: HeldStatement[][]): Promise<void> {
    if (await this.tryGraphStore(graph, components.flat().map((h) => h.line))) return;
    for (const batch of batches(components, this.blankLimit)) await this.insertWhere(batch.flat());
  }

  /** Statements with blank nodes shared across graphs: one request, so the blank nodes stay one. */
  private async insertWhere(statements: HeldStatement[]): Promise<void> {
    this.usedScratch = true;
    const byGraph = new Map<string, string[]>();
    for (const s of statements) {
      let list = byGraph.get(s.graph);
      if (!list) byGraph.set(s.graph, (list = []));
      list.push(s.line);
    }
    const blocks = [...byGraph].map(([g, lines]) => `GRAPH ${ntIri(g)} {\n${lines.join('\n')}\n}`);
    // Virtuoso 7.2 fails a template made only of blank-node statements (after inserting part of
    // it: "string_output_string needs a string output"); one constant statement, in a scratch
    // graph dropped after the load, avoids that.
    const marker = ntIri(this.names.scratch);
    await this.endpoints.update(`INSERT {\nGRAPH ${marker} { ${marker} ${marker} "load" }\n${blocks.join('\n')}\n} WHERE {}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Reasoning: the embedded engine's rules, as updates over this snapshot's graphs.

function reasoningRules(level: Reasoner, names: SnapshotNames): string[] {
  const inferred = ntIri(names.stored(INFERRED_GRAPH));
  const ours = (v: string): string => `FILTER(STRSTARTS(STR(${v}), ${quoted(names.root)}))`;
  return rulesFor(level).map(({ head, patterns, filter }) => {
    const body = patterns.map((p, i) => `GRAPH ?g${i} { ${p} } ${ours(`?g${i}`)}`).join(' ');
    return `${PREFIXES}
      INSERT { GRAPH ${inferred} { ${head} } } WHERE { ${body} ${filter ? `FILTER(${filter})` : ''} FILTER NOT EXISTS { GRAPH ?known { ${head} } ${ours('?known')} } }`;
  });
}

// ---------------------------------------------------------------------------------------------
// Query rewriting

type QueryForm = 'SELECT' | 'ASK' | 'CONSTRUCT' | 'DESCRIBE';

/**
 * Function IRIs a query may call: XSD casts. Virtuoso maps any other IRI to an SQL procedure
 * (`<urn:f>(..)` calls `DB.DBA.urn:f`, `bif:`/`sql:` reach its built-ins), and the embedded
 * engine has no custom functions either.
 */
const ALLOWED_FUNCTION = /^http:\/\/www\.w3\.org\/2001\/XMLSchema#/;

/** Replaces GRAPH <g> names and refuses what reaches outside the snapshot, in place. */
function rewritePatterns(node: unknown, names: SnapshotNames): void {
  if (Array.isArray(node)) {
    for (const n of node) rewritePatterns(n, names);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if ('termType' in o) return;
  if (o.type === 'service') throw new EngineQueryError('SERVICE (federated query) is not supported by this service.');
  if (o.type === 'functionCall') {
    const fn = o.function as { value?: string } | string | undefined;
    const iri = typeof fn === 'string' ? fn : (fn?.value ?? '');
    if (!ALLOWED_FUNCTION.test(iri)) throw new EngineQueryError(`The function <${iri}> is not supported by this service.`);
  }
  if (o.type === 'graph') {
    const name = o.name as { termType?: string; value: string } | undefined;
    if (name?.termType === 'NamedNode') o.name = oxigraph.namedNode(names.stored(name.value));
  }
  for (const [key, value] of Object.entries(o)) {
    if (key === 'name' && o.type === 'graph') continue;
    rewritePatterns(value, names);
  }
}

interface Rewritten {
  text: string;
  form: QueryForm;
}

/** Parsed off the main thread (after the pre-scan's limits); the tree comes back as plain data. */
const parse = (text: string, baseIri?: string): Promise<sparqljs.SparqlQuery> => sparqlParser.run<sparqljs.SparqlQuery>({ type: 'parse', text, baseIri });

/** `<...\u0041...>` → `<...A...>` (only inside IRI references, where sparqljs does not accept escapes). */
function decodeIriEscapes(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/<([^<>"{}|^`\x00-\x20]*)>/g, (whole, body: string) =>
    body.includes('\\') ? `<${body.replace(/\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})/g, (_, a?: string, b?: string) => String.fromCodePoint(parseInt(a ?? b!, 16)))}>` : whole,
  );
}

async function rewriteQuery(request: EngineQuery, names: SnapshotNames): Promise<Rewritten> {
  assertSparqlLimits(request.query, 'query');
  let parsed: sparqljs.SparqlQuery;
  try {
    parsed = await parse(request.query, request.baseIri);
  } catch (e) {
    if (!(e instanceof ParseRejectedError)) throw parseFailure(e, 'The query does not parse');
    // sparqljs does not read \u escapes inside IRIs; SPARQL processes them before parsing.
    const decoded = decodeIriEscapes(request.query);
    try {
      if (decoded === request.query) throw e;
      // Decoding may turn escaped characters into real brackets: the limits apply to it too.
      assertSparqlLimits(decoded, 'query');
      parsed = await parse(decoded, request.baseIri);
    } catch (again) {
      if (!(again instanceof ParseRejectedError)) throw parseFailure(again, 'The query does not parse');
      throw new EngineQueryError(`The query does not parse: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`);
    }
  }
  if (parsed.type !== 'query') throw new EngineQueryError('Only queries can be run here, not updates.');
  const own = parsed.from ?? { default: [], named: [] };
  const everything = [...[...names.graphs].map((g) => names.stored(g)), ...(names.hasDefault ? [names.defaultBucket] : [])];
  const named = [...names.graphs].map((g) => names.stored(g));
  let defaults: string[];
  let nameds: string[];
  if (request.defaultGraphs !== undefined || request.namedGraphs !== undefined) {
    // The protocol's dataset is the whole dataset: what it does not list is not there.
    defaults = (request.defaultGraphs ?? []).map((g) => names.stored(g));
    nameds = (request.namedGraphs ?? []).map((g) => names.stored(g));
  } else if (own.default.length || own.named.length) {
    // The query's own dataset (SPARQL 1.1 §13.2: no FROM NAMED means no named graphs, and vice versa).
    defaults = own.default.map((g) => names.stored(g.value));
    nameds = own.named.map((g) => names.stored(g.value));
  } else {
    defaults = everything;
    nameds = named;
  }
  const iri = (v: string): sparqljs.IriTerm => oxigraph.namedNode(v) as unknown as sparqljs.IriTerm;
  parsed.from = {
    default: (defaults.length ? defaults : [names.none]).map(iri),
    named: (nameds.length ? nameds : [names.none]).map(iri),
  };
  rewritePatterns(parsed.where, names);
  rewritePatterns((parsed as { template?: unknown }).template, names);
  if (parsed.queryType === 'SELECT') rewritePatterns(parsed.variables, names);
  rewritePatterns((parsed as { having?: unknown }).having, names);
  rewritePatterns((parsed as { order?: unknown }).order, names);
  rewritePatterns((parsed as { group?: unknown }).group, names);
  let text: string;
  try {
    text = new sparqljs.Generator().stringify(parsed);
  } catch (e) {
    throw new EngineQueryError(`The query cannot be run: ${(e as Error).message}`);
  }
  return { text, form: parsed.queryType };
}

// ---------------------------------------------------------------------------------------------
// Results

interface JsonTerm {
  type: 'uri' | 'bnode' | 'literal' | 'typed-literal' | 'triple';
  value: string;
  'xml:lang'?: string;
  datatype?: string;
}
type Binding = Record<string, JsonTerm>;

interface Term {
  type: 'uri' | 'bnode' | 'literal';
  value: string;
  lang?: string;
  datatype?: string;
}

interface Table {
  vars: string[];
  rows: Map<string, Term>[];
}

/** Literal lexical forms Virtuoso writes differently from the stored value's canonical form. */
function literalValue(value: string, datatype: string | undefined): string {
  if (datatype === XSD_BOOLEAN) return value === '1' ? 'true' : value === '0' ? 'false' : value;
  // Virtuoso stores durations as seconds and writes e.g. "86400.0".
  if (datatype === XSD_DURATION && /^-?\d+(\.\d+)?$/.test(value)) return value.startsWith('-') ? `-PT${value.slice(1)}S` : `PT${value}S`;
  return value;
}

class TermMapper {
  private readonly blanks = new Map<string, string>();
  constructor(private readonly names: SnapshotNames) {}

  blank(label: string): string {
    const raw = label.replace(/^nodeID:\/\//, '').replace(/^_:/, '');
    if (/^[A-Za-z0-9]+$/.test(raw)) return raw;
    let mapped = this.blanks.get(raw);
    if (!mapped) this.blanks.set(raw, (mapped = `b${this.blanks.size}x`));
    return mapped;
  }

  fromJson(t: JsonTerm): Term {
    if (t.type === 'uri') return { type: 'uri', value: this.names.unmapIri(t.value) };
    if (t.type === 'bnode') return { type: 'bnode', value: this.blank(t.value) };
    if (t.type === 'triple') throw new EngineQueryError('RDF-star results are not supported by this service.');
    const lang = t['xml:lang'];
    if (lang) return { type: 'literal', value: this.names.unmapText(t.value), lang: lang.toLowerCase() };
    const dt = t.datatype && t.datatype !== XSD_STRING && t.datatype !== RDF_LANG_STRING ? t.datatype : undefined;
    const value = literalValue(this.names.unmapText(t.value), dt);
    return dt ? { type: 'literal', value, datatype: this.names.unmapIri(dt) } : { type: 'literal', value };
  }

  /** A term of Virtuoso's N-Triples, mapped, as an oxigraph term. */
  rdf<T extends oxigraph.Quad['subject'] | oxigraph.Quad['predicate'] | oxigraph.Quad['object']>(t: T): T {
    switch (t.termType) {
      case 'NamedNode':
        return oxigraph.namedNode(this.names.unmapIri(t.value)) as T;
      case 'BlankNode':
        return oxigraph.blankNode(this.blank(t.value)) as T;
      case 'Literal': {
        const value = this.names.unmapText(t.value);
        if (t.language) return oxigraph.literal(value, t.language) as T;
        return oxigraph.literal(literalValue(value, t.datatype.value), oxigraph.namedNode(this.names.unmapIri(t.datatype.value))) as T;
      }
      default:
        return t;
    }
  }
}

const xmlEscape = (s: string): string => s.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));

function jsonTerm(t: Term): Record<string, string> {
  if (t.type !== 'literal') return { type: t.type, value: t.value };
  if (t.lang) return { type: 'literal', value: t.value, 'xml:lang': t.lang };
  if (t.datatype) return { type: 'literal', value: t.value, datatype: t.datatype };
  return { type: 'literal', value: t.value };
}

function xmlTerm(t: Term): string {
  if (t.type === 'uri') return `<uri>${xmlEscape(t.value)}</uri>`;
  if (t.type === 'bnode') return `<bnode>${xmlEscape(t.value)}</bnode>`;
  if (t.lang) return `<literal xml:lang="${xmlEscape(t.lang)}">${xmlEscape(t.value)}</literal>`;
  if (t.datatype) return `<literal datatype="${xmlEscape(t.datatype)}">${xmlEscape(t.value)}</literal>`;
  return `<literal>${xmlEscape(t.value)}</literal>`;
}

function csvField(t: Term | undefined): string {
  if (!t) return '';
  const s = t.type === 'bnode' ? `_:${t.value}` : t.value;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const tsvString = (s: string): string => `"${s.replace(/[\\"\n\r\t]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]!)}"`;

function tsvTerm(t: Term | undefined): string {
  if (!t) return '';
  if (t.type === 'uri') return `<${t.value}>`;
  if (t.type === 'bnode') return `_:${t.value}`;
  if (t.lang) return `${tsvString(t.value)}@${t.lang}`;
  if (!t.datatype) return tsvString(t.value);
  // Turtle's short forms, as oxigraph writes them.
  if (t.datatype === `${XSD}integer` && /^[+-]?\d+$/.test(t.value)) return t.value;
  if (t.datatype === `${XSD}decimal` && /^[+-]?\d*\.\d+$/.test(t.value)) return t.value;
  if (t.datatype === XSD_BOOLEAN && (t.value === 'true' || t.value === 'false')) return t.value;
  return `${tsvString(t.value)}^^<${t.datatype}>`;
}

function writeTable(table: Table, format: string): string {
  const { vars, rows } = table;
  switch (format) {
    case 'application/sparql-results+json':
    case 'application/json':
      return JSON.stringify({
        head: { vars },
        results: { bindings: rows.map((r) => Object.fromEntries([...r].map(([k, t]) => [k, jsonTerm(t)]))) },
      });
    case 'application/sparql-results+xml': {
      const head = vars.map((v) => `<variable name="${xmlEscape(v)}"/>`).join('');
      const results = rows
        .map((r) => `<result>${vars.filter((v) => r.has(v)).map((v) => `<binding name="${xmlEscape(v)}">${xmlTerm(r.get(v)!)}</binding>`).join('')}</result>`)
        .join('');
      return `<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head>${head}</head><results>${results}</results></sparql>`;
    }
    case 'text/csv':
      return [vars.join(','), ...rows.map((r) => vars.map((v) => csvField(r.get(v))).join(','))].map((l) => `${l}\r\n`).join('');
    case 'text/tab-separated-values':
      return [vars.map((v) => `?${v}`).join('\t'), ...rows.map((r) => vars.map((v) => tsvTerm(r.get(v))).join('\t'))].map((l) => `${l}\n`).join('');
    default:
      throw new EngineQueryError(`SELECT results cannot be written as ${format}.`);
  }
}

function writeBoolean(value: boolean, format: string): string {
  switch (format) {
    case 'application/sparql-results+json':
    case 'application/json':
      return JSON.stringify({ head: {}, boolean: value });
    case 'application/sparql-results+xml':
      return `<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head></head><boolean>${value}</boolean></sparql>`;
    case 'text/csv':
    case 'text/tab-separated-values':
      return String(value);
    default:
      throw new EngineQueryError(`ASK results cannot be written as ${format}.`);
  }
}

const TABULAR_FORMATS = new Set(['application/sparql-results+json', 'application/json', 'application/sparql-results+xml', 'text/csv', 'text/tab-separated-values']);

function convertTabular(body: string, format: string, names: SnapshotNames): string {
  let json: { head?: { vars?: string[] }; boolean?: boolean; results?: { bindings?: Binding[] } };
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`the SPARQL store sent unreadable JSON results: ${body.slice(0, 200)}`);
  }
  if (typeof json.boolean === 'boolean') return writeBoolean(json.boolean, format);
  const mapper = new TermMapper(names);
  // Virtuoso answers `SELECT * {}` with a made-up column.
  const vars = (json.head?.vars ?? []).filter((v) => v !== '_star_fake');
  const rows = (json.results?.bindings ?? []).map((b) => {
    const row = new Map<string, Term>();
    for (const v of vars) if (b[v]) row.set(v, mapper.fromJson(b[v]!));
    return row;
  });
  return writeTable({ vars, rows }, format);
}

function convertGraph(body: string, format: string, names: SnapshotNames): string {
  const mapper = new TermMapper(names);
  const store = new oxigraph.Store();
  for (const q of oxigraph.parse(body, { format: N_TRIPLES, lenient: true })) {
    store.add(oxigraph.quad(mapper.rdf(q.subject), mapper.rdf(q.predicate), mapper.rdf(q.object), oxigraph.defaultGraph()));
  }
  try {
    return store.query('CONSTRUCT WHERE { ?s ?p ?o }', { results_format: format }) as string;
  } catch (e) {
    throw new EngineQueryError(`CONSTRUCT/DESCRIBE results cannot be written as ${format}: ${(e as Error).message}`);
  }
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
  readonly names = new SnapshotNames();
  statements = 0;
  private closed = false;
  private readonly limiter: Limiter;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly endpoints: Endpoints,
    private readonly options: SparqlProtocolEngineOptions,
  ) {
    this.limiter = new Limiter(options.maxConcurrentQueries ?? 8, options.maxWaitingQueries ?? 256);
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
      const { text, form } = await rewriteQuery(request, this.names);
      const tabular = form === 'SELECT' || form === 'ASK';
      if (tabular !== TABULAR_FORMATS.has(format)) throw new EngineQueryError(`${form} results cannot be written as ${format}.`);
      const remaining = request.timeoutMs - (Date.now() - started);
      timeout = new TimeoutSignal(remaining);
      if (remaining <= 0) throw new EngineTimeoutError(timeoutMessage());
      const sent = await this.endpoints.query(text, tabular ? RESULTS_JSON : N_TRIPLES, timeout, remaining);
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
    await this.dropGraphs();
  }
}

/** See the module comment. One instance per external store; it keeps no state between snapshots. */
export class SparqlProtocolEngine implements SparqlEngine {
  private readonly endpoints: Endpoints;

  constructor(private readonly options: SparqlProtocolEngineOptions) {
    this.endpoints = new Endpoints(options);
  }

  async open(source: SnapshotSource, options: { reasoner: Reasoner; replicas?: number }): Promise<SparqlStore> {
    const store = new ProtocolStore(this.endpoints, this.options);
    try {
      await store.load(source, options.reasoner);
    } catch (e) {
      // Remove whatever part of the snapshot made it in.
      await store.dropGraphs(true).catch((cleanup: Error) => console.error('dropping a half-loaded snapshot failed', { error: cleanup.message }));
      const message = e instanceof EndpointError ? `loading the snapshot into the SPARQL store failed: ${e.message}` : (e as Error).message;
      throw e instanceof EndpointError ? new Error(message) : e;
    }
    return store;
  }
}
