import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';

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

/** One GET over `agent`, its body read and dropped; resolves with the status. */
function get(url: URL, headers: Record<string, string>, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Sends `requests` requests with `concurrency` in flight, over as many kept-alive node:http
 * connections; every response must be `expectStatus`. node:http rather than fetch: on two cores the
 * load generator's own allocations and GC pauses showed in the server's p99 (a bare server measured
 * with fetch had a p99 of 7–12 ms depending on the client's young-generation size).
 */
export async function load(
  url: string,
  options: { requests: number; concurrency: number; headers?: Record<string, string>; expectStatus?: number },
): Promise<LoadResult> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < options.requests) {
      next++;
      const t0 = performance.now();
      const status = await get(target, options.headers ?? {}, agent);
      latencies.push(performance.now() - t0);
      if (status !== (options.expectStatus ?? 200)) errors++;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    agent.destroy();
  }
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
