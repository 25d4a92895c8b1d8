/**
 * The ResumableUploads (tus 1.0.0) contract, run against both stores: the embedded runtime's
 * file store (TusUploads) and the upload host's S3 store (S3TusUploads on s3rver, the bucket the
 * AWS composition points it at). Requests go through the port as the HTTP layer hands them over
 * (web Requests); a "restart" is a new adapter instance over the same storage, as another task of
 * the upload host would be.
 */
import { GetObjectCommand, HeadObjectCommand, ListPartsCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3TusUploads } from '../../functions/adapters/aws/s3-tus-uploads.js';
import { TusUploads } from '../../functions/adapters/local/tus-uploads.js';
import { ConflictError } from '../../functions/domain/shared/errors.js';
import type { FinishedUpload, ResumableUploads } from '../../functions/ports/resumable-uploads.js';
import { useAwsStandIns } from '../support/aws-stand-ins.js';

const MIB = 1024 * 1024;
const BASE = 'http://127.0.0.1:8080';
const SCOPE = '/datasets/alice/ds/jobs/0123/add';
const OTHER_SCOPE = '/datasets/bob/ds/jobs/0456/add';
const MAX_SIZE = 64 * MIB;

interface Store {
  /** A new adapter over the same storage (a restart, or another task). */
  open(): ResumableUploads;
  /** The bytes at a key of the uploads store, or null. */
  read(key: string): Promise<Buffer | null>;
}

/** Deterministic bytes, different per seed. */
const bytes = (size: number, seed: number): Buffer => {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed * 7 + (i >> 10)) & 0xff;
  return out;
};
const b64 = (s: string) => Buffer.from(s).toString('base64');
const tus = { 'Tus-Resumable': '1.0.0' };

interface Finish {
  calls: FinishedUpload[];
  onFinish(upload: FinishedUpload): Promise<{ body?: string; headers?: Record<string, string> } | void>;
}
const recorder = (answer?: (u: FinishedUpload) => { body?: string; headers?: Record<string, string> } | void): Finish => {
  const calls: FinishedUpload[] = [];
  return { calls, onFinish: async (u) => (calls.push(u), answer?.(u)) };
};

