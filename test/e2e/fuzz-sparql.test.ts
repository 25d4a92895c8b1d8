/**
 * Property test (issue 11, SPARQL findings): random and mutated SPARQL texts through every SPARQL
 * entry point (a service's /sparql by GET and POST, a dataset's /sparql for queries and updates,
 * a saved query saved and run) never get a server error (503/504 only with a message), never
 * stall the event loop, and leave the platform answering.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUZZ_SEED, MAX_EVENT_LOOP_BLOCK_MS, watchEventLoop } from '../support/fuzz.js';
import { importFiles } from '../support/imports.js';
import { type ApiResponse, TestPlatform } from '../support/platform.js';
import { select, startService } from '../support/services.js';

let p: TestPlatform;
let alice: string;
let zooId: string;

const EX = 'https://example.org/';
const ZOO = `<${EX}g1> { <${EX}tom> a <${EX}Cat> ; <${EX}name> "Tom" . <${EX}jerry> a <${EX}Mouse> ; <${EX}name> "Jerry" . }\n`;
const SERVICE = '/datasets/alice/zoo/services/main/sparql';
const DATASET_QUERIES = '/datasets/alice/zoo/sparql';
/** Updates go to their own dataset, so the query endpoints keep their data. */
const DATASET_UPDATES = '/datasets/alice/scratch/sparql';
/** Longer GET URLs are refused by the HTTP edge (431) before any SPARQL code. */
const MAX_GET_QUERY_CHARS = 4_000;

const VALID = [
  'SELECT ?s ?name WHERE { ?s <https://example.org/name> ?name } ORDER BY ?name LIMIT 10',
  'ASK { ?s a <https://example.org/Cat> }',
  'CONSTRUCT { ?s <urn:p> ?o } WHERE { GRAPH ?g { ?s ?p ?o } FILTER(isIRI(?o) || STRLEN(STR(?o)) > 2) }',
  'PREFIX ex: <https://example.org/> SELECT (COUNT(*) AS ?n) WHERE { ?s ex:name ?n2 OPTIONAL { ?s a ?t } } GROUP BY ?t HAVING (COUNT(*) > 0)',
  'DESCRIBE <https://example.org/tom>',
  'SELECT * WHERE { VALUES ?x { 1 2 "a"@en } BIND(CONCAT(STR(?x), "!") AS ?y) { SELECT ?s WHERE { ?s ?p ?o } LIMIT 2 } }',
  'SELECT ?s WHERE { ?s <https://example.org/name>/^<https://example.org/name>* ?o . MINUS { ?s a <https://example.org/Mouse> } }',
];
const VALID_UPDATES = [
  'INSERT DATA { <urn:a> <urn:b> "c" }',
  'DELETE WHERE { ?s <urn:b> ?o }',
  'INSERT { GRAPH <urn:g> { ?s <urn:copy> ?o } } WHERE { ?s ?p ?o }',
];
const TOKENS = ['SELECT', 'ASK', '*', 'WHERE', '{', '}', '(', ')', '[', ']', '?s', '?p', '?o', '.', ';', ',', '<urn:x>', '"str"', "'''", '"""', '#', '\n', 'FILTER', 'OPTIONAL', 'UNION', 'GRAPH', '||', '&&', '+', '/', '^', '|', '<', '>', '\\u0041', 'INSERT', 'DATA', 'BIND', 'AS', 'VALUES', 'SERVICE', '1', '1.5e3'];

/** Nested groups of one or mixed bracket kinds, balanced or not, around a pattern. */
const nestedText = fc
  .record({
    depth: fc.integer({ min: 1, max: 6_000 }),
    kinds: fc.constantFrom('{', '(', '[', '{(', '{[('),
    balanced: fc.boolean(),
    prefix: fc.constantFrom('SELECT * WHERE ', 'ASK ', 'INSERT DATA ', 'SELECT * WHERE { ?s ?p ?o FILTER', ''),
  })
  .map(({ depth, kinds, balanced, prefix }) => {
    const open = Array.from({ length: depth }, (_, i) => kinds[i % kinds.length]).join('');
    const close = [...open].reverse().map((c) => ({ '{': '}', '(': ')', '[': ']' })[c]).join('');
    return `${prefix}${open} ?s ?p ?o ${balanced ? close : close.slice(0, close.length >> 1)}`;
  });
/** Long strings (short and long quotes, escapes, unterminated). */
const longString = fc
  .record({ body: fc.string({ maxLength: 200 }), repeat: fc.integer({ min: 1, max: 2_000 }), quote: fc.constantFrom('"', "'", '"""', "'''") })
  .map(({ body, repeat, quote }) => `SELECT * WHERE { ?s ?p ${quote}${body.repeat(repeat).slice(0, 300_000)}${repeat % 2 ? quote : ''} }`);
