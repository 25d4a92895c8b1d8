/**
 * Flow runs end to end through HTTP, part 3 of 3 (the set-up is in test/support/flow-runs.ts):
 * a run acts as its starter, the run listing with its filters, and where tasks may send requests.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { flowPath, useFlowRunsWorld } from '../support/flow-runs.js';
import { TestPlatform, type ApiResponse } from '../support/platform.js';

const world = useFlowRunsWorld();
const { fid, newFlow, runToEnd, taskOf, runsOf } = world;
let p: TestPlatform;
let alice: string;
let bob: string;
let aliceSession: Record<string, string>;
let bobSession: Record<string, string>;
let echoUrl: string;
beforeAll(() => {
  ({ p, alice, bob, aliceSession, bobSession, echoUrl } = world);
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
