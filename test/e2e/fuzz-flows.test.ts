/**
 * Hostile flow definitions and Decision regexes (issue 11, property tests): valid flows with
 * random edits (wrong types, huge lists, deep nesting, random regexes and strings) are POSTed from
 * a console session, and random regexes run through a Decision on random values. The server never
 * answers 5xx, a refused flow is a 400 with `problems`, the event loop never stalls past the bound,
 * and the platform stays up.
 */
import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { FUZZ_SEED, MAX_EVENT_LOOP_BLOCK_MS, watchEventLoop, type EventLoopWatch } from '../support/fuzz.js';
import { TestPlatform, type ApiResponse } from '../support/platform.js';

let p: TestPlatform;
let token: string;
let session: Record<string, string>;
let seed: Record<string, unknown>;
let watch: EventLoopWatch;
let sequence = 0;

beforeAll(async () => {
  p = await TestPlatform.start();
  // The seed flow has a SPARQL update task.
  await enableFlows(p, { sparqlUpdateTaskEnabled: true });
  token = await p.createUser('fuzzer');
  session = await consoleSession(p, 'fuzzer');
  seed = JSON.parse(await readFile(new URL('../fixtures/flows/full-example.json', import.meta.url), 'utf8'));
  watch = watchEventLoop();
});

afterAll(async () => {
  watch?.stop();
  await p?.stop();
});

/** Regex pieces: ordinary syntax, catastrophic shapes, and syntax RE2 refuses. */
const REGEX_PIECES = ['a', 'b', '!', '.', '*', '+', '?', '(', ')', '|', '^', '$', '[a-z]', '[^]', '\\d', '\\w', '\\s', '\\b', '{2,5}', '{1000}', '.{900}', '(a+)+', '(a|aa)*', '(?i)', '\\p{L}', '\\1', '(?=a)', '(?<!a)', '(?<n>a)', '\\u0041', '\\x{41}', '\\'];
const regexArb = fc.oneof(
  fc.array(fc.constantFrom(...REGEX_PIECES), { minLength: 1, maxLength: 14 }).map((parts) => parts.join('')),
  fc.string({ maxLength: 30 }),
  fc.constant('^(a+)+$'),
);

/** Texts to test: short random ones and long runs that make backtracking engines explode. */
const valueArb = fc.oneof(
  fc.string({ maxLength: 50 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.tuple(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom('!', '', 'b', 'é')).map(([n, end]) => `${'a'.repeat(n)}${end}`),
);

/** Stands for a deeply nested list, written into the JSON text (a JS value that deep cannot be serialized). */
const DEEP = '__deeply_nested__';

const editValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ maxLength: 40 }),
  regexArb,
  fc.constantFrom(null, true, 0, -1, 1e308, '', '?undefinedVariable', '${TaskWorkerArn}', 'Public', { 'x.$': 1 }),
  fc.integer({ min: 0, max: 3_000 }).map((n) => Array.from({ length: n }, (_, i) => ({ id: `t${i}`, label: 'x', type: 'wait', settings: { seconds: 1 } }))),
  fc.integer({ min: 0, max: 30_000 }).map((n) => Array.from({ length: n }, () => 'x')),
  fc.constant(DEEP),
);

/** Every path (keys and indexes) inside a JSON value. */
function pathsOf(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

function setAt(root: any, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  let node = root;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path[path.length - 1]!] = value;
  return root;
}

const editArb = fc.record({ where: fc.nat(), value: editValueArb, rename: fc.option(fc.string({ maxLength: 12 }), { nil: undefined }) });

/** A copy of the seed with the edits applied; its id is fresh unless an edit changed it. */
function mutated(edits: { where: number; value: unknown; rename?: string }[], depth: number): string {
  let flow: any = structuredClone(seed);
  flow.id = `fuzz-${++sequence}`;
  for (const edit of edits) {
    const paths = pathsOf(flow);
    const path = paths[edit.where % paths.length]!;
    if (edit.rename !== undefined && path.length > 0 && typeof path[path.length - 1] === 'string') {
      // A renamed field: misspelt or unknown keys.
      const parent: any = path.slice(0, -1).reduce((n: any, k) => n[k], flow);
      const key = path[path.length - 1] as string;
      parent[edit.rename] = parent[key];
      if (edit.rename !== key) delete parent[key];
    } else {
      flow = setAt(flow, path, structuredClone(edit.value));
    }
  }
  return JSON.stringify(flow).replaceAll(JSON.stringify(DEEP), `${'['.repeat(depth)}${']'.repeat(depth)}`);
}

