/**
 * Hooks and failure email through HTTP: asset upload hooks (every asset and version), data upload
 * hooks (a waiting run at upload start, one run per added graph, aborted when none), who may add
 * hooks, and the failure email rules (failed and timeout send, aborted does not, the setting
 * switches them off).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, createFlow, enableFlows, waitForRun } from '../support/flows.js';
import { importFiles, waitForJob } from '../support/imports.js';
import { readOutbox } from '../support/outbox.js';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let session: Record<string, string>;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  await enableFlows(p);
  session = await consoleSession(p, 'alice');
  await p.request('PATCH', '/accounts/alice', { token: alice, body: { email: 'alice@example.org' } });
  await p.createDataset('alice', 'inbox', 'private', alice);
});
afterAll(async () => p?.stop());

/** A flow that records the hook system variables in its output. */
function recorder(id: string) {
  return {
    id,
    name: `Recorder ${id}`,
    accessLevel: 'Private',
    variables: [{ name: 'mode', required: true, allowedOptions: ['a', 'b'] }],
    presets: [{ name: 'Mode B', values: { mode: 'b' } }],
    outputVariables: [{ name: 'seen' }],
    tasks: [
      {
        id: 'record',
        label: 'Record',
        type: 'setVariables',
        settings: {
          values: {
            seen: '?mode|?system_triggererAccountName|?system_uploadedToAccountName|?system_uploadedToDatasetName|?system_uploadedAssetName|?system_uploadedAssetURL|?system_uploadedGraphIRI',
          },
        },
      },
    ],
    connections: [],
  };
}

const runsOf = async (query: string) => (await p.request('GET', `/flows/runs?${query}`, { token: alice })).body as any[];

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < 3_000 && Date.now() < deadline; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

async function seen(runId: string): Promise<string[]> {
  const tasks = await p.request('GET', `/flows/taskInstances?runId=${runId}`, { token: alice });
  return String(tasks.body[0].output.variables.seen).split('|');
}

