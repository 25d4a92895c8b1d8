/**
 * Runs W3C SPARQL test manifests with rdf-test-suite against the platform's HTTP endpoint (see
 * http-engine.ts), offline: manifest URLs under PUBLISHED_BASE are read from the local copy of the
 * suites. Results are grouped per manifest (one folder of the suite).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as RDF from '@rdfjs/types';
import { ManifestLoader, Util, type IManifest, type ITestCase } from 'rdf-test-suite';
import type { TestPlatform } from '../../support/platform.js';
import { DEFAULT_ACCEPT, HttpSparqlEngine, type TestDataset } from './http-engine.js';

/** `../shared/conformance/rdf-tests/sparql/` beside the repository (as on CI), else the workplace's copy. */
export const DEFAULT_SPARQL_DIR: string | undefined = [
  fileURLToPath(new URL('../../../../shared/conformance/rdf-tests/sparql/', import.meta.url)),
  '/work/shared/conformance/rdf-tests/sparql/',
].find((dir) => existsSync(join(dir, 'sparql11/manifest-all.ttl')));
/** Where the suites are published; manifests and test IRIs live below it. */
export const PUBLISHED_BASE = 'https://w3c.github.io/rdf-tests/sparql/';

export interface Suite {
  id: string;
  /** Manifest path below PUBLISHED_BASE. */
  manifest: string;
  /** mf:includedSpecifications entry to run (all of the manifest when absent). */
  specification?: string;
}

export const SUITES = {
  'sparql11-query': { id: 'sparql11-query', manifest: 'sparql11/manifest-all.ttl', specification: 'http://www.w3.org/TR/sparql11-query/' },
  'sparql11-results-json': { id: 'sparql11-results-json', manifest: 'sparql11/manifest-all.ttl', specification: 'http://www.w3.org/TR/sparql11-results-json/' },
  'sparql11-results-csv-tsv': { id: 'sparql11-results-csv-tsv', manifest: 'sparql11/manifest-all.ttl', specification: 'http://www.w3.org/TR/sparql11-results-csv-tsv/' },
  'sparql11-protocol': { id: 'sparql11-protocol', manifest: 'sparql11/manifest-all.ttl', specification: 'http://www.w3.org/TR/sparql11-protocol/' },
  'sparql11-update': { id: 'sparql11-update', manifest: 'sparql11/manifest-all.ttl', specification: 'http://www.w3.org/TR/sparql11-update/' },
  sparql10: { id: 'sparql10', manifest: 'sparql10/manifest.ttl' },
} as const satisfies Record<string, Suite>;
export type SuiteId = keyof typeof SUITES;

export interface TestOutcome {
  suite: SuiteId;
  /** Folder of the test's manifest below PUBLISHED_BASE, e.g. `sparql11/aggregates`. */
  manifest: string;
  /** `<manifest>#<local name of the test IRI>`, e.g. `sparql11/aggregates#agg01`. */
  test: string;
  ok: boolean;
  /** Why it failed (first lines of the error). */
  reason?: string;
  ms: number;
}

export interface ManifestSummary {
  suite: SuiteId;
  manifest: string;
  total: number;
  passed: number;
}

export interface RunOptions {
  suites: readonly SuiteId[];
  /** Local folder holding PUBLISHED_BASE's content. */
  dir?: string;
  /** Tests run at once. */
  concurrency?: number;
  /** Per-test time limit. */
  timeoutMs?: number;
  /** Only tests whose key matches. */
  filter?: (testKey: string) => boolean;
  account?: string;
}

/** rdf-test-suite's extension table lacks these: tests whose files use them would be dropped. */
export function patchExtensions(): void {
  // A protected static in the typings, but the documented way to extend the table.
  Object.assign((Util as unknown as { extensionToContentType: Record<string, string> }).extensionToContentType, {
    rdf: 'application/rdf+xml',
    trig: 'application/trig',
    srx: 'application/sparql-results+xml',
    srj: 'application/sparql-results+json',
  });
}

