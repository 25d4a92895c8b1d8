/**
 * Flows cannot freeze the server or leak secrets (issue 11, findings 6, 7 and the flow findings):
 * Decision regexes run in linear time with capped work, patterns outside RE2 syntax are refused on
 * save, masked values never reach the run description or outputs, flows have a size limit, and a
 * restart ends the task instances of interrupted runs, not only the run.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, createFlow, enableFlows, linearFlow, startRun, waitForRun } from '../support/flows.js';
import { MAX_EVENT_LOOP_BLOCK_MS, watchEventLoop } from '../support/fuzz.js';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let aliceSession: Record<string, string>;

let seq = 0;
const fid = (base: string) => `${base}-${++seq}`;

beforeAll(async () => {
  p = await TestPlatform.start();
  await enableFlows(p);
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  aliceSession = await consoleSession(p, 'alice');
});

afterAll(async () => {
  await p?.stop();
});

/** A flow with one Decision on ?input (given at start, or set from it by a Set variables task). */
function regexFlow(id: string, pattern: string, via: 'start' | 'output'): Record<string, unknown> {
  const tested = via === 'start' ? 'input' : 'payload';
  const tasks: Record<string, unknown>[] = [
    {
      id: 'choose',
      label: 'Choose',
      type: 'decision',
      settings: { branches: [{ to: 'yes', conditions: [{ variable: tested, operator: 'matches', value: pattern }] }], otherwise: 'no' },
    },
    { id: 'yes', label: 'Yes', type: 'setDescription', settings: { description: 'matched' } },
    { id: 'no', label: 'No', type: 'setDescription', settings: { description: 'not matched' } },
  ];
  const connections = [
    { from: 'choose', to: 'yes' },
    { from: 'choose', to: 'no' },
  ];
  if (via === 'output') {
    tasks.unshift({ id: 'copy', label: 'Copy', type: 'setVariables', settings: { values: { payload: '?input' } } });
    connections.unshift({ from: 'copy', to: 'choose' });
  }
  return {
    id,
    name: id,
    accessLevel: 'Private',
    variables: [{ name: 'input', required: true }],
    ...(via === 'output' ? { outputVariables: [{ name: 'payload' }] } : {}),
    tasks,
    connections,
  };
}

