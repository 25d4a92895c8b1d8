/**
 * SPARQL host tasks that end on their own, on AWS (issue 19), through the AWS harness: a host task
 * that died after it reported left its service `running` but unreachable, one that died before
 * it reported left it `starting` forever. The watchdog worker, fired by its scheduled rule, asks
 * ECS (DescribeTasks, IAM-checked) about every service's host and pending host: a STOPPED or
 * unknown task puts a running service in error, fails a start, and sends a sync back to its old
 * host; a service whose host is fine is left alone.
 *
 * The crash: the host task's Virtuoso process is killed (SIGKILL, as the OOM killer would), so
 * its essential container exits and the harness stops the task as Fargate would. The tasks that
 * die before reporting are recorded on the service directly (a pending host ECS no longer knows).
 * Needs Debian's virtuoso-opensource-7: skips loudly without it, and fails instead under CI=true.
 */
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbMetadataStore } from '../../functions/adapters/aws/dynamodb-metadata-store.js';
import { LAUNCH_GRACE_MS } from '../../functions/domain/sparql/host-watchdog.js';
import { documentClient } from '../../functions/composition/aws.js';
import type { ServiceRecord } from '../../functions/ports/records/sparql.js';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import type { EcsTask } from '../support/aws-harness/ecs.js';
import type { TestPlatform } from '../support/platform.js';
import { select } from '../support/services.js';
import { findVirtuoso, VIRTUOSO_PACKAGE } from '../support/virtuoso.js';

const found = findVirtuoso();
const onCi = process.env.CI === 'true';
if (!found) console.warn(`\n!! ${onCi ? 'FAILING (CI=true)' : 'SKIPPING'}: SPARQL host tests need virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE}\n`);

describe.runIf(!found && onCi)('SPARQL host watchdog prerequisites', () => {
  it(`needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE} under CI`, () => {
    expect(found, `install ${VIRTUOSO_PACKAGE}`).not.toBeNull();
  });
});

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The PID of the host task's Virtuoso (the harness runs it under the task's own folder). */
async function virtuosoPid(task: EcsTask): Promise<number> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('virtuoso-t') && cmdline.includes(`/${task.taskId}/containers/virtuoso/`)) return Number(entry);
  }
  throw new Error(`no virtuoso-t of task ${task.taskId}`);
}