const TABULAR_BY_EXTENSION: Record<string, string> = {
  srx: 'application/sparql-results+xml',
  srj: 'application/sparql-results+json',
  tsv: 'text/tab-separated-values',
};
const GRAPH_BY_EXTENSION: Record<string, string> = { ttl: 'text/turtle', nt: 'application/n-triples' };

/**
 * The Accept header for a test: the format of its expected result file (SPARQL XML, JSON, TSV for
 * tables; Turtle for graphs) with a lower-q fallback for the other kind of query form, since a
 * result in RDF (`.ttl`, `.rdf`) may be a table in the DAWG result-set vocabulary or a graph.
 */
export function acceptFor(resultUrl: string | undefined): string {
  const ext = resultUrl?.replace(/^.*\./, '').toLowerCase() ?? '';
  if (TABULAR_BY_EXTENSION[ext]) return `${TABULAR_BY_EXTENSION[ext]}, application/n-triples;q=0.9`;
  if (GRAPH_BY_EXTENSION[ext]) return `${GRAPH_BY_EXTENSION[ext]}, application/sparql-results+json;q=0.9`;
  return DEFAULT_ACCEPT;
}

interface Entry {
  suite: SuiteId;
  manifest: string;
  test: ITestCase<any> & Record<string, any>;
}

function collect(suite: SuiteId, manifest: IManifest, out: Entry[]): void {
  const folder = manifest.uri.startsWith(PUBLISHED_BASE) ? manifest.uri.slice(PUBLISHED_BASE.length).replace(/\/[^/]*$/, '') : manifest.uri;
  for (const test of manifest.testEntries ?? []) out.push({ suite, manifest: folder, test: test as Entry['test'] });
  for (const sub of manifest.subManifests ?? []) collect(suite, sub, out);
}

/** Test IRIs use the suites' old base (http://www.w3.org/2009/sparql/docs/tests/...): key by folder and name. */
const keyOf = (entry: Entry) => `${entry.manifest}#${entry.test.uri.replace(/^.*#/, '')}`;

/** The error text (rdf-test-suite includes the query, expected and actual results), capped. */
function reasonOf(e: unknown): string {
  const text = String((e as Error)?.message ?? e);
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
}

export interface RunResult {
  outcomes: TestOutcome[];
  manifests: ManifestSummary[];
  engine: HttpSparqlEngine;
}

