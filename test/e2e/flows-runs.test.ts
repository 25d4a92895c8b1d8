/**
 * Flow runs end to end through HTTP: variables and their precedence, presets, system variables
 * (the run's platform token), masked values, run and task statuses, decisions, the control and
 * SPARQL tasks, acting as the starter, and the run listing with its filters.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { importFiles } from '../support/imports.js';
import { TestPlatform, type ApiResponse } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let aliceSession: Record<string, string>;
let bobSession: Record<string, string>;
let dataDatasetId: string;

/** A small HTTP server the httpRequest tasks call: it records what it received and echoes the headers. */
let echo: Server;
let echoUrl: string;
const received: { url: string; headers: IncomingHttpHeaders }[] = [];

const EX = 'https://ex.org/';
const DATA = `<${EX}a> <${EX}name> "Alice" ; a <${EX}Person> .
<${EX}b> <${EX}name> "Bob \\"quoted\\" } ; DROP ALL" ; a <${EX}Person> .
<${EX}c> <${EX}name> "${EX}Person" .
`;

let seq = 0;
/** A unique flow id per test. */
const fid = (base: string) => `${base}-${++seq}`;

const flowPath = (id: string, account = 'alice') => `/flows/blueprints/${account}/${id}`;

async function newFlow(definition: Record<string, unknown>, account = 'alice', session = aliceSession): Promise<{ path: string; blueprintId: string }> {
  const created = await createFlow(p, account, session, { name: String(definition.id), accessLevel: 'Private', connections: [], ...definition });
  return { path: flowPath(String(definition.id), account), blueprintId: created.blueprintId };
}

/** Starts a run (must answer 201) and waits for it to end. */
async function runToEnd(path: string, options: { query?: Record<string, string>; body?: unknown; token?: string } = {}): Promise<any> {
  const token = options.token ?? alice;
  const started = await startRun(p, `${path}/run`, token, options);
  expect(started.status, started.text).toBe(201);
  return waitForRun(p, started.body.id, token);
}

