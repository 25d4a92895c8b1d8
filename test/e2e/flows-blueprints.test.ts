/**
 * Flow blueprints through HTTP: create from JSON or pasted Turtle, validation naming every
 * problem, versions and restore, copy, move, delete, presets, masked values, the Turtle round trip
 * between two instances, and the instance switches.
 */
import { readFileSync } from 'node:fs';
import { Parser } from 'n3';
import { isomorphic } from 'rdf-isomorphic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOW_LIMITS } from '../../functions/domain/flows/limits.js';
import { consoleSession, createFlow, enableFlows } from '../support/flows.js';
import { TestPlatform } from '../support/platform.js';

const FIXTURES = new URL('../fixtures/flows/', import.meta.url);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8'));

let p: TestPlatform;
let alice: string;
let session: Record<string, string>;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  await p.createUser('bob');
  await enableFlows(p);
  session = await consoleSession(p, 'alice');
});
afterAll(async () => p?.stop());

/** A small valid flow with a variable (so it may have presets) and a masked value. */
function small(id: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    name: `Flow ${id}`,
    description: 'A small flow',
    accessLevel: 'Private',
    variables: [
      { name: 'target', description: 'Where to', required: false, allowedOptions: ['test', 'prod'] },
      { name: 'note', required: false },
    ],
    outputVariables: [{ name: 'greeting' }],
    maskedValues: [{ name: 'apiKey', description: 'The key' }],
    tasks: [{ id: 'greet', label: 'Greet', type: 'setVariables', settings: { values: { greeting: 'hello ?target' } } }],
    connections: [],
    ...extra,
  };
}

const post = (path: string, body: unknown, headers = session) => p.request('POST', path, { headers, body });

