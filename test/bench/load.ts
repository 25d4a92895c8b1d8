import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';

export interface LoadResult {
  requests: number;
  concurrency: number;
  seconds: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  perSecond: number;
  errors: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Sends `requests` requests with `concurrency` in flight; every response must be `expectStatus`. */
export async function load(
  url: string,
  options: { requests: number; concurrency: number; headers?: Record<string, string>; expectStatus?: number },
): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < options.requests) {
      next++;
      const t0 = performance.now();
      const res = await fetch(url, { headers: options.headers });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (res.status !== (options.expectStatus ?? 200)) errors++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    concurrency: options.concurrency,
    seconds,
    medianMs: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies[latencies.length - 1]!,
    perSecond: latencies.length / seconds,
    errors,
  };
}

/** Resident memory of a process from /proc (Linux), in MiB. */
export async function rssMiB(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : undefined;
}

export const formatLoad = (name: string, r: LoadResult) =>
  `${name}: ${r.requests} requests, concurrency ${r.concurrency}: median ${r.medianMs.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, max ${r.maxMs.toFixed(1)} ms, ${r.perSecond.toFixed(0)} req/s, ${r.errors} errors`;

/** A bare node:http server in a child process (the request floor); stop() ends it. */
export async function startBareServer(): Promise<{ url: string; stop(): void }> {
  const code = `require('node:http').createServer((q, s) => { s.setHeader('content-type', 'application/sparql-results+json'); s.end('{"head":{},"boolean":true}'); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  child.stdout!.resume();
  return { url: `http://127.0.0.1:${chunk.toString().trim()}/`, stop: () => void child.kill() };
}

/** CPU seconds (user + system, all threads) a process has used, from /proc (Linux). */
export async function cpuSeconds(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields.length < 13) return undefined;
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ, 100 on Linux)
}

/**
 * Waits until the process uses less than 10% of a core over half a second (background work such
 * as a service's second query thread loading its snapshot has ended), at most `maxSeconds`.
 * Returns the seconds waited, or undefined when /proc cannot tell.
 */
export async function waitForIdle(pid: number, maxSeconds = 60): Promise<number | undefined> {
  const started = performance.now();
  let before = await cpuSeconds(pid);
  if (before === undefined) return undefined;
  while (performance.now() - started < maxSeconds * 1000) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await cpuSeconds(pid);
    if (now === undefined) return undefined;
    if (now - before < 0.05) break;
    before = now;
  }
  return (performance.now() - started) / 1000;
}