async function tasksOf(runId: string, token = alice): Promise<any[]> {
  const res = await p.request('GET', `/flows/taskInstances?runId=${runId}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function taskOf(runId: string, taskId: string, token = alice): Promise<any> {
  const task = (await tasksOf(runId, token)).find((t) => t.taskId === taskId);
  expect(task, `task ${taskId} of run ${runId}`).toBeDefined();
  return task;
}

const statusesOf = async (runId: string) => Object.fromEntries((await tasksOf(runId)).map((t) => [t.taskId, t.status]));

/** Polls `check` until it gives a value (bounded). */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < 2_000 && Date.now() < deadline; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

const runsOf = async (query: string, token = alice): Promise<ApiResponse> => p.request('GET', `/flows/runs?${query}`, { token });

beforeAll(async () => {
  echo = createServer((req, res) => {
    received.push({ url: req.url ?? '', headers: req.headers });
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, headers: req.headers }));
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;

  p = await TestPlatform.start();
  await enableFlows(p, { sparqlUpdateTaskEnabled: true });
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  aliceSession = await consoleSession(p, 'alice');
  bobSession = await consoleSession(p, 'bob');
  dataDatasetId = (await p.createDataset('alice', 'data', 'private', alice)).id;
  const job = await importFiles(p, alice, 'alice/data', [{ name: 'data.ttl', content: DATA }], { defaultGraphName: `${EX}graphs/data` });
  expect(job.status, JSON.stringify(job)).toBe('finished');
  await p.createDataset('alice', 'target', 'private', alice);
  await p.createDataset('bob', 'secret', 'private', bob);
  const bobJob = await importFiles(p, bob, 'bob/secret', [{ name: 's.ttl', content: `<${EX}s> <${EX}name> "Secret" .` }], { defaultGraphName: `${EX}graphs/s` });
  expect(bobJob.status, JSON.stringify(bobJob)).toBe('finished');
});

afterAll(async () => {
  await p?.stop();
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
});

// ---- Variables, presets and precedence ----

/** A flow whose Set variables task echoes its variables, with two presets (one the default). */
function variablesFlow(id: string): Record<string, unknown> {
  return {
    id,
    variables: [
      { name: 'color', allowedOptions: ['red', 'green'] },
      { name: 'who', required: true },
      { name: 'note' },
    ],
    outputVariables: [{ name: 'echo' }],
    presets: [
      { name: 'Default', values: { who: 'default-who', color: 'green', note: 'default-note' }, default: true },
      { name: 'Other', values: { who: 'other-who', note: 'other-note' } },
      { name: 'Night run (Ü)', values: { who: 'night-who', color: 'red' } },
    ],
    tasks: [{ id: 'echoTask', label: 'Echo', type: 'setVariables', settings: { values: { echo: 'who=?who color=?color note=?note by=?system_triggererAccountName' } } }],
  };
}

const echoOf = async (runId: string) => (await taskOf(runId, 'echoTask')).output.variables.echo;

describe('variables at run start', () => {
  let path: string;
  beforeAll(async () => {
    path = (await newFlow(variablesFlow(fid('vars')))).path;
  });

  it('are taken from the query string', async () => {
    const run = await runToEnd(path, { query: { who: 'q', color: 'red' } });
    expect(run.status).toBe('finished');
    expect(run.variables).toEqual({ who: 'q', color: 'red', system_triggererAccountName: 'alice' });
    expect(await echoOf(run.id)).toBe('who=q color=red note= by=alice');
  });

  it('are taken from a JSON body', async () => {
    const run = await runToEnd(path, { body: { who: 'b', note: 'from the body', color: 'green' } });
    expect(run.status).toBe('finished');
    expect(run.variables).toEqual({ who: 'b', note: 'from the body', color: 'green', system_triggererAccountName: 'alice' });
    expect(await echoOf(run.id)).toBe('who=b color=green note=from the body by=alice');
  });

  it('take numbers and booleans in a JSON body as text, and refuse lists and objects', async () => {
    const run = await runToEnd(path, { body: { who: 42, note: true } });
    expect(run.variables).toMatchObject({ who: '42', note: 'true' });
    for (const note of [['a'], { a: 1 }, null]) {
      const res = await startRun(p, `${path}/run`, alice, { body: { who: 'x', note } });
      expect(res.status, JSON.stringify(note)).toBe(400);
      expect(res.body.message).toMatch(/note/);
    }
    const notAnObject = await startRun(p, `${path}/run`, alice, { body: ['who'] });
    expect(notAnObject.status).toBe(400);
  });

  it('refuse an unknown variable, naming it', async () => {
    const res = await startRun(p, `${path}/run`, alice, { query: { who: 'x', nosuchVariable: '1' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/nosuchVariable/);
  });

  it('refuse a system variable', async () => {
    const res = await startRun(p, `${path}/run`, alice, { query: { who: 'x', system_triggererAccountName: 'mallory' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/system_triggererAccountName/);
    const body = await startRun(p, `${path}/run`, alice, { body: { who: 'x', system_platformToken: 'forged' } });
    expect(body.status).toBe(400);
    expect(body.body.message).toMatch(/system_platformToken/);
  });

  it('refuse an output variable', async () => {
    const res = await startRun(p, `${path}/run`, alice, { query: { who: 'x', echo: 'given' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/"echo" is an output variable/);
  });

  it('refuse a value outside the allowed options, naming the variable', async () => {
    const res = await startRun(p, `${path}/run`, alice, { query: { who: 'x', color: 'blue' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/color/);
    expect(res.body.message).toMatch(/blue/);
  });

  it('refuse the same variable twice in the query string', async () => {
    const res = await p.request('POST', `${path}/run?who=a&who=b`, { token: alice });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/who/);
    const both = await p.request('POST', `${path}/run?who=a`, { token: alice, body: { who: 'b' } });
    expect(both.status).toBe(400);
  });

  it('refuse a run without a required variable, creating no run', async () => {
    const id = fid('required');
    const { blueprintId } = await newFlow(variablesFlow(id));
    const res = await startRun(p, `${flowPath(id)}/run`, alice, { query: { color: 'red' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/"who"/);
    const empty = await startRun(p, `${flowPath(id)}/run`, alice, { query: { who: '' } });
    expect(empty.status).toBe(400);
    for (const filter of [id, blueprintId]) {
      const listed = await runsOf(`blueprintId=${filter}`);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([]);
    }
  });

  it('are unset by an empty value, overriding a preset', async () => {
    const run = await runToEnd(`${path}/triggers/Other`, { query: { note: '' } });
    expect(run.status).toBe('finished');
    expect(run.variables).toEqual({ who: 'other-who', system_triggererAccountName: 'alice' });
    expect(run.variables).not.toHaveProperty('note');
    expect(await echoOf(run.id)).toBe('who=other-who color= note= by=alice');
    // Unsetting a required variable: the run cannot start.
    const res = await startRun(p, `${path}/triggers/Other/run`, alice, { query: { who: '' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/"who"/);
  });
});

describe('value precedence', () => {
  let path: string;
  beforeAll(async () => {
    path = (await newFlow(variablesFlow(fid('precedence')))).path;
  });

  it('takes the preset, then the given values', async () => {
    const presetOnly = await runToEnd(`${path}/triggers/Other`);
    expect(presetOnly.preset).toBe('Other');
    expect(presetOnly.variables).toEqual({ who: 'other-who', note: 'other-note', system_triggererAccountName: 'alice' });
    expect(await echoOf(presetOnly.id)).toBe('who=other-who color= note=other-note by=alice');

    const given = await runToEnd(`${path}/triggers/Other`, { query: { note: 'given-note', color: 'red' } });
    expect(given.variables).toEqual({ who: 'other-who', note: 'given-note', color: 'red', system_triggererAccountName: 'alice' });
    expect(await echoOf(given.id)).toBe('who=other-who color=red note=given-note by=alice');

    const byDefault = await runToEnd(`${path}/triggers/Default`, { body: { who: 'body-who' } });
    expect(byDefault.variables).toEqual({ who: 'body-who', color: 'green', note: 'default-note', system_triggererAccountName: 'alice' });
  });

  it('does not use the default preset when no preset is named', async () => {
    const run = await runToEnd(path, { query: { who: 'plain' } });
    expect(run).not.toHaveProperty('preset');
    expect(run.variables).toEqual({ who: 'plain', system_triggererAccountName: 'alice' });
    expect(await echoOf(run.id)).toBe('who=plain color= note= by=alice');
    // The default preset's required value is not filled in either.
    expect((await startRun(p, `${path}/run`, alice)).status).toBe(400);
  });

  it('finds a preset whose name needs encoding in the path', async () => {
    const run = await runToEnd(`${path}/triggers/${encodeURIComponent('Night run (Ü)')}`);
    expect(run.preset).toBe('Night run (Ü)');
    expect(run.variables).toEqual({ who: 'night-who', color: 'red', system_triggererAccountName: 'alice' });
  });

  it('answers 404 for an unknown preset', async () => {
    const res = await startRun(p, `${path}/triggers/Nope/run`, alice, { query: { who: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/Nope/);
  });

  it('never lets system variables be overridden', async () => {
    const res = await startRun(p, `${path}/triggers/Other/run`, alice, { query: { system_triggererAccountName: 'bob' } });
    expect(res.status).toBe(400);
    const run = await runToEnd(`${path}/triggers/Other`);
    expect(run.variables.system_triggererAccountName).toBe('alice');
    expect(await echoOf(run.id)).toMatch(/by=alice$/);
  });
});

// ---- System variables, how a run was started ----

describe('system variables', () => {
  it('set system_triggererAccountName on every run, to whoever started it', async () => {
    const id = fid('triggerer');
    const { path } = await newFlow({
      id,
      outputVariables: [{ name: 'by' }],
      tasks: [{ id: 'who', label: 'Who', type: 'setVariables', settings: { values: { by: '?system_triggererAccountName' } } }],
    });
    const byToken = await runToEnd(path);
    expect(byToken.variables).toEqual({ system_triggererAccountName: 'alice' });
    expect(byToken.startedBy).toBe('alice');
    expect((await taskOf(byToken.id, 'who')).output).toEqual({ variables: { by: 'alice' } });
  });

  it('HTTP request: the response status and body go into output variables for later tasks', async () => {
    const { path } = await newFlow({
      id: fid('http-out'),
      outputVariables: [{ name: 'code' }, { name: 'answer' }],
      tasks: [
        { id: 'ask', label: 'Ask', type: 'httpRequest', settings: { url: `${p.url}/info`, statusVariable: 'code', bodyVariable: 'answer' } },
        { id: 'tell', label: 'Tell', type: 'setDescription', settings: { description: 'status ?code, ?answer' } },
      ],
      connections: [{ from: 'ask', to: 'tell' }],
    });
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(run.description).toMatch(/^status 200, \{/);
    expect((await taskOf(run.id, 'ask')).output.variables.code).toBe('200');
    // Only declared output variables may receive them.
    const bad = await p.request('POST', '/flows/blueprints/alice', {
      headers: aliceSession,
      body: { id: fid('http-bad'), name: 'Bad', accessLevel: 'Private', tasks: [{ id: 'ask', label: 'Ask', type: 'httpRequest', settings: { url: 'https://x.example/', statusVariable: 'nowhere' } }], connections: [] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.problems[0]).toMatchObject({ code: 'unknown-output-variable', path: 'tasks[0].settings.statusVariable' });
  });

  it('give a platform token for the starter, masked everywhere and valid only while the run lasts', async () => {
    const id = fid('token');
    const { path } = await newFlow({
      id,
      outputVariables: [{ name: 'tok' }],
      tasks: [
        { id: 'me', label: 'Who am I', type: 'httpRequest', settings: { url: `${p.url}/me`, headers: { Authorization: 'Bearer ?system_platformToken' } } },
        { id: 'leak', label: 'Echo the token', type: 'httpRequest', settings: { url: `${echoUrl}/echo/\\?t=?system_platformToken`, headers: { Authorization: 'Bearer ?system_platformToken' } } },
        { id: 'keep', label: 'Keep the token', type: 'setVariables', settings: { values: { tok: 'token ?system_platformToken' } } },
        { id: 'pause', label: 'Pause', type: 'wait', settings: { seconds: 2 } },
      ],
      connections: [
        { from: 'me', to: 'leak' },
        { from: 'leak', to: 'keep' },
        { from: 'keep', to: 'pause' },
      ],
    });
    const before = received.length;
    const started = await startRun(p, `${path}/run`, alice);
    expect(started.status, started.text).toBe(201);
    const runId = started.body.id as string;

    // While the run lasts, the starter's token listing shows the run's token.
    const tokens = await p.request('GET', '/accounts/alice/tokens', { token: alice });
    expect(tokens.status).toBe(200);
    const runTokens = tokens.body.filter((t: any) => String(t.description).startsWith(`Flow run ${runId}`));
    expect(runTokens).toHaveLength(1);

    const run = await waitForRun(p, runId, alice);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');

    const me = await taskOf(runId, 'me');
    expect(me.output.status).toBe(200);
    expect(JSON.parse(me.output.body)).toMatchObject({ accountName: 'alice' });

    // The echo server saw the real token; the run shows **** in its place.
    const seen = received.slice(before).find((r) => r.url.startsWith('/echo/'));
    expect(seen).toBeDefined();
    const token = String(seen!.headers.authorization).replace(/^Bearer /, '');
    expect(token.length).toBeGreaterThan(10);
    expect(decodeURIComponent(seen!.url)).toBe(`/echo/?t=${token}`);

    const leak = await taskOf(runId, 'leak');
    expect(leak.log.join('\n')).toContain('/echo/?t=****');
    expect(JSON.parse(leak.output.body).headers.authorization).toBe('Bearer ****');
    expect((await taskOf(runId, 'keep')).output).toEqual({ variables: { tok: 'token ****' } });

    const texts = [
      (await p.request('GET', `/flows/runs/${runId}`, { token: alice })).text,
      (await p.request('GET', `/flows/taskInstances?runId=${runId}`, { token: alice })).text,
      (await runsOf(`blueprintId=${id}`)).text,
    ];
    for (const text of texts) {
      expect(text).not.toContain(token);
      expect(text).not.toContain('system_platformToken"');
    }

    // After the run: the token is gone from the listing and no longer works.
    const after = await p.request('GET', '/accounts/alice/tokens', { token: alice });
    expect(after.body.some((t: any) => String(t.description).startsWith(`Flow run ${runId}`))).toBe(false);
    expect((await p.request('GET', '/me', { token })).status).toBe(401);
  });

  it('record startedFrom.type: api for an API token, manual from a console session', async () => {
    const { path } = await newFlow({
      id: fid('started'),
      outputVariables: [{ name: 'x' }],
      tasks: [{ id: 't', label: 'T', type: 'setVariables', settings: { values: { x: '1' } } }],
    });
    const api = await runToEnd(path);
    expect(api.startedFrom.type).toBe('api');
    const manualStart = await p.request('POST', `${path}/run`, { headers: aliceSession });
    expect(manualStart.status, manualStart.text).toBe(201);
    expect(manualStart.body.startedFrom.type).toBe('manual');
    const manual = await waitForRun(p, manualStart.body.id, alice);
    expect(manual).toMatchObject({ status: 'finished', startedFrom: { type: 'manual' }, startedBy: 'alice' });
  });
});

// ---- Masked values ----

describe('masked values', () => {
  it('fail a run when unset, and are usable but shown as **** once set', async () => {
    const id = fid('masked');
    const { path } = await newFlow({
      id,
      maskedValues: [{ name: 'apiKey', description: 'The key' }],
      outputVariables: [{ name: 'copy' }],
      tasks: [
        { id: 'call', label: 'Call', type: 'httpRequest', settings: { url: `${echoUrl}/masked`, headers: { 'X-Api-Key': '?apiKey' } } },
        { id: 'copyIt', label: 'Copy', type: 'setVariables', settings: { values: { copy: 'key=?apiKey' } } },
        { id: 'me', label: 'Me', type: 'httpRequest', settings: { url: `${p.url}/me`, headers: { Authorization: 'Bearer ?apiKey' } } },
      ],
      connections: [
        { from: 'call', to: 'copyIt' },
        { from: 'copyIt', to: 'me' },
      ],
    });

    const unset = await runToEnd(path);
    expect(unset.status).toBe('failed');
    expect(unset.error.message).toMatch(/\?apiKey has no value set/);
    const call = await taskOf(unset.id, 'call');
    expect(call.status).toBe('failed');
    expect(call.error).toMatch(/\?apiKey has no value set/);
    expect(call.log.join('\n')).toMatch(/\?apiKey has no value set/);
    expect(await statusesOf(unset.id)).toEqual({ call: 'failed', copyIt: 'neverStarted', me: 'neverStarted' });

    // A value: an API token of alice's, so the platform accepts it.
    const secret = await p.createToken('alice', alice);
    const put = await p.request('PUT', `${path}/maskedValues/apiKey`, { headers: aliceSession, body: { value: secret } });
    expect(put.status, put.text).toBe(204);

    const before = received.length;
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(received.slice(before).find((r) => r.url === '/masked')?.headers['x-api-key']).toBe(secret);
    expect(JSON.parse((await taskOf(run.id, 'call')).output.body).headers['x-api-key']).toBe('****');
    expect((await taskOf(run.id, 'copyIt')).output).toEqual({ variables: { copy: 'key=****' } });
    const me = await taskOf(run.id, 'me');
    expect(me.output.status).toBe(200);
    expect(JSON.parse(me.output.body).accountName).toBe('alice');
    const texts = [(await p.request('GET', `/flows/runs/${run.id}`, { token: alice })).text, (await p.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: alice })).text];
    for (const text of texts) expect(text).not.toContain(secret);
  });
});

describe('masked values in decisions', () => {
  it('fail the run when unset, and are compared once set', async () => {
    const { path } = await newFlow(
      {
        ...decisionFlow(fid('masked-decision'), { variable: 'key', operator: 'equals', value: 'open sesame' }),
        variables: [],
        maskedValues: [{ name: 'key' }],
      },
    );
    const unset = await runToEnd(path);
    expect(unset.status).toBe('failed');
    expect(unset.error).toMatchObject({ taskId: 'd', message: expect.stringMatching(/\?key has no value set/) });
    expect(await statusesOf(unset.id)).toEqual({ d: 'failed', yes: 'neverStarted', no: 'neverStarted' });

    expect((await p.request('PUT', `${path}/maskedValues/key`, { headers: aliceSession, body: { value: 'open sesame' } })).status).toBe(204);
    const set = await runToEnd(path);
    expect(set.status).toBe('finished');
    expect(await statusesOf(set.id)).toEqual({ d: 'finished', yes: 'finished', no: 'skipped' });
  });
});

// ---- Statuses ----

describe('run and task statuses', () => {
  it('finished: every task finished', async () => {
    const { path } = await newFlow({
      id: fid('finished'),
      outputVariables: [{ name: 'a' }, { name: 'b' }],
      tasks: [
        { id: 'one', label: 'One', type: 'setVariables', settings: { values: { a: '1' } } },
        { id: 'two', label: 'Two', type: 'setVariables', settings: { values: { b: '?a+1' } } },
      ],
      connections: [{ from: 'one', to: 'two' }],
    });
    const run = await runToEnd(path);
    expect(run).toMatchObject({ status: 'finished', startedBy: 'alice' });
    expect(run.error).toBeUndefined();
    expect(run.finishedAt >= run.createdAt).toBe(true);
    expect(await statusesOf(run.id)).toEqual({ one: 'finished', two: 'finished' });
    expect((await taskOf(run.id, 'two')).output).toEqual({ variables: { b: '1+1' } });
  });

  it('failed: the error is on the run and the task; later tasks never started', async () => {
    const { path } = await newFlow({
      id: fid('failed'),
      outputVariables: [{ name: 'x' }],
      tasks: [
        { id: 'query', label: 'Query a missing dataset', type: 'sparqlQuery', settings: { dataset: { account: 'alice', dataset: 'nosuchdataset' }, query: { text: 'SELECT * WHERE { ?s ?p ?o }' }, output: { to: 'artifact', format: 'json' } } },
        { id: 'after', label: 'After', type: 'setVariables', settings: { values: { x: '1' } } },
      ],
      connections: [{ from: 'query', to: 'after' }],
    });
    const run = await runToEnd(path);
    expect(run.status).toBe('failed');
    expect(run.error.taskId).toBe('query');
    expect(run.error.message).toMatch(/nosuchdataset/);
    const query = await taskOf(run.id, 'query');
    expect(query.status).toBe('failed');
    expect(query.error).toBe(run.error.message);
    expect(await statusesOf(run.id)).toEqual({ query: 'failed', after: 'neverStarted' });
  });

  it('timeout: a wait longer than its Timeout', async () => {
    const { path } = await newFlow({
      id: fid('timeout'),
      variables: [{ name: 'delay' }],
      outputVariables: [{ name: 'x' }],
      tasks: [
        { id: 'slow', label: 'Slow', type: 'wait', settings: { seconds: '?delay' }, timeoutSeconds: 1 },
        { id: 'after', label: 'After', type: 'setVariables', settings: { values: { x: '1' } } },
      ],
      connections: [{ from: 'slow', to: 'after' }],
    });
    const started = Date.now();
    const run = await runToEnd(path, { query: { delay: '5' } });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.status).toBe('timeout');
    expect(run.error).toMatchObject({ taskId: 'slow', message: expect.stringMatching(/Timeout/) });
    expect(await statusesOf(run.id)).toEqual({ slow: 'timeout', after: 'neverStarted' });
    // Within the Timeout the same flow finishes.
    const quick = await runToEnd(path, { query: { delay: '0' } });
    expect(quick.status).toBe('finished');
  });

  it('aborted by a Stop run task, with its reason; the branch not chosen is skipped', async () => {
    const { path } = await newFlow({
      id: fid('stop'),
      variables: [{ name: 'maxErrors' }],
      outputVariables: [{ name: 'x' }],
      tasks: [
        { id: 'check', label: 'Check', type: 'decision', settings: { branches: [{ to: 'halt', conditions: [{ variable: 'maxErrors', operator: 'lt', value: '1' }] }], otherwise: 'goOn' } },
        { id: 'halt', label: 'Halt', type: 'stopRun', settings: { reason: 'maxErrors is ?maxErrors' } },
        { id: 'goOn', label: 'Go on', type: 'setVariables', settings: { values: { x: 'on' } } },
        { id: 'last', label: 'Last', type: 'setVariables', settings: { values: { x: 'last' } } },
      ],
      connections: [
        { from: 'check', to: 'halt' },
        { from: 'check', to: 'goOn' },
        { from: 'goOn', to: 'last' },
      ],
    });
    const stopped = await runToEnd(path, { query: { maxErrors: '0' } });
    expect(stopped.status).toBe('aborted');
    expect(stopped.error).toMatchObject({ taskId: 'halt' });
    expect(stopped.error.message).toContain('maxErrors is 0');
    // goOn was not chosen, and last is fed only by it: both skipped, though the run ended early.
    expect(await statusesOf(stopped.id)).toEqual({ check: 'finished', halt: 'aborted', goOn: 'skipped', last: 'skipped' });

    const ran = await runToEnd(path, { query: { maxErrors: '5' } });
    expect(ran.status).toBe('finished');
    expect(await statusesOf(ran.id)).toEqual({ check: 'finished', halt: 'skipped', goOn: 'finished', last: 'finished' });
  });

  it('aborted from the API while waiting; aborting again is a conflict', async () => {
    const { path } = await newFlow({
      id: fid('abort'),
      outputVariables: [{ name: 'x' }],
      tasks: [
        { id: 'pause', label: 'Pause', type: 'wait', settings: { seconds: 30 } },
        { id: 'after', label: 'After', type: 'setVariables', settings: { values: { x: '1' } } },
      ],
      connections: [{ from: 'pause', to: 'after' }],
    });
    const started = await startRun(p, `${path}/run`, alice);
    expect(started.status).toBe(201);
    // pending (waiting to start) until its first task starts, then running.
    expect(started.body.status).toBe('pending');
    const runId = started.body.id as string;
    await until('the wait task starts', async () => ((await taskOf(runId, 'pause')).status !== 'pending' ? true : undefined));
    expect((await p.request('GET', `/flows/runs/${runId}`, { token: alice })).body.status).toBe('running');

    // Someone who cannot see the run cannot abort it.
    expect((await p.request('POST', `/flows/runs/${runId}/abort`, { token: bob })).status).toBe(404);
    const t0 = Date.now();
    const aborted = await p.request('POST', `/flows/runs/${runId}/abort`, { token: alice });
    expect(aborted.status, aborted.text).toBe(200);
    expect(aborted.body.status).toBe('aborted');
    expect(aborted.body.error.message).toMatch(/alice/);
    const run = await waitForRun(p, runId, alice, 5_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(run.status).toBe('aborted');
    expect(run.finishedAt).toBeDefined();
    // The wait was cut short: aborted, not finished.
    expect(await statusesOf(runId)).toEqual({ pause: 'aborted', after: 'neverStarted' });

    const again = await p.request('POST', `/flows/runs/${runId}/abort`, { token: alice });
    expect(again.status).toBe(409);
    expect((await p.request('POST', '/flows/runs/nosuchrun/abort', { token: alice })).status).toBe(404);
  });
});

// ---- Decisions ----

function decisionFlow(id: string, condition: Record<string, unknown>): Record<string, unknown> {
  return {
    id,
    variables: [{ name: 'v' }],
    outputVariables: [{ name: 'r' }],
    tasks: [
      { id: 'd', label: 'Decide', type: 'decision', settings: { branches: [{ to: 'yes', conditions: [condition] }], otherwise: 'no' } },
      { id: 'yes', label: 'Yes', type: 'setVariables', settings: { values: { r: 'yes' } } },
      { id: 'no', label: 'No', type: 'setVariables', settings: { values: { r: 'no' } } },
    ],
    connections: [
      { from: 'd', to: 'yes' },
      { from: 'd', to: 'no' },
    ],
  };
}

describe('decision operators', () => {
  // [operator, condition value, a value for which it holds, one for which it does not (undefined: unset)]
  const cases: [string, string | undefined, string | undefined, string | undefined][] = [
    ['equals', 'abc', 'abc', 'abd'],
    ['notEquals', 'abc', 'abd', 'abc'],
    ['contains', 'bc', 'abcd', 'acbd'],
    ['matches', '^a\\d+$', 'a123', 'a12b'],
    ['lt', '10', '9', '10'],
    ['le', '10', '10.0', '10.5'],
    ['gt', '10', '100', '9'],
    ['ge', '10', '10', '9.99'],
    ['empty', undefined, undefined, 'x'],
    ['notEmpty', undefined, 'x', undefined],
  ];
  for (const [operator, value, holds, fails] of cases) {
    it(`${operator} chooses its branch and skips the other`, async () => {
      const { path } = await newFlow(decisionFlow(fid(`op-${operator.toLowerCase()}`), { variable: 'v', operator, ...(value !== undefined ? { value } : {}) }));
      const yes = await runToEnd(path, { query: holds !== undefined ? { v: holds } : {} });
      expect(yes.status).toBe('finished');
      expect(await statusesOf(yes.id)).toEqual({ d: 'finished', yes: 'finished', no: 'skipped' });
      expect((await taskOf(yes.id, 'd')).output).toEqual({ branch: 'yes' });
      const no = await runToEnd(path, { query: fails !== undefined ? { v: fails } : {} });
      expect(no.status).toBe('finished');
      expect(await statusesOf(no.id)).toEqual({ d: 'finished', yes: 'skipped', no: 'finished' });
    });
  }

  it('fails a numeric comparison of a non-number', async () => {
    const { path } = await newFlow(decisionFlow(fid('op-nan'), { variable: 'v', operator: 'gt', value: '1' }));
    const run = await runToEnd(path, { query: { v: 'many' } });
    expect(run.status).toBe('failed');
    expect(run.error.message).toMatch(/not a number/);
    expect(await statusesOf(run.id)).toEqual({ d: 'failed', yes: 'neverStarted', no: 'neverStarted' });
  });
});

// ---- Set description ----

describe('set description', () => {
  it('sets the run description; over 1,000 characters after substitution the task fails', async () => {
    const { path } = await newFlow({
      id: fid('describe'),
      variables: [{ name: 'what' }],
      tasks: [{ id: 'desc', label: 'Describe', type: 'setDescription', settings: { description: 'Loaded ?what by ?system_triggererAccountName.' } }],
    });
    const run = await runToEnd(path, { query: { what: 'the museum' } });
    expect(run.status).toBe('finished');
    expect(run.description).toBe('Loaded the museum by alice.');
    const listed = await runsOf(`blueprintId=${run.flowId}`);
    expect(listed.body.find((r: any) => r.id === run.id).description).toBe('Loaded the museum by alice.');

    const long = await runToEnd(path, { body: { what: 'x'.repeat(1_000) } });
    expect(long.status).toBe('failed');
    expect(long.error.message).toMatch(/1,?000/);
    expect(long.description).toBeUndefined();
    expect((await taskOf(long.id, 'desc')).status).toBe('failed');
  });
});

// ---- SPARQL query and update tasks ----

describe('SPARQL query task', () => {
  it('writes a CONSTRUCT to a graph and saves a SELECT as CSV and JSON files', async () => {
    const graph = `${EX}graphs/labels`;
    const { path } = await newFlow({
      id: fid('sparql'),
      tasks: [
        {
          id: 'construct',
          label: 'Construct labels',
          type: 'sparqlQuery',
          settings: {
            dataset: { account: 'alice', dataset: 'data' },
            query: { text: `CONSTRUCT { ?s <${EX}label> ?n } WHERE { ?s <${EX}name> ?n }` },
            output: { to: 'graph', dataset: { account: 'alice', dataset: 'target' }, graph, overwrite: true },
          },
        },
        {
          id: 'csv',
          label: 'Names as CSV',
          type: 'sparqlQuery',
          settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text: `SELECT ?s ?n WHERE { ?s <${EX}name> ?n } ORDER BY ?s` }, output: { to: 'artifact', format: 'csv', fileName: 'names.csv' } },
        },
        {
          id: 'json',
          label: 'Names as JSON',
          type: 'sparqlQuery',
          settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text: `SELECT ?s ?n WHERE { ?s <${EX}name> ?n } ORDER BY ?s` }, output: { to: 'artifact', format: 'json' } },
        },
      ],
    });
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');

    // The graph.
    expect((await taskOf(run.id, 'construct')).output).toEqual({ graph, statements: 3 });
    const graphs = await p.request('GET', '/datasets/alice/target/graphs', { token: alice });
    expect(graphs.body.map((g: any) => [g.graphName, g.numberOfStatements])).toContainEqual([graph, 3]);
    const nt = await p.request('GET', `/datasets/alice/target/download.nt?graph=${encodeURIComponent(graph)}`, { token: alice });
    expect(nt.status).toBe(200);
    expect(nt.text).toContain(`<${EX}a> <${EX}label> "Alice" .`);
    const ask = await p.request('GET', `/datasets/alice/target/sparql?query=${encodeURIComponent(`ASK { GRAPH <${graph}> { <${EX}a> <${EX}label> "Alice" } }`)}`, {
      token: alice,
      headers: { accept: 'application/sparql-results+json' },
    });
    expect(ask.status, ask.text).toBe(200);
    expect(JSON.parse(ask.text).boolean).toBe(true);

    // The files.
    const csv = await taskOf(run.id, 'csv');
    expect(csv.artifacts).toHaveLength(1);
    expect(csv.artifacts[0]).toMatchObject({ fileName: 'names.csv', contentType: 'text/csv' });
    const csvFile = await fetch(csv.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
    expect(csvFile.status).toBe(200);
    expect(csvFile.headers.get('content-type')).toMatch(/^text\/csv/);
    const csvLines = (await csvFile.text()).trim().split(/\r?\n/);
    expect(csvLines[0]).toBe('s,n');
    expect(csvLines[1]).toBe(`${EX}a,Alice`);
    expect(csvLines).toHaveLength(4);

    const json = await taskOf(run.id, 'json');
    expect(json.artifacts[0]).toMatchObject({ fileName: 'json.json', contentType: 'application/sparql-results+json' });
    const jsonFile = await fetch(json.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
    expect(jsonFile.status).toBe(200);
    const results = JSON.parse(await jsonFile.text());
    expect(results.head.vars).toEqual(['s', 'n']);
    expect(results.results.bindings).toHaveLength(3);
    expect(results.results.bindings[0]).toMatchObject({ s: { type: 'uri', value: `${EX}a` }, n: { value: 'Alice' } });
    // Files need the right to read the run.
    expect((await fetch(json.artifacts[0].url, { headers: { authorization: `Bearer ${bob}` } })).status).toBe(404);
  });

  it('adds to a graph without overwrite, and replaces it with overwrite', async () => {
    const graph = `${EX}graphs/added`;
    const task = (id: string, text: string, overwrite: boolean) => ({
      id,
      label: id,
      type: 'sparqlQuery',
      settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text }, output: { to: 'graph', dataset: { account: 'alice', dataset: 'target' }, graph, overwrite } },
    });
    const add = await newFlow({ id: fid('add'), tasks: [task('names', `CONSTRUCT { ?s <${EX}n> ?n } WHERE { ?s <${EX}name> ?n }`, false)] });
    const types = await newFlow({ id: fid('types'), tasks: [task('types', `CONSTRUCT { ?s a ?t } WHERE { ?s a ?t }`, false)] });
    const replace = await newFlow({ id: fid('replace'), tasks: [task('types', `CONSTRUCT { ?s a ?t } WHERE { ?s a ?t }`, true)] });
    const count = async () => (await p.request('GET', '/datasets/alice/target/graphs', { token: alice })).body.find((g: any) => g.graphName === graph)?.numberOfStatements;
    expect((await runToEnd(add.path)).status).toBe('finished');
    expect(await count()).toBe(3);
    expect((await runToEnd(types.path)).status).toBe('finished');
    expect(await count()).toBe(5);
    // The same statements again: a graph is a set.
    expect((await runToEnd(types.path)).status).toBe('finished');
    const nt = (await p.request('GET', `/datasets/alice/target/download.nt?graph=${encodeURIComponent(graph)}`, { token: alice })).text;
    expect(nt.split('\n').filter((l: string) => l.trim() === '')).toHaveLength(1);
    expect(nt.trim().split('\n').sort()).toEqual([
      `<${EX}a> <${EX}n> "Alice" .`,
      `<${EX}a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${EX}Person> .`,
      `<${EX}b> <${EX}n> "Bob \\"quoted\\" } ; DROP ALL" .`,
      `<${EX}b> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${EX}Person> .`,
      `<${EX}c> <${EX}n> "${EX}Person" .`,
    ].sort());
    expect(await count()).toBe(5);
    expect((await runToEnd(replace.path)).status).toBe('finished');
    expect(await count()).toBe(2);
  });

  it('runs a saved query on its dataset', async () => {
    const saved = await p.request('POST', '/queries/alice', {
      token: alice,
      body: {
        name: 'people-names',
        accessLevel: 'private',
        dataset: dataDatasetId,
        requestConfig: { payload: { query: `SELECT ?n WHERE { ?s a <${EX}Person> ; <${EX}name> ?n } ORDER BY ?n` } },
        variables: [],
      },
    });
    expect(saved.status, saved.text).toBe(201);
    const { path } = await newFlow({
      id: fid('saved'),
      tasks: [{ id: 'names', label: 'Saved', type: 'sparqlQuery', settings: { query: { savedQuery: { account: 'alice', name: 'people-names' } }, output: { to: 'artifact', format: 'json', fileName: 'people.json' } } }],
    });
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const task = await taskOf(run.id, 'names');
    expect(task.log.join('\n')).toMatch(/saved query alice\/people-names version 1/);
    const file = await fetch(task.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
    const names = JSON.parse(await file.text()).results.bindings.map((b: any) => b.n.value);
    expect(names).toEqual(['Alice', 'Bob "quoted" } ; DROP ALL']);
  });

  it('binds variables into SPARQL as terms: an IRI as an IRI, quotes and braces as a literal', async () => {
    const { path } = await newFlow({
      id: fid('bind'),
      variables: [{ name: 'target' }, { name: 'needle' }],
      tasks: [
        { id: 'byIri', label: 'By IRI', type: 'sparqlQuery', settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text: 'SELECT ?s WHERE { ?s ?p ?target } ORDER BY ?s' }, output: { to: 'artifact', format: 'json' } } },
        { id: 'byText', label: 'By text', type: 'sparqlQuery', settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text: `SELECT ?s WHERE { ?s <${EX}name> ?needle }` }, output: { to: 'artifact', format: 'json' } } },
      ],
    });
    const needle = 'Bob "quoted" } ; DROP ALL';
    const run = await runToEnd(path, { body: { target: `${EX}Person`, needle } });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const subjects = async (taskId: string) => {
      const task = await taskOf(run.id, taskId);
      const file = await fetch(task.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
      return JSON.parse(await file.text()).results.bindings.map((b: any) => b.s.value);
    };
    // ex:Person as an IRI matches the rdf:type triples, not ex:c's literal "https://ex.org/Person".
    expect(await subjects('byIri')).toEqual([`${EX}a`, `${EX}b`]);
    expect(await subjects('byText')).toEqual([`${EX}b`]);
    // Nothing was dropped.
    const graphs = await p.request('GET', '/datasets/alice/data/graphs', { token: alice });
    expect(graphs.body.map((g: any) => [g.graphName, g.numberOfStatements])).toEqual([[`${EX}graphs/data`, 5]]);
  });
});

describe('SPARQL update task', () => {
  it('updates a dataset when switched on; a flow with it cannot be saved while switched off', async () => {
    await p.createDataset('alice', 'updatable', 'private', alice);
    const definition = (id: string) => ({
      id,
      tasks: [
        {
          id: 'insert',
          label: 'Insert',
          type: 'sparqlUpdate',
          settings: { dataset: { account: 'alice', dataset: 'updatable' }, update: { text: `INSERT DATA { GRAPH <${EX}graphs/upd> { <${EX}x> <${EX}p> "inserted" } }` } },
        },
      ],
    });
    const { path } = await newFlow(definition(fid('update')));
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const graphs = await p.request('GET', '/datasets/alice/updatable/graphs', { token: alice });
    expect(graphs.body.map((g: any) => [g.graphName, g.numberOfStatements])).toEqual([[`${EX}graphs/upd`, 1]]);

    const off = await p.request('PATCH', '/admin/flows', { token: p.adminToken, body: { sparqlUpdateTaskEnabled: false } });
    expect(off.status).toBe(200);
    try {
      const refused = await p.request('POST', '/flows/blueprints/alice', { headers: aliceSession, body: { name: 'u', accessLevel: 'Private', connections: [], ...definition(fid('update-off')) } });
      expect(refused.status).toBe(400);
      expect(refused.text).toMatch(/sparqlUpdateTaskEnabled/);
      // A flow saved while it was on cannot use it now.
      const failed = await runToEnd(path);
      expect(failed.status).toBe('failed');
      expect(failed.error.message).toMatch(/switched off/);
    } finally {
      const on = await p.request('PATCH', '/admin/flows', { token: p.adminToken, body: { sparqlUpdateTaskEnabled: true } });
      expect(on.status).toBe(200);
    }
    expect((await p.request('GET', '/admin/flows', { token: p.adminToken })).body).toMatchObject({ flowsEnabled: true, sparqlUpdateTaskEnabled: true });
  });
});

// ---- Acting as the starter ----

describe('a run acts as its starter', () => {
  it("cannot read another account's private dataset; the owner's run can", async () => {
    const task = { id: 'q', label: 'Query', type: 'sparqlQuery', settings: { dataset: { account: 'bob', dataset: 'secret' }, query: { text: 'SELECT * WHERE { ?s ?p ?o }' }, output: { to: 'artifact', format: 'json' } } };
    const mine = await newFlow({ id: fid('snoop'), tasks: [task] });
    const run = await runToEnd(mine.path);
    expect(run.status).toBe('failed');
    const failed = await taskOf(run.id, 'q');
    expect(failed.error).toMatch(/does not exist/);
    expect(failed.error).toMatch(/bob\/secret|secret/);

    const bobs = await newFlow({ id: fid('own'), tasks: [task] }, 'bob', bobSession);
    const own = await runToEnd(bobs.path, { token: bob });
    expect(own.status, JSON.stringify(own.error)).toBe('finished');
    expect(own.startedBy).toBe('bob');
    const q = await taskOf(own.id, 'q', bob);
    const file = await fetch(q.artifacts[0].url, { headers: { authorization: `Bearer ${bob}` } });
    expect(JSON.parse(await file.text()).results.bindings).toHaveLength(1);
    // Alice does not see bob's run.
    expect((await p.request('GET', `/flows/runs/${own.id}`, { token: alice })).status).toBe(404);
  });
});

// ---- The run listing ----

describe('run listing', () => {
  let id: string;
  let blueprintId: string;
  const runs: Record<string, any> = {};

  beforeAll(async () => {
    await p.createOrg('team', alice);
    await p.addMember('team', 'bob', 'member', alice);
    id = fid('listing');
    ({ blueprintId } = await newFlow(
      {
        id,
        variables: [{ name: 'delay' }, { name: 'mode' }],
        outputVariables: [{ name: 'x' }],
        tasks: [
          { id: 'pause', label: 'Pause', type: 'wait', settings: { seconds: '?delay' } },
          { id: 'd', label: 'Mode', type: 'decision', settings: { branches: [{ to: 'halt', conditions: [{ variable: 'mode', operator: 'equals', value: 'stop' }] }], otherwise: 'ok' } },
          { id: 'halt', label: 'Halt', type: 'stopRun', settings: { reason: 'asked to stop' } },
          { id: 'ok', label: 'OK', type: 'setVariables', settings: { values: { x: 'ok' } } },
        ],
        connections: [
          { from: 'pause', to: 'd' },
          { from: 'd', to: 'halt' },
          { from: 'd', to: 'ok' },
        ],
      },
      'team',
    ));
    const path = flowPath(id, 'team');
    // slow (api, alice) is created first but finishes after quick (manual, alice).
    const slow = await startRun(p, `${path}/run`, alice, { query: { delay: '2' } });
    expect(slow.status, slow.text).toBe(201);
    await new Promise((r) => setTimeout(r, 20));
    const quick = await p.request('POST', `${path}/run?delay=0`, { headers: aliceSession });
    expect(quick.status, quick.text).toBe(201);
    runs.quick = await waitForRun(p, quick.body.id, alice);
    runs.slow = await waitForRun(p, slow.body.id, alice);
    await new Promise((r) => setTimeout(r, 20));
    const stopped = await startRun(p, `${path}/run`, bob, { query: { delay: '0', mode: 'stop' } });
    expect(stopped.status, stopped.text).toBe(201);
    runs.stopped = await waitForRun(p, stopped.body.id, bob);
    expect([runs.slow.status, runs.quick.status, runs.stopped.status]).toEqual(['finished', 'finished', 'aborted']);
    expect(runs.quick.finishedAt < runs.slow.finishedAt).toBe(true);
    expect(runs.slow.createdAt < runs.quick.createdAt && runs.quick.createdAt < runs.stopped.createdAt).toBe(true);
  });

  const ids = (res: ApiResponse) => {
    expect(res.status, res.text).toBe(200);
    return res.body.map((r: any) => r.id);
  };
  const named = (...names: string[]) => names.map((n) => runs[n].id);

  it('filters by flow, by flow ID or blueprint id', async () => {
    expect(ids(await runsOf(`blueprintId=${blueprintId}`))).toEqual(named('stopped', 'quick', 'slow'));
    expect(ids(await runsOf(`blueprintId=${id}`))).toEqual(named('stopped', 'quick', 'slow'));
    expect(ids(await runsOf(`blueprintId=${id}`, bob))).toEqual(named('stopped', 'quick', 'slow'));
    expect(ids(await runsOf('blueprintId=nosuchflow'))).toEqual([]);
    const all = ids(await runsOf('limit=10000'));
    expect(all).toEqual(expect.arrayContaining(named('stopped', 'quick', 'slow')));
  });

  it('filters by status, a list of statuses, and refuses a bad status', async () => {
    expect(ids(await runsOf(`blueprintId=${id}&status=finished`))).toEqual(named('quick', 'slow'));
    expect(ids(await runsOf(`blueprintId=${id}&status=aborted`))).toEqual(named('stopped'));
    expect(ids(await runsOf(`blueprintId=${id}&status=aborted,finished`))).toEqual(named('stopped', 'quick', 'slow'));
    expect(ids(await runsOf(`blueprintId=${id}&status=failed`))).toEqual([]);
    const bad = await runsOf(`blueprintId=${id}&status=done`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/done/);
  });

  it('filters by how and by whom a run was started', async () => {
    expect(ids(await runsOf(`blueprintId=${id}&startedFromType=api`))).toEqual(named('stopped', 'slow'));
    expect(ids(await runsOf(`blueprintId=${id}&startedFromType=manual`))).toEqual(named('quick'));
    expect(ids(await runsOf(`blueprintId=${id}&startedFromType=schedule`))).toEqual([]);
    expect((await runsOf(`blueprintId=${id}&startedFromType=cron`)).status).toBe(400);
    expect(ids(await runsOf(`blueprintId=${id}&startedBy=alice`))).toEqual(named('quick', 'slow'));
    expect(ids(await runsOf(`blueprintId=${id}&startedBy=bob`))).toEqual(named('stopped'));
    expect(ids(await runsOf(`blueprintId=${id}&startedBy=nobody`))).toEqual([]);
    expect(ids(await runsOf(`blueprintId=${id}&startedBy=bob&status=finished`))).toEqual([]);
  });

  it('filters by schedule, hook and asset (no such runs yet)', async () => {
    for (const filter of ['scheduleId', 'hookId', 'assetId']) {
      expect(ids(await runsOf(`blueprintId=${id}&${filter}=anything`))).toEqual([]);
    }
  });

  it('filters by creation time', async () => {
    const q = encodeURIComponent(runs.quick.createdAt);
    expect(ids(await runsOf(`blueprintId=${id}&createdAtFrom=${q}`))).toEqual(named('stopped', 'quick'));
    expect(ids(await runsOf(`blueprintId=${id}&createdAtTo=${q}`))).toEqual(named('quick', 'slow'));
    expect(ids(await runsOf(`blueprintId=${id}&createdAtFrom=${q}&createdAtTo=${q}`))).toEqual(named('quick'));
    expect(ids(await runsOf(`blueprintId=${id}&createdAtFrom=2000-01-01&createdAtTo=2000-12-31`))).toEqual([]);
    expect((await runsOf(`blueprintId=${id}&createdAtFrom=yesterday`)).status).toBe(400);
  });

  it('sorts by createdAt or finishedAt, ascending or descending', async () => {
    expect(ids(await runsOf(`blueprintId=${id}&sortBy=createdAt&sortDirection=asc`))).toEqual(named('slow', 'quick', 'stopped'));
    expect(ids(await runsOf(`blueprintId=${id}&sortBy=createdAt&sortDirection=desc`))).toEqual(named('stopped', 'quick', 'slow'));
    expect(ids(await runsOf(`blueprintId=${id}&sortBy=finishedAt&sortDirection=asc`))).toEqual(named('quick', 'slow', 'stopped'));
    expect(ids(await runsOf(`blueprintId=${id}&sortBy=finishedAt&sortDirection=desc`))).toEqual(named('stopped', 'slow', 'quick'));
    expect(ids(await runsOf(`blueprintId=${id}&sortBy=finishedAt`))).toEqual(named('stopped', 'slow', 'quick'));
    expect((await runsOf(`blueprintId=${id}&sortBy=name`)).status).toBe(400);
    expect((await runsOf(`blueprintId=${id}&sortDirection=up`)).status).toBe(400);
  });

  it('limits the listing to at most 10,000', async () => {
    expect(ids(await runsOf(`blueprintId=${id}&limit=1`))).toEqual(named('stopped'));
    expect(ids(await runsOf(`blueprintId=${id}&limit=2&sortDirection=asc`))).toEqual(named('slow', 'quick'));
    expect(ids(await runsOf(`blueprintId=${id}&limit=10000`))).toHaveLength(3);
    for (const limit of ['10001', '0', 'abc', '-1', '1.5']) {
      const res = await runsOf(`blueprintId=${id}&limit=${limit}`);
      expect(res.status, `limit=${limit}`).toBe(400);
      expect(res.body.message).toMatch(/limit/);
    }
  });

  it('shows each run with its flow, starter and start type', async () => {
    const listed = (await runsOf(`blueprintId=${id}`)).body;
    expect(listed.find((r: any) => r.id === runs.stopped.id)).toMatchObject({
      blueprintId,
      flowId: id,
      account: 'team',
      status: 'aborted',
      startedBy: 'bob',
      startedFrom: { type: 'api' },
      error: { taskId: 'halt', message: expect.stringContaining('asked to stop') },
    });
  });
});

describe('where tasks may send requests', () => {
  it('never reaches a cloud metadata address', async () => {
    const { path } = await newFlow({
      id: fid('metadata'),
      tasks: [{ id: 'peek', label: 'Peek', type: 'httpRequest', settings: { url: 'http://169.254.169.254/latest/meta-data/' } }],
      connections: [],
    });
    const run = await runToEnd(path);
    expect(run.status).toBe('failed');
    expect(run.error.message).toMatch(/169\.254\.169\.254 is a link-local address/);
  });

  it('reaches private networks only where the instance allows them', async () => {
    const closed = await TestPlatform.start({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' } });
    try {
      const carol = await closed.createUser('carol');
      await enableFlows(closed);
      const session = await consoleSession(closed, 'carol');
      await createFlow(closed, 'carol', session, {
        id: 'local-call',
        name: 'Local call',
        accessLevel: 'Private',
        tasks: [{ id: 'call', label: 'Call', type: 'httpRequest', settings: { url: `${echoUrl}/hello` } }],
        connections: [],
      });
      const started = await startRun(closed, '/flows/blueprints/carol/local-call/run', carol);
      const run = await waitForRun(closed, started.body.id, carol);
      expect(run.status).toBe('failed');
      expect(run.error.message).toMatch(/loopback or private-network address/);
      // The same request works on the embedded default (private networks allowed).
      const open = await newFlow({ id: fid('local-call'), tasks: [{ id: 'call', label: 'Call', type: 'httpRequest', settings: { url: `${echoUrl}/hello` } }], connections: [] });
      expect((await runToEnd(open.path)).status).toBe('finished');
    } finally {
      await closed.stop();
    }
  });
});