describe('creating and reading flows', () => {
  it('creates a flow from JSON in a console session and reads it back with a token', async () => {
    const created = await post('/flows/blueprints/alice', small('first'));
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${p.url}/flows/blueprints/alice/first`);
    expect(created.body).toMatchObject({ id: 'first', name: 'Flow first', accessLevel: 'Private', latestVersion: 1, version: 1 });
    expect(created.body.definition.tasks[0].id).toBe('greet');

    const read = await p.request('GET', '/flows/blueprints/alice/first', { token: alice });
    expect(read.status).toBe(200);
    expect(read.body.definition).toEqual(created.body.definition);
    const list = await p.request('GET', '/flows/blueprints/alice', { token: alice });
    expect(list.body.map((f: { id: string }) => f.id)).toContain('first');
  });

  it('answers 409 for a flow ID the account already has, whatever its case', async () => {
    await createFlow(p, 'alice', session, small('twice'));
    const again = await post('/flows/blueprints/alice', small('TWICE'));
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/already has a flow with ID/);
  });

  it('refuses a body that is neither JSON nor Turtle, and an empty one', async () => {
    const xml = await p.request('POST', '/flows/blueprints/alice', { headers: { ...session, 'content-type': 'application/xml' }, rawBody: '<flow/>' });
    expect(xml.status).toBe(415);
    expect(xml.body.message).toMatch(/text\/turtle/);
    const empty = await p.request('POST', '/flows/blueprints/alice', { headers: { ...session, 'content-type': 'application/json' }, rawBody: '' });
    expect(empty.status).toBe(400);
  });

  it('creates the full example fixture (every task type) and keeps it exactly', async () => {
    await enableFlows(p, { sparqlUpdateTaskEnabled: true });
    const created = await post('/flows/blueprints/alice', fixture('full-example'));
    expect(created.status).toBe(201);
    const read = await p.request('GET', `/flows/blueprints/alice/${fixture('full-example').id}`, { token: alice });
    expect(read.body.definition.tasks.map((t: { type: string }) => t.type)).toEqual(fixture('full-example').tasks.map((t: { type: string }) => t.type));
  });
});

describe('validation on save names every problem', () => {
  const broken = () => ({
    id: 'broken',
    name: 'n'.repeat(FLOW_LIMITS.flowName + 1),
    accessLevel: 'Public',
    variables: [{ name: 'system_mine' }, { name: 'shared' }],
    outputVariables: [{ name: 'shared' }],
    tasks: [
      { id: 'a', label: 'l'.repeat(FLOW_LIMITS.taskLabel + 1), type: 'teleport', settings: {} },
      { id: 'b', label: 'B', type: 'setDescription', settings: { description: 'uses ?nowhere' } },
      { id: 'c', label: 'C', type: 'setDescription', settings: { description: 'fine' } },
      { id: 'q', label: 'Q', type: 'sparqlQuery', settings: { dataset: { account: 'a', dataset: 'd' }, query: { text: `SELECT * WHERE { ?s ?p ?o } # ${'x'.repeat(FLOW_LIMITS.inlineSparql)}` }, output: { to: 'artifact', format: 'csv' } } },
      { id: 'd', label: 'D', type: 'setDescription', settings: { description: 'x'.repeat(FLOW_LIMITS.runDescription + 1) } },
    ],
    connections: [
      { from: 'b', to: 'c' },
      { from: 'c', to: 'b' },
      { from: 'c', to: 'ghost' },
    ],
  });

  it('answers 400 with every problem, each with a code and a path', async () => {
    const res = await post('/flows/blueprints/alice', broken());
    expect(res.status).toBe(400);
    const codes = new Set(res.body.problems.map((x: { code: string }) => x.code));
    for (const code of ['too-long', 'access-level', 'unknown-task-type', 'dangling-connection', 'cycle', 'undefined-variable', 'reserved-name', 'output-variable-clash']) {
      expect(codes, code).toContain(code);
    }
    const paths = res.body.problems.map((x: { path: string }) => x.path);
    expect(paths).toEqual(expect.arrayContaining(['name', 'tasks[0].label', 'tasks[0].type', 'tasks[3].settings.query.text', 'tasks[4].settings.description']));
    expect(res.body.message).toMatch(/problems/);
    // Nothing was saved.
    expect((await p.request('GET', '/flows/blueprints/alice/broken', { token: alice })).status).toBe(404);
  });

  it('enforces the send-email limits: 5 tasks per flow, 10 recipients, a 10,000-character body', async () => {
    const email = (i: number, to: string[], body = 'Hi') => ({ id: `mail${i}`, label: `Mail ${i}`, type: 'sendEmail', settings: { to, subject: 'S', body } });
    const eleven = Array.from({ length: 11 }, (_, i) => `r${i}@example.org`);
    const tasks = [email(1, eleven), email(2, ['a@example.org'], 'b'.repeat(FLOW_LIMITS.emailBody + 1)), ...[3, 4, 5, 6].map((i) => email(i, ['a@example.org']))];
    const res = await post('/flows/blueprints/alice', { id: 'mails', name: 'Mails', accessLevel: 'Private', tasks, connections: [] });
    expect(res.status).toBe(400);
    const found = res.body.problems.map((x: { code: string; path: string }) => `${x.code}@${x.path}`);
    expect(found).toEqual(expect.arrayContaining(['too-many@tasks[0].settings', 'too-long@tasks[1].settings.body']));
    expect(res.body.problems.some((x: { code: string; message: string }) => x.code === 'too-many' && /Send email/i.test(x.message))).toBe(true);
  });

  it('refuses the SPARQL update task while its switch is off, naming the switch', async () => {
    await enableFlows(p, { sparqlUpdateTaskEnabled: false });
    const flow = {
      id: 'updater',
      name: 'Updater',
      accessLevel: 'Private',
      tasks: [{ id: 'u', label: 'U', type: 'sparqlUpdate', settings: { dataset: { account: 'alice', dataset: 'x' }, update: { text: 'INSERT DATA { <a:s> <a:p> <a:o> }' } } }],
      connections: [],
    };
    const off = await post('/flows/blueprints/alice', flow);
    expect(off.status).toBe(400);
    expect(off.body.message).toMatch(/SPARQL update task is switched off/);
    await enableFlows(p, { sparqlUpdateTaskEnabled: true });
    expect((await post('/flows/blueprints/alice', flow)).status).toBe(201);
  });
});

