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
