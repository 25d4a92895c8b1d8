/**
 * Superseded graph blobs and long work on AWS (issue 19): blobs an import replaced are kept for a
 * grace period (20 minutes) for readers that took the old manifest, but an import running for
 * hours on the worker task may still read blobs of the manifest it started from. So a trash list
 * is not emptied while an import job of the dataset that was created before it was written is
 * still running; a job created after it does not hold it. The Lambda entry modules, wired by the
 * AWS composition root, against dynalite and s3rver (the import worker function is invoked by the
 * test, so a job can be left running).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { AWS_IMPORT_LIMITS } from '../../functions/config.js';
import { apiEvent as event, invokeHandler as invoke, lambdaContext as context, useAwsStandIns } from '../support/aws-stand-ins.js';

/** Lambda and EventBridge have no local stand-in: this records the import worker's invocations. */
const lambdaInvokes: Record<string, unknown>[] = [];

useAwsStandIns({
  table: 'platform-graph-trash-test',
  s3DirPrefix: 'ldp-graph-trash-',
  faked: ['LAMBDA', 'EVENTBRIDGE'],
  fake: (req, body, res) => {
    if (req.headers['x-amz-target']) {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: 'e' }] }));
      return;
    }
    lambdaInvokes.push(JSON.parse(body.toString('utf8') || '{}'));
    res.writeHead(202);
    res.end();
  },
  env: { [ENV.importWorkerFunctionName]: 'import-worker' },
});

let services: Awaited<ReturnType<typeof import('../../functions/composition/aws.js')['awsServices']>>;
let token: string;
let admin: { uid: string };

beforeAll(async () => {
  const { awsServices } = await import('../../functions/composition/aws.js');
  services = await awsServices();
  ({ account: admin } = await services.accounts.ensureAdministrator('ops', 'ops-password-123'));
  ({ token } = await services.auth.issueToken(admin as never, { description: 'trash', readOnly: false }, 'https://api.example.org'));
});
afterAll(() => {
  lambdaInvokes.length = 0;
});

function multipart(fileName: string, content: string, fields: Record<string, string>): { rawBody: Buffer; headers: Record<string, string> } {
  const boundary = 'graph-trash-boundary';
  const rawBody = Buffer.from(
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  return { rawBody, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Creates an import job by a simple upload; returns its id and the worker invocation it queued (not run). */
async function createJob(fileName: string, content: string, fields: Record<string, string>) {
  lambdaInvokes.length = 0;
  const created = await invoke('imports', event('POST', '/datasets/ops/long/jobs', { token, ...multipart(fileName, content, fields) }));
  expect(created.statusCode, created.body).toBe(201);
  expect(lambdaInvokes).toHaveLength(1);
  return { jobId: created.json.jobId as string, work: lambdaInvokes.splice(0)[0]! };
}

/** Runs a queued job on the import worker function, as Lambda would invoke it; it must finish. */
async function runJob(job: { jobId: string; work: Record<string, unknown> }) {
  const worker = await import('../../functions/handlers/import-worker.js');
  await worker.handler(job.work as never, context);
  const read = await invoke('imports', event('GET', `/datasets/ops/long/jobs/${job.jobId}`, { token }));
  expect(read.json.status, JSON.stringify(read.json.error)).toBe('finished');
}

describe('AWS: superseded graph blobs and long imports', () => {
  it('are kept past the grace while an import created before they were superseded still runs, and go at the first sweep after it ended', async () => {
    expect(AWS_IMPORT_LIMITS.supersededGraphGraceMs).toBe(20 * 60_000);
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'long', accessLevel: 'private' } }));
    const dataset = (await services.platform.store.getDataset(admin.uid, 'long'))!;
    const keysUnder = async (prefix: string) => {
      const keys: string[] = [];
      for await (const b of services.platform.blobs.data.list(`datasets/${dataset.id}/${prefix}`)) keys.push(b.key);
      return keys.sort();
    };
    const sweep = () => services.imports.endStalledJobs(Date.now() + 30_000);

    await runJob(await createJob('v1.nt', '<https://e/s> <https://e/p> "v1" .\n', { defaultGraphName: 'https://e/g' }));
    const [v1] = await keysUnder('graphs/');
    expect(v1).toBeDefined();

    // A long import (merging into https://e/g, so it reads the blob of the manifest it started
    // from) has been running for three hours on the worker task, reporting progress.
    const long = await createJob('more.nt', '<https://e/s> <https://e/p> "more" .\n', { defaultGraphName: 'https://e/g', mergeGraphs: 'true' });
    const taken = (await services.platform.store.getJob(dataset.id, long.jobId))!;
    const threeHoursAgo = new Date(Date.now() - 3 * 3_600_000).toISOString();
    await services.platform.store.updateJob({ ...taken, status: 'indexing', createdAt: threeHoursAgo, startedAt: threeHoursAgo, updatedAt: new Date().toISOString() }, [taken.status]);

    // Meanwhile an overwrite replaces v1; its trash list is dated 21 minutes ago (past the grace,
    // but after the long import was created).
    await runJob(await createJob('v2.nt', '<https://e/s> <https://e/p> "v2" .\n', { defaultGraphName: 'https://e/g', overwriteAll: 'true' }));
    const [list] = await keysUnder('trash/');
    expect(list).toBeDefined();
    const old = list!.replace(/\/\d+-/, `/${String(Date.now() - 21 * 60_000).padStart(15, '0')}-`);
    await services.platform.blobs.data.put(old, (await services.platform.blobs.data.get(list!))!);
    await services.platform.blobs.data.delete(list!);

    // The watchdog's sweep leaves v1 (and its list): the long import may still read it.
    await sweep();
    expect(await keysUnder('graphs/')).toContain(v1);
    expect(await keysUnder('trash/')).toEqual([old]);
    expect((await services.platform.store.getJob(dataset.id, long.jobId))!.status).toBe('indexing');

    // The long import ends; a job created after the list was written (pending now) does not hold it.
    await services.platform.store.updateJob({ ...(await services.platform.store.getJob(dataset.id, long.jobId))!, status: 'finished', finishedAt: new Date().toISOString() }, ['indexing']);
    const later = await createJob('later.nt', '<https://e/s2> <https://e/p> "later" .\n', { defaultGraphName: 'https://e/other' });
    expect((await services.platform.store.getJob(dataset.id, later.jobId))!.status).toBe('pending');
    await sweep();
    expect(await keysUnder('graphs/')).not.toContain(v1);
    expect(await keysUnder('trash/')).toEqual([]);
    // The current data is intact.
    const exported = await invoke('exports', event('GET', '/datasets/ops/long/download.nt', { token }));
    expect(Buffer.from(exported.body!, exported.isBase64Encoded ? 'base64' : 'utf8').toString('utf8')).toMatch(/"v2"/);
    await runJob(later);
  });
});
