/**
 * The permission and access-level tables of flows, through HTTP against the embedded platform:
 * every caller × flow access level × operation. A flow the caller may not see answers 404 exactly
 * as a missing one; anonymous callers get 401 on every flows route; a visible flow the caller may
 * not change or run answers 403. Flows are changed only from a console session: API tokens get 403
 * ("edited in the console") on those routes. While flows are switched off every flows route is 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../functions/domain/accounts/permissions.js';
import { consoleSession, enableFlows, linearFlow, startRun, waitForRun } from '../support/flows.js';
import { TestPlatform, type ApiResponse } from '../support/platform.js';

type Level = 'Private' | 'Internal';
type ActorName =
  | 'anonymous'
  | 'outsider'
  | 'member (built-in role)'
  | 'custom role: readFlows only'
  | 'custom role: runFlows'
  | 'custom role: manageFlowBlueprints'
  | 'custom role: manageFlowMaskedValues'
  | 'custom role: createFlows'
  | 'parent-org member (runFlows there)'
  | 'org owner'
  | 'administrator';

interface Actor {
  /** The caller's own account (none for anonymous). */
  account?: string;
  /** Member of the owning organisation (directly or via the parent). */
  member: boolean;
  /** Flow permissions on the owning organisation. */
  perms: Permission[];
}

const ORG = 'lab';
const PARENT = 'holding';

const ACTORS: Record<ActorName, Actor> = {
  anonymous: { member: false, perms: [] },
  outsider: { account: 'oscar', member: false, perms: [] },
  'member (built-in role)': { account: 'mia', member: true, perms: ['readFlows', 'createFlows', 'runFlows'] },
  'custom role: readFlows only': { account: 'rita', member: true, perms: ['readFlows'] },
  'custom role: runFlows': { account: 'rudy', member: true, perms: ['readFlows', 'runFlows'] },
  'custom role: manageFlowBlueprints': { account: 'bea', member: true, perms: ['readFlows', 'manageFlowBlueprints'] },
  'custom role: manageFlowMaskedValues': { account: 'max', member: true, perms: ['readFlows', 'manageFlowMaskedValues'] },
  'custom role: createFlows': { account: 'cora', member: true, perms: ['readFlows', 'createFlows'] },
  'parent-org member (runFlows there)': { account: 'pete', member: true, perms: ['readFlows', 'runFlows'] },
  'org owner': {
    account: 'olga',
    member: true,
    perms: ['readFlows', 'createFlows', 'runFlows', 'manageFlowBlueprints', 'manageFlowMaskedValues'],
  },
  administrator: {
    account: 'admin',
    member: true,
    perms: ['readFlows', 'createFlows', 'runFlows', 'manageFlowBlueprints', 'manageFlowMaskedValues'],
  },
};
const ACTOR_NAMES = Object.keys(ACTORS) as ActorName[];
const LEVELS: Level[] = ['Private', 'Internal'];

/** Spec, "Access levels of a flow": Private for members and administrators, Internal for anyone signed in. */
const sees = (level: Level, a: ActorName) => a !== 'anonymous' && (level === 'Internal' || ACTORS[a].member);
const holds = (a: ActorName, perm: Permission) => ACTORS[a].perms.includes(perm);

/** 401 anonymous, 404 not visible, 403 visible without the permission, else `success`. */
function expected(level: Level, a: ActorName, perm: Permission | null, success: number): number {
  if (a === 'anonymous') return 401;
  if (!sees(level, a)) return 404;
  if (perm && !holds(a, perm)) return 403;
  return success;
}

/** A refusal says why. */
function expectRefusal(res: ApiResponse, status: number): void {
  if (status === 401) expect(res.body.message).toMatch(/^Unauthorized/);
  else if (status === 403) expect(res.body.message).toMatch(/^Forbidden/);
  else if (status === 404) expect(res.body.message).toMatch(/does not exist/);
  else if (status === 409) expect(res.body.message).toMatch(/already ended/);
}

let p: TestPlatform;
const tokens: Partial<Record<ActorName, string>> = {};
const sessions: Partial<Record<ActorName, Record<string, string>>> = {};
let ownerReadOnly: string;
let memberReadOnly: string;

