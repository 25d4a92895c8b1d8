/**
 * An rdf-test-suite query engine that evaluates nothing itself: every query goes over HTTP to the
 * platform's dataset SPARQL endpoint (`/datasets/{account}/{dataset}/sparql`), so the W3C suites
 * test the protocol, the result formats and the dataset handling, not only the engine inside.
 *
 * Test data → platform graphs. A test's RDF dataset is a default graph (`qt:data`) plus named
 * graphs (`qt:graphData`, named by their IRIs). The platform has no separate default graph: a
 * dataset is a set of named graphs, and its endpoint's default graph is their union unless the
 * request names graphs. So each test's data becomes graphs of a shared conformance dataset:
 *
 * - the default graph's triples → a graph `urn:x-conformance:default:<content hash>`;
 * - each named graph → a graph of the same IRI;
 *
 * and every query names the test's dataset explicitly, the way the SPARQL 1.1 Protocol (§2.1.4)
 * says, and only with the parameters that carry the test's graphs: `default-graph-uri` = the
 * default graph's graph, one `named-graph-uri` per named graph. A test without named graphs sends
 * no `named-graph-uri` (a dataset description without named graphs has none, as with FROM alone),
 * one without default data no `default-graph-uri` (an empty default graph, as with FROM NAMED
 * alone); a test without any data names `EMPTY_GRAPH`, a graph that never holds a triple.
 * A query with FROM / FROM NAMED clauses describes its dataset itself: the graphs they name (the
 * test's named graphs, or else files of the suite loaded under their IRIs) are loaded, and no
 * dataset parameter is sent, since one would override the query's description.
 *
 * Graphs are keyed by IRI and content hash and loaded once (`preload` imports all of a run's
 * graphs in one job before the first test); graphs whose IRI is already taken by other content go
 * to a second dataset. Blank node labels are made unique per graph, so graphs never share one.
 *
 * Queries: URL-encoded POST with `query`, `default-graph-uri`, `named-graph-uri`; the test's base
 * IRI is given as a `BASE` line before the query (the protocol has no base parameter). The Accept
 * header follows the format of the test's expected result (`accept` in the injected options), and
 * the response is parsed by its Content-Type with rdf-test-suite's own parsers.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type * as RDF from '@rdfjs/types';
import {
  QueryResultQuads,
  TestCaseQueryEvaluationHandler,
  Util,
  type IProtocolEndpoint,
  type IQueryResult,
  type IUpdateEngine,
} from 'rdf-test-suite';
import { DataFactory } from 'n3';
import sparqljs from 'sparqljs';
import { importFiles } from '../../support/imports.js';
import type { TestPlatform } from '../../support/platform.js';

/** A graph that no dataset holds: names an empty default graph. */
export const EMPTY_GRAPH = 'urn:x-conformance:empty';
const DEFAULT_GRAPH_PREFIX = 'urn:x-conformance:default:';
const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';

/** Tabular and graph media types to ask for by default (SPARQL JSON, N-Triples). */
export const DEFAULT_ACCEPT = 'application/sparql-results+json, application/n-triples;q=0.9';

// ---------------------------------------------------------------------------------------------
// Test data → graphs

/** One graph to load: its IRI, a hash of its content, and its triples as N-Quads lines. */
export interface GraphSpec {
  iri: string;
  hash: string;
  lines: string[];
}

/** The graphs of one test's dataset and the protocol parameters that name them. */
export interface TestDataset {
  graphs: GraphSpec[];
  /** default-graph-uri values; empty: send none. */
  defaultGraphs: string[];
  /** named-graph-uri values; empty: send none. */
  namedGraphs: string[];
}

