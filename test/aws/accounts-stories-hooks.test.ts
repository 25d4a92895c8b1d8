/**
 * Issue 14, area B, through the AWS harness (real bundles, env and IAM policies): stories and
 * avatars in the datasets function (data bucket blobs), pinned items shown by the accounts and
 * auth functions (their data bucket read grants), and dataset webhooks delivered by the flow
 * hook dispatcher (no VPC, the import's `Import finished` event and S3's `Object Created` through
 * EventBridge; its data bucket write grant records each delivery) through the guarded outbound fetch.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';
import { ONE_PIXEL_PNG as PNG, multipartFile } from '../support/images.js';

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

let aws: AwsTestPlatform;
let alice: string;
let carol: string;
let server: Server;
let base: string;
const received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The hook receiver is on this machine: the dispatcher may reach private addresses here, as an operator may allow.
  aws = await AwsTestPlatform.start({ testOverridesOfOperatorSettings: [{ function: 'FlowHookDispatcherFunction', name: 'OUTBOUND_ALLOW_PRIVATE_NETWORKS', value: 'true' }] });
  alice = await aws.createUser('alice');
  carol = await aws.createUser('carol');
}, 300_000);
afterAll(async () => {
  await aws?.stop();
  await new Promise<void>((r) => server?.close(() => r()));
});

describe('on AWS: stories, avatars and pins (issue 14)', () => {
  it('stories and their banners live in the data bucket; pins show on /me and the account page', async () => {
    const ds = await aws.createDataset('alice', 'open', 'public', alice);
    const story = await aws.request('POST', '/stories/alice', { token: alice, body: { name: 'tour', accessLevel: 'public', content: [{ type: 'paragraph', paragraph: 'Hi' }] } });
    expect(story.status, story.text).toBe(201);
    expect((await aws.request('POST', '/stories/alice', { token: carol, body: { name: 'x' } })).status).toBe(403);
    const banner = await aws.request('POST', '/stories/alice/tour/banner.webp', { token: alice, ...multipartFile('banner', PNG, 'image/png') });
    expect(banner.status, banner.text).toBe(200);
    const img = await aws.request('GET', '/stories/alice/tour/banner');
    expect(img.status).toBe(200);
    const { uid } = (await aws.request('GET', '/accounts/alice')).body;
    expect((await aws.request('POST', `/imgs/avatars/a/${uid}`, { token: alice, ...multipartFile('avatar', PNG, 'image/png') })).status).toBe(200);
    const pin = await aws.request('PATCH', '/me', { token: alice, body: { pinnedItems: [{ type: 'Story', item: story.body.id }, { type: 'Dataset', item: ds.id }] } });
    expect(pin.status, pin.text).toBe(200);
    const me = await aws.request('GET', '/me', { token: alice });
    expect(me.status, me.text).toBe(200);
    expect(me.body.pinnedItems.map((i: any) => i.type)).toEqual(['Story', 'Dataset']);
    expect(me.body.avatarUrl).toContain('/imgs/avatars/a/');
    const page = await aws.request('GET', '/accounts/alice', { token: carol });
    expect(page.body).toMatchObject({ datasetCount: 1, queryCount: 0 });
    expect(page.body.pinnedItems.map((i: any) => i.item.name)).toEqual(['tour', 'open']);
  });

  it('a dataset webhook fires from the hook dispatcher when an import ends, and its delivery is recorded', async () => {
    await aws.createDataset('alice', 'hooked', 'private', alice);
    const hook = await aws.request('POST', '/datasets/alice/hooked/hooks', { token: alice, body: { url: `${base}/hook`, onEvents: { graphImport: true } } });
    expect(hook.status, hook.text).toBe(201);
    const job = await importFiles(aws as unknown as TestPlatform, alice, 'alice/hooked', [{ name: 'a.ttl', content: '<https://e.org/a> <https://e.org/p> "a" .' }]);
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
    let records: any[] = [];
    for (let i = 0; i < 100 && records.length === 0; i++) {
      await aws.aws.idle();
      records = (await aws.request('GET', `/datasets/alice/hooked/hookrecords/${hook.body.id}`, { token: alice })).body;
      if (records.length === 0) await delay(100);
    }
    expect(records[0]).toMatchObject({ statusCode: 200, eventName: 'graphImport' });
    expect(received.some((b) => JSON.parse(b).jobId === job.jobId)).toBe(true);
  });

  it('a fileUpload webhook fires when an asset file lands in the data bucket (S3 → EventBridge → the dispatcher)', async () => {
    const hook = await aws.request('POST', '/datasets/alice/hooked/hooks', { token: alice, body: { url: `${base}/files`, onEvents: { fileUpload: true } } });
    expect(hook.status, hook.text).toBe(201);
    const form = new FormData();
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'readme.txt');
    const up = await fetch(`${aws.url}/datasets/alice/hooked/assets`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
    expect(up.status, await up.clone().text()).toBe(201);
    let records: any[] = [];
    for (let i = 0; i < 100 && records.length === 0; i++) {
      await aws.aws.idle();
      records = (await aws.request('GET', `/datasets/alice/hooked/hookrecords/${hook.body.id}`, { token: alice })).body;
      if (records.length === 0) await delay(100);
    }
    expect(records[0]).toMatchObject({ statusCode: 200, eventName: 'fileUpload', payload: { asset: { assetName: 'readme.txt' } } });
  });
});