type Via = 'token' | 'session';
const cred = (a: ActorName, via: Via) => (a === 'anonymous' ? {} : via === 'token' ? { token: tokens[a] } : { headers: sessions[a] });
const call = (a: ActorName, via: Via, method: string, path: string, body?: unknown) =>
  p.request(method, path, { ...cred(a, via), ...(body !== undefined ? { body } : {}) });

const owner = () => tokens['org owner']!;
const ownerSession = () => sessions['org owner']!;
const lv = (level: Level) => (level === 'Private' ? 'p' : 'i');
const idx = (a: ActorName) => ACTOR_NAMES.indexOf(a);
/** Where a caller's own things go (anonymous has none: a real account so only the 401 shows). */
const ownAccount = (a: ActorName) => ACTORS[a].account ?? 'olga';

const sharedId = (level: Level) => `shared-${level.toLowerCase()}`;
const slowId = (level: Level) => `slow-${level.toLowerCase()}`;
const flowPath = (id: string, account = ORG) => `/flows/blueprints/${account}/${id}`;

/** A one-task flow with a variable (so it may have presets), a preset and a masked value. */
function sharedDefinition(id: string, level: Level, name = `Shared ${level}`) {
  return linearFlow(id, 1, {
    name,
    accessLevel: level,
    variables: [{ name: 'v', description: 'A value', required: false, allowedOptions: [] }],
    maskedValues: [{ name: 'secret', description: 'A secret' }],
    presets: [{ name: 'base', values: { v: 'from preset' }, default: false }],
  });
}

/** A flow whose run keeps running (a long Wait) until aborted. */
function slowDefinition(id: string, level: Level) {
  return { id, name: `Slow ${level}`, accessLevel: level, tasks: [{ id: 'pause', label: 'Pause', type: 'wait', settings: { seconds: 3600 } }], connections: [] };
}

async function createAs(headers: Record<string, string>, account: string, definition: unknown): Promise<any> {
  const res = await p.request('POST', `/flows/blueprints/${account}`, { headers, body: definition });
  if (res.status !== 201) throw new Error(`flow in ${account}: ${res.status} ${res.text}`);
  return res.body;
}

/** A flow whose task saves a file (a SPARQL query's results): runs have an artifact to download. */
function filesDefinition(id: string, level: Level) {
  return {
    id,
    name: `Files ${level}`,
    accessLevel: level,
    tasks: [
      {
        id: 'q',
        label: 'Query',
        type: 'sparqlQuery',
        settings: {
          dataset: { account: ORG, dataset: 'data' },
          query: { text: 'SELECT * WHERE { ?s ?p ?o } LIMIT 1' },
          output: { to: 'artifact', format: 'csv', fileName: 'out.csv' },
        },
      },
    ],
    connections: [],
  };
}

const shared: Partial<Record<Level, { uid: string; runId: string; artifactUrl: string }>> = {};