describe.skipIf(!found)('on AWS: SPARQL host tasks that end on their own', () => {
  let aws: AwsTestPlatform;
  let p: TestPlatform;
  let alice: string;
  let store: DynamoDbMetadataStore;
  let datasetId: string;

  beforeAll(async () => {
    aws = await AwsTestPlatform.start();
    p = aws as unknown as TestPlatform;
    alice = await aws.createUser('alice');
    store = new DynamoDbMetadataStore(documentClient(aws.aws.dynamo), aws.aws.tableName);
    datasetId = (await aws.createDataset('alice', 'd', 'public', alice)).id;
    const form = new FormData();
    form.append('defaultGraphName', 'https://e/g');
    const lines = Array.from({ length: 100 }, (_, i) => `<https://e/s${i}> <https://e/value> "${i}" .`).join('\n');
    form.append('file', new Blob([`${lines}\n`]), 'data.nt');
    const created = await fetch(`${aws.url}/datasets/alice/d/jobs`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
    expect(created.status, await created.clone().text()).toBe(201);
    const jobId = (await created.json()).jobId;
    for (let i = 0; i < 600; i++) {
      const job = (await aws.request('GET', `/datasets/alice/d/jobs/${jobId}`, { token: alice })).body;
      if (job.status === 'finished') return;
      if (['error', 'canceled'].includes(job.status)) throw new Error(`import: ${JSON.stringify(job.error)}`);
      await delay(100);
    }
    throw new Error('the import did not finish');
  }, 300_000);
  afterAll(async () => {
    await aws?.stop();
  });

  const service = async (name: string) => (await aws.request('GET', `/datasets/alice/d/services/${name}`)).body;
  const record = async (name: string): Promise<ServiceRecord> => (await store.listServices(datasetId)).find((s) => s.name === name)!;
  const count = async (name: string) => (await select(p, undefined, `/datasets/alice/d/services/${name}/sparql`, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n;
  const startRunning = async (name: string) => {
    expect((await aws.request('POST', '/datasets/alice/d/services', { token: alice, body: { name, type: 'virtuoso' } })).status).toBe(201);
    for (let i = 0; i < 1200; i++) {
      const s = await service(name);
      if (s.status === 'running') return record(name);
      if (s.status === 'error') throw new Error(`service ${name}: ${s.error?.message}`);
      await delay(100);
    }
    throw new Error(`service ${name} did not start`);
  };
  const sweep = async () => {
    aws.aws.fireRule('WatchdogSchedule');
    await aws.aws.idle();
  };
  /** A task ARN of the cluster that ECS does not know (a task that stopped long ago). */
  const unknownTask = (like: string) => like.replace(/[^/]+$/, '0123456789abcdef0123456789abcdef');

  it('a host task that dies: its service goes to error at the sweep (503 on queries); a pending host ECS does not know fails a start and sends a sync back to its old host; hosts that are fine are left alone', async () => {
    const doomed = await startRunning('doomed');
    const fine = await startRunning('fine');
    const doomedTask = aws.aws.ecs.task(doomed.host!.ref)!;
    expect(doomedTask.lastStatus).toBe('RUNNING');
    expect(await count('fine')).toBe('100');

    // Virtuoso of the doomed host dies; the task stops as Fargate stops it (essential container exited).
    process.kill(await virtuosoPid(doomedTask), 'SIGKILL');
    await aws.aws.ecs.waitStopped(doomedTask.taskArn);
    // Before the sweep the service still claims to run ...
    expect((await service('doomed')).status).toBe('running');
    // ... the watchdog asks ECS and puts it in error with the reason.
    await sweep();
    const failed = await service('doomed');
    expect(failed.status).toBe('error');
    expect(failed.error.message).toMatch(/^The service's host ended \(its host task stopped: virtuoso exit code 137/);
    expect(failed.error.message).toMatch(/answers queries again once started \(POST \{"start": true\}\)/);
    const query = await aws.request('GET', `/datasets/alice/d/services/doomed/sparql?query=${encodeURIComponent('ASK {}')}`, { headers: { accept: 'application/sparql-results+json' } });
    expect(query.status).toBe(503);
    // The other service, its host fine, runs on.
    expect(await service('fine')).toMatchObject({ status: 'running' });
    expect((await record('fine')).host?.ref).toBe(fine.host!.ref);
    expect(await count('fine')).toBe('100');

    // A start whose host task died before it reported (ECS no longer knows it): starting → error.
    const stuck = await record('doomed');
    await store.replaceService({ ...stuck, status: 'starting', error: undefined, pendingHost: { ref: unknownTask(doomedTask.taskArn), launchedAt: stuck.updatedAt } }, stuck.updatedAt);
    expect((await service('doomed')).status).toBe('starting');
    await sweep();
    const neverStarted = await service('doomed');
    expect(neverStarted.status).toBe('error');
    expect(neverStarted.error.message).toBe("The service's host ended before it had loaded the data (ECS no longer knows its host task).");
    expect((await record('doomed')).pendingHost).toBeUndefined();

    // A start that nothing ever launched (its load request was lost: no pending host): left alone
    // while recent, settled once it has waited past the launch grace.
    const lostStart = await record('doomed');
    await store.replaceService({ ...lostStart, status: 'starting', error: undefined, pendingHost: undefined }, lostStart.updatedAt);
    await sweep();
    expect((await service('doomed')).status).toBe('starting');
    const recent = await record('doomed');
    const longAgo = new Date(Date.now() - LAUNCH_GRACE_MS - 60_000).toISOString();
    await store.replaceService({ ...recent, updatedAt: longAgo }, recent.updatedAt);
    await sweep();
    const neverLaunched = await service('doomed');
    expect(neverLaunched.status).toBe('error');
    expect(neverLaunched.error.message).toMatch(/^The service's host was never started \(nothing launched it within 90 minutes\)/);

    // A sync whose new host task died before it reported: back to running on the old host.
    const serving = await record('fine');
    await store.replaceService(
      { ...serving, status: 'updating', pendingSnapshot: serving.snapshot, pendingHost: { ref: unknownTask(doomedTask.taskArn), launchedAt: serving.updatedAt } },
      serving.updatedAt,
    );
    await sweep();
    const back = await service('fine');
    expect(back.status).toBe('running');
    expect(back.error.message).toMatch(/^The service's host ended before it had loaded the data/);
    const after = await record('fine');
    expect(after.host?.ref).toBe(fine.host!.ref);
    expect(after.pendingHost).toBeUndefined();
    expect(aws.aws.ecs.task(fine.host!.ref)!.lastStatus).toBe('RUNNING');
    expect(await count('fine')).toBe('100');

    // A start brings the doomed service back on a new host task.
    expect((await aws.request('POST', '/datasets/alice/d/services/doomed', { token: alice, body: { start: true } })).status).toBe(200);
    for (let i = 0; i < 1200 && (await service('doomed')).status !== 'running'; i++) await delay(100);
    expect(await count('doomed')).toBe('100');
    expect((await record('doomed')).host?.ref).not.toBe(doomedTask.taskArn);
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);
});
