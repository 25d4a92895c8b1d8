/**
 * Data, accounts and SPARQL as the deployed functions serve them (issue 13): the Lambda entry
 * modules invoked with API Gateway (HTTP API v2) events, wired by the AWS composition root from
 * environment variables only, against dynalite and s3rver.
 */
import { CreateBucketCommand, DeleteBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { S3TusUploads } from '../../functions/adapters/aws/s3-tus-uploads.js';
import { AWS_IMPORT_LIMITS, AWS_SPARQL_LIMITS, awsSettingsFromEnv } from '../../functions/config.js';
import { LAMBDA_REQUEST_BODY_LIMIT } from '../../functions/http/lambda.js';
import { FAMILIES, WORKERS } from '../../functions/http/route-table.js';
import { apiEvent as event, invokeHandler as invoke, lambdaContext as context, useAwsStandIns } from '../support/aws-stand-ins.js';

let s3: S3Client;
/**
 * Lambda and EventBridge have no local stand-in: this server records the asynchronous invocations
 * of the import worker and accepts the upload events.
 */
const lambdaInvokes: Record<string, unknown>[] = [];

useAwsStandIns({
  table: 'platform-aws-data-test',
  s3DirPrefix: 'ldp-aws-data-',
  faked: ['LAMBDA', 'EVENTBRIDGE'],
  fake: (req, body, res) => {
    // EventBridge PutEvents (the upload events): accepted, nothing more to check here.
    if (req.headers['x-amz-target']) {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: 'e' }] }));
      return;
    }
    lambdaInvokes.push(JSON.parse(body.toString('utf8') || '{}'));
    res.writeHead(202);
    res.end();
  },
  env: {
    [ENV.importWorkerFunctionName]: 'import-worker',
    // Lowered (it may only be lowered on AWS) so a small dataset is over it.
    [ENV.maxServiceStatements]: '100',
  },
});

beforeAll(() => {
  s3 = new S3Client({ forcePathStyle: true });
});

afterAll(() => {
  s3?.destroy();
});

async function operator() {
  const { awsServices } = await import('../../functions/composition/aws.js');
  const services = await awsServices();
  const { account: admin } = await services.accounts.ensureAdministrator('ops', 'ops-password-123');
  const { token } = await services.auth.issueToken(admin, { description: 'aws-data', readOnly: false }, 'https://api.example.org');
  return { services, admin, token };
}

