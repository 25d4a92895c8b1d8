/** Issue 14, area B: dataset webhooks (…/hooks, …/hookrecords), fired when an import ends, delivered through the guarded outbound fetch. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let carol: string;
let server: Server;
let base: string;
const received: { body: string; type: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), type: req.headers['content-type'] });
      res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'text/plain' }).end(req.url === '/fail' ? 'nope' : 'thanks');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  carol = await p.createUser('carol');
  await p.createDataset('alice', 'data', 'public', alice);
});
afterAll(async () => {
  await p?.stop();
  await new Promise<void>((r) => server?.close(() => r()));
});

const hooks = '/datasets/alice/data/hooks';

describe('dataset webhooks (issue 14)', () => {
  it('are managed by those who may change the dataset, with validated input', async () => {
    const created = await p.request('POST', hooks, { token: alice, body: { url: `${base}/ok`, active: true, payloadFormat: 'JSON', onEvents: { graphImport: true } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.any(String), url: `${base}/ok`, active: true, payloadFormat: 'JSON', onEvents: { graphImport: true } });
    const id = created.body.id;
    expect((await p.request('GET', hooks, { token: alice })).body).toHaveLength(1);
    expect((await p.request('GET', `${hooks}/${id}`, { token: alice })).body.id).toBe(id);
    // Readers of a public dataset may not see its hooks (a URL may hold a secret); strangers never write.
    expect((await p.request('GET', hooks, { token: carol })).status).toBe(403);
    expect((await p.request('GET', hooks)).status).toBe(401);
    expect((await p.request('POST', hooks, { token: carol, body: { url: `${base}/x` } })).status).toBe(403);
    expect((await p.request('DELETE', `${hooks}/${id}`, { token: carol })).status).toBe(403);
    expect((await p.request('POST', hooks, { token: alice, body: { url: 'ftp://example.org/' } })).status).toBe(400);
    expect((await p.request('POST', hooks, { token: alice, body: { url: `${base}/x`, payloadFormat: 'XML' } })).status).toBe(400);
    expect((await p.request('POST', hooks, { token: alice, body: { url: `${base}/x`, onEvents: { somethingElse: true } } })).status).toBe(400);
    expect((await p.request('GET', `${hooks}/nope`, { token: alice })).status).toBe(404);
    const patched = await p.request('PATCH', `${hooks}/${id}`, { token: alice, body: { active: false } });
    expect(patched.body.active).toBe(false);
    await p.request('PATCH', `${hooks}/${id}`, { token: alice, body: { active: true } });
  });

  it('fire when an import ends, with a record per delivery', async () => {
    const [ok] = (await p.request('GET', hooks, { token: alice })).body;
    const failing = (await p.request('POST', hooks, { token: alice, body: { url: `${base}/fail`, payloadFormat: 'formEncoded', onEvents: { graphImport: true } } })).body;
    const off = (await p.request('POST', hooks, { token: alice, body: { url: `${base}/off`, active: false, onEvents: { graphImport: true } } })).body;
    const ld = (await p.request('POST', hooks, { token: alice, body: { url: `${base}/ld`, onEvents: { linkedDataUpload: true } } })).body;
    const job = await importFiles(p, alice, 'alice/data', [{ name: 'a.ttl', content: '<https://e.org/a> <https://e.org/p> "a" .' }]);
    expect(job.status).toBe('finished');
    // Deliveries go out one after the other once the job has ended: wait (bounded) until each active hook's is recorded.
    const recorded = async (id: string) => ((await p.request('GET', `/datasets/alice/data/hookrecords/${id}`, { token: alice })).body as unknown[]).length > 0;
    for (let i = 0; i < 200; i++) {
      if ((await recorded(ok.id)) && (await recorded(failing.id)) && (await recorded(ld.id))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const json = received.find((r) => r.type === 'application/json');
    expect(JSON.parse(json!.body)).toMatchObject({ event: 'graphImport', jobId: job.jobId, status: 'finished', dataset: { name: 'data', owner: 'alice' } });
    expect(received.some((r) => r.type === 'application/x-www-form-urlencoded' && r.body.includes('event=graphImport'))).toBe(true);

    const records = await p.request('GET', `/datasets/alice/data/hookrecords/${ok.id}`, { token: alice });
    expect(records.status).toBe(200);
    expect(records.body).toHaveLength(1);
    expect(records.body[0]).toMatchObject({ url: `${base}/ok`, statusCode: 200, responseText: 'thanks', eventName: 'graphImport', payloadFormat: 'JSON' });
    expect((await p.request('GET', `/datasets/alice/data/hookrecords/${failing.id}`, { token: alice })).body[0]).toMatchObject({ statusCode: 500, responseText: 'nope' });
    expect((await p.request('GET', `/datasets/alice/data/hookrecords/${off.id}`, { token: alice })).body).toEqual([]);
    expect((await p.request('GET', `/datasets/alice/data/hookrecords/${ld.id}`, { token: alice })).body[0]).toMatchObject({ eventName: 'linkedDataUpload', payload: { event: 'linkedDataUpload' } });
    expect((await p.request('GET', `/datasets/alice/data/hookrecords/${ok.id}`, { token: carol })).status).toBe(403);
    expect((await p.request('GET', `/datasets/alice/data/hookrecords/${ok.id}?limit=0`, { token: alice })).status).toBe(400);
    expect((await p.request('DELETE', `${hooks}/${failing.id}`, { token: alice })).status).toBe(204);
    expect((await p.request('GET', hooks, { token: alice })).body.map((h: any) => h.id)).not.toContain(failing.id);
  });
});

describe('dataset webhooks on file uploads (issue 14)', () => {
  it('fire with fileUpload when an asset file is stored', async () => {
    const hook = (await p.request('POST', hooks, { token: alice, body: { url: `${base}/files`, onEvents: { fileUpload: true } } })).body;
    const form = new FormData();
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'readme.txt');
    const up = await fetch(`${p.url}/datasets/alice/data/assets`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
    expect(up.status).toBe(201);
    let records: any[] = [];
    for (let i = 0; i < 50 && records.length === 0; i++) {
      records = (await p.request('GET', `/datasets/alice/data/hookrecords/${hook.id}`, { token: alice })).body;
      if (records.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(records[0]).toMatchObject({ eventName: 'fileUpload', statusCode: 200, payload: { event: 'fileUpload', asset: { assetName: 'readme.txt' } } });
  });
});

describe('dataset webhooks and the outbound guard (issue 14)', () => {
  it('a delivery to a private address is refused and recorded when the instance forbids private networks', async () => {
    const guarded = await TestPlatform.start({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' } });
    try {
      const token = await guarded.createUser('dora');
      await guarded.createDataset('dora', 'd', 'private', token);
      const hook = (await guarded.request('POST', '/datasets/dora/d/hooks', { token, body: { url: `${base}/guarded` } })).body;
      const before = received.length;
      const job = await importFiles(guarded, token, 'dora/d', [{ name: 'a.ttl', content: '<https://e.org/a> <https://e.org/p> "a" .' }]);
      expect(job.status).toBe('finished');
      const [record] = (await guarded.request('GET', `/datasets/dora/d/hookrecords/${hook.id}`, { token })).body;
      expect(record.statusCode).toBeUndefined();
      expect(record.errorMessage).toBeTruthy();
      expect(received.slice(before).some((r) => r.body.includes('dora'))).toBe(false);
    } finally {
      await guarded.stop();
    }
  });
});
