/**
 * Work past 15 minutes on AWS (issue 19), through the AWS harness: URL imports and long flow tasks
 * run on the worker task (ECS Fargate RunTask of the template's `worker` task definition, its
 * bundle run as Fargate would start it), report progress while they run, are not bounded by a
 * function's 1 GiB / 5 minutes, and a worker task that dies leaves its job in error once the
 * watchdog sweeps.
 *
 * URL imports read from a local source on 127.0.0.1: the worker task is told
 * OUTBOUND_ALLOW_PRIVATE_NETWORKS=true as a test override of that operator setting (the template
 * leaves it unset; a deployment never calls private networks unless told to).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbMetadataStore } from '../../functions/adapters/aws/dynamodb-metadata-store.js';
import { documentClient } from '../../functions/composition/aws.js';
import { AWS_IMPORT_LIMITS } from '../../functions/config.js';
import { FUNCTION_TASK_SECONDS } from '../../statemachines/compile.js';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import type { EcsTask } from '../support/aws-harness/ecs.js';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { waitForJob } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';
import { startSlowSource, type SlowSource } from '../support/slow-source.js';

let aws: AwsTestPlatform;
let p: TestPlatform;
let alice: string;
let store: DynamoDbMetadataStore;
let source: SlowSource;

beforeAll(async () => {
  aws = await AwsTestPlatform.start({
    testOverridesOfOperatorSettings: [{ function: 'WorkerTask', name: 'OUTBOUND_ALLOW_PRIVATE_NETWORKS', value: 'true' }],
  });
  p = aws as unknown as TestPlatform;
  alice = await aws.createUser('alice');
  store = new DynamoDbMetadataStore(documentClient(aws.aws.dynamo), aws.aws.tableName);
  source = await startSlowSource({ intervalMs: 100, perChunk: 20 });
}, 300_000);
afterAll(async () => {
  await source?.stop();
  await aws?.stop();
});

/** Worker tasks the harness ran whose command (after the role) starts with `args`. */
const workerTasks = (...args: string[]): EcsTask[] =>
  aws.aws.ecs.tasks.filter((t) => {
    const command: string[] = t.overrides?.containerOverrides?.find((c) => c.name === 'app')?.command ?? [];
    const at = command.indexOf('worker');
    return at >= 0 && args.every((a, i) => command[at + 1 + i] === a);
  });

