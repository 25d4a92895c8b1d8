/**
 * Flows on the AWS composition, through the Lambda entry modules the stack deploys, against
 * dynalite and s3rver, with one local server standing in for Step Functions, EventBridge
 * Scheduler, EventBridge and Lambda (no local stand-in exists for them): it keeps the state the
 * platform's calls need (state machines, executions) and records the calls, so the tests check
 * what the platform asked AWS to do. Covers issue 13's flow bugs: a refused state machine
 * deletion, runs listed within one request's reads, runs that stopped reporting, and the API URL
 * of scheduled runs.
 */
import type { Context } from 'aws-lambda';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { apiEvent, invokeHandler as invoke, lambdaContext as context, useAwsStandIns, type ApiEventOptions } from '../support/aws-stand-ins.js';
import type { RunRecord } from '../../functions/domain/flows/records.js';

const API_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
const TASK_WORKER_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:flow-task-worker';
const TABLE = 'platform-aws-flows-test';

/** Calls the platform made, by action (Step Functions target name, or `Scheduler:<method>`). */
const calls: { action: string; input: Record<string, unknown> }[] = [];
/** DescribeExecution answers by execution ARN (absent: ExecutionDoesNotExist). */
const executions = new Map<string, Record<string, unknown>>();
/** When set, DeleteStateMachine answers this error (as a missing grant would). */
let refuseDeleteStateMachine: string | undefined;

function awsError(res: ServerResponse, type: string, message: string) {
  res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': type });
  res.end(JSON.stringify({ __type: type, message }));
}

useAwsStandIns({
  table: TABLE,
  s3DirPrefix: 'ldp-aws-flows-',
  faked: ['SFN', 'LAMBDA', 'EVENTBRIDGE', 'SCHEDULER'],
  fake: (req, raw, res) => {
    const text = raw.toString('utf8');
    if (/^\/2015-03-31\/functions\//.test(req.url ?? '')) {
      res.writeHead(202).end();
      return;
    }
    if ((req.url ?? '').startsWith('/schedules/')) {
      calls.push({ action: `Scheduler:${req.method}`, input: { path: req.url, ...(text ? JSON.parse(text) : {}) } });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ScheduleArn: `arn:aws:scheduler:eu-west-1:123456789012:schedule/${req.url}` }));
      return;
    }
    const action = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    const input = JSON.parse(text || '{}') as Record<string, unknown>;
    calls.push({ action, input });
    if (action === 'CreateStateMachine') {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ stateMachineArn: `arn:aws:states:eu-west-1:123456789012:stateMachine:${String(input.name)}`, creationDate: Date.now() / 1000 }));
    } else if (action === 'StartExecution') {
      const arn = `${String(input.stateMachineArn).replace(':stateMachine:', ':execution:')}:${String(input.name)}`;
      executions.set(arn, { executionArn: arn, status: 'RUNNING', startDate: Date.now() / 1000 });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ executionArn: arn, startDate: Date.now() / 1000 }));
    } else if (action === 'DescribeExecution') {
      const found = executions.get(String(input.executionArn));
      if (!String(input.executionArn).startsWith('arn:')) awsError(res, 'InvalidArn', `Invalid Arn: '${String(input.executionArn)}'`);
      else if (!found) awsError(res, 'ExecutionDoesNotExist', `Execution Does Not Exist: '${String(input.executionArn)}'`);
      else res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ stateMachineArn: 'x', startDate: Date.now() / 1000, ...found }));
    } else if (action === 'DeleteStateMachine' && refuseDeleteStateMachine) {
      awsError(res, 'AccessDeniedException', refuseDeleteStateMachine);
    } else {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{}');
    }
  },
  env: {
    [ENV.publicApiUrl]: API_URL,
    // The tests' own HTTP servers are on loopback.
    [ENV.outboundAllowPrivateNetworks]: 'true',
    [ENV.importWorkerFunctionName]: 'import-worker',
    [ENV.flowStateMachinePrefix]: 'test-flow',
    [ENV.flowStateMachineRoleArn]: 'arn:aws:iam::123456789012:role/flows',
    [ENV.flowTaskWorkerArn]: TASK_WORKER_ARN,
    [ENV.flowScheduleGroup]: 'flows',
    [ENV.flowScheduleStartArn]: 'arn:aws:lambda:eu-west-1:123456789012:function:flow-schedule-start',
    [ENV.flowScheduleRoleArn]: 'arn:aws:iam::123456789012:role/schedules',
  },
});

