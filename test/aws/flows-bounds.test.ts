/**
 * The bounds of flows on AWS, through the harness (real bundles, the template's IAM enforced,
 * Step Functions by aws-local-stepfunctions): issue 13's flow bugs that had only unit and
 * contract tests. A throttled task worker is retried by the Task states (before: the run
 * failed); the run listing reads a bounded number of runs per request and pages with a Link
 * (before: up to 200,000 runs in one request); the watchdog, fired by its scheduled rule, settles
 * runs that stopped reporting; deleting a flow with many runs answers within the request and the
 * watchdog finishes the rest (before: every run deleted inside the 30 s request).
 *
 * Runs are seeded straight into the deployment's table with the flow store adapter (as the
 * operator, against the harness's dynalite), as test/contract/aws-flows.test.ts does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbFlowStore } from '../../functions/adapters/aws/dynamodb-flow-store.js';
import { documentClient } from '../../functions/composition/aws.js';
import type { RunRecord } from '../../functions/domain/flows/records.js';
import { MAX_RUNS_READ } from '../../functions/domain/flows/runs/listing.js';
import { ENV } from '../../functions/env-names.js';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import type { TestPlatform } from '../support/platform.js';

let aws: AwsTestPlatform;
let p: TestPlatform;
let store: DynamoDbFlowStore;
let alice: string;
let session: Record<string, string>;

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  p = aws as unknown as TestPlatform;
  store = new DynamoDbFlowStore(documentClient(aws.aws.dynamo), aws.aws.tableName);
  await enableFlows(p);
  alice = await aws.createUser('alice');
  session = await consoleSession(p, 'alice');
}, 300_000);
afterAll(() => aws?.stop());

let flowCount = 0;
/** A one-task flow of alice's: its id and blueprint uid. */
async function newFlow(tasks: Record<string, unknown>[] = [{ id: 'd', label: 'D', type: 'setDescription', settings: { description: 'x' } }], connections: { from: string; to: string }[] = []) {
  const id = `b${++flowCount}`;
  const created = await createFlow(p, 'alice', session, { id, name: id, accessLevel: 'Private', tasks, connections });
  return { id, uid: created.blueprintId as string, ownerUid: String(created.ownerUid ?? '') };
}