/** Polls (bounded) until `check` returns a value. */
async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, tries = 600, everyMs = 100): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${what}: not within ${(tries * everyMs) / 1000} s`);
}

const getJob = async (dataset: string, jobId: string) => (await aws.request('GET', `/datasets/alice/${dataset}/jobs/${jobId}`, { token: alice })).body;

describe('on AWS: imports on the worker task', () => {
  it('a URL import runs on the worker task to the end (exit 0), recording the task and reporting progress while it runs', async () => {
    const ds = await aws.createDataset('alice', 'slow', 'private', alice);
    const before = aws.aws.ecs.tasks.length;
    const created = await aws.request('POST', '/datasets/alice/slow/jobs', { token: alice, body: { type: 'download', downloadUrls: [`${source.url}/slow.nt`] } });
    expect(created.status, created.text).toBe(201);
    const jobId: string = created.body.jobId;
    // The task was started with the ids in its command override.
    const [task] = await until('the worker task starts', () => (workerTasks('import', ds.id, jobId).length ? workerTasks('import', ds.id, jobId) : undefined));
    expect(aws.aws.ecs.tasks.length).toBe(before + 1);
    // Progress while it downloads (the source keeps sending until seen; the worker writes every 5 s).
    const seen = await until('progress while downloading', async () => {
      const job = await getJob('slow', jobId);
      expect(job.status).toBe('downloading');
      return job.downloadedBytes > 0 ? job : undefined;
    });
    // The job names the task running it (the watchdog asks ECS about it).
    expect((await store.getJob(ds.id, jobId))!.worker).toBe(task!.taskArn);
    source.release();
    const done = await waitForJob(p, alice, 'alice/slow', jobId);
    expect(done.status, JSON.stringify(done.error)).toBe('finished');
    expect(done).toMatchObject({ numberOfStatements: source.statements(), downloadedBytes: source.bytes(), indexingProgress: 1 });
    expect(done.downloadedBytes).toBeGreaterThan(seen.downloadedBytes);
    // The task ends on its own: STOPPED, its app container exited 0.
    const stopped = await aws.aws.ecs.waitStopped(task!.taskArn);
    expect(stopped.stopCode).toBe('EssentialContainerExited');
    expect(stopped.containers.find((c) => c.name === 'app')!.exitCode).toBe(0);
    const graphs = await aws.request('GET', '/datasets/alice/slow/graphs', { token: alice });
    expect(graphs.body.map((g: any) => g.numberOfStatements)).toEqual([source.statements()]);
    // Not the import worker function: no invocation of it for this job.
    expect(aws.aws.runtime.invocations.filter((i) => i.functionName.startsWith('ImportWorker') && JSON.stringify(i).includes(jobId))).toEqual([]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 120_000);

  it(`a URL download larger than a function's bound (${AWS_IMPORT_LIMITS.maxDownloadBytes} bytes) is imported`, async () => {
    await aws.createDataset('alice', 'big', 'private', alice);
    const bytes = AWS_IMPORT_LIMITS.maxDownloadBytes + 1024 * 1024;
    const created = await aws.request('POST', '/datasets/alice/big/jobs', { token: alice, body: { type: 'download', downloadUrls: [`${source.url}/big.nt?bytes=${bytes}&line=65536`] } });
    expect(created.status, created.text).toBe(201);
    const done = await until('the big import ends', async () => {
      const job = await getJob('big', created.body.jobId);
      return ['finished', 'error'].includes(job.status) ? job : undefined;
    }, 1800);
    expect(done.status, JSON.stringify(done.error)).toBe('finished');
    expect(done.downloadedBytes).toBeGreaterThan(AWS_IMPORT_LIMITS.maxDownloadBytes);
    expect(done.numberOfStatements).toBe(Math.ceil(bytes / 65536));
  }, 240_000);

  it('a job whose worker task dies ends in error when the watchdog sweeps; the dataset is unchanged', async () => {
    const ds = await aws.createDataset('alice', 'dies', 'private', alice);
    const dying = await startSlowSource({ intervalMs: 100, perChunk: 5 });
    try {
      const created = await aws.request('POST', '/datasets/alice/dies/jobs', { token: alice, body: { type: 'download', downloadUrls: [`${dying.url}/slow.nt`] } });
      expect(created.status, created.text).toBe(201);
      const jobId: string = created.body.jobId;
      await until('the job records its worker task', async () => (await store.getJob(ds.id, jobId))?.worker);
      const [task] = workerTasks('import', ds.id, jobId);
      // The task dies (the operator stops it as ECS does: SIGTERM to its containers).
      const answer = await aws.aws.ecs.handle(undefined, 'operator', 'StopTask', { cluster: task!.clusterArn, task: task!.taskArn, reason: 'test: the worker task dies' });
      expect(answer.status, answer.body).toBe(200);
      await aws.aws.ecs.waitStopped(task!.taskArn);
      // A read alone does not end it (a worker task has no time limit) ...
      expect((await getJob('dies', jobId)).status).toBe('downloading');
      // ... the watchdog asks ECS and ends it.
      aws.aws.fireRule('WatchdogSchedule');
      await aws.aws.idle();
      const job = await getJob('dies', jobId);
      expect(job.status).toBe('error');
      expect(job.error.message).toMatch(/worker stopped while the job was downloading \(the worker task stopped.*\)\. The dataset was not changed/);
      expect((await aws.request('GET', '/datasets/alice/dies/graphs', { token: alice })).body).toEqual([]);
      expect(aws.aws.refusals()).toEqual([]);
    } finally {
      await dying.stop();
    }
  }, 120_000);
});