function multipart(fileName: string, content: Buffer, fields: Record<string, string> = {}): { body: Buffer; headers: Record<string, string> } {
  const boundary = 'aws-data-boundary';
  const body = Buffer.concat([
    ...Object.entries(fields).map(([name, value]) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A simple upload through the imports function, then the worker function run as Lambda would invoke it. */
async function importFile(token: string, dataset: string, fileName: string, content: Buffer, fields: Record<string, string> = {}) {
  const { body, headers } = multipart(fileName, content, fields);
  lambdaInvokes.length = 0;
  const created = await invoke('imports', event('POST', `/datasets/ops/${dataset}/jobs`, { token, rawBody: body, headers }));
  expect(created.statusCode, created.body).toBe(201);
  const worker = await import('../../functions/handlers/import-worker.js');
  for (const payload of lambdaInvokes.splice(0)) await worker.handler(payload as never, context);
  const job = await invoke('imports', event('GET', `/datasets/ops/${dataset}/jobs/${created.json.jobId}`, { token }));
  expect(job.json.status, JSON.stringify(job.json.error)).toBe('finished');
}

describe('AWS: deleting an account', () => {
  it('leaves every dataset in place when removing blobs fails, so the retried deletion finishes it', async () => {
    const { services, token } = await operator();
    expect((await invoke('accounts', event('POST', '/accounts/ops/orgs', { token, body: { accountName: 'leaving' } }))).statusCode).toBe(201);
    for (const name of ['first', 'second', 'third']) {
      expect((await invoke('datasets', event('POST', '/datasets/leaving', { token, body: { name, accessLevel: 'private' } }))).statusCode).toBe(201);
    }
    const org = (await services.platform.store.getAccountByName('leaving'))!;
    const first = (await services.platform.store.getDataset(org.uid, 'first'))!;
    expect((await invoke('services', event('POST', '/datasets/leaving/first/services', { token, body: { name: 'sparql', type: 'virtuoso' } }))).statusCode).toBe(201);
    // The data bucket cannot be read (as with a missing grant): every blob removal fails.
    await s3.send(new DeleteBucketCommand({ Bucket: 'data' }));
    try {
      const refused = await invoke('accounts', event('DELETE', '/accounts/leaving', { token }));
      expect(refused.statusCode).toBe(500);
      const listed = await invoke('datasets', event('GET', '/datasets/leaving', { token }));
      expect(listed.json.map((d: { name: string }) => d.name).sort()).toEqual(['first', 'second', 'third']);
    } finally {
      await s3.send(new CreateBucketCommand({ Bucket: 'data' }));
    }
    const leftover = `datasets/${first.id}/assets/x/v1`;
    await s3.send(new PutObjectCommand({ Bucket: 'data', Key: leftover, Body: 'bytes' }));

    expect((await invoke('accounts', event('DELETE', '/accounts/leaving', { token }))).statusCode).toBe(204);
    expect((await invoke('accounts', event('GET', '/accounts/leaving', { token }))).statusCode).toBe(404);
    expect(await services.platform.blobs.data.head(leftover)).toBeNull();
    expect(await services.platform.store.getDatasetById(first.id)).toBeNull();
    expect(await services.platform.store.listServices(first.id)).toEqual([]);
  });
});

describe('AWS: stored files answer with a redirect to a short-lived S3 link', () => {
  it('an asset download is a 302 to a presigned URL that serves the bytes with the asset name', async () => {
    const { token } = await operator();
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'with-assets', accessLevel: 'private' } }));
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
    const { body, headers } = multipart('photo.bin', bytes);
    const uploaded = await invoke('assets', event('POST', '/datasets/ops/with-assets/assets', { token, rawBody: body, headers }));
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const download = await invoke('assets', event('GET', `/datasets/ops/with-assets/assets/${uploaded.json.identifier}`, { token }));
    expect(download.statusCode).toBe(302);
    expect(download.body).toBeUndefined();
    const location = download.headers!.location as string;
    expect(location).toMatch(/X-Amz-Expires=300/);
    expect(location).toMatch(/response-content-disposition=attachment/);
    const fetched = await fetch(location);
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(bytes)).toBe(true);
    // The link is as private as the dataset: without the token the asset is not found.
    expect((await invoke('assets', event('GET', `/datasets/ops/with-assets/assets/${uploaded.json.identifier}`))).statusCode).toBe(404);
  });

  it('an export larger than a Lambda response goes to S3 as a stream and answers 303 to a link', async () => {
    const { token } = await operator();
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'big-export', accessLevel: 'public' } }));
    // About 6 MB of N-Triples, uploaded gzipped (small), exported plain (over the 4 MiB response limit).
    const lines = Array.from({ length: 60_000 }, (_, i) => `<https://ex.org/s${i}> <https://ex.org/label> "a label long enough to make a big export, number ${i}" .\n`).join('');
    await importFile(token, 'big-export', 'big.nt.gz', gzipSync(lines));
    const res = await invoke('exports', event('GET', '/datasets/ops/big-export/download.nt'));
    expect(res.statusCode).toBe(303);
    const fetched = await fetch(res.headers!.location as string);
    expect(fetched.status).toBe(200);
    const text = await fetched.text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(60_000);
  }, 60_000);
});

describe('AWS: uploads are bounded by what Lambda takes', () => {
  it('a simple upload over 4 MiB answers 413 naming the limit and the alternatives; tus reaching a function is a deployment error (503) naming them too', async () => {
    const { token } = await operator();
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'bounded', accessLevel: 'private' } }));
    const { body, headers } = multipart('big.nt', Buffer.alloc(LAMBDA_REQUEST_BODY_LIMIT + 1, 0x20));
    const upload = await invoke('imports', event('POST', '/datasets/ops/bounded/jobs', { token, rawBody: body, headers }));
    expect(upload.statusCode).toBe(413);
    expect(upload.json.message).toMatch(/4194304 bytes \(4 MiB\)/);
    expect(upload.json.message).toMatch(/downloadUrls/);
    const asset = await invoke('assets', event('POST', '/datasets/ops/bounded/assets', { token, rawBody: body, headers }));
    expect(asset.statusCode).toBe(413);
    expect(asset.json.message).toMatch(/larger assets with tus \(POST \.\.\.\/assets\/add/);

    const job = await invoke('imports', event('POST', '/datasets/ops/bounded/jobs', { token, body: {} }));
    expect(job.statusCode).toBe(201);
    const tus = await invoke('imports', event('POST', `/datasets/ops/bounded/jobs/${job.json.jobId}/add`, { token, headers: { 'tus-resumable': '1.0.0', 'upload-length': '10000000' } }));
    expect(tus.statusCode).toBe(503);
    expect(tus.json.message).toMatch(/served by the upload host.*up to 4 MiB.*downloadUrls/);
  });
});