describe('versions', () => {
  it('makes every save a new version; versions list, read and restore', async () => {
    await createFlow(p, 'alice', session, small('versioned'));
    const v2 = await p.request('PUT', '/flows/blueprints/alice/versioned', { headers: session, body: small('versioned', { name: 'Second name' }) });
    expect(v2.status).toBe(200);
    expect(v2.body).toMatchObject({ version: 2, latestVersion: 2, name: 'Second name' });
    // The ID may be left out of a save, but not changed.
    const { id: _, ...withoutId } = small('versioned', { name: 'Third name' });
    expect((await p.request('PUT', '/flows/blueprints/alice/versioned', { headers: session, body: withoutId })).body.version).toBe(3);
    const renamed = await p.request('PUT', '/flows/blueprints/alice/versioned', { headers: session, body: small('other-id') });
    expect(renamed.status).toBe(400);
    expect(renamed.body.message).toMatch(/keeps its ID/);

    const versions = await p.request('GET', '/flows/blueprints/alice/versioned/versions', { token: alice });
    expect(versions.body.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    const first = await p.request('GET', '/flows/blueprints/alice/versioned/versions/1', { token: alice });
    expect(first.body.definition.name).toBe('Flow versioned');
    expect((await p.request('GET', '/flows/blueprints/alice/versioned/versions/9', { token: alice })).status).toBe(404);
    expect((await p.request('GET', '/flows/blueprints/alice/versioned/versions/zero', { token: alice })).status).toBe(400);

    const restored = await p.request('POST', '/flows/blueprints/alice/versioned/versions/1/restore', { headers: session });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ version: 4, restoredFrom: 1, name: 'Flow versioned' });
    const latest = await p.request('GET', '/flows/blueprints/alice/versioned', { token: alice });
    expect(latest.body.definition).toEqual(first.body.definition);
  });

  it('leaves the flow as it was when a save is invalid', async () => {
    await createFlow(p, 'alice', session, small('stable'));
    const bad = await p.request('PUT', '/flows/blueprints/alice/stable', { headers: session, body: small('stable', { tasks: [] , connections: [{ from: 'x', to: 'y' }] }) });
    expect(bad.status).toBe(400);
    const read = await p.request('GET', '/flows/blueprints/alice/stable', { token: alice });
    expect(read.body.latestVersion).toBe(1);
  });
});

describe('copy, move, delete', () => {
  it('copies a flow under a new ID without its masked values, and moves one to an organisation', async () => {
    await p.createOrg('acme', alice);
    await createFlow(p, 'alice', session, small('original'));
    expect((await p.request('PUT', '/flows/blueprints/alice/original/maskedValues/apiKey', { headers: session, body: { value: 's3cret-value' } })).status).toBe(204);

    const copy = await post('/flows/blueprints/alice/original/copy', { id: 'duplicate', name: 'The copy' });
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ id: 'duplicate', name: 'The copy', latestVersion: 1 });
    const values = await p.request('GET', '/flows/blueprints/alice/duplicate/maskedValues', { token: alice });
    expect(values.body).toEqual([{ name: 'apiKey', description: 'The key', isSet: false }]);
    const sameId = await post('/flows/blueprints/alice/original/copy', {});
    expect(sameId.status).toBe(409);
    // Bad copies change nothing: an account that does not exist, an ID the format refuses.
    expect((await post('/flows/blueprints/alice/original/copy', { account: 'nobody' })).status).toBe(404);
    const badId = await post('/flows/blueprints/alice/original/copy', { id: 'not an id!' });
    expect(badId.status).toBe(400);
    expect(badId.body.problems[0].path).toBe('id');
    expect((await post('/flows/blueprints/alice/original/copy', { account: 'alice', extra: true })).status).toBe(400);
    const toOrg = await post('/flows/blueprints/alice/original/copy', { account: 'acme' });
    expect(toOrg.status).toBe(201);
    expect(toOrg.body.owner.accountName).toBe('acme');

    const moved = await post('/flows/blueprints/alice/duplicate/move', { account: 'acme' });
    expect(moved.status).toBe(200);
    expect(moved.headers.get('location')).toBe(`${p.url}/flows/blueprints/acme/duplicate`);
    expect((await p.request('GET', '/flows/blueprints/alice/duplicate', { token: alice })).status).toBe(404);
    const there = await p.request('GET', '/flows/blueprints/acme/duplicate', { token: alice });
    expect(there.status).toBe(200);
    expect(there.body.blueprintId).toBe(copy.body.blueprintId);
    expect((await post('/flows/blueprints/acme/duplicate/move', {})).status).toBe(400);
  });

  it('deletes a flow with its versions', async () => {
    await createFlow(p, 'alice', session, small('doomed'));
    expect((await p.request('DELETE', '/flows/blueprints/alice/doomed', { headers: session })).status).toBe(204);
    expect((await p.request('GET', '/flows/blueprints/alice/doomed', { token: alice })).status).toBe(404);
    expect((await p.request('GET', '/flows/blueprints/alice/doomed/versions', { token: alice })).status).toBe(404);
    expect((await p.request('DELETE', '/flows/blueprints/alice/doomed', { headers: session })).status).toBe(404);
  });
});