beforeAll(async () => {
  p = await TestPlatform.start();
  await enableFlows(p);
  for (const a of ACTOR_NAMES) {
    const account = ACTORS[a].account;
    if (!account || a === 'administrator') continue;
    tokens[a] = await p.createUser(account);
  }
  tokens.administrator = p.adminToken;
  const olga = owner();
  await p.createOrg(PARENT, olga);
  await p.createOrg(ORG, olga, { parent: PARENT });

  const roles: [string, Permission[]][] = [
    ['reader', ['readFlows']],
    ['runner', ['runFlows']],
    ['designer', ['manageFlowBlueprints']],
    ['keeper', ['manageFlowMaskedValues']],
    ['creator', ['createFlows']],
  ];
  for (const [name, permissions] of roles) {
    const res = await p.request('POST', `/accounts/${ORG}/roles`, { token: olga, body: { name, permissions } });
    expect(res.status, res.text).toBe(201);
  }
  const operator = await p.request('POST', `/accounts/${PARENT}/roles`, { token: olga, body: { name: 'operator', permissions: ['runFlows'] } });
  expect(operator.status, operator.text).toBe(201);
  await p.addMember(ORG, 'mia', 'member', olga);
  await p.addMember(ORG, 'rita', 'reader', olga);
  await p.addMember(ORG, 'rudy', 'runner', olga);
  await p.addMember(ORG, 'bea', 'designer', olga);
  await p.addMember(ORG, 'max', 'keeper', olga);
  await p.addMember(ORG, 'cora', 'creator', olga);
  await p.addMember(PARENT, 'pete', 'operator', olga);

  for (const a of ACTOR_NAMES) {
    if (a === 'anonymous') continue;
    sessions[a] = a === 'administrator' ? await consoleSession(p, 'admin', TestPlatform.ADMIN_PASSWORD) : await consoleSession(p, ACTORS[a].account!);
  }
  ownerReadOnly = await p.createToken('olga', olga, true);
  memberReadOnly = await p.createToken('mia', tokens['member (built-in role)']!, true);

  await p.createDataset(ORG, 'data', 'private', olga);
  for (const level of LEVELS) {
    const created = await createAs(ownerSession(), ORG, sharedDefinition(sharedId(level), level));
    await createAs(ownerSession(), ORG, slowDefinition(slowId(level), level));
    const run = await startRun(p, `${flowPath(sharedId(level))}/run`, olga);
    expect(run.status, run.text).toBe(201);
    const done = await waitForRun(p, run.body.id, olga);
    expect(done.status).toBe('finished');

    await createAs(ownerSession(), ORG, filesDefinition(`files-${level.toLowerCase()}`, level));
    const filesRun = await startRun(p, `${flowPath(`files-${level.toLowerCase()}`)}/run`, olga);
    expect(filesRun.status, filesRun.text).toBe(201);
    expect((await waitForRun(p, filesRun.body.id, olga)).status).toBe('finished');
    const tasks = await p.request('GET', `/flows/taskInstances?runId=${filesRun.body.id}`, { token: olga });
    const artifactUrl = tasks.body[0].artifacts[0].url as string;
    expect(artifactUrl.startsWith(`${p.url}/flows/taskInstances/`)).toBe(true);
    shared[level] = { uid: created.blueprintId, runId: run.body.id, artifactUrl: artifactUrl.slice(p.url.length) };
  }
}, 60_000);

afterAll(async () => {
  await p?.stop();
});

