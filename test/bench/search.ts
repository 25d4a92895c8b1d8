/**
 * Text search services (issue 15), `BENCH_ONLY=search`:
 *
 * - data: generate.ts's dataset (BENCH_STATEMENTS, default 1,000,000; ≈ 97k subjects with names,
 *   labels in two languages, descriptions, dates, numbers, links), imported over tus.
 * - indexing through HTTP: `POST …/services {"type": "elasticSearch"}` until `running` (read the
 *   graphs, documents per subject, MiniSearch, the index saved as a gzip blob). Next to it, the bare
 *   library in-process on the same file: parse and group into documents, then MiniSearch `addAll`
 *   (both the whole and `addAll` alone are printed).
 * - queries: a mix of 10 Query DSL searches (match, fuzzy match, phrase, multi_match,
 *   simple_query_string, term, range over dates, bool with filter, sort, terms aggregation), each
 *   POSTed to `_search` over one keep-alive connection, interleaved with the same compiled request
 *   on the same engine in-process (MiniSearch and our DSL evaluation, the index loaded from the
 *   service's blob). Median and p99 of the whole mix, per side.
 *
 * Aims (from the issue): indexing within 2× of the bare library, queries within 1.3×. Prints
 * figures; asserts nothing.
 */
import { createReadStream } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import MiniSearch from 'minisearch';
import { MiniSearchIndexes } from '../../functions/adapters/common/minisearch/minisearch-indexes.js';
import { defaultLogger } from '../../functions/adapters/common/powertools-logger.js';
import { compileSearch } from '../../functions/domain/search/query-dsl.js';
import type { BlobInfo, BlobStore } from '../../functions/ports/blob-store.js';
import { parseNtLine } from '../../functions/rdf/nt.js';
import { aimText, apiFor, int, ms, perSecond, ratioFixed, secs, sleep, stats, tusImport } from './bench-http.js';
import type { RunningPlatform } from './embedded-server.js';
import { generateDataset } from './generate.js';

const ACCOUNT = 'bench-search';
const DATASET = 'data';
const SERVICE = 'text';
const INDEX_AIM = 2;
const QUERY_AIM = 1.3;
const RUNS = Number(process.env.BENCH_SEARCH_RUNS ?? 30);
const WARMUP = 3;

const F = {
  name: 'https://schema org/name',
  label: 'http://www w3 org/2000/01/rdf-schema#label',
  description: 'https://schema org/description',
  type: 'http://www w3 org/1999/02/22-rdf-syntax-ns#type',
  datePublished: 'https://schema org/datePublished',
  pages: 'https://schema org/numberOfPages',
  modified: 'https://schema org/dateModified',
};

export const SEARCH_QUERIES: { name: string; body: Record<string, unknown> }[] = [
  { name: 'match name', body: { query: { match: { [F.name]: 'Emma Visser' } } } },
  { name: 'fuzzy match', body: { query: { match: { [F.name]: { query: 'Lote Bakkr', fuzziness: 'AUTO' } } } } },
  { name: 'phrase', body: { query: { match_phrase: { [F.description]: 'linked data' } } } },
  { name: 'multi_match', body: { query: { multi_match: { query: 'archive history', fields: [F.description, F.label] } } } },
  { name: 'simple_query_string', body: { query: { simple_query_string: { query: '"Quiet Archive" + -maps' } } } },
  { name: 'term type', body: { query: { term: { [`${F.type}.keyword`]: 'https://schema.org/Book' } }, size: 10 } },
  { name: 'range dates', body: { query: { range: { [F.datePublished]: { gte: '1900-01-01', lt: '1901-01-01' } } } } },
  { name: 'bool + filter', body: { query: { bool: { must: [{ match: { [F.description]: 'museum' } }], filter: [{ range: { [F.pages]: { gte: 100, lte: 200 } } }] } } } },
  { name: 'sort by date', body: { query: { match: { [F.description]: 'heritage' } }, sort: [{ [F.modified]: 'desc' }], size: 10 } },
  { name: 'terms aggregation', body: { query: { match: { [F.description]: 'research' } }, size: 0, aggs: { types: { terms: { field: F.type, size: 5 } } } } },
];

