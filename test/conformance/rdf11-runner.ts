/**
 * W3C RDF 1.1 parser conformance suites (N-Triples, N-Quads, Turtle, TriG, RDF/XML), run through
 * the platform's import and export HTTP routes, not the parser alone:
 *
 * - positive evaluation tests: the action file is imported (multipart job route) into an emptied
 *   dataset with `baseIRI` = the test's action URL and a fixed `defaultGraphName`, exported with
 *   `download.nq`, and the export must be isomorphic to the expected result (the expected default
 *   graph is mapped to the `defaultGraphName` given);
 * - positive syntax tests: the import job finishes;
 * - negative syntax / evaluation tests: the job fails with a message naming the uploaded file, and
 *   the dataset keeps exactly the graphs it had (a small known "sentinel" graph, imported once per
 *   worker; the failing import even asks to overwrite it).
 *
 * Blank node graph names: the platform stores graphs under IRIs, and names the graph of a blank
 * node label `_:L` `<defaultGraphName>/<L'>` (L' = L with the file's blank node prefix). For the
 * comparison, exported graph IRIs under `<defaultGraphName>/` are turned back into blank nodes.
 *
 * Workers (default 4) each own one dataset, emptied with `DELETE .../graphs` between tests.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import N3 from 'n3';
import { isomorphic, sortedNQuads } from '../../functions/rdf/isomorphic.js';
import type { NtQuad } from '../../functions/rdf/nt.js';
import type { TestPlatform } from '../support/platform.js';

export const SUITES = ['rdf-n-triples', 'rdf-n-quads', 'rdf-turtle', 'rdf-trig', 'rdf-xml'] as const;
export type Suite = (typeof SUITES)[number];

export const DEFAULT_RDF11_DIR = '/work/shared/conformance/rdf-tests/rdf/rdf11';
/** Where the test suites are published; test IRIs in the manifests resolve below it. */
export const PUBLISHED_BASE = 'https://w3c.github.io/rdf-tests/rdf/rdf11/';
/** The graph for triples without one; no test uses this IRI. */
export const DEFAULT_GRAPH = 'https://conformance.example/graphs/default';
const SENTINEL_NT = '<https://conformance.example/s> <https://conformance.example/p> "sentinel" .\n<https://conformance.example/s> <https://conformance.example/p> _:b .\n';
const SENTINEL_GRAPH = DEFAULT_GRAPH;

const EXTENSION: Record<Suite, string> = { 'rdf-n-triples': 'nt', 'rdf-n-quads': 'nq', 'rdf-turtle': 'ttl', 'rdf-trig': 'trig', 'rdf-xml': 'rdf' };

const MF = 'http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#';
const RDFT = 'http://www.w3.org/ns/rdftest#';
const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';

export type TestKind = 'eval' | 'positiveSyntax' | 'negative';

export interface ConformanceTest {
  suite: Suite;
  /** mf:name. */
  name: string;
  /** rdft:TestTurtleEval etc., without namespace. */
  type: string;
  kind: TestKind;
  /** The action's published URL: the base IRI of the import. */
  actionUrl: string;
  actionPath: string;
  resultPath?: string;
  approval?: string;
}

export interface TestFailure {
  name: string;
  type: string;
  reason: string;
}

export interface SuiteResult {
  suite: Suite;
  total: number;
  passed: number;
  failed: TestFailure[];
  /**
   * Tests whose import hit an internal server error and passed on a retry: a transient platform
   * fault (not a conformance failure), reported so that it is not hidden.
   */
  retried: TestFailure[];
}

export interface RunOptions {
  dir?: string;
  suites?: readonly Suite[];
  /** Tests run at once (one dataset each). */
  concurrency?: number;
  /** Only tests whose name matches. */
  filter?: (t: ConformanceTest) => boolean;
  /** Account to create the datasets in (created if missing). */
  account?: string;
  log?: (line: string) => void;
}

// ---------------------------------------------------------------------------------------------
// Manifests

function kindOf(type: string): TestKind | null {
  if (/Eval$/.test(type) && !/NegativeEval$/.test(type)) return 'eval';
  if (/PositiveSyntax$/.test(type)) return 'positiveSyntax';
  if (/Negative(Syntax|Eval)$/.test(type)) return 'negative';
  return null;
}