export async function runSparqlSuites(p: TestPlatform, options: RunOptions): Promise<RunResult> {
  patchExtensions();
  const dir = options.dir ?? DEFAULT_SPARQL_DIR;
  if (!dir) throw new Error('the W3C SPARQL suites are not found (expected ../shared/conformance/rdf-tests/sparql/ beside the repository)');
  const urlToFileMappings = [{ url: PUBLISHED_BASE, path: dir.endsWith('/') ? dir : `${dir}/` }];
  const account = options.account ?? 'sparql-conformance';
  const exists = await p.request('GET', `/accounts/${account}`, { token: p.adminToken });
  const token = exists.status === 200 ? await p.createToken(account, p.adminToken) : await p.createUser(account);
  const engine = new HttpSparqlEngine({ p, token, account, datasetPrefix: `w3c-${Date.now().toString(36)}`, urlToFileMappings });

  // Manifests (each file loaded once), then the tests of each suite in manifest order.
  const loaded = new Map<string, Promise<IManifest>>();
  const load = (path: string) => {
    if (!loaded.has(path)) loaded.set(path, new ManifestLoader().from(`${PUBLISHED_BASE}${path}`, { urlToFileMappings }));
    return loaded.get(path)!;
  };
  const entries: Entry[] = [];
  for (const id of options.suites) {
    const suite: Suite = SUITES[id];
    const manifest = await load(suite.manifest);
    const selected = suite.specification ? manifest.specifications?.[suite.specification] : manifest;
    if (!selected) throw new Error(`${suite.manifest} has no specification ${suite.specification}`);
    collect(id, selected, entries);
  }
  const chosen = options.filter ? entries.filter((e) => options.filter!(keyOf(e))) : entries;

  // Every graph of every test, in as few import jobs as possible, before the first query.
  const datasets: TestDataset[] = [];
  for (const { test } of chosen) {
    if (Array.isArray(test.queryData)) datasets.push(await engine.datasetOf(test.queryData as RDF.Quad[], test.queryString, test.baseIRI));
  }
  await engine.preload(datasets);

  const needsProtocol = chosen.some((e) => e.suite === 'sparql11-protocol');
  const protocol = needsProtocol ? await engine.startProtocolEndpoint() : undefined;
  const outcomes: TestOutcome[] = new Array(chosen.length);
  const timeoutMs = options.timeoutMs ?? 60_000;
  // Protocol tests share one endpoint and reset it: they run one at a time, after the rest.
  const order = [...chosen.keys()].sort((a, b) => Number(chosen[a]!.suite === 'sparql11-protocol') - Number(chosen[b]!.suite === 'sparql11-protocol'));
  let next = 0;
  const worker = async (serial: boolean) => {
    while (next < order.length) {
      const i = order[next]!;
      const entry = chosen[i]!;
      if (!serial && entry.suite === 'sparql11-protocol') return;
      next++;
      const { test } = entry;
      const key = keyOf(entry);
      const inject: Record<string, unknown> = { accept: acceptFor(test.resultSource?.url) };
      if (entry.suite === 'sparql11-protocol') inject.protocolEndpoint = protocol!.endpoint;
      if (entry.suite === 'sparql11-update') inject.update = true;
      const started = Date.now();
      const faultsBefore = engine.faults.length;
      let reason: string | undefined;
      let timer: NodeJS.Timeout | undefined;
      engine.currentTest = key;
      try {
        await Promise.race([
          test.test(engine, inject),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
      } catch (e) {
        reason = reasonOf(e);
      } finally {
        clearTimeout(timer);
      }
      // A server error counts as a failure even where rdf-test-suite expects "an error".
      const faults = engine.faults.slice(faultsBefore).filter((f) => f.test === key);
      if (!reason && faults.length) reason = `the endpoint failed: ${faults.map((f) => f.message).join('; ')}`;
      outcomes[i] = { suite: entry.suite, manifest: entry.manifest, test: key, ok: !reason, ...(reason ? { reason } : {}), ms: Date.now() - started };
    }
  };
  try {
    const concurrency = Math.max(1, options.concurrency ?? 3);
    await Promise.all(Array.from({ length: concurrency }, () => worker(false)));
    await worker(true);
  } finally {
    await protocol?.close();
  }

  const manifests: ManifestSummary[] = [];
  for (const o of outcomes) {
    let m = manifests.find((x) => x.suite === o.suite && x.manifest === o.manifest);
    if (!m) manifests.push((m = { suite: o.suite, manifest: o.manifest, total: 0, passed: 0 }));
    m.total++;
    if (o.ok) m.passed++;
  }
  return { outcomes, manifests, engine };
}

/** Per-manifest and per-suite lines for the log. */
export function report(result: RunResult, seconds: number): string {
  const lines: string[] = [];
  const suites = [...new Set(result.manifests.map((m) => m.suite))];
  for (const suite of suites) {
    const own = result.manifests.filter((m) => m.suite === suite);
    const total = own.reduce((n, m) => n + m.total, 0);
    const passed = own.reduce((n, m) => n + m.passed, 0);
    lines.push(`${suite}: ${passed}/${total} passed`);
    for (const m of own) lines.push(`  ${m.manifest.padEnd(40)} ${String(m.passed).padStart(4)}/${m.total}${m.passed < m.total ? `  (${m.total - m.passed} failed)` : ''}`);
  }
  const s = result.engine.stats;
  lines.push(
    `${result.outcomes.length} tests in ${seconds.toFixed(1)} s; test data: ${s.imports} import job(s), ${(s.importedBytes / 1024).toFixed(0)} KiB in ${(s.importMs / 1000).toFixed(1)} s; ${s.requests} SPARQL requests`,
  );
  return lines.join('\n');
}