describe('AWS: a job does not start while a tus upload of it is half done', () => {
  it('the imports function reads the upload host\'s uploads in the uploads bucket and names the unfinished one (409)', async () => {
    const { token } = await operator();
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'halfdone', accessLevel: 'private' } }));
    const job = await invoke('imports', event('POST', '/datasets/ops/halfdone/jobs', { token, body: {} }));
    expect(job.statusCode).toBe(201);
    const scope = `/datasets/ops/halfdone/jobs/${job.json.jobId}/add`;
    // What the upload host does with the client's first chunk (same adapter, same bucket).
    const host = new S3TusUploads({ bucket: 'uploads', maxSize: 1024 * 1024 });
    const context = { scope, baseUrl: 'https://api.example.org', onFinish: async () => {} };
    const created = await host.handle(new Request(`https://api.example.org${scope}`, { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '100', 'upload-metadata': `filename ${Buffer.from('half.nt').toString('base64')}` } }), context);
    expect(created.status).toBe(201);
    const patched = await host.handle(new Request(created.headers.get('location')!, { method: 'PATCH', body: new Uint8Array(40), headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' } }), context);
    expect(patched.status).toBe(204);
    const start = await invoke('imports', event('POST', `/datasets/ops/halfdone/jobs/${job.json.jobId}/start`, { token }));
    expect(start.statusCode).toBe(409);
    expect(start.json.message).toMatch(/half\.nt \(60 of 100 bytes missing\)/);
  });
});

describe('AWS: SPARQL within the function time', () => {
  it('queries stop well before the query functions time out, on one replica, and the settings may only lower that', () => {
    for (const family of ['sparql', 'queries', 'dataset-sparql'] as const) {
      // 10 s of the function's time are left for a cold load (see AWS_SPARQL_LIMITS) and the answer.
      expect(AWS_SPARQL_LIMITS.queryTimeoutMs + 10_000).toBeLessThanOrEqual(FAMILIES[family].timeoutSeconds * 1000);
    }
    expect(awsSettingsFromEnv({}).sparql).toMatchObject({ queryTimeoutMs: 20_000, maxStatements: 500_000, replicas: 1 });
    expect(awsSettingsFromEnv({ [ENV.queryTimeoutMs]: '60000', [ENV.maxServiceStatements]: '12000000' }).sparql).toMatchObject({ queryTimeoutMs: 20_000, maxStatements: 500_000 });
    expect(awsSettingsFromEnv({ [ENV.queryTimeoutMs]: '5000', [ENV.maxServiceStatements]: '1000' }).sparql).toMatchObject({ queryTimeoutMs: 5000, maxStatements: 1000 });
  });

  it('a dataset over the statement limit: its endpoint answers 503 naming the limit, a service is refused with 400', async () => {
    const { token } = await operator();
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'too-big', accessLevel: 'public' } }));
    const lines = Array.from({ length: 150 }, (_, i) => `<https://ex.org/s${i}> <https://ex.org/p> "${i}" .\n`).join('');
    await importFile(token, 'too-big', 'data.nt', Buffer.from(lines));
    const query = await invoke('dataset-sparql', event('GET', '/datasets/ops/too-big/sparql', { query: `query=${encodeURIComponent('ASK { ?s ?p ?o }')}` }));
    expect(query.statusCode).toBe(503);
    expect(query.body).toMatch(/150 statements, more than the 100 a SPARQL store of this deployment loads/);
    const service = await invoke('services', event('POST', '/datasets/ops/too-big/services', { token, body: { name: 'sparql', type: 'virtuoso' } }));
    expect(service.statusCode).toBe(400);
    expect(service.json.message).toMatch(/more than the 100/);
  });
});