async function tasksOf(runId: string, token: string): Promise<any[]> {
  const res = await p.request('GET', `/flows/taskInstances?runId=${runId}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Runs `flow` with `input` while watching the event loop; the run must end within the bound. */
async function runWatched(flow: Record<string, unknown>, input: string): Promise<{ run: any; maxBlockMs: number }> {
  await createFlow(p, 'alice', aliceSession, flow);
  const watch = watchEventLoop();
  try {
    const started = await startRun(p, `/flows/blueprints/alice/${String(flow.id)}/run`, alice, { body: { input } });
    expect(started.status, started.text).toBe(201);
    // Polling the run is the "other request": every poll is answered while the decision works.
    const run = await waitForRun(p, started.body.id, alice);
    return { run, maxBlockMs: watch.maxBlockMs() };
  } finally {
    watch.stop();
  }
}

describe('a Decision regular expression', () => {
  // `^(a+)+$` backtracks exponentially in a JavaScript RegExp: 27 × "a" + "!" took 5 s.
  const EVIL = '^(a+)+$';
  const EVIL_INPUT = `${'a'.repeat(27)}!`;

  it('cannot freeze the server as a literal pattern on a start value', async () => {
    const { run, maxBlockMs } = await runWatched(regexFlow(fid('evil-start'), EVIL, 'start'), EVIL_INPUT);
    expect(maxBlockMs).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    expect(run.status).toBe('finished');
    expect(run.description).toBe('not matched');
  });

  it('cannot freeze the server on a value that reaches it through an output variable', async () => {
    // Two characters more: four times the backtracking of the start-value case.
    const { run, maxBlockMs } = await runWatched(regexFlow(fid('evil-output'), EVIL, 'output'), `aa${EVIL_INPUT}`);
    expect(maxBlockMs).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    expect(run.status).toBe('finished');
    expect(run.description).toBe('not matched');
    // The linear-time engine still matches what the pattern describes.
    const matching = await runWatched(regexFlow(fid('evil-match'), EVIL, 'output'), 'a'.repeat(27));
    expect(matching.run.description).toBe('matched');
  });

  it('fails the task with a clear message when matching a long text would be too much work', async () => {
    // Case-insensitive, so no literal prefilter applies; ~900 states over 300,000 characters.
    const { run, maxBlockMs } = await runWatched(regexFlow(fid('costly'), '(?i)(.*a.{900})+c', 'start'), 'a'.repeat(300_000));
    expect(maxBlockMs).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ taskId: 'choose' });
    expect(run.error.message).toMatch(/more work than a decision may do/);
  });

  it('is refused on save when it is not RE2 syntax (backreference, lookaround), naming task and condition', async () => {
    for (const [pattern, why] of [
      ['^(a)\\1$', /invalid escape sequence/],
      ['^(?=a)', /unsupported Perl syntax/],
    ] as const) {
      const flow = regexFlow(fid('backref'), pattern, 'start');
      const res = await p.request('POST', '/flows/blueprints/alice', { headers: aliceSession, body: flow });
      expect(res.status, res.text).toBe(400);
      expect(res.body.message).toEqual(expect.any(String));
      const problem = res.body.problems.find((pr: any) => pr.path === 'tasks[0].settings.branches[0].conditions[0].value');
      expect(problem, res.text).toBeDefined();
      expect(problem.code).toBe('invalid');
      expect(problem.message).toContain('Decision "choose", branch 1, condition 1');
      expect(problem.message).toMatch(why);
      expect(problem.message).toMatch(/no backreferences or lookaround/);
      // Nothing was saved.
      expect((await p.request('GET', `/flows/blueprints/alice/${String(flow.id)}`, { headers: aliceSession })).status).toBe(404);
    }
  });
});

describe('masked values in Set description', () => {
  it('a reader of an Internal flow sees **** in the run and the run listing, never the value or the token', async () => {
    const id = fid('described');
    // A quote and a backslash: a secret masked in serialized JSON would miss its escaped form.
    const secret = 'hunter2-"quoted"\\key';
    const { blueprintId } = await createFlow(p, 'alice', aliceSession, {
      id,
      name: id,
      accessLevel: 'Internal',
      maskedValues: [{ name: 'apiKey' }],
      tasks: [
        { id: 'describe', label: 'Describe', type: 'setDescription', settings: { description: 'Key ?apiKey, token ?system_platformToken.' } },
      ],
      connections: [],
    });
    const put = await p.request('PUT', `/flows/blueprints/alice/${id}/maskedValues/apiKey`, { headers: aliceSession, body: { value: secret } });
    expect(put.status, put.text).toBe(204);
    const started = await startRun(p, `/flows/blueprints/alice/${id}/run`, alice);
    expect(started.status, started.text).toBe(201);
    const run = await waitForRun(p, started.body.id, alice);
    expect(run.status).toBe('finished');

    // Bob is another signed-in user: an Internal flow's runs are his to read.
    const asBob = await p.request('GET', `/flows/runs/${run.id}`, { token: bob });
    expect(asBob.status, asBob.text).toBe(200);
    expect(asBob.body.description).toBe('Key ****, token ****.');
    const listed = await p.request('GET', `/flows/runs?blueprintId=${blueprintId}`, { token: bob });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.map((r: any) => r.description)).toEqual(['Key ****, token ****.']);
    const tasks = await p.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: bob });
    expect(tasks.status, tasks.text).toBe(200);
    expect(tasks.body[0].output).toEqual({ description: 'Key ****, token ****.' });
    for (const text of [asBob.text, listed.text, tasks.text]) {
      expect(text).not.toContain('hunter2');
      expect(text).not.toMatch(/token (?!\*{4})/);
    }
  });
});

describe('masked values in an HTTP response body', () => {
  let echo: Server;
  let echoUrl: string;
  beforeAll(async () => {
    // Answers 9,990 characters, then whatever the X-Api-Key header held: the secret straddles
    // the 10,000 characters a task keeps of a body.
    echo = createServer((req, res) => res.end(`${'x'.repeat(9_990)}${String(req.headers['x-api-key'] ?? '')} and more`));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => echo.close(r));
  });

  it('a secret cut at the end of the kept body is masked, not left half shown', async () => {
    const id = fid('echoed');
    const secret = 'swordfish-0123456789-abcdef';
    await createFlow(p, 'alice', aliceSession, {
      id,
      name: id,
      accessLevel: 'Internal',
      maskedValues: [{ name: 'apiKey' }],
      outputVariables: [{ name: 'answer' }],
      tasks: [{ id: 'call', label: 'Call', type: 'httpRequest', settings: { url: `${echoUrl}/`, headers: { 'X-Api-Key': '?apiKey' }, bodyVariable: 'answer' } }],
      connections: [],
    });
    const put = await p.request('PUT', `/flows/blueprints/alice/${id}/maskedValues/apiKey`, { headers: aliceSession, body: { value: secret } });
    expect(put.status, put.text).toBe(204);
    const started = await startRun(p, `/flows/blueprints/alice/${id}/run`, alice);
    const run = await waitForRun(p, started.body.id, alice);
    expect(run.status).toBe('finished');
    const tasks = await p.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: bob });
    expect(tasks.status, tasks.text).toBe(200);
    const body = tasks.body[0].output.body as string;
    // The kept text ends where the straddling secret ends, masked (so a little under 10,000).
    expect(body).toBe(`${'x'.repeat(9_990)}****`);
    // Not even the first characters of the secret (before the fix: "swordfish-").
    expect(tasks.text).not.toContain('swordfish');
  });
});

describe('saving a flow of many large inline queries', () => {
  it('is a 400 naming the size limit when the definition is too large to store (was a 500 from storage)', async () => {
    const text = (i: number) => `# query ${i}\nSELECT * WHERE { ?a ?b ?c FILTER(${Array.from({ length: 1_500 }, () => '?a').join(' || ')}) }`;
    const id = fid('too-large');
    const res = await p.request('POST', '/flows/blueprints/alice', {
      headers: aliceSession,
      body: {
        id,
        name: id,
        accessLevel: 'Private',
        connections: [],
        tasks: Array.from({ length: 60 }, (_, i) => ({
          id: `q${i}`,
          label: `Query ${i}`,
          type: 'sparqlQuery',
          settings: { dataset: { account: 'alice', dataset: 'anything' }, query: { text: text(i) }, output: { to: 'artifact', format: 'json' } },
        })),
      },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.problems).toContainEqual(expect.objectContaining({ code: 'too-long', message: expect.stringMatching(/at most 300000 are stored/) }));
    expect((await p.request('GET', `/flows/blueprints/alice/${id}`, { token: alice })).status).toBe(404);
  });

  it('parses them off the event loop', async () => {
    // About 10,000 characters of `||` terms each, among the slowest texts for sparqljs; distinct
    // texts, so no parse is answered from the cache.
    const query = (i: number) => `# another query ${i}\nSELECT * WHERE { ?a ?b ?c FILTER(${Array.from({ length: 1_500 }, () => '?a').join(' || ')}) }`;
    // 30 of them (under the definition size limit).
    const tasks = Array.from({ length: 30 }, (_, i) => ({
      id: `q${i}`,
      label: `Query ${i}`,
      type: 'sparqlQuery',
      settings: { dataset: { account: 'alice', dataset: 'anything' }, query: { text: query(i) }, output: { to: 'artifact', format: 'json' } },
    }));
    const watch = watchEventLoop();
    try {
      const id = fid('many-queries');
      await createFlow(p, 'alice', aliceSession, { id, name: id, accessLevel: 'Private', tasks, connections: [] });
      const saved = await p.request('GET', `/flows/blueprints/alice/${id}`, { token: alice });
      expect(saved.status).toBe(200);
      expect(saved.body.definition.tasks).toHaveLength(30);
    } finally {
      expect(watch.stop()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    }
  });
});