describe('presets', () => {
  it('adds, changes and removes presets as new versions; at most one default', async () => {
    await createFlow(p, 'alice', session, small('preset-flow'));
    const put = (name: string, body: unknown) => p.request('PUT', `/flows/blueprints/alice/preset-flow/presets/${encodeURIComponent(name)}`, { headers: session, body });
    expect((await put('Test run', { values: { target: 'test' }, default: true })).status).toBe(200);
    expect((await put('Production', { values: { target: 'prod' }, default: true })).status).toBe(200);
    const presets = await p.request('GET', '/flows/blueprints/alice/preset-flow/presets', { token: alice });
    expect(presets.body).toEqual([
      { name: 'Test run', values: { target: 'test' }, default: false },
      { name: 'Production', values: { target: 'prod' }, default: true },
    ]);
    const outside = await put('Bad', { values: { target: 'staging' } });
    expect(outside.status).toBe(400);
    expect(outside.body.problems[0].code).toBe('option-not-allowed');
    const unknown = await put('Bad', { values: { nothing: 'x' } });
    expect(unknown.status).toBe(400);
    const long = await put('p'.repeat(FLOW_LIMITS.presetName + 1), { values: {} });
    expect(long.status).toBe(400);
    expect((await p.request('DELETE', '/flows/blueprints/alice/preset-flow/presets/Test%20run', { headers: session })).status).toBe(204);
    expect((await p.request('DELETE', '/flows/blueprints/alice/preset-flow/presets/Test%20run', { headers: session })).status).toBe(404);
    const latest = await p.request('GET', '/flows/blueprints/alice/preset-flow', { token: alice });
    expect(latest.body.latestVersion).toBe(4);
  });

  it('refuses presets on a flow without variables', async () => {
    await createFlow(p, 'alice', session, { id: 'novars', name: 'No variables', accessLevel: 'Private', tasks: [], connections: [] });
    const res = await p.request('PUT', '/flows/blueprints/alice/novars/presets/Any', { headers: session, body: { values: {} } });
    expect(res.status).toBe(400);
    expect(res.body.problems[0].code).toBe('preset-without-variables');
  });
});

describe('masked values', () => {
  it('keeps values apart: names and isSet for readers, the value only with the permission, never in a download', async () => {
    await createFlow(p, 'alice', session, small('secretive'));
    const path = '/flows/blueprints/alice/secretive/maskedValues';
    expect((await p.request('GET', path, { token: alice })).body).toEqual([{ name: 'apiKey', description: 'The key', isSet: false }]);
    expect((await p.request('PUT', `${path}/apiKey`, { headers: session, body: { value: 'top-secret-123' } })).status).toBe(204);
    expect((await p.request('GET', path, { token: alice })).body[0].isSet).toBe(true);
    const seen = await p.request('GET', `${path}/apiKey`, { headers: session });
    expect(seen.body).toEqual({ name: 'apiKey', isSet: true, value: 'top-secret-123' });
    // With a token: flows are edited (and secrets seen) only in the console.
    expect((await p.request('GET', `${path}/apiKey`, { token: alice })).status).toBe(403);
    expect((await p.request('PUT', `${path}/apiKey`, { token: alice, body: { value: 'x' } })).status).toBe(403);
    expect((await p.request('PUT', `${path}/undeclared`, { headers: session, body: { value: 'x' } })).status).toBe(404);
    expect((await p.request('PUT', `${path}/apiKey`, { headers: session, body: { value: 42 } })).status).toBe(400);

    const ttl = await p.request('GET', '/flows/blueprints/alice/secretive/download.ttl', { token: alice });
    expect(ttl.status).toBe(200);
    expect(ttl.text).toContain('apiKey');
    expect(ttl.text).not.toContain('top-secret-123');
    const json = await p.request('GET', '/flows/blueprints/alice/secretive', { token: alice });
    expect(json.text).not.toContain('top-secret-123');

    expect((await p.request('DELETE', `${path}/apiKey`, { headers: session })).status).toBe(204);
    expect((await p.request('GET', path, { token: alice })).body[0].isSet).toBe(false);
  });
});