describe('on AWS: a worker task that cannot be started', () => {
  it('leaves the job in error saying why, and answers 503 with it (the imports role without ecs:RunTask)', async () => {
    const weaker = await AwsTestPlatform.start({ removeGrants: [{ functionOrRole: 'ImportsFunction', action: 'ecs:RunTask' }] });
    try {
      const token = await weaker.createUser('alice');
      await weaker.createDataset('alice', 'refused', 'private', token);
      const res = await weaker.request('POST', '/datasets/alice/refused/jobs', { token, body: { type: 'download', downloadUrls: ['https://example.org/data.nt'] } });
      expect(res.status, res.text).toBe(503);
      expect(res.body.message).toMatch(/^The import could not be started: the worker task could not be started \(.*ecs:RunTask.*\)\. The dataset was not changed; try again in a new job\.$/);
      const jobs = (await weaker.request('GET', '/datasets/alice/refused/jobs', { token })).body as any[];
      expect(jobs.map((j) => [j.status, j.error?.message])).toEqual([['error', res.body.message]]);
      // No worker task was started (the upload host's service tasks run from the start).
      expect(weaker.aws.ecs.tasks.filter((t) => t.definition.logicalId.startsWith('WorkerTask'))).toEqual([]);
      expect(weaker.aws.refusals().map((r) => r.request.action)).toContain('ecs:RunTask');
    } finally {
      await weaker.stop();
    }
  }, 300_000);
});

describe('on AWS: long flow tasks', () => {
  let session: Record<string, string>;
  beforeAll(async () => {
    session = await consoleSession(p, 'alice');
    await enableFlows(p);
    await aws.createDataset('alice', 'flowed', 'private', alice);
  });

  it(`a Load from URL task with a Timeout over ${FUNCTION_TASK_SECONDS} s runs on the worker task and the run finishes`, async () => {
    const EX = 'https://example.org/';
    await createFlow(p, 'alice', session, {
      id: 'long-load',
      name: 'long load',
      accessLevel: 'Private',
      tasks: [
        { id: 'load', label: 'Load', type: 'loadFromUrl', settings: { url: `${source.url}/big.nt?bytes=131072&line=1024`, dataset: { account: 'alice', dataset: 'flowed' }, graph: `${EX}graphs/long` }, timeoutSeconds: 3600 },
      ],
      connections: [],
    });
    const before = workerTasks('flow-task').length;
    const started = await startRun(p, '/flows/blueprints/alice/long-load/run', alice);
    expect(started.status, started.text).toBe(201);
    const run = await waitForRun(p, started.body.id, alice, 120_000);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const tasks = (await aws.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: alice })).body as any[];
    expect(tasks.map((t) => [t.taskId, t.status])).toEqual([['load', 'finished']]);
    // It ran on a worker task (`worker flow-task <staged key>`), which exited 0.
    const ran = workerTasks('flow-task').slice(before);
    expect(ran).toHaveLength(1);
    const stopped = await aws.aws.ecs.waitStopped(ran[0]!.taskArn);
    expect(stopped.containers.find((c) => c.name === 'app')!.exitCode).toBe(0);
    const graphs = (await aws.request('GET', '/datasets/alice/flowed/graphs', { token: alice })).body as any[];
    expect(graphs.map((g) => [g.graphName, g.numberOfStatements])).toEqual([[`${EX}graphs/long`, 128]]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 180_000);

  it('a long task that fails on the worker task fails its run with the task\'s message (the task exits 1)', async () => {
    await createFlow(p, 'alice', session, {
      id: 'long-missing',
      name: 'long missing',
      accessLevel: 'Private',
      tasks: [{ id: 'load', label: 'Load', type: 'loadFromUrl', settings: { url: `${source.url}/missing.nt`, dataset: { account: 'alice', dataset: 'flowed' } }, timeoutSeconds: 3600 }],
      connections: [],
    });
    const before = workerTasks('flow-task').length;
    const started = await startRun(p, '/flows/blueprints/alice/long-missing/run', alice);
    expect(started.status, started.text).toBe(201);
    const run = await waitForRun(p, started.body.id, alice, 120_000);
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run.error)).toMatch(/missing\.nt.*404|404.*missing\.nt/);
    const tasks = (await aws.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: alice })).body as any[];
    expect(tasks.map((t) => [t.taskId, t.status])).toEqual([['load', 'failed']]);
    const [ran] = workerTasks('flow-task').slice(before);
    const stopped = await aws.aws.ecs.waitStopped(ran!.taskArn);
    expect(stopped.containers.find((c) => c.name === 'app')!.exitCode).toBe(1);
    expect(aws.aws.refusals()).toEqual([]);
  }, 180_000);
});