describe('variable substitution', () => {
  it('fails the task clearly when a setting would grow past the limit, instead of building a huge text', async () => {
    const id = fid('amplify');
    await createFlow(p, 'alice', aliceSession, {
      id,
      name: id,
      accessLevel: 'Private',
      variables: [{ name: 'input', required: true }],
      outputVariables: [{ name: 'copies' }],
      // 1,000 references to a 100,000-character value: 100 million characters once filled in.
      tasks: [{ id: 'copy', label: 'Copy', type: 'setVariables', settings: { values: { copies: '?input '.repeat(1_000) } } }],
      connections: [],
    });
    const watch = watchEventLoop();
    try {
      const started = await startRun(p, `/flows/blueprints/alice/${id}/run`, alice, { body: { input: 'x'.repeat(100_000) } });
      expect(started.status, started.text).toBe(201);
      const run = await waitForRun(p, started.body.id, alice);
      expect(run.status).toBe('failed');
      expect(run.error).toMatchObject({ taskId: 'copy' });
      expect(run.error.message).toMatch(/more than 2,000,000 characters once its variables are filled in/);
      expect(watch.maxBlockMs()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    } finally {
      watch.stop();
    }
  });
});

describe('the size of a flow', () => {
  it('over the task limit is a 400 with a too-many problem, and saving huge bodies stays prompt', async () => {
    const over = linearFlow(fid('big'), 201);
    const res = await p.request('POST', '/flows/blueprints/alice', { headers: aliceSession, body: over });
    expect(res.status, res.text).toBe(400);
    expect(res.body.problems).toEqual([{ path: 'tasks', code: 'too-many', message: expect.stringContaining('at most 200 tasks; this one has 201') }]);
    expect(res.body.message).toContain('at most 200 tasks');

    const watch = watchEventLoop();
    try {
      // 3,000 real tasks (the flow of the report), then 100,000 empty ones, then 30,000 connections (the bodies stay under the 1 MiB JSON cap).
      const huge = [
        linearFlow(fid('huge'), 3_000),
        { ...linearFlow(fid('empty'), 0), tasks: Array.from({ length: 100_000 }, () => ({})) },
        { ...linearFlow(fid('wired'), 2), connections: Array.from({ length: 30_000 }, () => ({ from: 't1', to: 't2' })) },
      ];
      for (const body of huge) {
        const answer = await p.request('POST', '/flows/blueprints/alice', { headers: aliceSession, body });
        expect(answer.status, answer.text.slice(0, 300)).toBe(400);
        // Only the size problems: nothing else was checked on so large a body.
        expect(answer.body.problems.length).toBeGreaterThan(0);
        for (const problem of answer.body.problems) expect(problem.code).toBe('too-many');
      }
      expect(watch.maxBlockMs()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    } finally {
      watch.stop();
    }
    const within = linearFlow(fid('limit'), 200);
    expect((await p.request('POST', '/flows/blueprints/alice', { headers: aliceSession, body: within })).status).toBe(201);
  });
});

describe('a restart', () => {
  it('ends an interrupted run and every task instance it had going', async () => {
    // A server that accepts the download and never answers: the Load from URL task stays busy.
    const sockets = new Set<import('node:net').Socket>();
    const silent: Server = createServer(() => {});
    silent.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/never.ttl`;

    const first = await TestPlatform.start();
    let second: TestPlatform | undefined;
    try {
      await enableFlows(first);
      const carol = await first.createUser('carol');
      const session = await consoleSession(first, 'carol');
      await first.createDataset('carol', 'target', 'private', carol);
      const id = 'interrupted';
      await createFlow(first, 'carol', session, {
        id,
        name: id,
        accessLevel: 'Private',
        tasks: [
          { id: 'load', label: 'Load', type: 'loadFromUrl', settings: { url, dataset: { account: 'carol', dataset: 'target' }, format: 'turtle' } },
          { id: 'after', label: 'After', type: 'setDescription', settings: { description: 'loaded' } },
        ],
        connections: [{ from: 'load', to: 'after' }],
      });
      const started = await startRun(first, `/flows/blueprints/carol/${id}/run`, carol);
      expect(started.status, started.text).toBe(201);
      const runId = started.body.id as string;
      // Wait (bounded) until the task is recorded as running.
      let loadStatus: string | undefined;
      for (let i = 0; i < 500 && loadStatus !== 'running'; i++) {
        const res = await first.request('GET', `/flows/taskInstances?runId=${runId}`, { token: carol });
        loadStatus = res.body.find((t: any) => t.taskId === 'load')?.status;
        if (loadStatus !== 'running') await new Promise((r) => setTimeout(r, 20));
      }
      expect(loadStatus).toBe('running');
      await first.stop({ keepData: true });

      second = await TestPlatform.start({ dataDir: first.dataDir });
      const run = await second.request('GET', `/flows/runs/${runId}`, { token: carol });
      expect(run.status, run.text).toBe(200);
      // Stopping the platform does not settle its runs (its store is going away): the next start does.
      expect(run.body.status).toBe('failed');
      expect(run.body.error.message).toMatch(/platform stopped while the run was going/);
      const tasks = await second.request('GET', `/flows/taskInstances?runId=${runId}`, { token: carol });
      const statuses = Object.fromEntries(tasks.body.map((t: any) => [t.taskId, t.status]));
      for (const status of Object.values(statuses)) expect(['running', 'pending', 'waiting']).not.toContain(status);
      expect(statuses.after).toBe('neverStarted');
      const load = tasks.body.find((t: any) => t.taskId === 'load');
      expect(load.status).toBe('failed');
      expect(load.error).toMatch(/platform stopped while the run was going/);
    } finally {
      await second?.stop();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await rm(first.dataDir, { recursive: true, force: true });
    }
  });
});