describe('download as Turtle and paste into another instance', () => {
  const quads = (text: string) => new Parser().parse(text);

  it('round-trips every fixture: download, paste elsewhere, download again gives an isomorphic graph', async () => {
    const other = await TestPlatform.start();
    try {
      const carol = await other.createUser('carol');
      await enableFlows(other, { sparqlUpdateTaskEnabled: true });
      await enableFlows(p, { sparqlUpdateTaskEnabled: true });
      const carolSession = await consoleSession(other, 'carol');
      for (const name of ['linear', 'decision', 'fan-out-fan-in', 'full-example']) {
        const definition = { ...fixture(name), id: `rt-${name}` };
        await createFlow(p, 'alice', session, definition);
        const first = await p.request('GET', `/flows/blueprints/alice/rt-${name}/download.ttl`, { token: alice });
        expect(first.headers.get('content-type')).toMatch(/^text\/turtle/);
        expect(first.headers.get('content-disposition')).toContain(`rt-${name}.ttl`);

        const pasted = await other.request('POST', '/flows/blueprints/carol', { headers: { ...carolSession, 'content-type': 'text/turtle' }, rawBody: first.text });
        expect(pasted.status, pasted.text).toBe(201);
        const original = await p.request('GET', `/flows/blueprints/alice/rt-${name}`, { token: alice });
        expect(pasted.body.definition).toEqual(original.body.definition);

        // Same account and flow path on both sides: the graphs must be isomorphic.
        const again = await other.request('GET', `/flows/blueprints/carol/rt-${name}/download.ttl`, { token: carol });
        const rebased = again.text.replaceAll(`${other.url}/flows/blueprints/carol/`, `${p.url}/flows/blueprints/alice/`);
        expect(isomorphic(quads(first.text), quads(rebased))).toBe(true);
      }
    } finally {
      await other.stop();
    }
  });

  it('answers 400 with what to fix for Turtle that is not a flow', async () => {
    const headers = { ...session, 'content-type': 'text/turtle' };
    const broken = await p.request('POST', '/flows/blueprints/alice', { headers, rawBody: '<a> <b> ' });
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/line/i);
    const noFlow = await p.request('POST', '/flows/blueprints/alice', { headers, rawBody: '<https://x.example/a> <https://x.example/b> "c" .' });
    expect(noFlow.status).toBe(400);
    expect(noFlow.body.message).toMatch(/flow:Flow|Flow/);
  });
});

describe('instance switches', () => {
  it('switching flows off answers 404 on every flows route, saying so; switching on brings them back', async () => {
    await createFlow(p, 'alice', session, small('switchable'));
    expect((await p.request('PATCH', '/admin/flows', { token: p.adminToken, body: { flowsEnabled: false } })).status).toBe(200);
    try {
      for (const [method, path] of [
        ['GET', '/flows/blueprints/alice'],
        ['GET', '/flows/blueprints/alice/switchable'],
        ['GET', '/flows/blueprints/alice/switchable/download.ttl'],
        ['POST', '/flows/blueprints/alice/switchable/run'],
        ['GET', '/flows/runs'],
        ['GET', '/flows/taskInstances?runId=x'],
      ] as const) {
        const res = await p.request(method, path, { token: alice });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.message).toMatch(/Flows are not enabled/);
      }
      expect((await post('/flows/blueprints/alice', small('while-off'))).status).toBe(404);
      expect((await p.request('GET', '/info')).body.featureToggles.flows).toBe(false);
    } finally {
      await enableFlows(p);
    }
    expect((await p.request('GET', '/flows/blueprints/alice/switchable', { token: alice })).status).toBe(200);
    expect((await p.request('GET', '/info')).body.featureToggles.flows).toBe(true);
  });

  it('lets only administrators read and change the switches', async () => {
    const bob = await p.createToken('bob', p.adminToken);
    expect((await p.request('PATCH', '/admin/flows', { token: bob, body: { flowsEnabled: false } })).status).toBe(403);
    expect((await p.request('PATCH', '/admin/flows', { body: { flowsEnabled: false } })).status).toBe(401);
    expect((await p.request('GET', '/admin/flows', { token: bob })).status).toBe(404);
    const bad = await p.request('PATCH', '/admin/flows', { token: p.adminToken, body: { flowsEnabled: 'yes' } });
    expect(bad.status).toBe(400);
    const read = await p.request('GET', '/admin/flows', { token: p.adminToken });
    expect(read.body).toEqual({ flowsEnabled: true, sparqlUpdateTaskEnabled: expect.any(Boolean) });
  });
});