describe.each(LEVELS)('a %s flow of an organisation', (level) => {
  const path = () => flowPath(sharedId(level));

  describe.each(ACTOR_NAMES)('called by %s', (a) => {
    const read = expected(level, a, null, 200);

    it(`sees the flow with a token and with a session → ${read}`, async () => {
      for (const via of ['token', 'session'] as const) {
        const res = await call(a, via, 'GET', path());
        expect(res.status, via).toBe(read);
        if (read === 200) expect(res.body).toMatchObject({ id: sharedId(level), accessLevel: level, owner: { accountName: ORG } });
        else expectRefusal(res, read);
      }
    });

    it(`reads its versions, presets and Turtle download → ${read}`, async () => {
      const versions = await call(a, 'token', 'GET', `${path()}/versions`);
      expect(versions.status).toBe(read);
      const v1 = await call(a, 'token', 'GET', `${path()}/versions/1`);
      expect(v1.status).toBe(read);
      const presets = await call(a, 'token', 'GET', `${path()}/presets`);
      expect(presets.status).toBe(read);
      if (read === 200) expect(presets.body.map((x: { name: string }) => x.name)).toContain('base');
      const ttl = await call(a, 'session', 'GET', `${path()}/download.ttl`);
      expect(ttl.status).toBe(read);
      if (read === 200) {
        expect(ttl.headers.get('content-type')).toMatch(/^text\/turtle/);
        expect(ttl.text).toContain(sharedId(level));
      } else expectRefusal(ttl, read);
    });

    it(`finds it in the account's flow listing only when it sees it`, async () => {
      const res = await call(a, 'token', 'GET', `/flows/blueprints/${ORG}`);
      if (a === 'anonymous') {
        expect(res.status).toBe(401);
        return;
      }
      expect(res.status).toBe(200);
      expect(res.body.map((f: { id: string }) => f.id).includes(sharedId(level))).toBe(sees(level, a));
    });

    it(`lists masked value names with isSet (never the value) → ${read}`, async () => {
      const res = await call(a, 'token', 'GET', `${path()}/maskedValues`);
      expect(res.status).toBe(read);
      if (read === 200) {
        expect(res.body).toEqual([{ name: 'secret', description: 'A secret', isSet: expect.any(Boolean) }]);
      } else expectRefusal(res, read);
    });

    it(`reads a run and its task instances → ${read}`, async () => {
      const runId = shared[level]!.runId;
      const run = await call(a, 'token', 'GET', `/flows/runs/${runId}`);
      expect(run.status).toBe(read);
      if (read === 200) expect(run.body).toMatchObject({ id: runId, status: 'finished', account: ORG, flowId: sharedId(level) });
      else expectRefusal(run, read);
      const tasks = await call(a, 'session', 'GET', `/flows/taskInstances?runId=${runId}`);
      expect(tasks.status).toBe(read);
      if (read === 200) expect(tasks.body.map((t: { taskId: string; status: string }) => [t.taskId, t.status])).toEqual([['t1', 'finished']]);
    });

    it(`downloads a file a task produced → ${read}`, async () => {
      const res = await call(a, 'token', 'GET', shared[level]!.artifactUrl);
      expect(res.status).toBe(read);
      if (read === 200) {
        expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
        expect(res.headers.get('content-disposition')).toContain('out.csv');
      } else expectRefusal(res, read);
    });

    it('finds the run in the runs listing only when it sees the flow', async () => {
      const runId = shared[level]!.runId;
      for (const query of [`blueprintId=${sharedId(level)}&account=${ORG}`, `blueprintId=${sharedId(level)}`, `blueprintId=${shared[level]!.uid}`]) {
        const res = await call(a, 'token', 'GET', `/flows/runs?${query}`);
        if (a === 'anonymous') {
          expect(res.status).toBe(401);
          continue;
        }
        expect(res.status, query).toBe(200);
        expect(res.body.map((r: { id: string }) => r.id).includes(runId), query).toBe(sees(level, a));
      }
    });

    const run = expected(level, a, 'runFlows', 201);

    it(`starts a run with a token (startedFrom api) → ${run}`, async () => {
      const res = await startRun(p, `${path()}/run`, tokens[a] ?? '', { query: { v: 'given' } });
      expect(res.status).toBe(run);
      if (run !== 201) return expectRefusal(res, run);
      expect(res.body).toMatchObject({ startedFrom: { type: 'api' }, startedBy: ACTORS[a].account, account: ORG });
      const done = await waitForRun(p, res.body.id, tokens[a]!);
      expect(done.status).toBe('finished');
      expect(done.variables).toMatchObject({ v: 'given', system_triggererAccountName: ACTORS[a].account });
    });

    it(`starts a run from a console session (startedFrom manual) → ${run}`, async () => {
      const res = await call(a, 'session', 'POST', `${path()}/run`);
      expect(res.status).toBe(run);
      if (run !== 201) return expectRefusal(res, run);
      expect(res.body).toMatchObject({ startedFrom: { type: 'manual' }, startedBy: ACTORS[a].account });
      await waitForRun(p, res.body.id, tokens[a]!);
    });

    it(`starts a run with a preset's values → ${run}`, async () => {
      const res = await call(a, 'token', 'POST', `${path()}/triggers/base/run`);
      expect(res.status).toBe(run);
      if (run !== 201) return expectRefusal(res, run);
      expect(res.body).toMatchObject({ preset: 'base', variables: { v: 'from preset' } });
      await waitForRun(p, res.body.id, tokens[a]!);
    });

    const abort = expected(level, a, 'runFlows', 200);

    it(`aborts a running run → ${abort}`, async () => {
      const started = await startRun(p, `${flowPath(slowId(level))}/run`, owner());
      expect(started.status, started.text).toBe(201);
      // A new run is pending until its first task starts.
      expect(started.body.status).toBe('pending');
      const res = await call(a, 'token', 'POST', `/flows/runs/${started.body.id}/abort`);
      expect(res.status).toBe(abort);
      if (abort === 200) {
        expect(res.body).toMatchObject({ id: started.body.id, status: 'aborted', error: { message: `Aborted by ${ACTORS[a].account}.` } });
        return;
      }
      expectRefusal(res, abort);
      // The refused abort changed nothing: the run still runs until its owner stops it.
      expect(['pending', 'running']).toContain((await p.request('GET', `/flows/runs/${started.body.id}`, { token: owner() })).body.status);
      const cleanup = await p.request('POST', `/flows/runs/${started.body.id}/abort`, { token: owner() });
      expect(cleanup.body.status).toBe('aborted');
    });

    const abortFinished = abort === 200 ? 409 : abort;
    it(`aborts a finished run from a session → ${abortFinished}`, async () => {
      const res = await call(a, 'session', 'POST', `/flows/runs/${shared[level]!.runId}/abort`);
      expect(res.status).toBe(abortFinished);
      expectRefusal(res, abortFinished);
    });

    const edit = expected(level, a, 'manageFlowBlueprints', 200);

    it(`saves the flow (session) → ${edit}`, async () => {
      const before = (await p.request('GET', path(), { token: owner() })).body.latestVersion as number;
      const name = `Saved by ${a}`;
      const res = await call(a, 'session', 'PUT', path(), sharedDefinition(sharedId(level), level, name));
      expect(res.status).toBe(edit);
      const after = (await p.request('GET', path(), { token: owner() })).body;
      if (edit === 200) {
        expect(res.body).toMatchObject({ name, version: before + 1 });
        expect(after.latestVersion).toBe(before + 1);
      } else {
        expectRefusal(res, edit);
        expect(after.latestVersion).toBe(before);
      }
    });

    it(`restores version 1 (session) → ${edit}`, async () => {
      const res = await call(a, 'session', 'POST', `${path()}/versions/1/restore`);
      expect(res.status).toBe(edit);
      if (edit === 200) expect(res.body).toMatchObject({ restoredFrom: 1, name: `Shared ${level}` });
      else expectRefusal(res, edit);
    });

    it(`adds and removes a preset (session) → ${edit}`, async () => {
      const name = `preset-${idx(a)}`;
      const put = await call(a, 'session', 'PUT', `${path()}/presets/${name}`, { values: { v: 'x' } });
      expect(put.status).toBe(edit);
      if (edit !== 200) {
        expectRefusal(put, edit);
        // Give the owner's preset so every caller's DELETE has a target.
        expect((await p.request('PUT', `${path()}/presets/${name}`, { headers: ownerSession(), body: { values: { v: 'x' } } })).status).toBe(200);
      } else expect(put.body).toEqual({ name, values: { v: 'x' }, default: false });
      const del = await call(a, 'session', 'DELETE', `${path()}/presets/${name}`);
      expect(del.status).toBe(edit === 200 ? 204 : edit);
      const left = (await p.request('GET', `${path()}/presets`, { token: owner() })).body.map((x: { name: string }) => x.name);
      expect(left.includes(name)).toBe(edit !== 200);
      if (edit !== 200) await p.request('DELETE', `${path()}/presets/${name}`, { headers: ownerSession() });
    });

    const del = expected(level, a, 'manageFlowBlueprints', 204);
    it(`deletes a flow (session) → ${del}`, async () => {
      const id = `del-${lv(level)}-${idx(a)}`;
      await createAs(ownerSession(), ORG, linearFlow(id, 1, { accessLevel: level }));
      const res = await call(a, 'session', 'DELETE', flowPath(id));
      expect(res.status).toBe(del);
      expectRefusal(res, del);
      expect((await p.request('GET', flowPath(id), { token: owner() })).status).toBe(del === 204 ? 404 : 200);
    });

    const masked = expected(level, a, 'manageFlowMaskedValues', 204);
    it(`sets, sees and deletes the masked value (session) → ${masked}`, async () => {
      const value = `secret of ${a}`;
      const put = await call(a, 'session', 'PUT', `${path()}/maskedValues/secret`, { value });
      expect(put.status).toBe(masked);
      expectRefusal(put, masked);
      const seen = await call(a, 'session', 'GET', `${path()}/maskedValues/secret`);
      expect(seen.status).toBe(masked === 204 ? 200 : masked);
      if (seen.status === 200) expect(seen.body).toEqual({ name: 'secret', isSet: true, value });
      else expect(seen.text).not.toContain('secret of');
      // Everyone who sees the flow sees whether it is set, never the value.
      const listed = await p.request('GET', `${path()}/maskedValues`, { token: owner() });
      expect(listed.body[0].isSet).toBe(masked === 204);
      const removed = await call(a, 'session', 'DELETE', `${path()}/maskedValues/secret`);
      expect(removed.status).toBe(masked);
      // Leave it set (by the owner) for a refused DELETE: it must stay.
      if (masked !== 204) {
        await p.request('PUT', `${path()}/maskedValues/secret`, { headers: ownerSession(), body: { value: 'kept' } });
        expect((await call(a, 'session', 'DELETE', `${path()}/maskedValues/secret`)).status).toBe(masked);
        expect((await p.request('GET', `${path()}/maskedValues/secret`, { headers: ownerSession() })).body.value).toBe('kept');
        await p.request('DELETE', `${path()}/maskedValues/secret`, { headers: ownerSession() });
      }
      expect((await p.request('GET', `${path()}/maskedValues`, { token: owner() })).body[0].isSet).toBe(false);
    });

    const copyOwn = expected(level, a, null, 201);
    it(`copies the flow into its own account (session) → ${copyOwn}`, async () => {
      const id = `cp-own-${lv(level)}-${idx(a)}`;
      const res = await call(a, 'session', 'POST', `${path()}/copy`, { account: ownAccount(a), id });
      expect(res.status).toBe(copyOwn);
      expectRefusal(res, copyOwn);
      const copy = await p.request('GET', flowPath(id, ownAccount(a)), { token: p.adminToken });
      expect(copy.status).toBe(copyOwn === 201 ? 200 : 404);
      if (copyOwn === 201) expect(copy.body).toMatchObject({ owner: { accountName: ownAccount(a) }, accessLevel: level });
    });

    const copyOrg = expected(level, a, 'createFlows', 201);
    it(`copies the flow within the organisation (session) → ${copyOrg}`, async () => {
      const id = `cp-org-${lv(level)}-${idx(a)}`;
      const res = await call(a, 'session', 'POST', `${path()}/copy`, { account: ORG, id });
      expect(res.status).toBe(copyOrg);
      expectRefusal(res, copyOrg);
      expect((await p.request('GET', flowPath(id), { token: owner() })).status).toBe(copyOrg === 201 ? 200 : 404);
    });

    const moveOut = expected(level, a, 'manageFlowBlueprints', 200);
    it(`moves a flow out of the organisation into its own account (session) → ${moveOut}`, async () => {
      const id = `mv-out-${lv(level)}-${idx(a)}`;
      await createAs(ownerSession(), ORG, linearFlow(id, 1, { accessLevel: level }));
      const res = await call(a, 'session', 'POST', `${flowPath(id)}/move`, { account: ownAccount(a) });
      expect(res.status).toBe(moveOut);
      expectRefusal(res, moveOut);
      expect((await p.request('GET', flowPath(id), { token: p.adminToken })).status).toBe(moveOut === 200 ? 404 : 200);
      expect((await p.request('GET', flowPath(id, ownAccount(a)), { token: p.adminToken })).status).toBe(moveOut === 200 ? 200 : 404);
    });

    const moveIn = a === 'anonymous' ? 401 : holds(a, 'createFlows') ? 200 : 403;
    it(`moves a flow of its own into the organisation (session) → ${moveIn}`, async () => {
      const id = `mv-in-${lv(level)}-${idx(a)}`;
      await createAs(a === 'anonymous' ? ownerSession() : sessions[a]!, ownAccount(a), linearFlow(id, 1, { accessLevel: level }));
      const res = await call(a, 'session', 'POST', `${flowPath(id, ownAccount(a))}/move`, { account: ORG });
      expect(res.status).toBe(moveIn);
      expectRefusal(res, moveIn);
      expect((await p.request('GET', flowPath(id), { token: p.adminToken })).status).toBe(moveIn === 200 ? 200 : 404);
    });

    const create = a === 'anonymous' ? 401 : holds(a, 'createFlows') ? 201 : 403;
    it(`creates a flow in the organisation (session) → ${create}`, async () => {
      const id = `new-${lv(level)}-${idx(a)}`;
      const res = await call(a, 'session', 'POST', `/flows/blueprints/${ORG}`, linearFlow(id, 1, { accessLevel: level }));
      expect(res.status).toBe(create);
      expectRefusal(res, create);
      expect((await p.request('GET', flowPath(id), { token: owner() })).status).toBe(create === 201 ? 200 : 404);
    });
  });
});