/** Random text, of any characters. */
const randomText = fc.oneof(fc.string({ maxLength: 2_000 }), fc.string({ unit: 'binary', maxLength: 2_000 }));
const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 400 }).map((t) => t.join(' '));
/** A valid query with random insertions, deletions and repetitions. */
const editedQuery = fc
  .record({
    base: fc.constantFrom(...VALID, ...VALID_UPDATES),
    edits: fc.array(
      fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'repeat'), text: fc.oneof(fc.constantFrom(...TOKENS), fc.string({ maxLength: 5 })), n: fc.integer({ min: 1, max: 500 }) }),
      { maxLength: 6 },
    ),
  })
  .map(({ base, edits }) => {
    let text = base;
    for (const e of edits) {
      const at = e.at % (text.length + 1);
      if (e.kind === 'insert') text = text.slice(0, at) + e.text + text.slice(at);
      else if (e.kind === 'delete') text = text.slice(0, at) + text.slice(at + (e.n % 20));
      else text = text.slice(0, at) + text.slice(at, at + 8).repeat(e.n) + text.slice(at + 8);
    }
    return text;
  });
const sparqlText = fc.oneof(nestedText, longString, randomText, tokenSoup, editedQuery, fc.constantFrom(...VALID));

/** Never a server error, except a 503/504 that says what happened. */
function expectNoServerError(res: ApiResponse, where: string, text: string): void {
  const context = `${where} answered ${res.status} to ${JSON.stringify(text.slice(0, 120))}: ${res.text.slice(0, 200)}`;
  if (res.status === 503 || res.status === 504) {
    expect(res.text.length, context).toBeGreaterThan(0);
    return;
  }
  expect(res.status, context).toBeLessThan(500);
}

beforeAll(async () => {
  p = await TestPlatform.start({ settings: { sparql: { queryTimeoutMs: 3_000, maxStatements: 10_000, replicas: 2 } } });
  alice = await p.createUser('alice');
  zooId = (await p.createDataset('alice', 'zoo', 'public', alice)).id;
  expect((await importFiles(p, alice, 'alice/zoo', [{ name: 'zoo.trig', content: ZOO }])).status).toBe('finished');
  expect(await startService(p, alice, 'alice/zoo', { name: 'main' })).toMatchObject({ status: 'running' });
  await p.createDataset('alice', 'scratch', 'private', alice);
}, 120_000);
afterAll(async () => {
  await p?.stop();
});

describe('hostile SPARQL texts', () => {
  it('never get a server error on the service and dataset endpoints, and never stall the event loop', async () => {
    const watch = watchEventLoop();
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(sparqlText, async (text) => {
        runs++;
        const direct = { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json, application/n-triples;q=0.9' };
        if (text.length <= MAX_GET_QUERY_CHARS) {
          expectNoServerError(await p.request('GET', `${SERVICE}?query=${encodeURIComponent(text)}`), 'service GET', text);
        }
        expectNoServerError(await p.request('POST', SERVICE, { rawBody: text, headers: direct }), 'service POST', text);
        expectNoServerError(await p.request('POST', DATASET_QUERIES, { rawBody: text, headers: direct }), 'dataset query', text);
        expectNoServerError(
          await p.request('POST', DATASET_UPDATES, { token: alice, rawBody: `update=${encodeURIComponent(text)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
          'dataset update',
          text,
        );
      }),
      { seed: FUZZ_SEED, numRuns: 300 },
    );
    expect(runs).toBe(300);
    expect(watch.stop()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    // Still serving, with the right data.
    expect((await select(p, undefined, SERVICE, `SELECT ?n WHERE { ?s <${EX}name> ?n } ORDER BY ?n`)).map((r) => r.n)).toEqual(['Jerry', 'Tom']);
    expect((await select(p, undefined, DATASET_QUERIES, `SELECT ?n WHERE { ?s <${EX}name> ?n } ORDER BY ?n`)).map((r) => r.n)).toEqual(['Jerry', 'Tom']);
  }, 120_000);

  it('never get a server error as saved queries, saved and run with random variable values', async () => {
    const watch = watchEventLoop();
    let saved = 0;
    let n = 0;
    await fc.assert(
      fc.asyncProperty(sparqlText, fc.string({ maxLength: 300 }), async (text, value) => {
        const name = `fuzz-${n++}`;
        const created = await p.request('POST', '/queries/alice', {
          token: alice,
          body: { name, dataset: zooId, serviceConfig: { type: 'speedy' }, requestConfig: { payload: { query: text } }, variables: [{ name: 'o', termType: 'Literal' }] },
        });
        expectNoServerError(created, 'saving a query', text);
        if (created.status !== 201) return;
        saved++;
        const run = await p.request('GET', `/queries/alice/${name}/run?o=${encodeURIComponent(value)}`, { token: alice });
        expectNoServerError(run, 'running a saved query', text);
        const asText = await p.request('GET', `/queries/alice/${name}/text?o=${encodeURIComponent(value)}`, { token: alice });
        expectNoServerError(asText, 'a saved query as text', text);
      }),
      { seed: FUZZ_SEED, numRuns: 100 },
    );
    expect(watch.stop()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    // The generators include valid queries, so some were saved and run.
    expect(saved).toBeGreaterThan(0);
    expect((await p.request('GET', '/datasets/alice/zoo')).status).toBe(200);
  }, 120_000);
});