/** Requests to the API as its execute-api host names it. */
const event = (method: string, path: string, options: ApiEventOptions = {}) => apiEvent(method, path, { host: 'abc123.execute-api.eu-west-1.amazonaws.com', ...options });

let seq = 0;
/** An administrator "ops" with an API token and a console session, and flows switched on. */
async function operator() {
  const { awsServices } = await import('../../functions/composition/aws.js');
  const services = await awsServices();
  const { account: admin } = await services.accounts.ensureAdministrator('ops', 'ops-password-123');
  const { token } = await services.auth.issueToken(admin, { description: 'aws flows', readOnly: false }, API_URL);
  expect((await invoke('flows', event('PATCH', '/admin/flows', { token, body: { flowsEnabled: true } }))).statusCode).toBe(200);
  const login = await invoke('auth', event('POST', '/login', { body: { accountName: 'ops', password: 'ops-password-123' } }));
  const session = { cookie: login.cookies!.map((c) => c.split(';')[0]).join('; '), 'x-csrf-token': login.json.csrfToken as string };
  return { services, admin, token, session };
}

async function newFlow(session: Record<string, string>, account = 'ops') {
  const id = `flow-${++seq}`;
  const flow = { id, name: id, accessLevel: 'Private', tasks: [{ id: 'note', label: 'Note', type: 'setDescription', settings: { description: 'hello' } }], connections: [] };
  const created = await invoke('flows', event('POST', `/flows/blueprints/${account}`, { headers: session, body: flow }));
  expect(created.statusCode, created.body).toBe(201);
  return { id, uid: created.json.blueprintId as string };
}