describe('AWS: imports within the worker time', () => {
  it('URL downloads fit in the import worker time, and a job counts as lost only after the worker would have been stopped', () => {
    const workerMs = WORKERS.importWorker.timeoutSeconds * 1000;
    expect(AWS_IMPORT_LIMITS.downloadTimeoutMs).toBeLessThanOrEqual(workerMs / 2);
    expect(AWS_IMPORT_LIMITS.stalledAfterMs).toBeGreaterThan(workerMs);
    expect(awsSettingsFromEnv({}).imports).toEqual(AWS_IMPORT_LIMITS);
  });

  it('a job whose worker was cut off (indexing, silent past the limit) ends in error when read; a live one is left alone', async () => {
    const { services, admin, token } = await operator();
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'cut-off', accessLevel: 'private' } }));
    const dataset = (await services.platform.store.getDataset(admin.uid, 'cut-off'))!;
    const { body, headers } = multipart('data.nt', Buffer.from('<https://ex.org/s> <https://ex.org/p> "o" .\n'));
    // Two started jobs whose worker invocations never run.
    const jobIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await invoke('imports', event('POST', '/datasets/ops/cut-off/jobs', { token, rawBody: body, headers }));
      expect(created.statusCode).toBe(201);
      jobIds.push(created.json.jobId);
    }
    lambdaInvokes.length = 0;
    // What the first job's worker wrote before Lambda stopped it, 21 minutes ago.
    const stale = (await services.platform.store.getJob(dataset.id, jobIds[0]!))!;
    const longAgo = new Date(Date.now() - 21 * 60_000).toISOString();
    await services.platform.store.updateJob({ ...stale, status: 'indexing', startedAt: longAgo, updatedAt: longAgo }, ['pending']);

    const [lostFile] = await services.platform.store.listJobFiles(dataset.id, jobIds[0]!);
    const [liveFile] = await services.platform.store.listJobFiles(dataset.id, jobIds[1]!);
    expect(await services.platform.blobs.uploads.head(lostFile!.blobKey)).not.toBeNull();

    const read = await invoke('imports', event('GET', `/datasets/ops/cut-off/jobs/${jobIds[0]}`, { token }));
    expect(read.json.status).toBe('error');
    expect(read.json.error.message).toMatch(/stopped reporting while indexing.*The dataset was not changed/);
    const listed = await invoke('imports', event('GET', '/datasets/ops/cut-off/jobs', { token }));
    expect(listed.json.map((j: { status: string }) => j.status)).toEqual(['error', 'pending']);
    // The lost job's uploaded file is removed; the live job's stays.
    expect(await services.platform.blobs.uploads.head(lostFile!.blobKey)).toBeNull();
    expect(await services.platform.blobs.uploads.head(liveFile!.blobKey)).not.toBeNull();

    // The sweep a scheduled watchdog runs finds a lost job nobody reads.
    const live = (await services.platform.store.getJob(dataset.id, jobIds[1]!))!;
    await services.platform.store.updateJob({ ...live, status: 'indexing', updatedAt: longAgo }, ['pending']);
    expect(await services.imports.endStalledJobs(Date.now() + 30_000)).toMatchObject({ ended: 1 });
    expect((await services.platform.store.getJob(dataset.id, jobIds[1]!))!.status).toBe('error');
  });
});

describe('AWS: superseded graph blobs', () => {
  it('are kept for a grace period after a swap (a reader may hold the old manifest), then deleted if still unlisted', async () => {
    const { services, admin, token } = await operator();
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'replaced', accessLevel: 'private' } }));
    const dataset = (await services.platform.store.getDataset(admin.uid, 'replaced'))!;
    const graphBlobs = async () => {
      const keys: string[] = [];
      for await (const b of services.platform.blobs.data.list(`datasets/${dataset.id}/graphs/`)) keys.push(b.key);
      return keys;
    };
    await importFile(token, 'replaced', 'v1.nt', Buffer.from('<https://ex.org/s> <https://ex.org/p> "v1" .\n'));
    const [v1] = await graphBlobs();
    await importFile(token, 'replaced', 'v2.nt', Buffer.from('<https://ex.org/s> <https://ex.org/p> "v2" .\n'), { overwriteAll: 'true' });
    // Superseded, but an export or cold SPARQL load that read the old manifest may still read it.
    expect(await graphBlobs()).toContain(v1);
    const trash: string[] = [];
    for await (const b of services.platform.blobs.data.list(`datasets/${dataset.id}/trash/`)) trash.push(b.key);
    expect(trash).toHaveLength(1);
    // The sweep before the grace has passed leaves it.
    await services.imports.endStalledJobs(Date.now() + 30_000);
    expect(await graphBlobs()).toContain(v1);
    // The same list as written 21 minutes ago: the next sweep deletes the blob, and the list.
    const list = await services.platform.blobs.data.get(trash[0]!);
    const old = trash[0]!.replace(/\/\d+-/, `/${String(Date.now() - 21 * 60_000).padStart(15, '0')}-`);
    await services.platform.blobs.data.put(old, list!);
    await services.platform.blobs.data.delete(trash[0]!);
    await services.imports.endStalledJobs(Date.now() + 30_000);
    const left = await graphBlobs();
    expect(left).not.toContain(v1);
    expect(left).toHaveLength(1);
    expect(await services.platform.blobs.data.head(old)).toBeNull();
    const exported = await invoke('exports', event('GET', '/datasets/ops/replaced/download.nt', { token }));
    expect(Buffer.from(exported.body!, 'base64').toString('utf8')).toMatch(/"v2"/);
  });
});
