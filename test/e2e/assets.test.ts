/** Assets with versions: multipart and tus uploads, listing, downloads, deletes, access. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;

async function uploadSimple(dataset: string, token: string, name: string, content: string | Buffer, versionOf?: string) {
  const form = new FormData();
  if (versionOf) form.append('versionOf', versionOf);
  form.append('file', new Blob([content as BlobPart], { type: 'text/plain' }), name);
  const res = await fetch(`${p.url}/datasets/${dataset}/assets`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  return { status: res.status, body: await res.json() };
}

async function uploadTus(dataset: string, token: string, name: string, content: Buffer, versionOf?: string) {
  const metadata = [`filename ${Buffer.from(name).toString('base64')}`];
  if (versionOf) metadata.push(`versionOf ${Buffer.from(versionOf).toString('base64')}`);
  const tus = { 'tus-resumable': '1.0.0', authorization: `Bearer ${token}` };
  const created = await fetch(`${p.url}/datasets/${dataset}/assets/add`, {
    method: 'POST',
    headers: { ...tus, 'upload-length': String(content.length), 'upload-metadata': metadata.join(',') },
  });
  if (created.status !== 201) return { status: created.status, body: await created.text() };
  const patch = await fetch(created.headers.get('location')!, {
    method: 'PATCH',
    headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: content as BodyInit,
  });
  return { status: patch.status, body: JSON.parse(await patch.text()) };
}

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  await p.createDataset('alice', 'docs', 'public', alice);
  await p.createDataset('alice', 'secret', 'private', alice);
});
afterAll(async () => {
  await p?.stop();
});

describe('assets', () => {
  it('upload by multipart, list, find by name and download', async () => {
    const up = await uploadSimple('alice/docs', alice, 'readme.txt', 'hello assets');
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ assetName: 'readme.txt', versions: [expect.objectContaining({ fileSize: 12 })] });
    expect(up.body.identifier).toMatch(/^[0-9a-f]{24}$/);
    const list = await p.request('GET', '/datasets/alice/docs/assets');
    expect(list.body.map((a: { assetName: string }) => a.assetName)).toEqual(['readme.txt']);
    const byName = await p.request('GET', '/datasets/alice/docs/assets?fileName=readme.txt');
    expect(byName.body.identifier).toBe(up.body.identifier);
    expect((await p.request('GET', '/datasets/alice/docs/assets?fileName=nope.txt')).status).toBe(404);
    const download = await p.request('GET', `/datasets/alice/docs/assets/${up.body.identifier}`);
    expect(download.text).toBe('hello assets');
    expect(download.headers.get('content-disposition')).toMatch(/readme\.txt/);
    expect((await p.request('GET', '/datasets/alice/docs', { token: alice })).body.assetCount).toBe(1);
  });

  it('keep versions: tus upload with versionOf, any version downloadable, the final PATCH answers the asset', async () => {
    const first = await uploadSimple('alice/docs', alice, 'data.bin', Buffer.from('version one'));
    const big = Buffer.alloc(6 * 1024 * 1024, 7);
    const second = await uploadTus('alice/docs', alice, 'data.bin', big, first.body.identifier);
    expect(second.status).toBe(200);
    expect(second.body.identifier).toBe(first.body.identifier);
    expect(second.body.versions.map((v: { fileSize: number }) => v.fileSize)).toEqual([11, big.length]);
    const [v1, v2] = second.body.versions;
    expect((await p.request('GET', `/datasets/alice/docs/assets/${first.body.identifier}/${v1.id}`)).text).toBe('version one');
    const latest = await fetch(`${p.url}/datasets/alice/docs/assets/${first.body.identifier}`);
    expect(Buffer.from(await latest.arrayBuffer()).equals(big)).toBe(true);
    expect(v2.url).toBe(`${p.url}/datasets/alice/docs/assets/${first.body.identifier}/${v2.id}`);

    expect((await p.request('DELETE', `/datasets/alice/docs/assets/${first.body.identifier}/${v1.id}`, { token: alice })).status).toBe(200);
    const after = await p.request('GET', `/datasets/alice/docs/assets?fileName=data.bin`);
    expect(after.body.versions.map((v: { id: string }) => v.id)).toEqual([v2.id]);
    expect((await p.request('GET', `/datasets/alice/docs/assets/${first.body.identifier}/${v1.id}`)).status).toBe(404);
  });

  it('refuse a second asset of the same name, an unknown versionOf and bad names', async () => {
    const again = await uploadSimple('alice/docs', alice, 'readme.txt', 'again');
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/already exists.*versionOf/);
    const unknown = await uploadSimple('alice/docs', alice, 'x.txt', 'x', 'ffffffffffffffffffffffff');
    expect(unknown.status).toBe(404);
    const tusNoName = await fetch(`${p.url}/datasets/alice/docs/assets/add`, {
      method: 'POST',
      headers: { 'tus-resumable': '1.0.0', authorization: `Bearer ${alice}`, 'upload-length': '3' },
    });
    expect(tusNoName.status).toBe(400);
  });

  it('answer 413 for a multipart body of 5 MB or more, pointing to tus', async () => {
    const res = await uploadSimple('alice/docs', alice, 'huge.bin', Buffer.alloc(5 * 1024 * 1024, 1));
    expect(res.status).toBe(413);
    expect(res.body.message).toMatch(/assets\/add/);
    expect((await p.request('GET', '/datasets/alice/docs/assets?fileName=huge.bin')).status).toBe(404);
  });

  it('delete the whole asset', async () => {
    const up = await uploadSimple('alice/docs', alice, 'temp.txt', 'temp');
    expect((await p.request('DELETE', `/datasets/alice/docs/assets/${up.body.identifier}`, { token: alice })).status).toBe(204);
    expect((await p.request('GET', `/datasets/alice/docs/assets/${up.body.identifier}`)).status).toBe(404);
    expect((await p.request('DELETE', `/datasets/alice/docs/assets/${up.body.identifier}`, { token: alice })).status).toBe(404);
  });

  it('follow dataset access: hidden for outsiders, changes only with write access', async () => {
    const up = await uploadSimple('alice/secret', alice, 'private.txt', 'private');
    expect((await p.request('GET', '/datasets/alice/secret/assets', { token: bob })).status).toBe(404);
    expect((await p.request('GET', `/datasets/alice/secret/assets/${up.body.identifier}`)).status).toBe(404);
    expect((await uploadSimple('alice/docs', bob, 'bob.txt', 'x')).status).toBe(403);
    expect((await uploadTus('alice/docs', bob, 'bob.txt', Buffer.from('x'))).status).toBe(403);
    const readme = await p.request('GET', '/datasets/alice/docs/assets?fileName=readme.txt');
    expect((await p.request('DELETE', `/datasets/alice/docs/assets/${readme.body.identifier}`, { token: bob })).status).toBe(403);
    expect((await p.request('DELETE', `/datasets/alice/docs/assets/${readme.body.identifier}`)).status).toBe(401);
  });

  it('go away with their dataset, bytes included', async () => {
    const ds = await p.createDataset('alice', 'short-lived', 'private', alice);
    await uploadSimple('alice/short-lived', alice, 'a.txt', 'bytes on disk');
    const dir = join(p.dataDir, 'blobs', 'data', 'datasets', ds.id);
    expect((await readdir(dir)).length).toBeGreaterThan(0);
    expect((await p.request('DELETE', '/datasets/alice/short-lived', { token: alice })).status).toBe(204);
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });
});
