/**
 * The W3C RDF 1.1 parser suites (N-Triples, N-Quads, Turtle, TriG, RDF/XML) through the import
 * and export routes of one embedded platform. The failures must be exactly the known ones.
 */
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

it('passes the W3C RDF 1.1 parser suites through import and export, except the known failures', async () => {
  const started = Date.now();
  const results: SuiteResult[] = await runRdf11(p, { concurrency: 4, log: () => {} });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const lines = results.map((r) => `  ${r.suite.padEnd(14)} ${String(r.passed).padStart(4)}/${r.total} passed, ${r.failed.length} failed`);
  console.log(`W3C RDF 1.1 parser suites through import/export (${seconds} s):\n${lines.join('\n')}`);
  const retried = results.flatMap((r) => r.retried.map((x) => `  ${r.suite} ${x.name}: ${x.reason}`));
  // A retried import means the platform answered an internal error: a bug, so the test fails.
  expect(retried, 'imports that needed a retry after an internal server error').toEqual([]);

  const key = (suite: string, test: string) => `${suite} ${test}`;
  const actual = new Map(results.flatMap((r) => r.failed.map((f) => [key(r.suite, f.name), `${f.type}: ${f.reason}`] as const)));
  const known = new Set(KNOWN_FAILURES.map((k) => key(k.suite, k.test)));
  expect(known.size, 'known-failures.ts lists a test twice').toBe(KNOWN_FAILURES.length);
  const unexpected = [...actual].filter(([k]) => !known.has(k)).map(([k, why]) => `${k} — ${why}`);
  const nowPassing = [...known].filter((k) => !actual.has(k));
  expect({ newFailures: unexpected, knownFailuresThatNowPass: nowPassing }, 'remove fixed tests from known-failures.ts; fix or list new failures').toEqual({
    newFailures: [],
    knownFailuresThatNowPass: [],
  });
}, 1_200_000);