async function uploadAsset(dataset: string, name: string, content: string, versionOf?: string) {
  const form = new FormData();
  if (versionOf) form.append('versionOf', versionOf);
  form.append('file', new Blob([content]), name);
  const res = await fetch(`${p.url}/datasets/${dataset}/assets`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
  expect(res.status).toBe(201);
  return res.json();
}

describe('managing hooks', () => {
  it('needs a console session and Manage flow blueprints; validates label, type and dataset', async () => {
    await createFlow(p, 'alice', session, recorder('hooked'));
    const path = '/flows/blueprints/alice/hooked/hooks';
    const body = { label: 'On upload', type: 'assetUpload', dataset: { account: 'alice', dataset: 'inbox' }, values: { mode: 'a' } };
    expect((await p.request('POST', path, { token: alice, body })).status).toBe(403);
    expect((await p.request('POST', path, { headers: await consoleSession(p, 'bob'), body })).status).toBe(404);
    expect((await p.request('POST', path, { headers: session, body: { ...body, label: 'x' } })).status).toBe(400);
    expect((await p.request('POST', path, { headers: session, body: { ...body, label: 'l'.repeat(81) } })).status).toBe(400);
    expect((await p.request('POST', path, { headers: session, body: { ...body, type: 'onDelete' } })).status).toBe(400);
    expect((await p.request('POST', path, { headers: session, body: { ...body, dataset: { account: 'alice', dataset: '?ds' } } })).status).toBe(400);
    expect((await p.request('POST', path, { headers: session, body: { ...body, dataset: { account: 'bob', dataset: 'nothing' } } })).status).toBe(404);
    expect((await p.request('POST', path, { headers: session, body: { ...body, values: { mode: 'c' } } })).status).toBe(400);
    expect((await p.request('POST', path, { headers: session, body: { ...body, values: { nope: 'x' } } })).status).toBe(400);
    const misspelt = await p.request('POST', path, { headers: session, body: { ...body, datset: { account: 'alice', dataset: 'inbox' } } });
    expect(misspelt.status).toBe(400);
    expect(misspelt.body.message).toMatch(/datset/);
    expect((await p.request('POST', path, { headers: session, body: { ...body, preset: 'No such preset' } })).status).toBe(404);

    const created = await p.request('POST', path, { headers: session, body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ label: 'On upload', type: 'assetUpload', enabled: true, dataset: { account: 'alice', dataset: 'inbox' }, values: { mode: 'a' }, owner: 'alice' });
    const fromPreset = await p.request('PATCH', `${path}/${created.body.id}`, { headers: session, body: { preset: 'Mode B' } });
    expect(fromPreset.body).toMatchObject({ values: { mode: 'b' }, preset: 'Mode B' });
    expect((await p.request('GET', path, { token: alice })).body).toHaveLength(1);
    expect((await p.request('DELETE', `${path}/${created.body.id}`, { headers: session })).status).toBe(204);
    expect((await p.request('GET', `${path}/${created.body.id}`, { token: alice })).status).toBe(404);
  });
});

describe('hook owners', () => {
  it("removes a user's hooks when the user is deleted; the flow and others' hooks stay", async () => {
    await p.createOrg('hookorg', alice);
    await p.createUser('carol');
    await p.addMember('hookorg', 'carol', 'owner', alice);
    await p.createDataset('hookorg', 'drop', 'internal', alice);
    await createFlow(p, 'hookorg', session, recorder('org-flow'));
    const body = (label: string) => ({ label, type: 'assetUpload', dataset: { account: 'hookorg', dataset: 'drop' }, values: { mode: 'a' } });
    const carols = await p.request('POST', '/flows/blueprints/hookorg/org-flow/hooks', { headers: await consoleSession(p, 'carol'), body: body("Carol's hook") });
    expect(carols.status).toBe(201);
    expect(carols.body.owner).toBe('carol');
    const alices = await p.request('POST', '/flows/blueprints/hookorg/org-flow/hooks', { headers: session, body: body("Alice's hook") });
    expect(alices.status).toBe(201);
    // Alice may not change Carol's hook (its runs act as Carol), though she may delete it.
    const taken = await p.request('PATCH', `/flows/blueprints/hookorg/org-flow/hooks/${carols.body.id}`, { headers: session, body: { values: { mode: 'b' } } });
    expect(taken.status).toBe(403);
    expect(taken.body.message).toMatch(/belongs to its creator/);
    expect((await p.request('DELETE', '/accounts/carol', { token: p.adminToken })).status).toBe(204);
    const left = await p.request('GET', '/flows/blueprints/hookorg/org-flow/hooks', { token: alice });
    expect(left.body.map((h: { label: string }) => h.label)).toEqual(["Alice's hook"]);
  });
});

describe('asset upload hooks', () => {
  it('start a hook-asset run for every asset and every new version, with the asset system variables, acting as the hook creator', async () => {
    await p.createDataset('alice', 'docs', 'public', alice);
    await createFlow(p, 'alice', session, recorder('on-asset'));
    const hook = await p.request('POST', '/flows/blueprints/alice/on-asset/hooks', {
      headers: session,
      body: { label: 'Every asset', type: 'assetUpload', dataset: { account: 'alice', dataset: 'docs' }, values: { mode: 'a' } },
    });
    expect(hook.status).toBe(201);

    const asset = await uploadAsset('alice/docs', 'report.txt', 'first');
    const first = await until('hook run', async () => {
      const runs = await runsOf(`hookId=${hook.body.id}`);
      return runs.length === 1 ? runs[0] : undefined;
    });
    expect(first.startedFrom).toEqual({ type: 'hook-asset', hookId: hook.body.id, assetId: asset.identifier });
    expect(first.startedBy).toBe('alice');
    const done = await waitForRun(p, first.id, alice);
    expect(done.status).toBe('finished');
    const [mode, triggerer, account, dataset, assetName, assetUrl, graph] = await seen(first.id);
    expect([mode, triggerer, account, dataset, assetName, graph]).toEqual(['a', 'alice', 'alice', 'docs', 'report.txt', '']);
    expect(assetUrl).toBe(`${p.url}/alice/docs/assets/${asset.identifier}`);

    // A new version fires again; another dataset does not.
    await uploadAsset('alice/docs', 'report.txt', 'second', asset.identifier);
    await p.createDataset('alice', 'elsewhere', 'public', alice);
    await uploadAsset('alice/elsewhere', 'other.txt', 'x');
    await until('second hook run', async () => ((await runsOf(`hookId=${hook.body.id}`)).length === 2 ? true : undefined));
    expect(await runsOf(`assetId=${asset.identifier}`)).toHaveLength(2);

    // Disabled: no more runs.
    await p.request('PATCH', `/flows/blueprints/alice/on-asset/hooks/${hook.body.id}`, { headers: session, body: { enabled: false } });
    await uploadAsset('alice/docs', 'quiet.txt', 'y');
    await new Promise((r) => setTimeout(r, 300));
    expect(await runsOf(`hookId=${hook.body.id}`)).toHaveLength(2);
  });
});

describe('data upload hooks', () => {
  it('create a waiting run when an upload starts and start one run per added graph, the first being the waiting run', async () => {
    await p.createDataset('alice', 'graphs', 'private', alice);
    await createFlow(p, 'alice', session, recorder('on-data'));
    const hook = await p.request('POST', '/flows/blueprints/alice/on-data/hooks', {
      headers: session,
      body: { label: 'Every graph', type: 'dataUpload', dataset: { account: 'alice', dataset: 'graphs' }, preset: 'Mode B' },
    });
    expect(hook.status).toBe(201);

    // An upload in two steps: the job exists (upload started) before any file is added.
    const job = await p.request('POST', '/datasets/alice/graphs/jobs', { token: alice, body: {} });
    expect(job.status).toBe(201);
    const waiting = (await runsOf(`hookId=${hook.body.id}`))[0];
    expect(waiting).toMatchObject({ status: 'waiting', startedFrom: { type: 'hook-index-job', hookId: hook.body.id } });
    expect((await p.request('GET', `/flows/taskInstances?runId=${waiting.id}`, { token: alice })).body[0].status).toBe('pending');

    const content = Buffer.from('<https://x.example/s> <https://x.example/p> "o" <https://x.example/g1> .\n<https://x.example/s> <https://x.example/p> "o" <https://x.example/g2> .\n');
    const tus = { 'tus-resumable': '1.0.0', authorization: `Bearer ${alice}` };
    const create = await fetch(`${p.url}/datasets/alice/graphs/jobs/${job.body.jobId}/add`, {
      method: 'POST',
      headers: { ...tus, 'upload-length': String(content.length), 'upload-metadata': `filename ${Buffer.from('two.nq').toString('base64')}` },
    });
    expect(create.status).toBe(201);
    const patch = await fetch(create.headers.get('location')!, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: content,
    });
    expect(patch.status).toBeLessThan(300);
    expect((await runsOf(`hookId=${hook.body.id}`))[0].status).toBe('waiting');
    const start = await p.request('POST', `/datasets/alice/graphs/jobs/${job.body.jobId}/start`, { token: alice });
    expect(start.status).toBeLessThan(300);
    expect((await waitForJob(p, alice, 'alice/graphs', job.body.jobId)).status).toBe('finished');

    const runs = await until('two runs', async () => {
      const all = await runsOf(`hookId=${hook.body.id}&sortBy=createdAt&sortDirection=asc`);
      return all.length === 2 && all.every((r) => r.status === 'finished') ? all : undefined;
    });
    expect(runs[0].id).toBe(waiting.id);
    const graphs = await Promise.all(runs.map(async (r) => (await seen(r.id))));
    expect(graphs.map((g) => g[6]).sort()).toEqual(['https://x.example/g1', 'https://x.example/g2']);
    for (const g of graphs) expect(g.slice(0, 4)).toEqual(['b', 'alice', 'alice', 'graphs']);
    expect(await runsOf(`startedFromType=hook-index-job&hookId=${hook.body.id}`)).toHaveLength(2);
  });

  it('aborts the waiting run when the upload adds no graph (a canceled or failed upload)', async () => {
    await p.createDataset('alice', 'rejects', 'private', alice);
    await createFlow(p, 'alice', session, recorder('on-reject'));
    const hook = await p.request('POST', '/flows/blueprints/alice/on-reject/hooks', {
      headers: session,
      body: { label: 'Every graph', type: 'dataUpload', dataset: { account: 'alice', dataset: 'rejects' }, values: { mode: 'a' } },
    });
    const bad = await importFiles(p, alice, 'alice/rejects', [{ name: 'bad.ttl', content: '<a> <b> .' }]);
    expect(bad.status).toBe('error');
    const failed = await until('aborted run', async () => {
      const runs = await runsOf(`hookId=${hook.body.id}`);
      return runs[0]?.status === 'aborted' ? runs[0] : undefined;
    });
    expect(failed.error.message).toMatch(/added no graph/);
    const tasks = await p.request('GET', `/flows/taskInstances?runId=${failed.id}`, { token: alice });
    expect(tasks.body[0].status).toBe('neverStarted');

    const job = await p.request('POST', '/datasets/alice/rejects/jobs', { token: alice, body: {} });
    expect((await p.request('DELETE', `/datasets/alice/rejects/jobs/${job.body.jobId}`, { token: alice })).status).toBeLessThan(300);
    const canceled = await until('canceled upload run', async () => {
      const runs = await runsOf(`hookId=${hook.body.id}&status=aborted`);
      return runs.length === 2 ? runs : undefined;
    });
    expect(canceled).toHaveLength(2);
    // Bob, who cannot see the flow, sees none of these runs.
    expect((await p.request('GET', `/flows/runs?hookId=${hook.body.id}`, { token: bob })).body).toEqual([]);
  });
});

