/**
 * Flow runs end to end through HTTP, part 1 of 3 (the set-up is in test/support/flow-runs.ts):
 * variables at run start and their precedence over presets, system variables (the run's platform
 * token) and masked values, also in decisions.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startRun, waitForRun } from '../support/flows.js';
import { decisionFlow, flowPath, useFlowRunsWorld } from '../support/flow-runs.js';
import type { TestPlatform } from '../support/platform.js';

const world = useFlowRunsWorld();
const { received, fid, newFlow, runToEnd, taskOf, statusesOf, runsOf } = world;
let p: TestPlatform;
let alice: string;
let aliceSession: Record<string, string>;
let echoUrl: string;
beforeAll(() => {
  ({ p, alice, aliceSession, echoUrl } = world);
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