const escapeString = (s: string) =>
  s.replace(/[\\"\n\r\t\b\f]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' })[c]!);
const escapeIri = (s: string) => s.replace(/[\u0000-\u0020<>"{}|^`\\]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);

function ntTerm(t: RDF.Term, blank: (label: string) => string): string {
  switch (t.termType) {
    case 'NamedNode':
      return `<${escapeIri(t.value)}>`;
    case 'BlankNode':
      return `_:${blank(t.value)}`;
    case 'Literal':
      if (t.language) return `"${escapeString(t.value)}"@${t.language}`;
      if (t.datatype.value === XSD_STRING || t.datatype.value === RDF_LANG_STRING) return `"${escapeString(t.value)}"`;
      return `"${escapeString(t.value)}"^^<${escapeIri(t.datatype.value)}>`;
    default:
      throw new Error(`cannot load a ${t.termType} term into the platform`);
  }
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * A graph of the given triples. Blank node labels are renumbered by first appearance (so that the
 * same file parsed twice hashes the same), then prefixed with a hash of the graph's IRI and
 * content, so that two graphs never share a blank node.
 */
export function graphSpec(iri: string | null, quads: RDF.Quad[]): GraphSpec {
  const numbers = new Map<string, number>();
  const numbered = (label: string) => {
    if (!numbers.has(label)) numbers.set(label, numbers.size);
    return `b${numbers.get(label)}`;
  };
  const triples = quads.map((q) => `${ntTerm(q.subject, numbered)} ${ntTerm(q.predicate, numbered)} ${ntTerm(q.object, numbered)}`);
  const hash = sha(triples.join('\n')).slice(0, 16);
  const name = iri ?? `${DEFAULT_GRAPH_PREFIX}${hash}`;
  const prefix = `g${sha(`${name} ${hash}`).slice(0, 10)}`;
  const graph = `<${escapeIri(name)}>`;
  // Relabel: `_:bN` → `_:<prefix>bN` (labels are ours, so a plain replace on the term is safe).
  const relabel = (triple: string) => triple.replace(/(^|\s)_:(b\d+)(?=\s|$)/g, (_m, sp: string, l: string) => `${sp}_:${prefix}${l}`);
  return { iri: name, hash, lines: triples.map((t) => `${relabel(t)} ${graph} .`) };
}

/** The graphs of a test's data (quads as rdf-test-suite hands them over) and how to name them. */
export function datasetOfQuads(quads: RDF.Quad[]): TestDataset {
  const defaultQuads: RDF.Quad[] = [];
  const named = new Map<string, RDF.Quad[]>();
  for (const q of quads) {
    if (q.graph.termType === 'DefaultGraph') defaultQuads.push(q);
    else if (q.graph.termType === 'NamedNode') named.set(q.graph.value, [...(named.get(q.graph.value) ?? []), q]);
    else throw new Error(`graph name of type ${q.graph.termType} is not supported`);
  }
  const graphs: GraphSpec[] = [];
  const defaultGraphs: string[] = [];
  if (defaultQuads.length) {
    const g = graphSpec(null, defaultQuads);
    graphs.push(g);
    defaultGraphs.push(g.iri);
  }
  const namedGraphs: string[] = [];
  for (const [iri, qs] of named) {
    graphs.push(graphSpec(iri, qs));
    namedGraphs.push(iri);
  }
  // No data at all: the dataset must still be named, or the endpoint's own default applies.
  if (!defaultGraphs.length && !namedGraphs.length) defaultGraphs.push(EMPTY_GRAPH);
  return { graphs, defaultGraphs, namedGraphs };
}

function quadsOf(stream: RDF.Stream): Promise<RDF.Quad[]> {
  return new Promise((resolve, reject) => {
    const quads: RDF.Quad[] = [];
    stream.on('data', (q: RDF.Quad) => quads.push(q));
    stream.on('error', reject);
    stream.on('end', () => resolve(quads));
  });
}

/** IRIs named by the FROM and FROM NAMED clauses of a query (none if it does not parse). */
export function fromClauses(query: string, baseIRI: string | undefined): { default: string[]; named: string[] } {
  try {
    const parsed = new sparqljs.Parser({ baseIRI }).parse(query) as { from?: { default: RDF.NamedNode[]; named: RDF.NamedNode[] } };
    return { default: parsed.from?.default.map((t) => t.value) ?? [], named: parsed.from?.named.map((t) => t.value) ?? [] };
  } catch {
    return { default: [], named: [] };
  }
}

// ---------------------------------------------------------------------------------------------
// Datasets on the platform

interface PoolDataset {
  /** account/name */
  path: string;
  graphs: Map<string, string>;
}

/** Problems that rdf-test-suite would not see as failures (it passes a negative test on any error). */
export interface EngineFault {
  test: string;
  message: string;
}

export interface HttpEngineOptions {
  p: TestPlatform;
  /** Write token of `account`. */
  token: string;
  account: string;
  /** Prefix of the datasets' names. */
  datasetPrefix?: string;
  /** Maps suite URLs to local files (for FROM clauses): rdf-test-suite's `urlToFileMappings`. */
  urlToFileMappings: { url: string; path: string }[];
}

export class HttpSparqlEngine implements IUpdateEngine {
  private readonly datasets: PoolDataset[] = [];
  /** `iri hash` → why the graph could not be imported. */
  private readonly importErrors = new Map<string, string>();
  /** Graphs of FROM clauses, by IRI (null: not a file of the suite). */
  private readonly fromGraphs = new Map<string, Promise<GraphSpec | null>>();
  /** Serializes loading: concurrent tests must not import into one dataset at once. */
  private loading: Promise<unknown> = Promise.resolve();
  readonly faults: EngineFault[] = [];
  /** The test being run, for fault reports (set by the runner). */
  currentTest = '';
  /** Import jobs (count, time, bytes) and queries sent, for the report. */
  readonly stats = { imports: 0, importMs: 0, importedBytes: 0, requests: 0 };

  constructor(private readonly o: HttpEngineOptions) {}

  // --- graphs -------------------------------------------------------------------------------

  /** The test's dataset: its data's graphs, or, for a test without data, the graphs its FROM clauses name. */
  async datasetOf(data: RDF.Quad[], queryString: string, baseIRI: string | undefined): Promise<TestDataset> {
    const own = datasetOfQuads(data);
    const from = fromClauses(queryString, baseIRI);
    if (!from.default.length && !from.named.length) return own;
    // The query describes its dataset: its FROM graphs must exist, and no protocol parameter may override it.
    const graphs = own.graphs.filter((g) => !g.iri.startsWith(DEFAULT_GRAPH_PREFIX));
    for (const iri of new Set([...from.default, ...from.named])) {
      if (graphs.some((g) => g.iri === iri)) continue;
      const g = await this.fromGraph(iri);
      if (g) graphs.push(g);
    }
    return { graphs, defaultGraphs: [], namedGraphs: [] };
  }

  private fromGraph(iri: string): Promise<GraphSpec | null> {
    let g = this.fromGraphs.get(iri);
    if (!g) {
      g = (async () => {
        if (!this.o.urlToFileMappings.some((m) => iri.startsWith(m.url))) return null;
        try {
          const [, stream] = await Util.fetchRdf(iri, { urlToFileMappings: this.o.urlToFileMappings });
          return graphSpec(iri, await quadsOf(stream));
        } catch {
          return null;
        }
      })();
      this.fromGraphs.set(iri, g);
    }
    return g;
  }

  /** Loads the graphs of many tests at once: one import job per dataset. */
  async preload(datasets: TestDataset[]): Promise<void> {
    const planned = new Map<PoolDataset, Map<string, GraphSpec>>();
    for (const d of datasets) {
      const target = await this.placeFor(d.graphs, planned);
      const plan = planned.get(target) ?? new Map<string, GraphSpec>();
      for (const g of d.graphs) if (!target.graphs.has(g.iri)) plan.set(g.iri, g);
      planned.set(target, plan);
    }
    for (const [target, plan] of planned) {
      // Jobs of at most ~1 MB: well below the simple upload route's 5 MB limit.
      let batch: GraphSpec[] = [];
      let size = 0;
      for (const g of plan.values()) {
        const bytes = g.lines.reduce((n, l) => n + l.length + 1, 0);
        if (batch.length && size + bytes > 1_000_000) {
          await this.importInto(target, batch);
          batch = [];
          size = 0;
        }
        batch.push(g);
        size += bytes;
      }
      await this.importInto(target, batch);
    }
  }

  /** The dataset that holds (or can take) all the graphs; loads what is missing (one test at a time). */
  private ensure(graphs: GraphSpec[]): Promise<PoolDataset> {
    const run = this.loading.then(async () => {
      const target = await this.placeFor(graphs, new Map());
      const missing = graphs.filter((g) => !target.graphs.has(g.iri) && !this.importErrors.has(`${g.iri} ${g.hash}`));
      if (missing.length) await this.importInto(target, missing);
      const failed = graphs.map((g) => this.importErrors.get(`${g.iri} ${g.hash}`)).filter(Boolean);
      if (failed.length) throw new Error(`the test data could not be imported: ${failed.join('; ')}`);
      return target;
    });
    this.loading = run.catch(() => undefined);
    return run;
  }

  /** The first dataset where no graph IRI is taken by other content (counting planned graphs). */
  private async placeFor(graphs: GraphSpec[], planned: Map<PoolDataset, Map<string, GraphSpec>>): Promise<PoolDataset> {
    for (const d of this.datasets) {
      const plan = planned.get(d);
      const fits = graphs.every((g) => {
        const hash = d.graphs.get(g.iri) ?? plan?.get(g.iri)?.hash;
        return hash === undefined || hash === g.hash;
      });
      if (fits) return d;
    }
    const name = `${this.o.datasetPrefix ?? 'sparql'}-${this.datasets.length}`;
    await this.o.p.createDataset(this.o.account, name, 'private', this.o.token);
    const d: PoolDataset = { path: `${this.o.account}/${name}`, graphs: new Map() };
    this.datasets.push(d);
    return d;
  }

  /** One import job with all the graphs; when it fails, halves are tried, down to single graphs. */
  private async importInto(target: PoolDataset, graphs: GraphSpec[]): Promise<void> {
    if (!graphs.length) return;
    const started = Date.now();
    const content = graphs.flatMap((g) => g.lines).join('\n') + '\n';
    const job = await importFiles(this.o.p, this.o.token, target.path, [{ name: 'data.nq', content }]);
    this.stats.imports++;
    this.stats.importMs += Date.now() - started;
    this.stats.importedBytes += content.length;
    if (job.status === 'finished') {
      for (const g of graphs) target.graphs.set(g.iri, g.hash);
      return;
    }
    if (graphs.length === 1) {
      const g = graphs[0]!;
      this.importErrors.set(`${g.iri} ${g.hash}`, `import of graph <${g.iri}> ${job.status}: ${job.error?.message ?? JSON.stringify(job).slice(0, 300)}`);
      return;
    }
    const half = Math.ceil(graphs.length / 2);
    await this.importInto(target, graphs.slice(0, half));
    await this.importInto(target, graphs.slice(half));
  }

  // --- HTTP ---------------------------------------------------------------------------------

  /** Sends a query to the dataset's endpoint; returns status, content type and body. */
  private async send(dataset: PoolDataset, d: TestDataset, queryString: string, baseIRI: string | undefined, accept: string) {
    const form = new URLSearchParams();
    form.append('query', baseIRI ? `BASE <${baseIRI}>\n${queryString}` : queryString);
    for (const g of d.defaultGraphs) form.append('default-graph-uri', g);
    for (const g of d.namedGraphs) form.append('named-graph-uri', g);
    this.stats.requests++;
    const res = await fetch(`${this.o.p.url}/datasets/${dataset.path}/sparql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.o.token}`, 'content-type': 'application/x-www-form-urlencoded', accept },
      body: form.toString(),
    });
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
  }

  private async run(data: RDF.Quad[], queryString: string, options: Record<string, any>, accept: string) {
    const d = await this.datasetOf(data, queryString, options.baseIRI);
    const dataset = await this.ensure(d.graphs);
    const res = await this.send(dataset, d, queryString, options.baseIRI, accept);
    if (res.status >= 500) this.faults.push({ test: this.currentTest, message: `HTTP ${res.status}: ${res.text.slice(0, 300)}` });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 500)}`);
    return res;
  }

  /**
   * Syntax tests: the endpoint must answer the query (on an empty dataset) or refuse it with 400.
   * Update syntax tests (`update` injected by the runner) run as updates on a fresh empty dataset,
   * where 400 means "does not parse" and 422 "parsed, but could not be carried out".
   */
  async parse(queryString: string, options: Record<string, any>): Promise<void> {
    if (options.update) {
      await this.update([], queryString, options);
      return;
    }
    await this.run([], queryString, options, (options.accept as string | undefined) ?? DEFAULT_ACCEPT);
  }

  // --- updates ------------------------------------------------------------------------------

  private scratchDatasets = 0;

  /**
   * Update evaluation: a fresh dataset per test (updates change it), the test's default graph
   * imported as triples (they go to the dataset's default graph, which is the update's default
   * graph) and its named graphs as quads; the update sent to the dataset endpoint as a form
   * (`update`, the test's base as a BASE line); the result read back as N-Quads from the
   * dataset's download, the default graph's quads given back without a graph name.
   */
  async update(data: RDF.Quad[], queryString: string, options: Record<string, any>): Promise<RDF.Quad[]> {
    const name = `${this.o.datasetPrefix ?? 'sparql'}-u${this.scratchDatasets++}`;
    const defaultGraph = (await this.o.p.createDataset(this.o.account, name, 'private', this.o.token)).defaultGraphName as string;
    const path = `${this.o.account}/${name}`;
    if (data.length) {
      const blank = (label: string) => `b${createHash('sha256').update(label).digest('hex').slice(0, 12)}`;
      const content = data
        .map((q) => {
          const triple = `${ntTerm(q.subject, blank)} ${ntTerm(q.predicate, blank)} ${ntTerm(q.object, blank)}`;
          return q.graph.termType === 'DefaultGraph' ? `${triple} .` : `${triple} ${ntTerm(q.graph, blank)} .`;
        })
        .join('\n');
      const job = await importFiles(this.o.p, this.o.token, path, [{ name: 'data.nq', content: `${content}\n` }]);
      this.stats.imports++;
      if (job.status !== 'finished') throw new Error(`the test data could not be imported: ${job.error?.message ?? job.status}`);
    }
    const form = new URLSearchParams();
    form.append('update', options.baseIRI ? `BASE <${options.baseIRI}>\n${queryString}` : queryString);
    this.stats.requests++;
    const res = await fetch(`${this.o.p.url}/datasets/${path}/sparql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.o.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const text = await res.text();
    if (res.status >= 500) this.faults.push({ test: this.currentTest, message: `HTTP ${res.status}: ${text.slice(0, 300)}` });
    // A syntax test passes when the update parsed: 422 is a well-formed update that could not be
    // carried out (DROP of a graph that does not exist, LOAD of an unreachable source).
    if (options.update && res.status === 422) return [];
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text.slice(0, 500)}`);
    const dump = await fetch(`${this.o.p.url}/datasets/${path}/download.nq`, { headers: { authorization: `Bearer ${this.o.token}` } });
    if (dump.status !== 200) throw new Error(`reading the dataset back failed: HTTP ${dump.status}`);
    const quads = await quadsOf(Util.parseRdfRaw('application/n-quads', 'urn:x-base:', Readable.from([await dump.text()])));
    return quads.map((q) => (q.graph.termType === 'NamedNode' && q.graph.value === defaultGraph ? DataFactory.quad(q.subject, q.predicate, q.object, DataFactory.defaultGraph()) : q));
  }

  async query(data: RDF.Quad[], queryString: string, options: Record<string, any>): Promise<IQueryResult> {
    const res = await this.run(data, queryString, options, (options.accept as string | undefined) ?? DEFAULT_ACCEPT);
    const mediaType = res.contentType.split(';')[0]!.trim().toLowerCase();
    const body = () => Readable.from([res.text]);
    if (['text/turtle', 'application/n-triples', 'application/n-quads', 'application/trig'].includes(mediaType)) {
      return new QueryResultQuads(await quadsOf(Util.parseRdfRaw(mediaType, options.baseIRI ?? 'urn:x-base:', body())));
    }
    if (!['application/sparql-results+json', 'application/sparql-results+xml', 'text/tab-separated-values'].includes(mediaType)) {
      throw new Error(`unexpected Content-Type "${res.contentType}" for Accept "${options.accept ?? DEFAULT_ACCEPT}"`);
    }
    const result = await TestCaseQueryEvaluationHandler.parseQueryResult(mediaType, `urn:x-response:${mediaType}`, body());
    // rdf-test-suite compares solution order only when both sides say so: ours is in the order received.
    if (result.type === 'bindings') result.checkOrder = Boolean(options.checkOrder);
    return result;
  }

  async queryResultFormat(data: RDF.Quad[], queryString: string, mediaType: string, options: Record<string, any>): Promise<NodeJS.ReadableStream> {
    const res = await this.run(data, queryString, options, mediaType);
    const got = res.contentType.split(';')[0]!.trim().toLowerCase();
    if (got !== mediaType) throw new Error(`asked for ${mediaType}, got Content-Type "${res.contentType}"`);
    return Readable.from([res.text]);
  }

  /**
   * For the protocol suite: an empty dataset of its own and a pass-through proxy on 127.0.0.1 in
   * front of its endpoint, which only adds the bearer token (the suite sends none, and updates
   * need a writer). Method, path suffix, query string, headers and body go through unchanged.
   */
  async startProtocolEndpoint(): Promise<IProtocolEndpoint> {
    const name = `${this.o.datasetPrefix ?? 'sparql'}-protocol`;
    await this.o.p.createDataset(this.o.account, name, 'private', this.o.token);
    const target = `${this.o.p.url}/datasets/${this.o.account}/${name}/sparql`;
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        try {
          const url = new URL(req.url ?? '/', 'http://proxy');
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(req.headers)) {
            if (['host', 'connection', 'content-length', 'transfer-encoding', 'authorization'].includes(k) || v === undefined) continue;
            headers[k] = Array.isArray(v) ? v.join(', ') : v;
          }
          headers.authorization = `Bearer ${this.o.token}`;
          const body = chunks.length && req.method !== 'GET' && req.method !== 'HEAD' ? Buffer.concat(chunks) : undefined;
          const upstream = await fetch(`${target}${url.pathname.replace(/^\/sparql/, '')}${url.search}`, { method: req.method, headers, body, redirect: 'manual' });
          const out: Record<string, string> = {};
          upstream.headers.forEach((v, k) => {
            if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k)) out[k] = v;
          });
          res.writeHead(upstream.status, out);
          res.end(Buffer.from(await upstream.arrayBuffer()));
        } catch (e) {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`proxy error: ${(e as Error).message}`);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { endpoint: `http://127.0.0.1:${port}/sparql`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }
}