describe('API tokens of fully entitled callers', () => {
  const who = [
    ['org owner', () => owner()],
    ['administrator', () => p.adminToken],
  ] as const;

  describe.each(who)('%s', (name, token) => {
    it.each(LEVELS)('cannot change a %s flow, its presets or masked values: 403 "console"', async (level) => {
      const path = flowPath(sharedId(level));
      const before = (await p.request('GET', path, { token: token() })).body.latestVersion;
      const attempts: [string, string, unknown?][] = [
        ['POST', `/flows/blueprints/${ORG}`, linearFlow(`by-token-${name.length}-${lv(level)}`, 1, { accessLevel: level })],
        ['PUT', path, sharedDefinition(sharedId(level), level, 'by token')],
        ['DELETE', path],
        ['POST', `${path}/versions/1/restore`],
        ['POST', `${path}/copy`, { account: ORG, id: `copy-by-token-${lv(level)}` }],
        ['POST', `${path}/move`, { account: 'olga' }],
        ['PUT', `${path}/presets/by-token`, { values: { v: 'x' } }],
        ['DELETE', `${path}/presets/base`],
        ['PUT', `${path}/maskedValues/secret`, { value: 'by token' }],
        ['DELETE', `${path}/maskedValues/secret`],
        // Seeing a masked value's value is a console action too (the code's choice; see the report).
        ['GET', `${path}/maskedValues/secret`],
      ];
      for (const [method, route, body] of attempts) {
        const res = await p.request(method, route, { token: token(), ...(body !== undefined ? { body } : {}) });
        expect(res.status, `${method} ${route}`).toBe(403);
        expect(res.body.message, `${method} ${route}`).toMatch(/console/);
      }
      const after = (await p.request('GET', path, { token: token() })).body;
      expect(after.latestVersion).toBe(before);
      expect(after.owner.accountName).toBe(ORG);
      expect((await p.request('GET', flowPath(`copy-by-token-${lv(level)}`), { token: token() })).status).toBe(404);
      // Reading stays open to the token.
      expect((await p.request('GET', `${path}/maskedValues`, { token: token() })).status).toBe(200);
      expect((await p.request('GET', `${path}/presets`, { token: token() })).status).toBe(200);
    });
  });
});