describe('failure email', () => {
  const mails = () => readOutbox(p.dataDir);

  const failing = (id: string, task: Record<string, unknown>) => ({ id, name: `Failing ${id}`, accessLevel: 'Private', tasks: [task], connections: [] });

  it('mails the starter when a run fails or times out, naming the flow, run, task and error; not when aborted', async () => {
    const before = (await mails()).length;
    await createFlow(p, 'alice', session, failing('breaks', { id: 'query', label: 'Query a missing dataset', type: 'sparqlQuery', settings: { dataset: { account: 'alice', dataset: 'missing' }, query: { text: 'SELECT * WHERE { ?s ?p ?o }' }, output: { to: 'artifact', format: 'csv' } } }));
    const run = await p.request('POST', '/flows/blueprints/alice/breaks/run', { token: alice });
    expect((await waitForRun(p, run.body.id, alice)).status).toBe('failed');
    const failedMail = await until('failure email', async () => {
      const all = await mails();
      return all.length > before ? all[all.length - 1] : undefined;
    });
    expect(failedMail.to).toEqual(['alice@example.org']);
    expect(failedMail.subject).toContain('Failing breaks');
    expect(failedMail.text).toContain(run.body.id);
    expect(failedMail.text).toContain('Query a missing dataset');
    expect(failedMail.text).toMatch(/does not exist/);

    await createFlow(p, 'alice', session, {
      ...failing('slow', { id: 'nap', label: 'Nap', type: 'wait', settings: { seconds: '?delay' }, timeoutSeconds: 1 }),
      variables: [{ name: 'delay' }],
    });
    const slow = await p.request('POST', '/flows/blueprints/alice/slow/run?delay=5', { token: alice });
    expect((await waitForRun(p, slow.body.id, alice)).status).toBe('timeout');
    const timeoutMail = await until('timeout email', async () => (await mails()).find((m) => m.text.includes(slow.body.id)));
    expect(timeoutMail.subject).toMatch(/timed out/);

    await createFlow(p, 'alice', session, failing('stopper', { id: 'stop', label: 'Stop', type: 'stopRun', settings: { reason: 'enough' } }));
    const stopped = await p.request('POST', '/flows/blueprints/alice/stopper/run', { token: alice });
    expect((await waitForRun(p, stopped.body.id, alice)).status).toBe('aborted');
    await createFlow(p, 'alice', session, failing('long', { id: 'nap', label: 'Nap', type: 'wait', settings: { seconds: 60 } }));
    const long = await p.request('POST', '/flows/blueprints/alice/long/run', { token: alice });
    expect((await p.request('POST', `/flows/runs/${long.body.id}/abort`, { token: alice })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const all = await mails();
    expect(all.some((m) => m.text.includes(stopped.body.id) || m.text.includes(long.body.id))).toBe(false);
  });

  it('sends nothing once the user switches Email notifications off', async () => {
    const off = await p.request('PATCH', '/accounts/alice', { token: alice, body: { emailNotifications: false } });
    expect(off.status).toBe(200);
    expect(off.body.emailNotifications).toBe(false);
    const run = await p.request('POST', '/flows/blueprints/alice/breaks/run', { token: alice });
    expect((await waitForRun(p, run.body.id, alice)).status).toBe('failed');
    await new Promise((r) => setTimeout(r, 300));
    expect((await mails()).some((m) => m.text.includes(run.body.id))).toBe(false);
    await p.request('PATCH', '/accounts/alice', { token: alice, body: { emailNotifications: true } });
  });
});
