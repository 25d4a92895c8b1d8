import { S3Client } from '@aws-sdk/client-s3';
import { createCipheriv, createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { S3BlobStore } from '../../functions/adapters/aws/s3-blob-store.js';
import { FsBlobStore, InvalidBlobKeyError } from '../../functions/adapters/local/fs-blob-store.js';
import type { BlobInfo, BlobStore } from '../../functions/ports/blob-store.js';

const MIB = 1024 * 1024;

/**
 * The behaviour every BlobStore adapter must share. Stores may be shared between tests (one S3
 * bucket), so each test works under its own random prefix.
 */
function describeBlobStoreContract(name: string, factory: () => BlobStore): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let ns: string;

    beforeAll(() => {
      store = factory();
    });
    // A fresh namespace per test keeps tests independent on a shared bucket.
    const fresh = (): string => (ns = `t-${randomUUID()}/`);

    it('round-trips a string as UTF-8', async () => {
      const key = `${fresh()}hello.txt`;
      const text = 'héllo wörld ✓ 𝄞';
      const info = await store.put(key, text);
      expect(info.key).toBe(key);
      expect(info.size).toBe(Buffer.byteLength(text));
      expect((await readAll(await store.get(key))).toString('utf8')).toBe(text);
    });

    it('round-trips a Buffer and a Uint8Array byte for byte', async () => {
      fresh();
      const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
      await store.put(`${ns}buffer.bin`, bytes);
      await store.put(`${ns}array.bin`, new Uint8Array(bytes));
      expect((await readAll(await store.get(`${ns}buffer.bin`))).equals(bytes)).toBe(true);
      expect((await readAll(await store.get(`${ns}array.bin`))).equals(bytes)).toBe(true);
    });

    it('round-trips a multi-chunk 3 MiB stream byte for byte', async () => {
      const key = `${fresh()}graphs/big.nq.gz`;
      const size = 3 * MIB;
      const info = await store.put(key, generatedStream(size, 64 * 1024, 1));
      expect(info.size).toBe(size);
      const got = await readAll(await store.get(key));
      expect(got.length).toBe(size);
      expect(got.equals(generatedBytes(size, 1))).toBe(true);
      expect((await store.head(key))?.size).toBe(size);
    });

    it('stores empty blobs, from a string and from a stream', async () => {
      fresh();
      await store.put(`${ns}empty-string`, '');
      await store.put(`${ns}empty-stream`, Readable.from([]));
      for (const key of [`${ns}empty-string`, `${ns}empty-stream`]) {
        expect((await store.head(key))?.size).toBe(0);
        expect((await readAll(await store.get(key))).length).toBe(0);
      }
    });

    it('heads size, lastModified and the content type given on put', async () => {
      const key = `${fresh()}data.ttl`;
      await store.put(key, '<a> <b> <c> .\n', { contentType: 'text/turtle' });
      const info = await store.head(key);
      expect(info).toMatchObject({ key, size: 14, contentType: 'text/turtle' });
      expect(info?.lastModified).toBeInstanceOf(Date);
      expect(Number.isNaN(info?.lastModified.getTime())).toBe(false);
    });

    it('answers null for a missing blob', async () => {
      fresh();
      expect(await store.get(`${ns}missing`)).toBeNull();
      expect(await store.head(`${ns}missing`)).toBeNull();
      expect(await store.get(`${ns}no/such/folder/blob`)).toBeNull();
    });

    it('deletes a blob, and deleting a missing blob is a no-op', async () => {
      const key = `${fresh()}a/b/doomed.txt`;
      await store.put(key, 'bye');
      await store.delete(key);
      expect(await store.get(key)).toBeNull();
      expect(await store.head(key)).toBeNull();
      await expect(store.delete(key)).resolves.toBeUndefined();
      await expect(store.delete(`${ns}never/existed`)).resolves.toBeUndefined();
    });

    it('overwrites content, including with a shorter body and without the old content type', async () => {
      const key = `${fresh()}over.txt`;
      await store.put(key, 'a much longer first version', { contentType: 'text/turtle' });
      await store.put(key, 'v2');
      expect((await readAll(await store.get(key))).toString()).toBe('v2');
      const info = await store.head(key);
      expect(info?.size).toBe(2);
      expect(info?.contentType).not.toBe('text/turtle');
    });

    it('keeps the previous blob when a streamed put fails midway', async () => {
      const key = `${fresh()}atomic.bin`;
      await store.put(key, 'old');
      await expect(store.put(key, failingStream(MIB, 'disk on fire'))).rejects.toThrow('disk on fire');
      expect((await readAll(await store.get(key))).toString()).toBe('old');
      expect(await keysOf(store.list(ns))).toEqual([key]);
    });

    it('lists blobs under a string prefix in key order', async () => {
      fresh();
      // Inserted out of order. Keys here avoid characters below '/' after the shared part:
      // s3rver misorders `a-b` against `a/…` (see the FsBlobStore test for that case).
      const inside = ['ab', 'a/c/d', 'a_b', 'a/b', 'aa'];
      const outside = ['b', 'z/a', 'A'];
      for (const k of [...inside, ...outside]) await store.put(`${ns}${k}`, k);

      const listed = await collect(store.list(`${ns}a`));
      expect(listed.map((i) => i.key)).toEqual(['a/b', 'a/c/d', 'a_b', 'aa', 'ab'].map((k) => `${ns}${k}`));
      for (const info of listed) {
        expect(info.size).toBe(info.key.length - ns.length);
        expect(info.lastModified).toBeInstanceOf(Date);
      }
      expect(await keysOf(store.list(`${ns}a/`))).toEqual([`${ns}a/b`, `${ns}a/c/d`]);
      expect(await keysOf(store.list(ns))).toHaveLength(inside.length + outside.length);
      expect(await keysOf(store.list(`${ns}nothing-here`))).toEqual([]);
      expect(await keysOf(store.list(`t-${randomUUID()}/`))).toEqual([]);
    });

    it('does not list deleted blobs', async () => {
      fresh();
      await store.put(`${ns}keep`, '1');
      await store.put(`${ns}gone/x`, '2');
      await store.delete(`${ns}gone/x`);
      expect(await keysOf(store.list(ns))).toEqual([`${ns}keep`]);
    });

    it('copies a blob within the store (content and content type), independent of its source; null for a missing one', async () => {
      fresh();
      expect(store.copy).toBeDefined();
      const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
      await store.put(`${ns}from.bin`, bytes, { contentType: 'application/gzip' });
      const info = await store.copy!(`${ns}from.bin`, `${ns}sub/to.bin`);
      expect(info).toMatchObject({ key: `${ns}sub/to.bin`, size: bytes.length });
      expect((await readAll(await store.get(`${ns}sub/to.bin`))).equals(bytes)).toBe(true);
      expect((await store.head(`${ns}sub/to.bin`))?.contentType).toBe('application/gzip');
      await store.delete(`${ns}from.bin`);
      expect((await readAll(await store.get(`${ns}sub/to.bin`))).equals(bytes)).toBe(true);
      expect(await store.copy!(`${ns}missing`, `${ns}never`)).toBeNull();
      expect(await store.head(`${ns}never`)).toBeNull();
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Filesystem adapter

const fsRoots: string[] = [];
afterAll(async () => {
  await Promise.all(fsRoots.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function makeFsRoot(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fs-blob-store-'));
  fsRoots.push(dir);
  return dir;
}

let fsRoot = '';
beforeAll(async () => {
  fsRoot = await makeFsRoot();
});
describeBlobStoreContract('FsBlobStore', () => new FsBlobStore(fsRoot));

describe('FsBlobStore specifics', () => {
  it.each([
    ['empty', ''],
    ['parent segment', 'a/../b'],
    ['leading parent segment', '../escape'],
    ['dot segment', 'a/./b'],
    ['empty segment', 'a//b'],
    ['trailing slash', 'a/b/'],
    ['absolute path', '/etc/passwd'],
    ['backslash', 'a\\b'],
    ['NUL', 'a\0b'],
    ['reserved temp folder', '.tmp/x'],
    ['reserved meta folder', '.meta/x'],
    ['too long', 'x'.repeat(1025)],
  ])('rejects a key with %s', async (_, key) => {
    const store = new FsBlobStore(await makeFsRoot());
    await expect(store.put(key, 'x')).rejects.toThrow(InvalidBlobKeyError);
    await expect(store.get(key)).rejects.toThrow(InvalidBlobKeyError);
    await expect(store.head(key)).rejects.toThrow(InvalidBlobKeyError);
    await expect(store.delete(key)).rejects.toThrow(InvalidBlobKeyError);
  });

  it('accepts dots inside a segment', async () => {
    const store = new FsBlobStore(await makeFsRoot());
    await store.put('a..b/.hidden/c.nq.gz', 'ok');
    expect((await store.head('a..b/.hidden/c.nq.gz'))?.size).toBe(2);
  });

  it('lists in S3 byte order where a folder meets keys with characters below "/"', async () => {
    // Real S3 sorts `a-b` (0x2D) and `a.txt` (0x2E) before `a/b` (0x2F); s3rver does not.
    const store = new FsBlobStore(await makeFsRoot());
    for (const key of ['a/b', 'a.txt', 'ab', 'a-b', 'a!', 'a/a/z']) await store.put(key, key);
    expect(await keysOf(store.list(''))).toEqual(['a!', 'a-b', 'a.txt', 'a/a/z', 'a/b', 'ab']);
    expect(await keysOf(store.list('a/'))).toEqual(['a/a/z', 'a/b']);
  });

  it('lists nothing from a root that does not exist yet', async () => {
    const store = new FsBlobStore(path.join(await makeFsRoot(), 'not', 'created'));
    expect(await keysOf(store.list(''))).toEqual([]);
  });

  it('keeps temp files and content-type sidecars out of listings and cleans up after failures', async () => {
    const root = await makeFsRoot();
    const store = new FsBlobStore(root);
    await store.put('x/y', 'data', { contentType: 'text/plain' });
    await expect(store.put('x/z', failingStream(MIB, 'boom'))).rejects.toThrow('boom');
    expect(await keysOf(store.list(''))).toEqual(['x/y']);
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
  });

  it('prunes folders that a delete left empty', async () => {
    const root = await makeFsRoot();
    const store = new FsBlobStore(root);
    await store.put('deep/er/blob', '1', { contentType: 'text/plain' });
    await store.delete('deep/er/blob');
    // A blob named like the old folder can now be written.
    await store.put('deep', '2');
    expect((await readAll(await store.get('deep'))).toString()).toBe('2');
  });
});

// ---------------------------------------------------------------------------------------------
// S3 adapter against a real s3rver

const BUCKET = 'test-bucket';
let s3rver: S3rver | undefined;
let s3: S3Client | undefined;
let s3Dir = '';

beforeAll(async () => {
  s3Dir = await mkdtemp(path.join(os.tmpdir(), 's3rver-'));
  s3rver = new S3rver({
    address: '127.0.0.1', // not localhost: the SDK would try `<bucket>.localhost`
    port: 0,
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const { port } = await s3rver.run();
  s3 = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    // s3rver stores aws-chunked framing verbatim when the SDK adds default checksums to streams.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
});

afterAll(async () => {
  s3?.destroy();
  await s3rver?.close();
  if (s3Dir) await rm(s3Dir, { recursive: true, force: true });
});

function s3Client(): S3Client {
  if (!s3) throw new Error('s3rver is not running');
  return s3;
}

describeBlobStoreContract('S3BlobStore (s3rver)', () => new S3BlobStore(s3Client(), BUCKET));

/**
 * s3rver builds continuation tokens with DES, which OpenSSL 3 only offers with
 * `NODE_OPTIONS=--openssl-legacy-provider`; without it, a truncated listing is a 500.
 */
const legacyCiphers = (() => {
  try {
    createCipheriv('des', Buffer.alloc(8), Buffer.alloc(8));
    return true;
  } catch {
    return false;
  }
})();

describe('S3BlobStore specifics', () => {
  it('uploads a stream longer than one part as a multipart upload', async () => {
    const store = new S3BlobStore(s3Client(), BUCKET, { partSize: 5 * MIB });
    const key = `mp-${randomUUID()}/large.bin`;
    const size = 11 * MIB + 123; // three parts: 5 MiB, 5 MiB, the rest
    const info = await store.put(key, generatedStream(size, 256 * 1024, 7), { contentType: 'application/n-quads' });
    expect(info.size).toBe(size);
    const got = await readAll(await store.get(key));
    expect(got.length).toBe(size);
    expect(sha256(got)).toBe(sha256(generatedBytes(size, 7)));
    expect(await store.head(key)).toMatchObject({ size, contentType: 'application/n-quads' });
  });

  it('aborts a multipart upload whose stream fails and leaves no blob', async () => {
    const store = new S3BlobStore(s3Client(), BUCKET, { partSize: 5 * MIB });
    const key = `mp-${randomUUID()}/broken.bin`;
    await expect(store.put(key, failingStream(6 * MIB, 'network gone'))).rejects.toThrow('network gone');
    expect(await store.head(key)).toBeNull();
  });

  it('rejects a part size S3 would refuse', () => {
    expect(() => new S3BlobStore(s3Client(), BUCKET, { partSize: MIB })).toThrow(/partSize/);
  });

  it.skipIf(!legacyCiphers)('follows continuation tokens across list pages', async () => {
    const store = new S3BlobStore(s3Client(), BUCKET, { listPageSize: 2 });
    const ns = `page-${randomUUID()}/`;
    const keys = ['e', 'a', 'c', 'b', 'd'].map((k) => `${ns}${k}`);
    for (const key of keys) await store.put(key, key);
    expect(await keysOf(store.list(ns))).toEqual([...keys].sort());
  });
});

// ---------------------------------------------------------------------------------------------
// Helpers

async function readAll(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('expected a blob, got null');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

async function collect(items: AsyncIterable<BlobInfo>, limit = 10_000): Promise<BlobInfo[]> {
  const out: BlobInfo[] = [];
  for await (const item of items) {
    out.push(item);
    if (out.length > limit) throw new Error(`listing exceeded ${limit} items`);
  }
  return out;
}

async function keysOf(items: AsyncIterable<BlobInfo>): Promise<string[]> {
  return (await collect(items)).map((i) => i.key);
}

/** Deterministic pseudo-random bytes (xorshift32), so failures are reproducible. */
function generatedBytes(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  let x = seed || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** The same bytes as `generatedBytes`, emitted lazily in chunks so the store sees a real stream. */
function generatedStream(size: number, chunkSize: number, seed: number): Readable {
  const all = generatedBytes(size, seed);
  let offset = 0;
  return new Readable({
    read() {
      if (offset >= size) {
        this.push(null);
        return;
      }
      const end = Math.min(offset + chunkSize, size);
      this.push(all.subarray(offset, end));
      offset = end;
    },
  });
}

/** Emits `bytesBeforeError` bytes, then fails like a dropped connection. */
function failingStream(bytesBeforeError: number, message: string): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= bytesBeforeError) {
        this.destroy(new Error(message));
        return;
      }
      const n = Math.min(64 * 1024, bytesBeforeError - sent);
      sent += n;
      this.push(Buffer.alloc(n, 0x61));
    },
  });
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
