/**
 * The W3C SPARQL test suites through the platform's HTTP endpoint (one embedded platform, offline):
 * SPARQL 1.1 Query (evaluation and syntax), the SPARQL 1.1 JSON and CSV/TSV result formats, the
 * SPARQL 1.1 Protocol, and SPARQL 1.0. rdf-test-suite drives the tests; http-engine.ts sends every
 * query to `/datasets/{account}/{dataset}/sparql`. The failures must be exactly the known ones.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestPlatform } from '../../support/platform.js';
import { KNOWN_FAILURES } from './known-failures.js';
import { report, runSparqlSuites, type SuiteId } from './runner.js';

/** Tests per suite: guards against tests silently dropped by rdf-test-suite (unknown file types). */
const EXPECTED_TOTALS: Record<SuiteId, number> = {
  'sparql11-query': 328,
  'sparql11-results-json': 4,
  'sparql11-results-csv-tsv': 6,
  'sparql11-protocol': 34,
  'sparql11-update': 157,
  sparql10: 476,
};

let p: TestPlatform;

beforeAll(async () => {
  p = await TestPlatform.start();
});
afterAll(async () => {
  await p?.stop();
});

it('passes the W3C SPARQL suites through the HTTP endpoint, except the known failures', async () => {
  const suites = Object.keys(EXPECTED_TOTALS) as SuiteId[];
  const started = Date.now();
  const result = await runSparqlSuites(p, { suites, concurrency: 3 });
  console.log(`W3C SPARQL suites through the dataset endpoint:\n${report(result, (Date.now() - started) / 1000)}`);

  const totals = Object.fromEntries(suites.map((s) => [s, result.outcomes.filter((o) => o.suite === s).length]));
  expect(totals, 'tests per suite (a missing extension in rdf-test-suite drops tests silently)').toEqual(EXPECTED_TOTALS);

  const actual = new Map(result.outcomes.filter((o) => !o.ok).map((o) => [o.test, o.reason ?? ''] as const));
  const known = new Set(KNOWN_FAILURES.map((k) => k.test));
  expect(known.size, 'known-failures.ts lists a test twice').toBe(KNOWN_FAILURES.length);
  const firstLines = (why: string) => why.replace(/\s+/g, ' ').slice(0, 600);
  const newFailures = [...actual].filter(([k]) => !known.has(k)).map(([k, why]) => `${k} — ${firstLines(why)}`);
  const knownFailuresThatNowPass = [...known].filter((k) => !actual.has(k));
  expect({ newFailures, knownFailuresThatNowPass }, 'remove fixed tests from known-failures.ts; fix or list new failures').toEqual({
    newFailures: [],
    knownFailuresThatNowPass: [],
  });
}, 1_200_000);
