/** The W3C RDF 1.1 parser suites through the import and export routes of one embedded platform. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';
import { KNOWN_FAILURES } from './known-failures.js';
import { runRdf11, type SuiteResult } from './rdf11-runner.js';

let p: TestPlatform;

beforeAll(async () => {
  p = await TestPlatform.start();
});
afterAll(async () => {
  await p?.stop();
});

it('fails exactly the known failures', async () => {
  const started = Date.now();
  const results: SuiteResult[] = await runRdf11(p, { concurrency: 4, log: () => {} });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const summary = results.map((r) => `  ${r.suite.padEnd(14)} ${String(r.passed).padStart(4)}/${r.total} passed, ${r.failed.length} failed`);
  console.log(`W3C RDF 1.1 suites through import/export (${seconds} s):\n${summary.join('\n')}`);

  const key = (suite: string, test: string) => `${suite} ${test}`;
  const actual = new Map(results.flatMap((r) => r.failed.map((f) => [key(r.suite, f.name), `${f.type}: ${f.reason}`] as const)));
  const known = new Map(KNOWN_FAILURES.map((k) => [key(k.suite, k.test), k.reason] as const));
  const unexpected = [...actual].filter(([k]) => !known.has(k)).map(([k, why]) => `${k} — ${why}`);
  const fixed = [...known.keys()].filter((k) => !actual.has(k));
  expect({ 'new failures': unexpected, 'known failures that now pass (remove them from known-failures.ts)': fixed }).toEqual({
    'new failures': [],
    'known failures that now pass (remove them from known-failures.ts)': [],
  });
}, 240_000);