/** Run records of a flow, written as the platform writes them (a run not final gets its active mark). */
async function seedRuns(flow: { id: string; uid: string; ownerUid: string }, count: number, prefix: string, extra: Partial<RunRecord> = {}): Promise<RunRecord[]> {
  const base = Date.parse('2026-01-01T00:00:00Z');
  const runs: RunRecord[] = Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${String(i).padStart(6, '0')}`,
    blueprintUid: flow.uid,
    flowId: flow.id,
    ownerUid: flow.ownerUid,
    version: 1,
    status: 'finished',
    startedFrom: { type: 'api' },
    startedByUid: '',
    variables: {},
    createdAt: new Date(base + i * 1000).toISOString(),
    finishedAt: new Date(base + i * 1000 + 500).toISOString(),
    ...extra,
  }));
  for (let i = 0; i < runs.length; i += 100) await Promise.all(runs.slice(i, i + 100).map((r) => store.createRun(r)));
  return runs;
}

/** Runs of a flow still stored (read as the operator, bounded). */
async function storedRuns(uid: string): Promise<number> {
  let n = 0;
  let after: string | undefined;
  for (let page = 0; page < 1_000; page++) {
    const batch = await store.listRuns(uid, { after, batch: 500 });
    n += batch.items.length;
    const last = batch.items[batch.items.length - 1];
    if (!batch.more || !last) break;
    after = last.cursor;
  }
  return n;
}

/** The next page's path and query, from a Link header (its URL is the deployment's public API URL). */
function nextPage(link: string | null): string | undefined {
  const m = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
  if (!m) return undefined;
  const url = new URL(m[1]!);
  expect(url.origin).toBe(aws.aws.publicApiUrl);
  return `${url.pathname}${url.search}`;
}

describe('flow bounds on AWS', () => {
  it("the Task states retry Lambda's own errors: a throttled task worker does not fail the run", async () => {
    const flow = await newFlow(
      [
        { id: 'd', label: 'D', type: 'setDescription', settings: { description: 'described' } },
        { id: 'e', label: 'E', type: 'setDescription', settings: { description: 'done' } },
      ],
      [{ from: 'd', to: 'e' }],
    );
    const throttledBefore = aws.aws.endpoint.throttles.length;
    // Lambda answers the task worker's next two invocations 429 TooManyRequestsException (out of
    // concurrency), which the state machine sees as Lambda.TooManyRequestsException.
    aws.aws.throttle('FlowTaskWorker', 2);
    const started = await startRun(p, `/flows/blueprints/alice/${flow.id}/run`, alice);
    expect(started.status, started.text).toBe(201);
    const run = await waitForRun(p, started.body.id, alice, 90_000);
    expect(aws.aws.endpoint.throttles.slice(throttledBefore).map((t) => t.functionName)).toEqual([aws.aws.fn('FlowTaskWorker').name, aws.aws.fn('FlowTaskWorker').name]);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(run.description).toBe('done');
    const tasks = await aws.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: alice });
    expect(tasks.body.map((t: { taskId: string; status: string }) => [t.taskId, t.status]).sort()).toEqual([
      ['d', 'finished'],
      ['e', 'finished'],
    ]);
  }, 120_000);

  it('the run listing reads a bounded number of runs per request and pages on with a Link', async () => {
    const flow = await newFlow();
    const total = MAX_RUNS_READ + 150;
    const runs = await seedRuns(flow, total, 'listed');

    // Nothing matches (no run timed out): the first page reads its share, answers none, and links on.
    const first = await aws.request('GET', `/flows/runs?blueprintId=${flow.uid}&status=timeout`, { token: alice });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual([]);
    const second = nextPage(first.headers.get('link'));
    expect(second, 'a Link to the next page').toBeDefined();
    const last = await aws.request('GET', second!, { token: alice });
    expect(last.status, last.text).toBe(200);
    expect(last.body).toEqual([]);
    expect(last.headers.get('link')).toBeNull();

    // Pages of the default order hold every run once, newest first.
    const seen: string[] = [];
    let path: string | undefined = `/flows/runs?blueprintId=${flow.uid}&limit=1000`;
    for (let page = 0; path && page < 10; page++) {
      const res = await aws.request('GET', path, { token: alice });
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.map((r: { id: string }) => r.id));
      path = nextPage(res.headers.get('link'));
    }
    expect(seen).toEqual(runs.map((r) => r.id).reverse());

    // Another order sorts in memory: more runs than one request reads is refused, saying what to do.
    const sorted = await aws.request('GET', `/flows/runs?blueprintId=${flow.uid}&sortDirection=asc`, { token: alice });
    expect(sorted.status).toBe(400);
    expect(sorted.body.message).toMatch(/more than 2000.*Narrow it/);
  }, 180_000);

  it('the watchdog, fired by its scheduled rule, settles runs that stopped reporting', async () => {
    // A real run first: its execution ended (SUCCEEDED) on the Step Functions stand-in.
    const flow = await newFlow();
    const started = await startRun(p, `/flows/blueprints/alice/${flow.id}/run`, alice);
    expect(started.status, started.text).toBe(201);
    const done = await waitForRun(p, started.body.id, alice, 90_000);
    expect(done.status, JSON.stringify(done.error)).toBe('finished');
    const ended = [...aws.aws.endpoint.executions.values()].find((e) => e.name.includes(started.body.id) || e.input.includes(started.body.id));
    expect(ended?.status).toBe('SUCCEEDED');

    // Runs marked active an hour ago (past the watchdog's grace) whose settle never came: one whose
    // execution ended, one whose execution never existed (under the flows' state machine names,
    // where the watchdog may look).
    const prefix = aws.aws.fn('Watchdog').environment[ENV.flowStateMachinePrefix];
    expect(prefix, 'the watchdog is told the flows state machine prefix').toBeTruthy();
    const lostArn = ended!.arn.replace(/:execution:[^:]+:[^:]+$/, `:execution:${prefix}-lost-v1:never-started`);
    const old = new Date(Date.now() - 60 * 60_000).toISOString();
    const [endedRun] = await seedRuns(flow, 1, 'wdended', { status: 'running', createdAt: old, finishedAt: undefined, executionRef: ended!.arn });
    const [lostRun] = await seedRuns(flow, 1, 'wdlost', { status: 'running', createdAt: old, finishedAt: undefined, executionRef: lostArn });

    aws.aws.fireRule('Watchdog');
    await aws.aws.idle();
    const watchdogRole = aws.aws.fn('Watchdog').roleLogicalId;
    expect(aws.aws.refusals().filter((r) => r.principal === watchdogRole)).toEqual([]);
    expect(aws.aws.endpoint.asyncFailures).toEqual([]);

    const status = async (id: string) => (await aws.request('GET', `/flows/runs/${id}`, { token: alice })).body;
    expect(await status(endedRun!.id)).toMatchObject({ status: 'finished' });
    expect(await status(lostRun!.id)).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(/stopped reporting/) } });
  }, 180_000);

  it('deleting a flow with many runs answers within the request; the watchdog removes the rest', async () => {
    const flow = await newFlow();
    // Enough runs that removing them all takes longer than API Gateway waits (measured in the
    // harness on 2 shared cores: about 170 runs a second, so some 35-40 s for these): before the
    // fix the request removed every run itself and answered 503; now it stops at its budget.
    const total = 6_000;
    await seedRuns(flow, total, 'gone');
    expect(await storedRuns(flow.uid)).toBe(total);

    const deleted = await aws.request('DELETE', `/flows/blueprints/alice/${flow.id}`, { headers: session });
    // API Gateway waits 30 s (held in the harness): a request past it answers 503.
    expect(deleted.status, deleted.text).toBe(204);
    expect((await aws.request('GET', `/flows/blueprints/alice/${flow.id}`, { token: alice })).status).toBe(404);

    // What the request's budget left stays recorded as a removal (nothing is forgotten); each
    // watchdog sweep goes on with it (bounded here).
    const removals = async () => (await store.listFlowRemovals(null, { batch: 100 })).items.map((r) => r.item.blueprintUid);
    let left = await storedRuns(flow.uid);
    expect(await removals()).toEqual(left > 0 ? expect.arrayContaining([flow.uid]) : expect.not.arrayContaining([flow.uid]));
    for (let sweep = 0; sweep < 10 && left > 0; sweep++) {
      aws.aws.fireRule('Watchdog');
      await aws.aws.idle(300_000);
      left = await storedRuns(flow.uid);
    }
    expect(left).toBe(0);
    expect(await removals()).not.toContain(flow.uid);
    const runs = await aws.request('GET', `/flows/runs?blueprintId=${flow.uid}`, { token: alice });
    expect(runs.status, runs.text).toBe(200);
    expect(runs.body).toEqual([]);
  }, 600_000);
});