/** The tests listed in `mf:entries` of one suite's manifest, in manifest order. */
export async function loadSuite(suite: Suite, dir = DEFAULT_RDF11_DIR): Promise<ConformanceTest[]> {
  const folder = join(dir, suite);
  const suiteBase = `${PUBLISHED_BASE}${suite}/`;
  const text = await readFile(join(folder, 'manifest.ttl'), 'utf8');
  const store = new N3.Store(new N3.Parser({ format: 'Turtle', baseIRI: `${suiteBase}manifest.ttl` }).parse(text));
  const one = (s: N3.Term, p: string): N3.Term | undefined => store.getObjects(s, N3.DataFactory.namedNode(p), null)[0];
  const manifest = store.getSubjects(N3.DataFactory.namedNode(`${RDF}type`), N3.DataFactory.namedNode(`${MF}Manifest`), null)[0];
  if (!manifest) throw new Error(`${suite}: no mf:Manifest`);
  const assumed = one(manifest, `${MF}assumedTestBase`)?.value;
  if (assumed !== undefined && assumed !== suiteBase) throw new Error(`${suite}: mf:assumedTestBase is ${assumed}, expected ${suiteBase}`);
  const entries: N3.Term[] = [];
  for (let list = one(manifest, `${MF}entries`); list && list.value !== `${RDF}nil`; list = one(list, `${RDF}rest`)) {
    const first = one(list, `${RDF}first`);
    if (first) entries.push(first);
  }
  const local = (url: string): string => {
    if (!url.startsWith(suiteBase)) throw new Error(`${suite}: ${url} is not below ${suiteBase}`);
    return join(folder, decodeURIComponent(url.slice(suiteBase.length)));
  };
  const tests: ConformanceTest[] = [];
  for (const entry of entries) {
    const typeIri = store.getObjects(entry, N3.DataFactory.namedNode(`${RDF}type`), null).map((t) => t.value).find((t) => t.startsWith(RDFT));
    const type = typeIri?.slice(RDFT.length) ?? '';
    const kind = kindOf(type);
    const name = one(entry, `${MF}name`)?.value ?? entry.value.replace(/^.*#/, '');
    const action = one(entry, `${MF}action`)?.value;
    if (!kind || !action) throw new Error(`${suite}: test ${name} has type "${type}" / action ${action}: not understood`);
    const result = one(entry, `${MF}result`)?.value;
    if (kind === 'eval' && !result) throw new Error(`${suite}: eval test ${name} has no mf:result`);
    tests.push({
      suite,
      name,
      type,
      kind,
      actionUrl: action,
      actionPath: local(action),
      ...(kind === 'eval' && result ? { resultPath: local(result) } : {}),
      approval: one(entry, `${RDFT}approval`)?.value.replace(RDFT, ''),
    });
  }
  return tests;
}

// ---------------------------------------------------------------------------------------------
// Comparison

/** Comparable form of a term (not necessarily N-Triples syntax: only equality matters). */
function termKey(t: N3.Term): string {
  switch (t.termType) {
    case 'NamedNode': return `<${t.value}>`;
    case 'BlankNode': return `_:${t.value}`;
    case 'Literal': {
      const lit = t as N3.Literal;
      if (lit.language) return `${JSON.stringify(lit.value)}@${lit.language.toLowerCase()}`;
      if (lit.datatype.value === XSD_STRING) return JSON.stringify(lit.value);
      return `${JSON.stringify(lit.value)}^^<${lit.datatype.value}>`;
    }
    default: throw new Error(`unexpected term type ${t.termType}`);
  }
}

/**
 * Quads of N-Triples / N-Quads text: default graph → `<DEFAULT_GRAPH>`; with `unskolemize`,
 * graph IRIs below `<DEFAULT_GRAPH>/` → blank nodes of that label.
 */
export function quadsOf(text: string, format: 'N-Triples' | 'N-Quads', unskolemize = false): NtQuad[] {
  const skolem = `${DEFAULT_GRAPH}/`;
  return new N3.Parser({ format, blankNodePrefix: '' }).parse(text).map((q) => {
    let graph: string;
    if (q.graph.termType === 'DefaultGraph') graph = `<${DEFAULT_GRAPH}>`;
    else if (unskolemize && q.graph.termType === 'NamedNode' && q.graph.value.startsWith(skolem)) graph = `_:${q.graph.value.slice(skolem.length)}`;
    else graph = termKey(q.graph);
    return { subject: termKey(q.subject), predicate: termKey(q.predicate), object: termKey(q.object), graph };
  });
}

function diff(expected: NtQuad[], got: NtQuad[]): string {
  const e = sortedNQuads(expected);
  const g = sortedNQuads(got);
  const show = (lines: string[]) => (lines.length > 6 ? [...lines.slice(0, 6), `… ${lines.length - 6} more`] : lines).join(' | ');
  const onlyE = e.filter((l) => !g.includes(l) && !l.includes('_:'));
  const onlyG = g.filter((l) => !e.includes(l) && !l.includes('_:'));
  return `not isomorphic: expected ${e.length} quads, got ${g.length}` +
    (onlyE.length ? `; missing (ground): ${show(onlyE)}` : '') +
    (onlyG.length ? `; unexpected (ground): ${show(onlyG)}` : '') +
    (!onlyE.length && !onlyG.length ? `; expected: ${show(e)}; got: ${show(g)}` : '');
}

// ---------------------------------------------------------------------------------------------
// HTTP

interface Http {
  p: TestPlatform;
  token: string;
}

async function call(http: Http, method: string, path: string): Promise<{ status: number; body: any; text: string }> {
  const res = await http.p.request(method, path, { token: http.token });
  return res;
}

/** Internal errors are retried (a transient platform fault); each retry is noted in `retries`. */
const MAX_ATTEMPTS = 3;
const INTERNAL = /internal (server )?error/i;

async function importFile(http: Http, dataset: string, fileName: string, content: Buffer, fields: Record<string, string>, retries: string[] = []): Promise<any> {
  for (let attempt = 1; ; attempt++) {
    const job = await importOnce(http, dataset, fileName, content, fields);
    const transient = (job.status === 'refused' && job.httpStatus >= 500) || (job.status === 'error' && INTERNAL.test(job.error?.message ?? ''));
    if (!transient || attempt >= MAX_ATTEMPTS) return job;
    retries.push(`attempt ${attempt}: ${job.status === 'refused' ? `upload answered ${job.httpStatus}` : 'job failed'}: ${job.error?.message}`);
  }
}

async function importOnce(http: Http, dataset: string, fileName: string, content: Buffer, fields: Record<string, string>): Promise<any> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([content as BlobPart], { type: 'application/octet-stream' }), fileName);
  const res = await fetch(`${http.p.url}/datasets/${dataset}/jobs`, { method: 'POST', headers: { authorization: `Bearer ${http.token}` }, body: form });
  const text = await res.text();
  let job: any;
  try {
    job = JSON.parse(text);
  } catch {
    job = { message: text };
  }
  if (res.status !== 201) return { status: 'refused', httpStatus: res.status, error: { message: job.message ?? text } };
  const started = Date.now();
  for (let delay = 5; ; delay = Math.min(delay * 2, 50)) {
    const polled = await call(http, 'GET', `/datasets/${dataset}/jobs/${job.jobId}`);
    if (['finished', 'error', 'canceled'].includes(polled.body?.status)) return polled.body;
    if (Date.now() - started > 30_000) throw new Error(`job ${job.jobId} (${fileName}) did not end within 30 s`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

async function clearGraphs(http: Http, dataset: string): Promise<void> {
  const res = await call(http, 'DELETE', `/datasets/${dataset}/graphs`);
  if (res.status !== 204) throw new Error(`clearing ${dataset}: ${res.status} ${res.text}`);
}

interface DatasetState {
  graphs: unknown;
  statements: unknown;
  graphCount: unknown;
}

async function stateOf(http: Http, dataset: string): Promise<DatasetState> {
  const graphs = await call(http, 'GET', `/datasets/${dataset}/graphs?limit=100`);
  const ds = await call(http, 'GET', `/datasets/${dataset}`);
  if (graphs.status !== 200 || ds.status !== 200) throw new Error(`state of ${dataset}: ${graphs.status}/${ds.status}`);
  return { graphs: graphs.body, statements: ds.body.statements, graphCount: ds.body.graphCount };
}

// ---------------------------------------------------------------------------------------------
// Running

class Worker {
  /** The sentinel state, when the dataset is known to hold just the sentinel graph. */
  private sentinel: DatasetState | null = null;

  constructor(
    private readonly http: Http,
    readonly dataset: string,
  ) {}

  /** Runs one test: null when it passes, else why not. Retried imports are noted in `retries`. */
  async run(t: ConformanceTest, retries: string[]): Promise<string | null> {
    const fileName = `${t.name}.${EXTENSION[t.suite]}`;
    const content = await readFile(t.actionPath);
    const fields = { defaultGraphName: DEFAULT_GRAPH, baseIRI: t.actionUrl };
    if (t.kind === 'negative') return this.runNegative(t, fileName, content, retries);

    this.sentinel = null;
    await clearGraphs(this.http, this.dataset);
    const job = await importFile(this.http, this.dataset, fileName, content, fields, retries);
    if (job.status !== 'finished') return `import ${job.status}: ${job.error?.message ?? JSON.stringify(job)}`;
    if (t.kind === 'positiveSyntax') return null;

    const exported = await call(this.http, 'GET', `/datasets/${this.dataset}/download.nq`);
    if (exported.status !== 200) return `export answered ${exported.status}: ${exported.text.slice(0, 300)}`;
    let got: NtQuad[];
    try {
      got = quadsOf(exported.text, 'N-Quads', true);
    } catch (e) {
      return `the export is not valid N-Quads: ${(e as Error).message}`;
    }
    const expectedText = await readFile(t.resultPath!, 'utf8');
    const expected = quadsOf(expectedText, /\.nq$/.test(t.resultPath!) ? 'N-Quads' : 'N-Triples');
    let same: boolean;
    try {
      same = isomorphic(expected, got);
    } catch (e) {
      return `isomorphism check failed: ${(e as Error).message}`;
    }
    return same ? null : diff(expected, got);
  }

  private async runNegative(t: ConformanceTest, fileName: string, content: Buffer, retries: string[]): Promise<string | null> {
    if (!this.sentinel) {
      await clearGraphs(this.http, this.dataset);
      const job = await importFile(this.http, this.dataset, 'sentinel.nt', Buffer.from(SENTINEL_NT), { defaultGraphName: SENTINEL_GRAPH }, retries);
      if (job.status !== 'finished') throw new Error(`sentinel import: ${job.status} ${job.error?.message}`);
      this.sentinel = await stateOf(this.http, this.dataset);
    }
    const before = this.sentinel;
    // overwriteAll: a failed import that wrote anything would replace the sentinel graph.
    const job = await importFile(this.http, this.dataset, fileName, content, { defaultGraphName: SENTINEL_GRAPH, baseIRI: t.actionUrl, overwriteAll: 'true' }, retries);
    const after = await stateOf(this.http, this.dataset);
    const unchanged = JSON.stringify(after) === JSON.stringify(before);
    if (!unchanged) this.sentinel = null;
    if (job.status === 'finished') return 'the import finished: the input was accepted';
    if (job.status !== 'error') return `the import ended ${job.status}: ${JSON.stringify(job).slice(0, 300)}`;
    const message: unknown = job.error?.message;
    if (typeof message !== 'string' || message.trim() === '') return 'the failed job has no error message';
    if (!message.includes(fileName)) return `the error message does not name ${fileName}: ${message}`;
    if (!unchanged) return `the dataset changed: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`;
    return null;
  }
}

/** Loads the suites and runs their tests against `p`; prints and returns per-suite results. */
export async function runRdf11(p: TestPlatform, options: RunOptions = {}): Promise<SuiteResult[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const suites = options.suites ?? SUITES;
  const concurrency = options.concurrency ?? 4;
  const account = options.account ?? 'conformance';
  const all: ConformanceTest[] = [];
  for (const suite of suites) all.push(...(await loadSuite(suite, options.dir)));
  const tests = options.filter ? all.filter(options.filter) : all;

  let token: string;
  const exists = await p.request('GET', `/accounts/${account}`, { token: p.adminToken });
  token = exists.status === 200 ? await p.createToken(account, p.adminToken) : await p.createUser(account);
  const http: Http = { p, token };
  const workers: Worker[] = [];
  for (let i = 0; i < Math.max(1, Math.min(concurrency, tests.length)); i++) {
    const name = `rdf11-w${i}-${Date.now().toString(36)}`;
    await p.createDataset(account, name, 'private', token);
    workers.push(new Worker(http, `${account}/${name}`));
  }

  // Positive tests first, then negative ones: each worker sets up its sentinel graph once.
  const queue = [...tests.filter((t) => t.kind !== 'negative'), ...tests.filter((t) => t.kind === 'negative')];
  const outcome = new Map<ConformanceTest, string | null>();
  const retried = new Map<ConformanceTest, string[]>();
  let next = 0;
  await Promise.all(
    workers.map(async (w) => {
      while (next < queue.length) {
        const t = queue[next++]!;
        const retries: string[] = [];
        try {
          outcome.set(t, await w.run(t, retries));
        } catch (e) {
          outcome.set(t, `runner error: ${(e as Error).message}`);
        }
        if (retries.length) retried.set(t, retries);
      }
    }),
  );

  const results: SuiteResult[] = [];
  for (const suite of suites) {
    const own = tests.filter((t) => t.suite === suite);
    const failed = own.flatMap((t) => {
      const reason = outcome.get(t);
      return reason ? [{ name: t.name, type: t.type, reason }] : [];
    });
    const again = own.flatMap((t) => (retried.has(t) ? [{ name: t.name, type: t.type, reason: retried.get(t)!.join('; ') }] : []));
    results.push({ suite, total: own.length, passed: own.length - failed.length, failed, retried: again });
  }
  for (const r of results) {
    log(`${r.suite.padEnd(14)} ${String(r.passed).padStart(4)} passed, ${String(r.failed.length).padStart(3)} failed (of ${r.total})`);
    for (const x of r.retried) log(`  retried after an internal error: ${x.name}: ${x.reason}`);
  }
  return results;
}