function create(uploads: ResumableUploads, size: number, finish: Finish, metadata = `filename ${b64('C:\\data\\people.nt')},versionOf ${b64('v1')}`, scope = SCOPE) {
  return uploads.handle(new Request(`${BASE}${scope}`, { method: 'POST', headers: { ...tus, 'Upload-Length': String(size), 'Upload-Metadata': metadata } }), { scope, baseUrl: BASE, onFinish: finish.onFinish });
}
function patch(uploads: ResumableUploads, location: string, offset: number, body: Buffer, finish: Finish, scope = SCOPE) {
  return uploads.handle(new Request(location, { method: 'PATCH', body: new Uint8Array(body), headers: { ...tus, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' } }), { scope, baseUrl: BASE, onFinish: finish.onFinish });
}
function head(uploads: ResumableUploads, location: string, scope = SCOPE) {
  return uploads.handle(new Request(location, { method: 'HEAD', headers: tus }), { scope, baseUrl: BASE, onFinish: async () => {} });
}
async function created(uploads: ResumableUploads, size: number, finish: Finish): Promise<{ location: string; id: string }> {
  const res = await create(uploads, size, finish);
  expect(res.status).toBe(201);
  const location = res.headers.get('location')!;
  const id = location.split('/').pop()!;
  return { location, id };
}

function describeTusContract(name: string, setUp: () => Store) {
  describe(`ResumableUploads contract: ${name}`, () => {
    let store: Store;
    beforeAll(() => {
      store = setUp();
    });

    it('creates an upload under its scope with a 32-hex id, and refuses one without a file name', async () => {
      const uploads = store.open();
      const finish = recorder();
      const res = await create(uploads, 10, finish);
      expect(res.status).toBe(201);
      expect(res.headers.get('location')).toMatch(new RegExp(`^${BASE}${SCOPE}/[0-9a-f]{32}$`));
      const bad = await create(uploads, 10, finish, `versionOf ${b64('v1')}`);
      expect(bad.status).toBe(400);
      expect(await bad.text()).toContain('filename');
    });

    it('takes the bytes in several PATCHes, HEAD telling the offset, and hands the finished upload to onFinish', async () => {
      const uploads = store.open();
      const finish = recorder(() => ({ body: '{"ok":true}', headers: { 'content-type': 'application/json' } }));
      const data = bytes(300 * 1024, 1);
      const { location, id } = await created(uploads, data.length, finish);
      expect((await patch(uploads, location, 0, data.subarray(0, 100 * 1024), finish)).status).toBe(204);
      const h = await head(uploads, location);
      expect(h.status).toBe(200);
      expect(h.headers.get('upload-offset')).toBe(String(100 * 1024));
      expect(h.headers.get('upload-length')).toBe(String(data.length));
      expect((await patch(uploads, location, 100 * 1024, data.subarray(100 * 1024, 200 * 1024), finish)).status).toBe(204);
      expect(finish.calls).toEqual([]);
      const last = await patch(uploads, location, 200 * 1024, data.subarray(200 * 1024), finish);
      // onFinish's body turns the final 204 into a 200 with that body (the asset JSON for assets).
      expect(last.status).toBe(200);
      expect(await last.text()).toBe('{"ok":true}');
      expect(finish.calls).toEqual([{ uploadId: id, fileName: 'people.nt', size: data.length, blobKey: `tus/${id}`, metadata: expect.objectContaining({ filename: 'C:\\data\\people.nt', versionOf: 'v1', scope: SCOPE }) }]);
      const stored = await store.read(`tus/${id}`);
      expect(stored?.length).toBe(data.length);
      expect(stored?.equals(data)).toBe(true);
    });

    it('resumes after a restart: a new instance tells the offset and takes the rest', async () => {
      const finish = recorder();
      const data = bytes(200 * 1024, 2);
      const first = store.open();
      const { location, id } = await created(first, data.length, finish);
      expect((await patch(first, location, 0, data.subarray(0, 70 * 1024), finish)).status).toBe(204);
      const second = store.open();
      expect((await head(second, location)).headers.get('upload-offset')).toBe(String(70 * 1024));
      // A PATCH at the wrong offset is refused (409), the right one continues.
      expect((await patch(second, location, 10, data.subarray(10, 20), finish)).status).toBe(409);
      expect((await patch(second, location, 70 * 1024, data.subarray(70 * 1024), finish)).status).toBe(204);
      expect(finish.calls.map((c) => [c.blobKey, c.size])).toEqual([[`tus/${id}`, data.length]]);
      expect((await store.read(`tus/${id}`))?.equals(data)).toBe(true);
      // A finished upload is no longer unfinished for any instance.
      expect(await store.open().unfinished!('/jobs/0123/add')).not.toContainEqual(expect.objectContaining({ offset: 70 * 1024, size: data.length }));
    });

    it('keeps uploads to their scope: HEAD, PATCH and DELETE from another scope are 404, and so are unknown ids', async () => {
      const uploads = store.open();
      const finish = recorder();
      const { location, id } = await created(uploads, 20, finish);
      const elsewhere = `${BASE}${OTHER_SCOPE}/${id}`;
      expect((await head(uploads, elsewhere, OTHER_SCOPE)).status).toBe(404);
      expect((await patch(uploads, elsewhere, 0, bytes(20, 3), finish, OTHER_SCOPE)).status).toBe(404);
      const del = await uploads.handle(new Request(elsewhere, { method: 'DELETE', headers: tus }), { scope: OTHER_SCOPE, baseUrl: BASE, onFinish: finish.onFinish });
      expect(del.status).toBe(404);
      expect((await head(uploads, `${BASE}${SCOPE}/${'0'.repeat(32)}`)).status).toBe(404);
      expect((await head(uploads, `${BASE}${SCOPE}/not-an-id`)).status).toBe(404);
      expect(finish.calls).toEqual([]);
      // Still whole in its own scope.
      expect((await head(uploads, location)).headers.get('upload-offset')).toBe('0');
    });

    it('lists unfinished uploads of a scope with their offset and size (any instance)', async () => {
      const finish = recorder();
      const uploads = store.open();
      const scope = '/datasets/carol/ds/jobs/0789/add';
      const res = await uploads.handle(new Request(`${BASE}${scope}`, { method: 'POST', headers: { ...tus, 'Upload-Length': '1000', 'Upload-Metadata': `filename ${b64('/tmp/half.ttl')}` } }), { scope, baseUrl: BASE, onFinish: finish.onFinish });
      const location = res.headers.get('location')!;
      expect((await patch(uploads, location, 0, bytes(400, 4), finish, scope)).status).toBe(204);
      expect(await store.open().unfinished!('/jobs/0789/add')).toEqual([{ fileName: 'half.ttl', offset: 400, size: 1000 }]);
      expect(await store.open().unfinished!('/jobs/none/add')).toEqual([]);
    });

    it('answers a domain error from onFinish with its status and message', async () => {
      const uploads = store.open();
      const finish = recorder(() => {
        throw new ConflictError('This job is no longer accepting files.');
      });
      const { location } = await created(uploads, 10, finish);
      const res = await patch(uploads, location, 0, bytes(10, 5), finish);
      expect(res.status).toBe(409);
      expect(await res.text()).toContain('no longer accepting files');
    });

    it('terminates an upload of its scope (DELETE), after which it is gone for every instance, also one that saw it before', async () => {
      const uploads = store.open();
      const other = store.open();
      const finish = recorder();
      const { location } = await created(uploads, 10, finish);
      expect((await head(other, location)).status).toBe(200);
      const del = await uploads.handle(new Request(location, { method: 'DELETE', headers: tus }), { scope: SCOPE, baseUrl: BASE, onFinish: finish.onFinish });
      expect(del.status).toBe(204);
      // No per-process state: the other instance (another task) does not answer from what it saw.
      expect((await head(other, location)).status).toBe(404);
      expect((await head(store.open(), location)).status).toBe(404);
    });
  });
}

// ---- the embedded runtime's file store ------------------------------------------------------

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ldp-tus-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
describeTusContract('file store (embedded)', () => ({
  open: () => new TusUploads(join(dir, 'tus'), { maxSize: MAX_SIZE }),
  read: (key) => readFile(join(dir, key)).catch(() => null),
}));

// ---- the upload host's S3 store on s3rver -----------------------------------------------------

useAwsStandIns({ table: 'tus-contract', s3DirPrefix: 'ldp-tus-s3-' });
let s3: S3Client;
beforeAll(() => {
  s3 = new S3Client({});
});
afterAll(() => s3?.destroy());
const readObject = async (key: string): Promise<Buffer | null> => {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: 'uploads', Key: key }));
    return Buffer.from(await out.Body!.transformToByteArray());
  } catch {
    return null;
  }
};
describeTusContract('S3 store (upload host, s3rver)', () => ({
  open: () => new S3TusUploads({ bucket: 'uploads', maxSize: MAX_SIZE }),
  read: readObject,
}));

