/**
 * Import and export throughput through the HTTP API, next to the bare parser / serializer on the
 * same data in the same run (the ratio is the platform's overhead):
 *
 * - import (N-Triples, Turtle): tus upload of the generated file (streamed, in chunks) into a
 *   fresh dataset, start, poll until the job ends. Timed from the first upload byte to `finished`.
 *   Baseline: N3's StreamParser over the same file (`bareParse`, the parser parseRdf wraps).
 * - export (N-Triples, TriG): `GET /datasets/{a}/{d}/download.{nt,trig}`, streamed and counted.
 *   Baseline: functions/rdf/serialize.ts (`serializeRdf`, what the export runs) over the same
 *   statements, pre-parsed into memory so only serializer time is measured.
 * - server memory: VmHWM / VmRSS of the platform process, and the highest VmRSS seen per phase.
 * - CPU seconds next to wall time (server: /proc/<pid>/stat, all threads; bare: process.cpuUsage),
 *   since wall time on a shared machine moves with other load.
 *
 * - the stage shares of an import (import-stages.ts): each stage's share of the work, in this process.
 *
 * Aims (issue 18): import ≤ 1.5× the bare parser, parseRdf alone ≤ 1.1× the bare parser, export
 * TriG ≤ 1.2× the bare serializer (issue 9: server peak memory under 1 GB). Recorded in the table
 * of aims (aims.ts) printed at the end of `npm run bench`. Prints figures; asserts nothing.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { formatByName, type RdfFormat } from '../../functions/rdf/formats.js';
import type { NtQuad } from '../../functions/rdf/nt.js';
import { parseRdf } from '../../functions/rdf/parse.js';
import { serializeRdf, type RdfPrefix } from '../../functions/rdf/serialize.js';
import { apiFor, int, perSecond, secs, tusUpload, type Api } from './bench-http.js';
import type { RunningPlatform } from './embedded-server.js';
import { generateDataset, type GeneratedDataset } from './generate.js';
import { bareParse, countingSink, ourParse, type SpeedResult } from './rdf-bare.js';
import { recordAim } from './aims.js';
import { formatShares, importStages } from './import-stages.js';

const ACCOUNT = 'bench-rdf';
const POLL_MS = 25;
const EXPORT_BATCH = 2000; // as ExportService.quadBatches
const IMPORT_AIM = 1.5;
const WRAPPER_AIM = 1.1;
const EXPORT_AIM = 1.2;
const MEMORY_AIM_BYTES = 1e9;

// ---------------------------------------------------------------------------------------------
// Formatting

/** Whole MiB here (sizes of generated files and memory figures). */
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const ratioText = (ours: number, bare: number, aim: number) => {
  const ratio = ours / bare;
  return `ratio ${ratio.toFixed(2)}× (aim ≤ ${aim}×: ${ratio <= aim ? 'aim met' : 'aim missed'})`;
};

// ---------------------------------------------------------------------------------------------
// Server memory

function procStatus(pid: number): { hwm?: number; rss?: number } {
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return {};
  }
  const kb = (name: string) => {
    const m = new RegExp(`${name}:\\s+(\\d+)`).exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
}

/** CPU seconds (user + system, all threads) the process `pid` has used so far, from /proc. */
function procCpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the `(comm)`: state is field 3; utime and stime are fields 14 and 15, in ticks.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** USER_HZ: 100 on every mainstream Linux build. */
const CLOCK_TICKS = 100;

/** Runs `run`, with the highest VmRSS of `pid` meanwhile (sampled every 50 ms) and the CPU seconds it used. */
async function measureServer<T>(pid: number, run: () => Promise<T>): Promise<{ result: T; peakRss: number; cpuSeconds: number }> {
  let peak = procStatus(pid).rss ?? 0;
  const cpuBefore = procCpuSeconds(pid) ?? NaN;
  const timer = setInterval(() => (peak = Math.max(peak, procStatus(pid).rss ?? 0)), 50);
  try {
    const result = await run();
    peak = Math.max(peak, procStatus(pid).rss ?? 0);
    return { result, peakRss: peak, cpuSeconds: (procCpuSeconds(pid) ?? NaN) - cpuBefore };
  } finally {
    clearInterval(timer);
  }
}

