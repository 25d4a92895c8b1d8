/**
 * Issue 13's data bugs through the AWS harness (bundles, template env, IAM, API Gateway and
 * Lambda limits): stored files answer with a redirect to a short-lived S3 link, large responses
 * go to S3, and uploads are bounded by what Lambda takes with a 413 that says so.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';

let aws: AwsTestPlatform;
let alice: string;

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  alice = await aws.createUser('alice');
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

function form(fileName: string, bytes: Buffer): FormData {
  const body = new FormData();
  body.append('file', new Blob([new Uint8Array(bytes)]), fileName);
  return body;
}

describe('on AWS: stored files and large responses', () => {
  it('an asset download is a 302 to a presigned S3 link to the asset object; no function carries the bytes', async () => {
    await aws.createDataset('alice', 'files', 'private', alice);
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));
    const up = await fetch(`${aws.url}/datasets/alice/files/assets`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form('photo.bin', bytes) });
    expect(up.status, await up.clone().text()).toBe(201);
    const { identifier } = (await up.json()) as { identifier: string };
    const download = await aws.request('GET', `/datasets/alice/files/assets/${identifier}`, { token: alice });
    expect(download.status).toBe(302);
    const location = new URL(download.headers.get('location')!);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(location.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(location.searchParams.get('response-content-disposition')).toMatch(/^attachment; filename="photo.bin"/);
    // The link names the asset's object. (Fetching it here would not work: the harness forwards
    // presigned calls to s3rver unsigned, and S3 refuses response-header overrides on anonymous
    // GETs; test/contract/aws-data.test.ts fetches such a link from s3rver itself.)
    const [, bucket, ...key] = location.pathname.split('/');
    const object = await aws.aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: decodeURIComponent(key.join('/')) }));
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(bytes)).toBe(true);
    expect(aws.aws.refusals()).toEqual([]);
  }, 120_000);

  it('an export over the Lambda response limit is streamed to S3 and answered 303 with a link', async () => {
    await aws.createDataset('alice', 'large', 'public', alice);
    const lines = Array.from({ length: 60_000 }, (_, i) => `<https://ex.org/s${i}> <https://ex.org/label> "a label long enough to make a big export, number ${i}" .\n`).join('');
    const job = await importFiles(aws as unknown as TestPlatform, alice, 'alice/large', [{ name: 'large.nt.gz', content: gzipSync(lines) }]);
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
    const exported = await aws.request('GET', '/datasets/alice/large/download.nt');
    expect(exported.status).toBe(303);
    const text = await (await fetch(exported.headers.get('location')!)).text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(60_000);
    expect(aws.aws.refusals()).toEqual([]);
  }, 180_000);
});

describe('on AWS: uploads bounded by Lambda', () => {
  it('a simple upload just over 4 MiB answers 413 naming the limit and tus; tus goes to the upload host', async () => {
    await aws.createDataset('alice', 'bounded', 'private', alice);
    const big = Buffer.alloc(4 * 1024 * 1024 + 64 * 1024, 0x20);
    const upload = await fetch(`${aws.url}/datasets/alice/bounded/jobs`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form('big.nt', big) });
    expect(upload.status).toBe(413);
    expect(((await upload.json()) as { message: string }).message).toMatch(/4194304 bytes \(4 MiB\).*with tus.*downloadUrls/);

    const job = await aws.request('POST', '/datasets/alice/bounded/jobs', { token: alice, body: {} });
    expect(job.status).toBe(201);
    const tus = await aws.request('POST', `/datasets/alice/bounded/jobs/${job.body.jobId}/add`, { token: alice, headers: { 'tus-resumable': '1.0.0', 'upload-length': '10000000', 'upload-metadata': `filename ${Buffer.from('big.nt').toString('base64')}` } });
    // Not a function: the upload host (over the VPC link) creates the upload.
    expect(tus.status, tus.text).toBe(201);
    expect(tus.headers.get('location')).toMatch(new RegExp(`/datasets/alice/bounded/jobs/${job.body.jobId}/add/[0-9a-f]{32}$`));
    expect(aws.aws.refusals()).toEqual([]);
  }, 120_000);
});