/** A blob store in memory (the in-process side reads the service's index blob through it). */
class MemoryBlobs implements BlobStore {
  readonly blobs = new Map<string, Buffer>();
  async put(key: string, body: unknown): Promise<BlobInfo> {
    const buf = Buffer.isBuffer(body) ? body : Buffer.from(body as string);
    this.blobs.set(key, buf);
    return { key, size: buf.length, lastModified: new Date() };
  }
  async get(key: string): Promise<Readable | null> {
    const buf = this.blobs.get(key);
    if (!buf) return null;
    const { Readable: R } = await import('node:stream');
    return R.from([buf]);
  }
  async head(): Promise<BlobInfo | null> {
    return null;
  }
  async delete(key: string): Promise<void> {
    this.blobs.delete(key);
  }
  async *list(): AsyncIterable<BlobInfo> {}
}

function post(agent: Agent, url: string, body: string, headers: Record<string, string>): Promise<{ status: number; ms: number; text: string }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = httpRequest(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function getFresh(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`GET ${url}: ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The bare library: parse the N-Triples file, group by subject, MiniSearch addAll over the text fields. */
async function bareIndex(file: string): Promise<{ totalMs: number; addAllMs: number; documents: number }> {
  const start = performance.now();
  const docs = new Map<string, Record<string, string[]>>();
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    const q = parseNtLine(line);
    const field = q.predicate.slice(1, -1).replaceAll('.', ' ');
    const value = q.object.charCodeAt(0) === 34 ? q.object.slice(1, q.object.lastIndexOf('"')) : q.object.slice(1, -1);
    let doc = docs.get(q.subject);
    if (!doc) docs.set(q.subject, (doc = {}));
    (doc[field] ??= []).push(value);
  }
  const fields = [...new Set([...docs.values()].flatMap((d) => Object.keys(d)))];
  const list = [...docs.values()].map((d, i) => ({ i, d }));
  const addStart = performance.now();
  const mini = new MiniSearch<{ i: number; d: Record<string, string[]> }>({ idField: 'i', fields, storeFields: [], extractField: (doc, f) => (f === 'i' ? doc.i : doc.d[f]?.join('\n')) });
  mini.addAll(list);
  const end = performance.now();
  return { totalMs: end - start, addAllMs: end - addStart, documents: list.length };
}

export async function benchSearch(platform: RunningPlatform, options: { statements?: number; log?: (line: string) => void } = {}): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const n = options.statements ?? Number(process.env.BENCH_STATEMENTS ?? 1_000_000);
  const api = apiFor(platform);
  log(`# Text search: indexing ${int(n)} statements and a mix of 10 Query DSL searches, through HTTP next to the library in-process`);
  const data = await generateDataset(n);
  try {
    await api.json('POST', '/accounts', { type: 'org', accountName: ACCOUNT });
    await api.json('POST', `/datasets/${ACCOUNT}`, { name: DATASET, accessLevel: 'public' });
    const job = await tusImport(api, `${ACCOUNT}/${DATASET}`, data.ntriples, 'bench.nt', data.ntriplesBytes);
    if (job.status !== 'finished') throw new Error(`import: ${JSON.stringify(job)}`);

    // Indexing through HTTP: create until running.
    const started = performance.now();
    await api.json('POST', `/datasets/${ACCOUNT}/${DATASET}/services`, { name: SERVICE, type: 'elasticSearch' });
    let service: any;
    for (let i = 0; i < 6000; i++) {
      // A new connection per poll: a kept-alive socket may be closed by the server while it is busy indexing.
      service = JSON.parse(await getFresh(`${platform.url}/datasets/${ACCOUNT}/${DATASET}/services/${SERVICE}`, api.headers));
      if (service.status !== 'starting') break;
      await sleep(50);
    }
    const httpIndexMs = performance.now() - started;
    if (service.status !== 'running') throw new Error(`search service: ${JSON.stringify(service)}`);
    const bare = await bareIndex(data.ntriples);
    const dataset = await api.json('GET', `/datasets/${ACCOUNT}/${DATASET}`);
    const blobDir = join(platform.dataDir, 'blobs', 'data', 'datasets', dataset.id, 'search');
    const { readdir } = await import('node:fs/promises');
    const [serviceDir] = await readdir(blobDir);
    const [blobFile] = await readdir(join(blobDir, serviceDir!));
    const blobPath = join(blobDir, serviceDir!, blobFile!);
    const ratio = httpIndexMs / bare.totalMs;
    log(`indexing through HTTP (create → running): ${secs(httpIndexMs / 1000)} (${perSecond(n, httpIndexMs / 1000)}), ${int(bare.documents)} documents, index blob ${((await stat(blobPath)).size / 2 ** 20).toFixed(1)} MiB`);
    log(`bare library in-process: ${secs(bare.totalMs / 1000)} (parse and group, then addAll ${secs(bare.addAllMs / 1000)})`);
    log(`indexing ratio: ${ratioFixed(ratio, INDEX_AIM)}× (aim ≤ ${INDEX_AIM}×: ${aimText(ratio <= INDEX_AIM)})`);

    // The same engine in-process, its index read from the service's blob.
    const blobs = new MemoryBlobs();
    const key = 'bench/index';
    blobs.blobs.set(`${key}.json.gz`, await readFile(blobPath));
    const local = new MiniSearchIndexes(blobs, { logger: defaultLogger });
    const loadStart = performance.now();
    await local.mappings(key);
    log(`index loaded from its blob in-process: ${ms(performance.now() - loadStart)}`);

    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const url = `${platform.url}/datasets/${ACCOUNT}/${DATASET}/services/${SERVICE}/_search`;
    const httpSamples: number[] = [];
    const localSamples: number[] = [];
    const perQuery: string[] = [];
    for (const q of SEARCH_QUERIES) {
      const body = JSON.stringify(q.body);
      const request = compileSearch(q.body);
      const h: number[] = [];
      const l: number[] = [];
      let hits = 0;
      for (let run = 0; run < WARMUP + RUNS; run++) {
        const res = await post(agent, url, body, {});
        if (res.status !== 200) throw new Error(`${q.name}: ${res.status} ${res.text}`);
        const t = performance.now();
        const result = await local.search(key, request);
        const localMs = performance.now() - t;
        hits = result.total;
        if (run >= WARMUP) {
          h.push(res.ms);
          l.push(localMs);
        }
      }
      httpSamples.push(...h);
      localSamples.push(...l);
      const hs = stats(h);
      const ls = stats(l);
      perQuery.push(`  ${q.name.padEnd(20)} ${int(hits).padStart(7)} hits   HTTP median ${ms(hs.median).padStart(9)}   in-process ${ms(ls.median).padStart(9)}`);
    }
    agent.destroy();
    for (const line of perQuery) log(line);
    const hs = stats(httpSamples);
    const ls = stats(localSamples);
    const qRatio = hs.median / ls.median;
    log(`query mix (${SEARCH_QUERIES.length} queries × ${RUNS} runs): HTTP median ${ms(hs.median)}, p99 ${ms(hs.p99)}; in-process median ${ms(ls.median)}, p99 ${ms(ls.p99)}`);
    log(`query ratio (medians): ${ratioFixed(qRatio, QUERY_AIM)}× (aim ≤ ${QUERY_AIM}×: ${aimText(qRatio <= QUERY_AIM)})`);
  } finally {
    await rm(data.dir, { recursive: true, force: true });
  }
}