function expectAnswered(res: ApiResponse, what: string): void {
  expect(res.status, `${what}: ${res.text.slice(0, 500)}`).toBeLessThan(500);
  expect(res.headers.get('content-type') ?? '', what).toMatch(/^application\/json/);
  if (res.status >= 400) expect(typeof res.body.message, what).toBe('string');
}

describe('hostile flow definitions', () => {
  it('are saved or refused with a 4xx naming the problems, never a 5xx or a stall', async () => {
    // The unmutated seed is valid: the edits are what the server must cope with.
    const valid = await p.request('POST', '/flows/blueprints/fuzzer', { headers: session, body: { ...seed, id: 'fuzz-seed' } });
    expect(valid.status, valid.text).toBe(201);
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(editArb, { minLength: 1, maxLength: 4 }), fc.integer({ min: 10, max: 200_000 }), async (edits, depth) => {
        const body = mutated(edits, depth);
        const res = await p.request('POST', '/flows/blueprints/fuzzer', { headers: { ...session, 'content-type': 'application/json' }, rawBody: body });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expectAnswered(res, `POST ${body.slice(0, 200)}`);
        if (res.status === 400 && Array.isArray(res.body.problems)) {
          for (const problem of res.body.problems) {
            expect(typeof problem.path).toBe('string');
            expect(typeof problem.code).toBe('string');
            expect(typeof problem.message).toBe('string');
          }
        }
        expect(watch.maxBlockMs()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
      }),
      { seed: FUZZ_SEED, numRuns: 150 },
    );
    // Both outcomes were exercised, and the platform still answers.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    expect((await p.request('GET', '/flows/blueprints/fuzzer', { headers: session })).status).toBe(200);
  }, 120_000);
});

describe('random regexes in a Decision', () => {
  it('are refused on save or decide promptly on any value, never a 5xx or a stall', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(regexArb, valueArb, async (pattern, value) => {
        const id = `regex-${++sequence}`;
        const created = await p.request('POST', '/flows/blueprints/fuzzer', {
          headers: session,
          body: {
            id,
            name: id,
            accessLevel: 'Private',
            variables: [{ name: 'input' }],
            tasks: [
              { id: 'choose', label: 'Choose', type: 'decision', settings: { branches: [{ to: 'yes', conditions: [{ variable: 'input', operator: 'matches', value: pattern }] }], otherwise: 'no' } },
              { id: 'yes', label: 'Yes', type: 'setDescription', settings: { description: 'yes' } },
              { id: 'no', label: 'No', type: 'setDescription', settings: { description: 'no' } },
            ],
            connections: [
              { from: 'choose', to: 'yes' },
              { from: 'choose', to: 'no' },
            ],
          },
        });
        expectAnswered(created, `pattern ${JSON.stringify(pattern)}`);
        if (created.status === 400) {
          expect(created.body.problems.map((pr: any) => pr.path)).toContain('tasks[0].settings.branches[0].conditions[0].value');
          return;
        }
        expect(created.status, created.text).toBe(201);
        const started = await startRun(p, `/flows/blueprints/fuzzer/${id}/run`, token, { body: { input: value } });
        expectAnswered(started, `run of ${JSON.stringify(pattern)}`);
        expect(started.status, started.text).toBe(201);
        const run = await waitForRun(p, started.body.id, token);
        runs++;
        // Either a branch was chosen, or the decision said why it could not decide.
        if (run.status === 'finished') expect(['yes', 'no']).toContain(run.description);
        else {
          expect(run.status).toBe('failed');
          expect(run.error.message).toMatch(/more work than a decision may do/);
        }
        expect(watch.maxBlockMs()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
      }),
      { seed: FUZZ_SEED, numRuns: 60 },
    );
    expect(runs).toBeGreaterThan(0);
  }, 120_000);
});