describe('read-only tokens', () => {
  it.each([
    ['the org owner', () => ownerReadOnly],
    ['a member', () => memberReadOnly],
  ])('of %s read flows and runs but cannot start or abort runs (403)', async (_name, token) => {
    for (const level of LEVELS) {
      const path = flowPath(sharedId(level));
      expect((await p.request('GET', path, { token: token() })).status).toBe(200);
      expect((await p.request('GET', `/flows/runs/${shared[level]!.runId}`, { token: token() })).status).toBe(200);
      const start = await startRun(p, `${path}/run`, token());
      expect(start.status).toBe(403);
      expect(start.body.message).toMatch(/may not run flows/);
      expect((await p.request('POST', `${path}/triggers/base/run`, { token: token() })).status).toBe(403);
      const running = await startRun(p, `${flowPath(slowId(level))}/run`, owner());
      const abort = await p.request('POST', `/flows/runs/${running.body.id}/abort`, { token: token() });
      expect(abort.status).toBe(403);
      expect(abort.body.message).toMatch(/may not abort runs/);
      expect((await p.request('POST', `/flows/runs/${running.body.id}/abort`, { token: owner() })).body.status).toBe('aborted');
    }
  });
});

describe('the instance switches', () => {
  it('are read and changed by administrators only', async () => {
    const admin = await p.request('GET', '/admin/flows', { token: p.adminToken });
    expect(admin.status).toBe(200);
    expect(admin.body).toEqual({ flowsEnabled: true, sparqlUpdateTaskEnabled: false });
    // Not an administrator: reading answers 404 (the route is hidden), changing 403; anonymous 401.
    expect((await p.request('GET', '/admin/flows', { token: owner() })).status).toBe(404);
    expect((await p.request('GET', '/admin/flows')).status).toBe(404);
    const byOwner = await p.request('PATCH', '/admin/flows', { token: owner(), body: { flowsEnabled: false } });
    expect(byOwner.status).toBe(403);
    expect(byOwner.body.message).toMatch(/administrators/);
    expect((await p.request('PATCH', '/admin/flows', { headers: ownerSession(), body: { flowsEnabled: false } })).status).toBe(403);
    expect((await p.request('PATCH', '/admin/flows', { body: { flowsEnabled: false } })).status).toBe(401);
    expect((await p.request('GET', '/admin/flows', { token: p.adminToken })).body.flowsEnabled).toBe(true);
  });

  it('switched off, every flows route answers 404 (for anyone); switched on again, they answer again', async () => {
    const level: Level = 'Private';
    const path = flowPath(sharedId(level));
    const runId = shared[level]!.runId;
    const running = await startRun(p, `${flowPath(slowId(level))}/run`, owner());
    expect(running.status).toBe(201);

    const routes: [string, string, unknown?][] = [
      ['GET', `/flows/blueprints/${ORG}`],
      ['POST', `/flows/blueprints/${ORG}`, linearFlow('while-off', 1)],
      ['GET', path],
      ['PUT', path, sharedDefinition(sharedId(level), level)],
      ['GET', `${path}/download.ttl`],
      ['GET', `${path}/versions`],
      ['GET', `${path}/presets`],
      ['GET', `${path}/maskedValues`],
      ['POST', `${path}/copy`, { account: ORG, id: 'copied-while-off' }],
      ['POST', `${path}/run`],
      ['POST', `${path}/triggers/base/run`],
      ['GET', `/flows/runs?blueprintId=${sharedId(level)}`],
      ['GET', `/flows/runs/${runId}`],
      ['GET', `/flows/taskInstances?runId=${runId}`],
      ['POST', `/flows/runs/${running.body.id}/abort`],
      ['DELETE', path],
    ];
    const off = await p.request('PATCH', '/admin/flows', { token: p.adminToken, body: { flowsEnabled: false } });
    expect(off.status).toBe(200);
    expect(off.body.flowsEnabled).toBe(false);
    try {
      for (const [method, route, body] of routes) {
        for (const auth of [{ headers: ownerSession() }, { token: owner() }, { token: p.adminToken }, {}]) {
          const res = await p.request(method, route, { ...auth, ...(body !== undefined ? { body } : {}) });
          expect(res.status, `${method} ${route}`).toBe(404);
          expect(res.body.message, `${method} ${route}`).toMatch(/Flows are not enabled/);
        }
      }
    } finally {
      await enableFlows(p);
    }
    expect((await p.request('GET', `/flows/blueprints/${ORG}`, { token: owner() })).status).toBe(200);
    expect((await p.request('GET', path, { token: owner() })).status).toBe(200);
    expect((await p.request('GET', `/flows/runs?blueprintId=${sharedId(level)}`, { token: owner() })).status).toBe(200);
    expect((await p.request('GET', `/flows/runs/${runId}`, { token: owner() })).status).toBe(200);
    // Nothing that was refused while off happened.
    expect((await p.request('GET', flowPath('while-off'), { token: owner() })).status).toBe(404);
    expect((await p.request('GET', flowPath('copied-while-off'), { token: owner() })).status).toBe(404);
    const started = await startRun(p, `${path}/run`, owner());
    expect(started.status).toBe(201);
    expect((await waitForRun(p, started.body.id, owner())).status).toBe('finished');
    const abort = await p.request('POST', `/flows/runs/${running.body.id}/abort`, { token: owner() });
    expect(abort.status).toBe(200);
    expect(abort.body.status).toBe('aborted');
  });
});