/** Runs `run` in this process, with the CPU seconds this process used meanwhile. */
async function measureHere<T>(run: () => Promise<T>): Promise<T & { cpuSeconds: number }> {
  const before = process.cpuUsage();
  const result = await run();
  const used = process.cpuUsage(before);
  return { ...result, cpuSeconds: (used.user + used.system) / 1e6 };
}

const cpu = (s: number) => (Number.isFinite(s) ? secs(s) : 'n/a');

// ---------------------------------------------------------------------------------------------
// HTTP

interface ImportResult {
  statements: number;
  seconds: number;
  uploadSeconds: number;
  indexingSeconds: number;
}

/** A fresh dataset, a job, the file over tus, start, poll. */
async function httpImport(api: Api, platform: RunningPlatform, dataset: string, file: string, fileName: string, size: number, prefixes: RdfPrefix[]): Promise<ImportResult> {
  await api.json('POST', `/datasets/${ACCOUNT}`, { name: dataset, accessLevel: 'private', prefixes });
  const job = await api.json('POST', `/datasets/${ACCOUNT}/${dataset}/jobs`, { defaultGraphName: `https://data.example.org/graphs/${dataset}` });
  const jobPath = `/datasets/${ACCOUNT}/${dataset}/jobs/${job.jobId}`;
  const start = performance.now();
  await tusUpload(api, `${platform.url}${jobPath}/add`, file, fileName, size);
  const uploaded = performance.now();
  await api.json('POST', `${jobPath}/start`);
  for (;;) {
    const state = await api.json('GET', jobPath);
    if (state.status === 'finished') {
      const end = performance.now();
      return {
        statements: state.numberOfStatements,
        seconds: (end - start) / 1000,
        uploadSeconds: (uploaded - start) / 1000,
        indexingSeconds: (end - uploaded) / 1000,
      };
    }
    if (state.status === 'error' || state.status === 'canceled') throw new Error(`import of ${fileName}: ${state.status}: ${state.error?.message}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Streams an export to nowhere, counting bytes (and newlines, for line-based formats); fresh connection as above. */
function httpExport(api: Api, url: string): Promise<{ bytes: number; lines: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = httpRequest(url, { headers: api.headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`GET ${url}: ${res.statusCode}`));
      }
      let bytes = 0;
      let lines = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve({ bytes, lines, seconds: (performance.now() - start) / 1000 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

// ---------------------------------------------------------------------------------------------
// Bare serializer

/**
 * The statements of `file` as the export would hand them to serializeRdf: canonical quads in
 * batches of EXPORT_BATCH, in the graph `graph`, blank node labels as long as an import's.
 */
async function loadQuads(file: string, graph: string): Promise<NtQuad[][]> {
  const batches: NtQuad[][] = [];
  let batch: NtQuad[] = [];
  for await (const parsed of parseRdf(createReadStream(file, { highWaterMark: 64 * 1024 }), { format: formatByName('ntriples'), blankNodePrefix: 'j0123abcdf0x' })) {
    for (const q of parsed) {
      batch.push({ subject: q.subject, predicate: q.predicate, object: q.object, graph });
      if (batch.length === EXPORT_BATCH) {
        batches.push(batch);
        batch = [];
      }
    }
  }
  if (batch.length) batches.push(batch);
  return batches;
}

/** serializeRdf over in-memory batches into a byte-counting sink. */
async function bareSerializeRdf(batches: NtQuad[][], format: RdfFormat, prefixes: RdfPrefix[]): Promise<SpeedResult> {
  async function* source(): AsyncGenerator<NtQuad[]> {
    for (const b of batches) yield b;
  }
  const sink = countingSink();
  const start = performance.now();
  await pipeline(serializeRdf(source(), { format, prefixes }), sink);
  return { statements: batches.reduce((n, b) => n + b.length, 0), seconds: (performance.now() - start) / 1000, bytes: sink.bytes };
}

// ---------------------------------------------------------------------------------------------

export interface ImportExportOptions {
  /** Statements to generate (default BENCH_STATEMENTS or 1,000,000). */
  statements?: number;
  log?: (line: string) => void;
}

/**
 * Runs the import/export benchmark against a running platform (see embedded-server.ts) and
 * prints one line per measurement.
 */
export async function benchImportExport(platform: RunningPlatform, options: ImportExportOptions = {}): Promise<void> {
  const n = options.statements ?? Number(process.env.BENCH_STATEMENTS ?? 1_000_000);
  const log = options.log ?? ((line: string) => console.log(line));
  const api = apiFor(platform);
  const t0 = performance.now();
  const data = await generateDataset(n);
  const warm = await generateDataset(Math.min(50_000, Math.max(1000, Math.floor(n / 10))), await mkdirp(join(data.dir, 'warmup')));
  log(
    `# Import/export through HTTP (${platform.url}): ${int(data.statements)} generated statements, ${int(data.subjects)} subjects; ` +
      `N-Triples ${mib(data.ntriplesBytes)}, Turtle ${mib(data.turtleBytes)} (generated in ${secs((performance.now() - t0) / 1000)}); ` +
      `${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}`,
  );
  log(
    '# import: tus upload + start + poll until finished, one run; exports: the faster of two runs; bare figures in this process. ' +
      'Server CPU: user+system of the platform process (all threads, so gzip too) meanwhile; less sensitive to other load than wall time.',
  );
  const phases: [string, number][] = [];
  try {
    await api.json('POST', '/accounts', { type: 'org', accountName: ACCOUNT });

    // Warm-up (JIT on both sides, first-use costs): bare parsers, and a small import and export.
    const nt = formatByName('ntriples');
    const ttl = formatByName('turtle');
    const trig = formatByName('trig');
    for (const [format, file, size, name] of [[nt, warm.ntriples, warm.ntriplesBytes, 'warm.nt'], [ttl, warm.turtle, warm.turtleBytes, 'warm.ttl']] as const) {
      await bareParse(file, format);
      await ourParse(file, format);
      const dataset = `warmup-${format.extensions[0]}`;
      await httpImport(api, platform, dataset, file, name, size, data.prefixes);
      for (const ext of ['nt', 'trig']) await httpExport(api, `${platform.url}/datasets/${ACCOUNT}/${dataset}/download.${ext}`);
    }

    // Import.
    const imports: [RdfFormat, string, number, string][] = [
      [nt, data.ntriples, data.ntriplesBytes, 'N-Triples'],
      [ttl, data.turtle, data.turtleBytes, 'Turtle'],
    ];
    const wrapperRatios: string[] = [];
    let wrapperMet = true;
    for (const [format, file, size, label] of imports) {
      const bare = await measureHere(() => bareParse(file, format));
      // The wrapper alone is short: the faster of two runs on each side (damps other load).
      const fastest2 = <T extends { seconds: number }>(a: T, b: T): T => (b.seconds < a.seconds ? b : a);
      const bareAlone = fastest2(bare, await measureHere(() => bareParse(file, format)));
      const ours = fastest2(await ourParse(file, format), await ourParse(file, format));
      const dataset = `import-${format.extensions[0]}`;
      const { result, peakRss, cpuSeconds } = await measureServer(platform.pid, () =>
        httpImport(api, platform, dataset, file, `bench.${format.extensions[0]}`, size, data.prefixes),
      );
      phases.push([`import ${label}`, peakRss]);
      const check = result.statements === bare.statements ? '' : ` [!: the job counted ${int(result.statements)}, the parser ${int(bare.statements)}]`;
      log(
        `import ${label}: ${int(result.statements)} statements in ${secs(result.seconds)} = ${perSecond(result.statements, result.seconds)} ` +
          `(upload ${secs(result.uploadSeconds)}, start→finished ${secs(result.indexingSeconds)}; server CPU ${cpu(cpuSeconds)}); ` +
          `bare parser ${secs(bare.seconds)} = ${perSecond(bare.statements, bare.seconds)} (CPU ${cpu(bare.cpuSeconds)}); ` +
          `${ratioText(result.seconds, bare.seconds, IMPORT_AIM)}, CPU-time ratio ${(cpuSeconds / bare.cpuSeconds).toFixed(2)}×${check}`,
      );
      const wrapper = ours.seconds / bareAlone.seconds;
      log(`    (parseRdf, the platform's parser wrapper, alone: ${secs(ours.seconds)} = ${perSecond(ours.statements, ours.seconds)}; ${wrapper.toFixed(2)}× the bare parser's ${secs(bareAlone.seconds)}, faster of two runs each)`);
      wrapperRatios.push(`${label} ${wrapper.toFixed(2)}×`);
      wrapperMet &&= wrapper <= WRAPPER_AIM;
      const ratio = result.seconds / bare.seconds;
      recordAim(
        `import ${label} through HTTP vs the bare parser`,
        `${ratio.toFixed(2)}× (${perSecond(result.statements, result.seconds)} vs ${perSecond(bare.statements, bare.seconds)})`,
        `≤ ${IMPORT_AIM}×`,
        ratio <= IMPORT_AIM,
      );
    }
    recordAim("the platform's `parseRdf` wrapper alone vs the bare parser", wrapperRatios.join(', '), `≤ ${WRAPPER_AIM}×`, wrapperMet);

    // Where an import's work goes, stage by stage (one thread, in this process).
    for (const [format, file, , label] of imports) {
      const { seconds } = await importStages(file, format);
      log(`import stages, ${label} (shares of the work, one thread in this process; on the platform parse to encoding run in the parse worker, hashing and de-duplication in a second worker, gzip in the thread pool): ${formatShares(seconds)}`);
    }

    // Export the dataset imported from N-Triples.
    const dataset = `import-nt`;
    const statements = (await api.json('GET', `/datasets/${ACCOUNT}/${dataset}`)).statements as number;
    const graph = `<https://data.example.org/graphs/${dataset}>`;
    const quads = await loadQuads(data.ntriples, graph);
    const warmQuads = quads.slice(0, 25);
    const fastest = <T extends { seconds: number }>(a: T, b: T): T => (b.seconds < a.seconds ? b : a);
    for (const [format, ext, label] of [[nt, 'nt', 'N-Triples'], [trig, 'trig', 'TriG']] as const) {
      await bareSerializeRdf(warmQuads, format, data.prefixes);
      // Exports are short: the faster of two runs on each side, to damp noise from other load.
      const bare = fastest(
        await measureHere(() => bareSerializeRdf(quads, format, data.prefixes)),
        await measureHere(() => bareSerializeRdf(quads, format, data.prefixes)),
      );
      const url = `${platform.url}/datasets/${ACCOUNT}/${dataset}/download.${ext}`;
      const first = await measureServer(platform.pid, () => httpExport(api, url));
      const second = await measureServer(platform.pid, () => httpExport(api, url));
      const { result, cpuSeconds } = second.result.seconds < first.result.seconds ? second : first;
      phases.push([`export ${label}`, Math.max(first.peakRss, second.peakRss)]);
      const check = ext === 'nt' && result.lines !== statements ? ` [!: ${int(result.lines)} lines for ${int(statements)} statements]` : '';
      if (ext === 'trig') {
        const ratio = result.seconds / bare.seconds;
        recordAim('export TriG vs the bare serializer', `${ratio.toFixed(2)}× (${secs(result.seconds)} vs ${secs(bare.seconds)})`, `≤ ${EXPORT_AIM}×`, ratio <= EXPORT_AIM);
      }
      log(
        `export ${label}: ${int(statements)} statements, ${mib(result.bytes)} in ${secs(result.seconds)} = ${perSecond(statements, result.seconds)} (server CPU ${cpu(cpuSeconds)}); ` +
          `bare serializer (serializeRdf) ${mib(bare.bytes ?? 0)} in ${secs(bare.seconds)} = ${perSecond(bare.statements, bare.seconds)} (CPU ${cpu(bare.cpuSeconds)}); ` +
          `${ratioText(result.seconds, bare.seconds, EXPORT_AIM)}, CPU-time ratio ${(cpuSeconds / bare.cpuSeconds).toFixed(2)}×${check}`,
      );
    }

    const { hwm, rss } = procStatus(platform.pid);
    if (hwm !== undefined && rss !== undefined) {
      log(
        `platform memory: peak (VmHWM) ${mib(hwm)}, now (VmRSS) ${mib(rss)} (aim < 1 GB: ${hwm < MEMORY_AIM_BYTES ? 'aim met' : 'aim missed'}); ` +
          `highest VmRSS seen: ${phases.map(([name, peak]) => `${name} ${mib(peak)}`).join(', ')}`,
      );
    } else log('platform memory: /proc not readable here');
  } finally {
    await rm(data.dir, { recursive: true, force: true });
  }
}

async function mkdirp(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  return dir;
}

export type { GeneratedDataset };
