/**
 * Issue 14 data routes on the embedded platform (`BENCH_ONLY=data-routes`):
 * - import progress: a 1 M-statement N-Triples job (tus upload, start), polled every 100 ms; how
 *   many distinct progress reports (indexingProgress, numberOfStatements) were seen while it indexed
 *   (the issue: it sat at 0 for 16 s, then jumped to 1);
 * - statements: latency of the first page (limit 50), of a page at offset 500,000, and of a
 *   selective filter (one subject, a full scan);
 * - terms: autocomplete on a prefix of subject IRIs, and a literal substring;
 * - copy: the whole dataset copied to another account (blob bytes copied as stored).
 * Prints figures; asserts nothing.
 */
import { rm } from 'node:fs/promises';
import { apiFor, int, secs, sleep, tusUpload } from './bench-http.js';
import type { RunningPlatform } from './embedded-server.js';
import { generateDataset } from './generate.js';

const N = Number(process.env.BENCH_DATA_ROUTES_STATEMENTS ?? 1_000_000);

async function timed<T>(what: string, run: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await run();
  console.log(`${what}: ${((performance.now() - start) / 1000).toFixed(3)} s`);
  return result;
}

export async function benchDataRoutes(platform: RunningPlatform): Promise<void> {
  const api = apiFor(platform);
  console.log(`# Data routes (issue 14): ${int(N)} statements`);
  const data = await generateDataset(N);
  try {
    await api.json('POST', '/accounts', { type: 'org', accountName: 'bench-data' });
    await api.json('POST', '/accounts', { type: 'org', accountName: 'bench-copies' });
    await api.json('POST', '/datasets/bench-data', { name: 'big', accessLevel: 'public' });
    const job = await api.json('POST', '/datasets/bench-data/big/jobs', {});
    const jobPath = `/datasets/bench-data/big/jobs/${job.jobId}`;
    await tusUpload(api, `${api.url}${jobPath}/add`, data.ntriples, 'big.nt', data.ntriplesBytes);
    const start = performance.now();
    await api.json('POST', `${jobPath}/start`);
    const reports = new Set<string>();
    let firstReport: number | undefined;
    let state: any;
    for (let i = 0; i < 36_000; i++) {
      state = await api.json('GET', jobPath);
      if (['finished', 'error', 'canceled'].includes(state.status)) break;
      if (state.status === 'indexing' && state.numberOfStatements > 0) {
        reports.add(`${state.indexingProgress}/${state.numberOfStatements}`);
        firstReport ??= performance.now() - start;
      }
      await sleep(100);
    }
    const seconds = (performance.now() - start) / 1000;
    console.log(`import: ${state.status} in ${secs(seconds)}; ${reports.size} distinct progress reports seen while indexing, the first after ${firstReport === undefined ? '–' : secs(firstReport / 1000)}`);
    console.log(`  reports: ${[...reports].slice(0, 8).join(', ')}${reports.size > 8 ? ', …' : ''}`);

    const base = '/datasets/bench-data/big';
    const first = await timed('statements, first page (limit 50)', () => api.json('GET', `${base}/statements?limit=50`));
    await timed('statements, page at offset 500,000 (limit 50)', () => api.json('GET', `${base}/statements?limit=50&offset=500000`));
    const subject = first[0][0].value as string;
    await timed('statements, one subject (full scan)', () => api.json('GET', `${base}/statements?subject=${encodeURIComponent(subject)}`));
    await timed('terms, a subject IRI prefix (limit 20)', () => api.json('GET', `${base}/terms?pos=subject&q=${encodeURIComponent(subject.slice(0, -3))}`));
    await timed('terms, a literal substring (limit 20)', () => api.json('GET', `${base}/terms?pos=object&termType=Literal&q=zz`));
    await timed('copy to another account', () => api.json('POST', `${base}/copy`, { toAccount: 'bench-copies' }));
  } finally {
    await rm(data.dir, { recursive: true, force: true });
  }
}