describe('flows on the AWS composition', () => {
  it('a scheduled run gets the absolute PUBLIC_API_URL (its run and token); without it the schedule function refuses, naming it', async () => {
    const { services, token, session } = await operator();
    const flow = await newFlow(session);
    const schedule = await invoke('flows', event('POST', `/flows/blueprints/ops/${flow.id}/schedules`, { headers: session, body: { label: 'Nightly', recurrence: { every: 'day', at: '02:30' } } }));
    expect(schedule.statusCode, schedule.body).toBe(201);

    // EventBridge Scheduler invokes the schedule-start function with the schedule's input.
    const starter = await import('../../functions/handlers/flow-schedule-start.js');
    await starter.handler({ blueprintUid: flow.uid, scheduleId: schedule.json.id } as never, context);
    const listed = await invoke('flows', event('GET', '/flows/runs', { token, query: `scheduleId=${schedule.json.id}` }));
    expect(listed.json).toHaveLength(1);
    const run = (await services.platform.flows.getRun(listed.json[0].id))!;
    expect(run.apiUrl).toBe(API_URL);
    expect(run.platformTokenId).toBeTruthy();

    // The same function deployed without PUBLIC_API_URL starts nothing and says what to set.
    vi.resetModules();
    const saved = process.env[ENV.publicApiUrl];
    delete process.env[ENV.publicApiUrl];
    try {
      const bare = await import('../../functions/handlers/flow-schedule-start.js');
      await expect(bare.handler({ blueprintUid: flow.uid, scheduleId: schedule.json.id } as never, context)).rejects.toThrow(/PUBLIC_API_URL is not set/);
    } finally {
      process.env[ENV.publicApiUrl] = saved;
      vi.resetModules();
    }
    const after = await invoke('flows', event('GET', '/flows/runs', { token, query: `scheduleId=${schedule.json.id}` }));
    expect(after.json).toHaveLength(1);
  });

  it('a state machine Step Functions refuses to delete is not forgotten: the removal is recorded and the watchdog finishes it', async () => {
    const { services, token, session } = await operator();
    const flow = await newFlow(session);
    const started = await invoke('flows', event('POST', `/flows/blueprints/ops/${flow.id}/run`, { token }));
    expect(started.statusCode, started.body).toBe(201);
    const machine = (await services.platform.flows.getFlowVersion(flow.uid, 1))!.executable!;
    expect(machine).toMatch(/:stateMachine:test-flow-/);

    refuseDeleteStateMachine = 'User is not authorized to perform: states:DeleteStateMachine';
    try {
      const deleted = await invoke('flows', event('DELETE', `/flows/blueprints/ops/${flow.id}`, { headers: session }));
      expect(deleted.statusCode, deleted.body).toBe(204);
    } finally {
      refuseDeleteStateMachine = undefined;
    }
    // The flow is gone for readers; what is left of it is recorded with the reason.
    expect((await invoke('flows', event('GET', `/flows/blueprints/ops/${flow.id}`, { token }))).statusCode).toBe(404);
    const pending = (await services.platform.flows.listFlowRemovals(null, { batch: 100 })).items.map((i) => i.item).filter((r) => r.blueprintUid === flow.uid);
    expect(pending).toEqual([expect.objectContaining({ flowId: flow.id, lastError: expect.stringMatching(/not authorized to perform: states:DeleteStateMachine/) })]);
    expect((await services.platform.flows.getFlowVersion(flow.uid, 1))?.executable).toBe(machine);

    // The watchdog (on a schedule) goes on once Step Functions allows it.
    calls.length = 0;
    const watchdog = await import('../../functions/handlers/watchdog.js');
    const summary = (await watchdog.handler({} as never, context)) as { flows: { removalsFinished: number } };
    expect(summary.flows.removalsFinished).toBeGreaterThanOrEqual(1);
    expect(calls.filter((c) => c.action === 'DeleteStateMachine').map((c) => c.input.stateMachineArn)).toContain(machine);
    expect(await services.platform.flows.getFlowVersion(flow.uid, 1)).toBeNull();
    expect((await services.platform.flows.listRuns(flow.uid, { batch: 10 })).items).toEqual([]);
    expect((await services.platform.flows.listFlowRemovals(null, { batch: 100 })).items.filter((i) => i.item.blueprintUid === flow.uid)).toEqual([]);
  });

  it('deleting an account whose flow has a state machine Step Functions refuses to delete fails, and a retry finishes it', async () => {
    const { services, token } = await operator();
    const name = `dora${++seq}`;
    const user = await invoke('accounts', event('POST', '/accounts', { token, body: { type: 'user', accountName: name, password: 'dora-password-123' } }));
    expect(user.statusCode, user.body).toBe(201);
    const login = await invoke('auth', event('POST', '/login', { body: { accountName: name, password: 'dora-password-123' } }));
    const session = { cookie: login.cookies!.map((c) => c.split(';')[0]).join('; '), 'x-csrf-token': login.json.csrfToken as string };
    const flow = await newFlow(session, name);
    expect((await invoke('flows', event('POST', `/flows/blueprints/${name}/${flow.id}/run`, { headers: session }))).statusCode).toBe(201);
    const machine = (await services.platform.flows.getFlowVersion(flow.uid, 1))!.executable!;

    refuseDeleteStateMachine = 'User is not authorized to perform: states:DeleteStateMachine';
    let first;
    try {
      first = await invoke('accounts', event('DELETE', `/accounts/${name}`, { token }));
    } finally {
      refuseDeleteStateMachine = undefined;
    }
    // Not swallowed: the deletion fails, and the state machine is still known.
    expect(first.statusCode).toBe(500);
    expect((await services.platform.flows.getFlowVersion(flow.uid, 1))?.executable).toBe(machine);
    calls.length = 0;
    const retried = await invoke('accounts', event('DELETE', `/accounts/${name}`, { token }));
    expect(retried.statusCode, retried.body).toBe(204);
    expect(calls.filter((c) => c.action === 'DeleteStateMachine').map((c) => c.input.stateMachineArn)).toContain(machine);
    expect(await services.platform.flows.getFlowVersion(flow.uid, 1)).toBeNull();
  });

  it('the run listing reads a bounded number of runs per request and pages on with a Link', async () => {
    const { services, token, session } = await operator();
    const flow = await newFlow(session);
    const { MAX_RUNS_READ } = await import('../../functions/domain/flows/runs/listing.js');
    const total = MAX_RUNS_READ + 150;
    const base = Date.parse('2026-01-01T00:00:00Z');
    const runs: RunRecord[] = Array.from({ length: total }, (_, i) => ({
      id: `seeded${String(i).padStart(6, '0')}`,
      blueprintUid: flow.uid,
      flowId: flow.id,
      ownerUid: '',
      version: 1,
      status: 'finished',
      startedFrom: { type: 'api' },
      startedByUid: '',
      variables: {},
      createdAt: new Date(base + i * 1000).toISOString(),
      finishedAt: new Date(base + i * 1000 + 500).toISOString(),
    }));
    for (let i = 0; i < runs.length; i += 100) await Promise.all(runs.slice(i, i + 100).map((r) => services.platform.flows.createRun(r)));

    // Nothing matches (no run timed out): the first page reads its share, answers none, and links on.
    const first = await invoke('flows', event('GET', '/flows/runs', { token, query: `blueprintId=${flow.uid}&status=timeout` }));
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json).toEqual([]);
    const link = /^<([^>]+)>; rel="next"$/.exec(String(first.headers?.link ?? ''));
    expect(link, 'a Link to the next page').not.toBeNull();
    const next = new URL(link![1]!);
    expect(next.origin).toBe(API_URL);
    const second = await invoke('flows', event('GET', '/flows/runs', { token, query: next.search.slice(1) }));
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json).toEqual([]);
    expect(second.headers?.link).toBeUndefined();

    // Pages of the default order hold every run once, newest first.
    const seen: string[] = [];
    let query: string | undefined = `blueprintId=${flow.uid}&limit=1000`;
    for (let page = 0; query && page < 10; page++) {
      const res = await invoke('flows', event('GET', '/flows/runs', { token, query }));
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...res.json.map((r: { id: string }) => r.id));
      const l = /^<([^>]+)>; rel="next"$/.exec(String(res.headers?.link ?? ''));
      query = l ? new URL(l[1]!).search.slice(1) : undefined;
    }
    expect(seen).toEqual(runs.map((r) => r.id).reverse());

    // Another order sorts in memory: more runs than one request reads is refused, saying what to do.
    const sorted = await invoke('flows', event('GET', '/flows/runs', { token, query: `blueprintId=${flow.uid}&sortDirection=asc` }));
    expect(sorted.statusCode).toBe(400);
    expect(sorted.json.message).toMatch(/more than 2000.*Narrow it/);
    const narrowed = await invoke('flows', event('GET', '/flows/runs', { token, query: `blueprintId=${flow.uid}&sortDirection=asc&limit=3&createdAtFrom=${encodeURIComponent(runs[total - 10]!.createdAt)}` }));
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json.map((r: { id: string }) => r.id)).toEqual(runs.slice(total - 10, total - 7).map((r) => r.id));
  }, 120_000);

  it('the watchdog settles runs that stopped reporting: an execution that ended, or one that never started', async () => {
    const { services, token, session } = await operator();
    const flow = await newFlow(session);
    const old = new Date(Date.now() - 60 * 60_000).toISOString();
    const machine = 'arn:aws:states:eu-west-1:123456789012:stateMachine:test-flow-x-v1';
    const seed = async (id: string, executionRef: string) => {
      await services.platform.flows.createRun({
        id, blueprintUid: flow.uid, flowId: flow.id, ownerUid: '', version: 1, status: 'running', startedFrom: { type: 'api' }, startedByUid: '', variables: {}, createdAt: old, executionRef,
      });
    };
    const ended = `${machine.replace(':stateMachine:', ':execution:')}:wd-ended`;
    const going = `${machine.replace(':stateMachine:', ':execution:')}:wd-going`;
    executions.set(ended, { executionArn: ended, status: 'SUCCEEDED', output: JSON.stringify({ run: {}, variables: {}, tasks: { note: { status: 'finished', output: {} } } }) });
    executions.set(going, { executionArn: going, status: 'RUNNING' });
    await seed('wd-ended', ended);
    await seed('wd-going', going);
    await seed('wd-never', 'wd-never');

    const watchdog = await import('../../functions/handlers/watchdog.js');
    await watchdog.handler({} as never, context);
    const status = async (id: string) => (await invoke('flows', event('GET', `/flows/runs/${id}`, { token }))).json;
    expect(await status('wd-ended')).toMatchObject({ status: 'finished' });
    expect(await status('wd-never')).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(/stopped reporting/) } });
    expect(await status('wd-going')).toMatchObject({ status: 'running' });
    // A run found running is checked again later, not at every sweep.
    calls.length = 0;
    await watchdog.handler({} as never, context);
    expect(calls.filter((c) => c.action === 'DescribeExecution' && c.input.executionArn === going)).toEqual([]);

    // The watchdog as the stack deploys it: the flows' name prefix, but neither the state machine
    // role nor the task worker ARN (it prepares nothing). It still tells a lost run.
    await seed('wd-never-2', 'wd-never-2');
    vi.resetModules();
    const saved = { role: process.env[ENV.flowStateMachineRoleArn], worker: process.env[ENV.flowTaskWorkerArn] };
    delete process.env[ENV.flowStateMachineRoleArn];
    delete process.env[ENV.flowTaskWorkerArn];
    try {
      const deployed = await import('../../functions/handlers/watchdog.js');
      await deployed.handler({} as never, context);
    } finally {
      process.env[ENV.flowStateMachineRoleArn] = saved.role;
      process.env[ENV.flowTaskWorkerArn] = saved.worker;
      vi.resetModules();
    }
    expect(await status('wd-never-2')).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(/stopped reporting/) } });
  });

  it('a task still working when the task worker function is about to end fails, recorded, instead of being cut off unrecorded', async () => {
    const { services, token, session } = await operator();
    const hanging = createServer(() => {});
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/slow`;
      const id = `slow-${++seq}`;
      const task = { id: 'call', label: 'Call', type: 'httpRequest', settings: { url } };
      const created = await invoke('flows', event('POST', '/flows/blueprints/ops', { headers: session, body: { id, name: id, accessLevel: 'Private', tasks: [task], connections: [] } }));
      expect(created.statusCode, created.body).toBe(201);
      calls.length = 0;
      const started = await invoke('flows', event('POST', `/flows/blueprints/ops/${id}/run`, { token }));
      expect(started.statusCode, started.body).toBe(201);
      const input = JSON.parse(String(calls.find((c) => c.action === 'StartExecution')!.input.input)) as { run: unknown; variables: Record<string, string> };

      // Step Functions invokes the worker with the Task state's Parameters; 21 s are left of the function.
      const worker = await import('../../functions/handlers/flow-task-worker.js');
      const nearlyOut = { getRemainingTimeInMillis: () => 21_000 } as Context;
      const invocation = { taskId: task.id, type: task.type, label: task.label, settings: task.settings, state: { ...input, tasks: {} } };
      await expect(worker.handler(invocation as never, nearlyOut)).rejects.toThrow(/still working after 1 s, the most one task may run on this deployment/);
      const instance = await services.platform.flows.getTaskInstance(started.json.id, 'call');
      expect(instance).toMatchObject({ status: 'failed', error: expect.stringMatching(/the most one task may run on this deployment/) });
    } finally {
      hanging.closeAllConnections();
      await new Promise((r) => hanging.close(r));
    }
  });
});
