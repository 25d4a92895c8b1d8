/**
 * Flows through the AWS harness: blueprints compiled to state machines created on the Step
 * Functions stand-in (aws-local-stepfunctions), their Task states invoking the flow task worker
 * as the state machine role, runs settled by the settle worker from the execution status event
 * (EventBridge rule), schedules on the Scheduler stand-in fired as EventBridge Scheduler would,
 * hooks from S3 "Object Created" and our upload events. Every task type runs at least once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';

let aws: AwsTestPlatform;
let p: TestPlatform;
let alice: string;
let session: Record<string, string>;
let files: Server;
let filesUrl: string;
const EX = 'https://example.org/';
const ds = (dataset: string) => ({ account: 'alice', dataset });

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  p = aws as unknown as TestPlatform;
  alice = await aws.createUser('alice');
  session = await consoleSession(p, 'alice');
  await enableFlows(p, { sparqlUpdateTaskEnabled: true });
  await aws.createDataset('alice', 'work', 'private', alice);
  const job = await importFiles(p, alice, 'alice/work', [{ name: 'people.ttl', content: `<${EX}a> <${EX}name> "Alice" .\n<${EX}b> <${EX}name> "Bob" .\n` }], { defaultGraphName: `${EX}graphs/people` });
  expect(job.status).toBe('finished');
  files = createServer((_req, res) => res.end(`<${EX}c> <${EX}name> "Carol" .\n`));
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', () => r()));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
}, 300_000);
afterAll(async () => {
  await new Promise((r) => files?.close(r));
  await aws?.stop();
});

let flowCount = 0;
async function runOne(tasks: Record<string, unknown>[], connections: { from: string; to: string }[] = [], extra: Record<string, unknown> = {}) {
  const id = `f${++flowCount}`;
  await createFlow(p, 'alice', session, { id, name: id, accessLevel: 'Private', tasks, connections, ...extra });
  const started = await startRun(p, `/flows/blueprints/alice/${id}/run`, alice);
  expect(started.status, started.text).toBe(201);
  // Generous: a service action starts a Virtuoso host task, which on CI's two cores may share them
  // with another file's 1 M-statement load (a clean CI run once needed more than 90 s).
  const run = await waitForRun(p, started.body.id, alice, 240_000);
  const tasksRes = await aws.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: alice });
  return { run, tasks: tasksRes.body as any[] };
}

describe('flows on AWS: every task type', () => {
  it('control tasks: set variables, decision, set description, wait', async () => {
    const { run } = await runOne(
      [
        { id: 'set', label: 'Set', type: 'setVariables', settings: { values: { n: '3' } } },
        { id: 'choose', label: 'Choose', type: 'decision', settings: { branches: [{ to: 'big', conditions: [{ variable: 'n', operator: 'gt', value: '2' }] }], otherwise: 'small' } },
        { id: 'big', label: 'Big', type: 'setDescription', settings: { description: 'big ?n' } },
        { id: 'small', label: 'Small', type: 'setDescription', settings: { description: 'small' } },
        { id: 'nap', label: 'Nap', type: 'wait', settings: { seconds: 1 } },
      ],
      [
        { from: 'set', to: 'choose' },
        { from: 'choose', to: 'big' },
        { from: 'choose', to: 'small' },
        { from: 'big', to: 'nap' },
      ],
      { outputVariables: [{ name: 'n' }] },
    );
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(run.description).toBe('big 3');
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);

  it('stop run ends the run aborted', async () => {
    const { run } = await runOne([{ id: 'stop', label: 'Stop', type: 'stopRun', settings: { reason: 'enough' } }]);
    expect(run.status).toBe('aborted');
  }, 60_000);

  it('data tasks: SPARQL update and query, SHACL validation, set access level, send email', async () => {
    const { run, tasks } = await runOne(
      [
        { id: 'update', label: 'Update', type: 'sparqlUpdate', settings: { dataset: ds('work'), update: { text: `INSERT DATA { GRAPH <${EX}graphs/people> { <${EX}d> <${EX}name> "Dan" } }` } } },
        { id: 'query', label: 'Query', type: 'sparqlQuery', settings: { dataset: ds('work'), query: { text: `SELECT ?name WHERE { ?s <${EX}name> ?name } ORDER BY ?name` }, output: { to: 'artifact', format: 'json' } } },
        { id: 'shacl', label: 'SHACL', type: 'shaclValidation', settings: { dataset: ds('work'), shapes: { dataset: ds('work') } } },
        { id: 'level', label: 'Level', type: 'setAccessLevel', settings: { dataset: ds('work'), accessLevel: 'Internal' } },
        { id: 'mail', label: 'Mail', type: 'sendEmail', settings: { to: ['ops@example.org'], subject: 'done', body: 'the flow ran' } },
      ],
      [
        { from: 'update', to: 'query' },
        { from: 'query', to: 'shacl' },
        { from: 'shacl', to: 'level' },
        { from: 'level', to: 'mail' },
      ],
    );
    expect(run.status, JSON.stringify({ error: run.error, tasks: tasks.map((t) => [t.taskId, t.status, t.error]) })).toBe('finished');
    expect((await aws.request('GET', '/datasets/alice/work', { token: alice })).body.accessLevel).toBe('internal');
    expect(aws.aws.endpoint.emails).toContainEqual(expect.objectContaining({ to: ['ops@example.org'], subject: 'done' }));
    const query = tasks.find((t) => t.taskId === 'query');
    expect(query.artifacts?.length ?? 0).toBeGreaterThan(0);
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);

  it('service action: starts a service through the import worker (issue 13: the task worker could not invoke it)', async () => {
    const { run, tasks } = await runOne([{ id: 'svc', label: 'Service', type: 'serviceAction', settings: { dataset: ds('work'), service: 'flowsvc', action: 'start', serviceType: 'Sparql' } }]);
    expect(run.status, JSON.stringify({ error: run.error, tasks: tasks.map((t) => [t.taskId, t.status, t.error]) })).toBe('finished');
    expect((await aws.request('GET', '/datasets/alice/work/services/flowsvc', { token: alice })).body.status).toBe('running');
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);

  it('load from URL and HTTP request reach no private address on AWS: the run fails saying so', async () => {
    for (const task of [
      { id: 'load', label: 'Load', type: 'loadFromUrl', settings: { url: `${filesUrl}/data.nt`, dataset: ds('work'), graph: `${EX}graphs/loaded` } },
      { id: 'call', label: 'Call', type: 'httpRequest', settings: { url: `${filesUrl}/`, bodyVariable: 'answer' } },
    ]) {
      const { run } = await runOne([task], [], task.type === 'httpRequest' ? { outputVariables: [{ name: 'answer' }] } : {});
      expect(run.status, task.type).toBe('failed');
      expect(JSON.stringify(run.error), task.type).toMatch(/[Rr]efused|private/);
    }
  }, 300_000);
});

describe('flows on AWS: schedules and hooks', () => {
  it('a schedule creates an EventBridge Scheduler schedule; firing it starts a run that finishes', async () => {
    await createFlow(p, 'alice', session, { id: 'nightly', name: 'nightly', accessLevel: 'Private', tasks: [{ id: 'd', label: 'D', type: 'setDescription', settings: { description: 'scheduled' } }], connections: [] });
    const created = await aws.request('POST', '/flows/blueprints/alice/nightly/schedules', { headers: session, body: { label: 'Nightly', recurrence: { every: 'day', at: '02:30' }, timeZone: 'Europe/Amsterdam' } });
    expect(created.status, created.text).toBe(201);
    const schedules = [...aws.aws.endpoint.schedules.values()];
    expect(schedules).toHaveLength(1);
    aws.aws.fireSchedule(schedules[0]!.name);
    await aws.aws.idle();
    const runs = await aws.request('GET', `/flows/runs?scheduleId=${created.body.id}`, { token: alice });
    expect(runs.status, runs.text).toBe(200);
    expect(runs.body).toHaveLength(1);
    const run = await waitForRun(p, runs.body[0].id, alice, 180_000);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(aws.aws.refusals()).toEqual([]);
    // Removing the schedule removes the EventBridge Scheduler schedule.
    expect((await aws.request('DELETE', `/flows/blueprints/alice/nightly/schedules/${created.body.id}`, { headers: session })).status).toBe(204);
    expect(aws.aws.endpoint.schedules.size).toBe(0);
  }, 300_000);

  it('a data upload hook runs on an import, with the uploaded graph', async () => {
    await createFlow(p, 'alice', session, {
      id: 'onupload',
      name: 'onupload',
      accessLevel: 'Private',
      outputVariables: [{ name: 'g' }],
      tasks: [{ id: 'note', label: 'Note', type: 'setVariables', settings: { values: { g: '?system_uploadedGraphIRI' } } }],
      connections: [],
    });
    await aws.createDataset('alice', 'inbox', 'private', alice);
    const hook = await aws.request('POST', '/flows/blueprints/alice/onupload/hooks', { headers: session, body: { label: 'Uploads', type: 'dataUpload', dataset: ds('inbox') } });
    expect(hook.status, hook.text).toBe(201);
    const job = await importFiles(p, alice, 'alice/inbox', [{ name: 'x.nt', content: `<${EX}x> <${EX}p> "1" .\n` }], { defaultGraphName: `${EX}graphs/inbox` });
    expect(job.status).toBe('finished');
    await aws.aws.idle();
    const runs = (await aws.request('GET', `/flows/runs?hookId=${hook.body.id}`, { token: alice })).body;
    expect(runs).toHaveLength(1);
    const run = await waitForRun(p, runs[0].id, alice, 180_000);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(JSON.stringify(run)).toContain(`${EX}graphs/inbox`);
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);

  it('an asset upload hook runs when an asset file lands in the data bucket (S3 → EventBridge), with an absolute asset URL (issue 13: PUBLIC_API_URL was never set on AWS)', async () => {
    await createFlow(p, 'alice', session, { id: 'onasset', name: 'onasset', accessLevel: 'Private', tasks: [{ id: 'd', label: 'D', type: 'setDescription', settings: { description: 'asset ?system_uploadedAssetName at ?system_uploadedAssetURL' } }], connections: [] });
    await aws.createDataset('alice', 'docs', 'private', alice);
    const hook = await aws.request('POST', '/flows/blueprints/alice/onasset/hooks', { headers: session, body: { label: 'Assets', type: 'assetUpload', dataset: ds('docs') } });
    expect(hook.status, hook.text).toBe(201);
    const form = new FormData();
    form.append('file', new Blob(['hello']), 'hello world.txt');
    const up = await fetch(`${aws.url}/datasets/alice/docs/assets`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
    expect(up.status).toBe(201);
    await aws.aws.idle();
    const runs = (await aws.request('GET', `/flows/runs?hookId=${hook.body.id}`, { token: alice })).body;
    expect(runs, JSON.stringify(aws.aws.endpoint.asyncFailures)).toHaveLength(1);
    const run = await waitForRun(p, runs[0].id, alice, 180_000);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    // The stack's PUBLIC_API_URL (https://<api id>.execute-api.<region>.amazonaws.com; no console URL is set), not a relative path.
    expect(run.description).toMatch(new RegExp(`^asset hello world\\.txt at ${aws.aws.publicApiUrl.replace(/\./g, '\\.')}/alice/docs/assets/[0-9a-f]{24}$`));
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);
});