describe('S3 store: S3 multipart', () => {
  it('sends each PATCH of 5 MiB or more as a multipart part of the upload, across instances, and completes it into tus/<id>', async () => {
    const finish = recorder();
    const data = bytes(11 * MIB, 6);
    const first = new S3TusUploads({ bucket: 'uploads', maxSize: MAX_SIZE });
    const { location, id } = await created(first, data.length, finish);
    // The upload's state is in S3, next to where its bytes go.
    const info = await s3.send(new HeadObjectCommand({ Bucket: 'uploads', Key: `tus/${id}.json` }));
    const multipartId = info.Metadata?.['upload-id'];
    expect(multipartId).toBeTruthy();
    expect((await patch(first, location, 0, data.subarray(0, 6 * MIB), finish)).status).toBe(204);
    const parts = await s3.send(new ListPartsCommand({ Bucket: 'uploads', Key: `tus/${id}`, UploadId: multipartId }));
    expect(parts.Parts?.map((p) => [p.PartNumber, p.Size])).toEqual([[1, 6 * MIB]]);
    const second = new S3TusUploads({ bucket: 'uploads', maxSize: MAX_SIZE });
    expect((await head(second, location)).headers.get('upload-offset')).toBe(String(6 * MIB));
    expect((await patch(second, location, 6 * MIB, data.subarray(6 * MIB), finish)).status).toBe(204);
    expect(finish.calls.map((c) => [c.blobKey, c.size])).toEqual([[`tus/${id}`, data.length]]);
    const stored = await readObject(`tus/${id}`);
    expect(createHash('sha256').update(stored ?? '').digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    // Completed: the multipart upload is gone, the finished upload reports its whole length.
    await expect(s3.send(new ListPartsCommand({ Bucket: 'uploads', Key: `tus/${id}`, UploadId: multipartId }))).rejects.toMatchObject({ name: 'NoSuchUpload' });
    expect((await head(second, location)).headers.get('upload-offset')).toBe(String(data.length));
  });
});
