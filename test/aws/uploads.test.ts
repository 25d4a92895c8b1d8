/**
 * Large uploads on AWS (issue 19) through the harness: the official client (`@triply/triplydb`)
 * uploads a 50 MB N-Triples file (importFromFiles) and a 50 MB asset (uploadAsset) with tus in
 * 5 MiB chunks. API Gateway sends the tus routes over the VPC link to the upload host's Fargate
 * service (its tasks: the container bundle as plain Node processes, the task role's IAM), which
 * keeps them in the uploads bucket as S3 multipart uploads; the import runs as usual and the asset
 * lands in the data bucket. Raw tus shows the multipart parts, a resume from a fresh HEAD, and
 * the refusals. Upload throughput is printed (MB/s).
 */
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, ListPartsCommand } from '@aws-sdk/client-s3';
import App from '@triply/triplydb';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';

const MIB = 1024 * 1024;
const MB = 1_000_000;
const tus = { 'tus-resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s).toString('base64');

let aws: AwsTestPlatform;
let alice: string;
let bob: string;
let dir: string;
let restoreHttps: () => void = () => {};

/**
 * The deployed API's public URL (https, execute-api) is where the functions point their links,
 * tus Locations included; the harness serves the API on a local http port. As DNS and API
 * Gateway's TLS front door would, connections of this test process to the public host go to the
 * local API (the client follows the asset upload's Location as given). Other hosts are untouched.
 */
function routePublicUrlToHarness(publicUrl: string, localUrl: string): () => void {
  const publicHost = new URL(publicUrl).hostname;
  const local = new URL(localUrl);
  const agent = https.globalAgent as unknown as { createConnection: (options: { host?: string; servername?: string }, callback?: unknown) => unknown };
  const original = agent.createConnection;
  agent.createConnection = function (options, callback) {
    if (options.host === publicHost || options.servername === publicHost) return connect({ host: local.hostname, port: Number(local.port) });
    return original.call(this, options, callback);
  };
  return () => {
    agent.createConnection = original;
  };
}

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  alice = await aws.createUser('alice');
  bob = await aws.createUser('bob');
  dir = await mkdtemp(join(tmpdir(), 'ldp-aws-uploads-'));
  restoreHttps = routePublicUrlToHarness(aws.aws.publicApiUrl, aws.url);
}, 300_000);
afterAll(async () => {
  restoreHttps();
  await aws?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The client, pointed at the harness's API (it maps the tus Locations of jobs onto it). */
const client = (token: string) => App.get({ url: aws.url, token });

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
async function objectBytes(bucket: string, key: string): Promise<Buffer> {
  const out = await aws.aws.s3.send(new GetObjectCommand({ Bucket: aws.aws.bucket(bucket), Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}
const rate = (bytes: number, ms: number) => `${(bytes / MB / (ms / 1000)).toFixed(1)} MB/s`;

/** `lines` N-Triples statements, about 100 bytes each. */
async function nTriples(path: string, lines: number): Promise<number> {
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) parts.push(`<https://example.org/s${i}> <https://example.org/p> "value ${i} padded to make the line about a hundred bytes long" .\n`);
  await writeFile(path, parts.join(''));
  return (await stat(path)).size;
}

describe('on AWS: large uploads through the upload host', () => {
  it('the official client imports a 50 MB N-Triples file (tus, 5 MiB chunks) and the dataset has every statement', async () => {
    const file = join(dir, 'big.nt');
    const lines = 500_000;
    const size = await nTriples(file, lines);
    expect(size).toBeGreaterThan(50 * MB);
    const ds = await (await client(alice).getAccount()).addDataset('big-import');
    const started = performance.now();
    await ds.importFromFiles([file], { defaultGraphName: 'https://example.org/graphs/big' });
    const ms = performance.now() - started;
    console.log(`importFromFiles ${(size / MB).toFixed(1)} MB (tus upload + import on AWS): ${(ms / 1000).toFixed(1)} s, ${rate(size, ms)}`);
    const info = await ds.getInfo(true);
    expect(info.statements).toBe(lines);
    expect(aws.aws.refusals()).toEqual([]);
  }, 600_000);

  it('the official client uploads a 50 MB asset into the data bucket, byte for byte', async () => {
    const file = join(dir, 'asset.bin');
    const bytes = Buffer.alloc(50 * MB + 12_344);
    for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE((i * 2654435761) >>> 0, i);
    await writeFile(file, bytes);
    const ds = await (await client(alice).getAccount()).addDataset('big-assets');
    const dsId = (await ds.getInfo()).id;
    const started = performance.now();
    const asset = await ds.uploadAsset(file, 'asset.bin');
    const ms = performance.now() - started;
    console.log(`uploadAsset ${(bytes.length / MB).toFixed(1)} MB (tus to the upload host, S3 multipart, then into the data bucket): ${(ms / 1000).toFixed(1)} s, ${rate(bytes.length, ms)}`);
    const version = asset.getInfo().versions[0]!;
    expect(version.fileSize).toBe(bytes.length);
    const keys = (await aws.aws.s3.send(new ListObjectsV2Command({ Bucket: aws.aws.bucket('data'), Prefix: `datasets/${dsId}/assets/` }))).Contents ?? [];
    expect(keys).toHaveLength(1);
    expect(sha256(await objectBytes('data', keys[0]!.Key!))).toBe(await sha256File(file));
    // Moved, not copied: nothing of it is left in the uploads bucket.
    const left = (await aws.aws.s3.send(new ListObjectsV2Command({ Bucket: aws.aws.bucket('uploads'), Prefix: 'tus/' }))).Contents ?? [];
    expect(left.filter((o) => o.Size === bytes.length)).toEqual([]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 600_000);

  it('raw tus: S3 multipart parts per PATCH, a fresh HEAD/PATCH series resumes from the offset, the file is whole', async () => {
    await aws.createDataset('alice', 'resume', 'private', alice);
    const job = await aws.request('POST', '/datasets/alice/resume/jobs', { token: alice, body: {} });
    expect(job.status).toBe(201);
    const data = Buffer.alloc(16 * MIB);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 12)) & 0xff;
    const created = await aws.request('POST', `/datasets/alice/resume/jobs/${job.body.jobId}/add`, { token: alice, headers: { ...tus, 'upload-length': String(data.length), 'upload-metadata': `filename ${b64('resume.nt')}` } });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    expect(location.startsWith(`${aws.aws.publicApiUrl}/datasets/alice/resume/jobs/${job.body.jobId}/add/`)).toBe(true);
    const path = new URL(location).pathname;
    const id = path.split('/').pop()!;
    const patch = (offset: number, body: Buffer) =>
      aws.request('PATCH', path, { token: alice, rawBody: body, headers: { ...tus, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' } });

    const started = performance.now();
    expect((await patch(0, data.subarray(0, 6 * MIB))).status).toBe(204);
    // The upload's state is in S3: its multipart upload holds one 6 MiB part.
    const info = await aws.aws.s3.send(new HeadObjectCommand({ Bucket: aws.aws.bucket('uploads'), Key: `tus/${id}.json` }));
    const multipart = info.Metadata?.['upload-id'];
    expect(multipart).toBeTruthy();
    const parts = await aws.aws.s3.send(new ListPartsCommand({ Bucket: aws.aws.bucket('uploads'), Key: `tus/${id}`, UploadId: multipart }));
    expect(parts.Parts?.map((p) => p.Size)).toEqual([6 * MIB]);

    // Every upload host task tells the same offset (the state is in S3, not in a task): asked
    // directly, each task in turn (API Gateway spreads requests over them the same way).
    const service = aws.aws.app.ecsServices.find((s) => s.logicalId.startsWith('UploadHost'))!;
    const instances = aws.aws.ecs.instances(service.registries[0]!.cloudMapServiceArn);
    expect(instances.length).toBe(service.desiredCount);
    expect(service.desiredCount).toBeGreaterThanOrEqual(2);
    for (const instance of instances) {
      const direct = await fetch(`http://127.0.0.1:${instance.port}${path}`, { method: 'HEAD', headers: { ...tus, authorization: `Bearer ${alice}` } });
      expect(direct.headers.get('upload-offset'), instance.taskArn).toBe(String(6 * MIB));
    }

    // A "new client": HEAD tells the offset (whichever task answers), PATCHes continue from there.
    const head = await aws.request('HEAD', path, { token: alice, headers: tus });
    expect(head.status).toBe(200);
    const offset = Number(head.headers.get('upload-offset'));
    expect(offset).toBe(6 * MIB);
    expect((await patch(offset, data.subarray(offset, offset + 5 * MIB))).status).toBe(204);
    expect(Number((await aws.request('HEAD', path, { token: alice, headers: tus })).headers.get('upload-offset'))).toBe(11 * MIB);
    const last = await patch(11 * MIB, data.subarray(11 * MIB));
    expect(last.status, last.text).toBe(204);
    const ms = performance.now() - started;
    console.log(`raw tus PATCHes ${(data.length / MB).toFixed(1)} MB through API Gateway and the upload host: ${rate(data.length, ms)}`);
    expect(sha256(await objectBytes('uploads', `tus/${id}`))).toBe(sha256(data));
    await expect(aws.aws.s3.send(new ListPartsCommand({ Bucket: aws.aws.bucket('uploads'), Key: `tus/${id}`, UploadId: multipart }))).rejects.toMatchObject({ name: 'NoSuchUpload' });
    // The job has the file.
    const view = await aws.request('GET', `/datasets/alice/resume/jobs/${job.body.jobId}`, { token: alice });
    expect(JSON.stringify(view.body)).toContain('resume.nt');
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);

  it('refuses a caller without write access, and an upload reached under another scope is 404', async () => {
    await aws.createDataset('alice', 'guarded', 'public', alice);
    const job = await aws.request('POST', '/datasets/alice/guarded/jobs', { token: alice, body: {} });
    const add = (token: string, path: string) => aws.request('POST', path, { token, headers: { ...tus, 'upload-length': '10', 'upload-metadata': `filename ${b64('x.nt')}` } });
    const asBob = await add(bob, `/datasets/alice/guarded/jobs/${job.body.jobId}/add`);
    expect(asBob.status).toBe(403);
    expect(asBob.body.message).toBeTruthy();
    expect((await add(bob, '/datasets/alice/guarded/assets/add')).status).toBe(403);

    const created = await add(alice, '/datasets/alice/guarded/assets/add');
    expect(created.status).toBe(201);
    const id = created.headers.get('location')!.split('/').pop()!;
    expect((await aws.request('HEAD', `/datasets/alice/guarded/jobs/${job.body.jobId}/add/${id}`, { token: alice, headers: tus })).status).toBe(404);
    expect((await aws.request('HEAD', `/datasets/alice/guarded/assets/add/${id}`, { token: alice, headers: tus })).status).toBe(200);
  }, 120_000);
});
