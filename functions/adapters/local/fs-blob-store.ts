import { randomUUID } from 'node:crypto';
import { constants as fsConstants, createWriteStream, type Dirent, type Stats } from 'node:fs';
import { copyFile, mkdir, open, readdir, readFile, rename, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type { BlobBody, BlobInfo, BlobStore } from '../../ports/blob-store.js';

/** Temp files live inside the root so `rename` never crosses a filesystem boundary. */
const TMP_DIR = '.tmp';
/** Content types live in a parallel tree, so the blob tree holds nothing but blobs. */
const META_DIR = '.meta';
const RESERVED_FIRST_SEGMENTS = new Set([TMP_DIR, META_DIR]);
/** S3's key limit, so a key that works locally also works on AWS. */
const MAX_KEY_BYTES = 1024;
/** A concurrent delete may prune a directory between our mkdir and rename; retry a few times. */
const MAX_RENAME_ATTEMPTS = 8;

export class InvalidBlobKeyError extends Error {
  constructor(key: string, reason: string) {
    super(`Invalid blob key ${JSON.stringify(key)}: ${reason}`);
    this.name = 'InvalidBlobKeyError';
  }
}

interface BlobMeta {
  contentType?: string;
}

/**
 * BlobStore on the local filesystem (the embedded runtime's stand-in for S3).
 *
 * Key `a/b/c` is the file `<root>/a/b/c`. Writes go to `<root>/.tmp/<uuid>` and are renamed into
 * place, so readers see the old blob or the whole new one. A content type, when given, is kept in
 * `<root>/.meta/<key>.json`; it is written just before the blob is renamed, so a reader racing a
 * put may briefly pair the old bytes with the new content type.
 *
 * Unlike S3, a key cannot be both a blob and a "folder" of other blobs (`a` and `a/b`): the
 * second put fails with an error.
 */
export class FsBlobStore implements BlobStore {
  private readonly root: string;

  constructor(rootDir: string) {
    this.root = path.resolve(rootDir);
  }

  async put(key: string, body: BlobBody, options?: { contentType?: string }): Promise<BlobInfo> {
    const file = this.fileFor(key);
    const tmpDir = path.join(this.root, TMP_DIR);
    await mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, randomUUID());
    try {
      if (body instanceof Readable) {
        // Stream to disk: uploads and exports can be far larger than memory.
        await pipeline(body, createWriteStream(tmp, { flags: 'wx' }));
      } else {
        await writeFile(tmp, body, { flag: 'wx' });
      }
      await this.writeMeta(key, { contentType: options?.contentType });
      await renameIntoPlace(tmp, file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    const stats = await stat(file);
    return toInfo(key, stats, options?.contentType);
  }

  async get(key: string): Promise<Readable | null> {
    const file = this.fileFor(key);
    // Open first so a missing key is a null rather than a stream that errors later.
    const handle = await open(file, 'r').catch((err: unknown) => {
      if (isMissing(err)) return null;
      throw err;
    });
    if (!handle) return null;
    try {
      if (!(await handle.stat()).isFile()) {
        await handle.close();
        return null;
      }
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
    // The stream owns the handle from here and closes it on end, error or destroy.
    return handle.createReadStream();
  }

  /** A file copy into the temporary folder, then renamed into place (atomic, like put). */
  async copy(from: string, to: string): Promise<BlobInfo | null> {
    const source = this.fileFor(from);
    const file = this.fileFor(to);
    const tmpDir = path.join(this.root, TMP_DIR);
    await mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, randomUUID());
    try {
      await copyFile(source, tmp, fsConstants.COPYFILE_EXCL);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    try {
      const meta = await this.readMeta(from);
      await this.writeMeta(to, meta);
      await renameIntoPlace(tmp, file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    return this.head(to);
  }

  async head(key: string): Promise<BlobInfo | null> {
    const file = this.fileFor(key);
    const stats = await statFile(file);
    if (!stats) return null;
    const meta = await this.readMeta(key);
    return toInfo(key, stats, meta.contentType);
  }

  async delete(key: string): Promise<void> {
    const file = this.fileFor(key);
    if (!(await statFile(file))) return;
    await unlink(file).catch(ignoreMissing);
    await unlink(this.metaFileFor(key)).catch(ignoreMissing);
    // Prune empty folders so a later put of `a` is not blocked by a leftover directory `a/`.
    await pruneEmptyDirs(path.dirname(file), this.root);
    await pruneEmptyDirs(path.dirname(this.metaFileFor(key)), path.join(this.root, META_DIR));
  }

  async *list(prefix: string): AsyncIterable<BlobInfo> {
    yield* this.walk(this.root, '', prefix);
  }

  /**
   * Depth-first walk in S3 key order (UTF-8 byte order of the full key). A directory `d` sorts as
   * `d/`, so `a-b` (0x2D) comes before everything under `a/` (0x2F), as it does on S3. Directories
   * that cannot hold a key with the prefix are skipped without being read.
   */
  private async *walk(dir: string, keyPrefix: string, prefix: string): AsyncGenerator<BlobInfo> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      // The root does not exist yet, or a delete pruned this folder while we walked.
      if (isMissing(err)) return;
      throw err;
    }
    const candidates: { key: string; entry: Dirent; sortKey: Buffer }[] = [];
    for (const entry of entries) {
      if (keyPrefix === '' && RESERVED_FIRST_SEGMENTS.has(entry.name)) continue;
      if (entry.isDirectory()) {
        const key = `${keyPrefix}${entry.name}/`;
        if (!key.startsWith(prefix) && !prefix.startsWith(key)) continue;
        candidates.push({ key, entry, sortKey: Buffer.from(key) });
      } else if (entry.isFile()) {
        const key = `${keyPrefix}${entry.name}`;
        if (!key.startsWith(prefix)) continue;
        candidates.push({ key, entry, sortKey: Buffer.from(key) });
      }
    }
    candidates.sort((a, b) => Buffer.compare(a.sortKey, b.sortKey));

    for (const { key, entry } of candidates) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        yield* this.walk(full, key, prefix);
      } else {
        const stats = await statFile(full);
        if (stats) yield toInfo(key, stats); // Skip blobs deleted since readdir.
      }
    }
  }

  private fileFor(key: string): string {
    validateKey(key);
    const file = path.resolve(this.root, ...key.split('/'));
    // Defence in depth: validation should already make escaping the root impossible.
    const relative = path.relative(this.root, file);
    if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
      throw new InvalidBlobKeyError(key, 'escapes the store root');
    }
    return file;
  }

  private metaFileFor(key: string): string {
    return `${path.join(this.root, META_DIR, ...key.split('/'))}.json`;
  }

  private async writeMeta(key: string, meta: BlobMeta): Promise<void> {
    const file = this.metaFileFor(key);
    if (meta.contentType === undefined) {
      // Overwriting without a content type must not inherit the previous blob's one.
      await unlink(file).catch(ignoreMissing);
      return;
    }
    const tmp = path.join(this.root, TMP_DIR, `${randomUUID()}.json`);
    try {
      await writeFile(tmp, JSON.stringify(meta), { flag: 'wx' });
      await renameIntoPlace(tmp, file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  private async readMeta(key: string): Promise<BlobMeta> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.metaFileFor(key), 'utf8'));
      const contentType = (parsed as BlobMeta | null)?.contentType;
      return typeof contentType === 'string' ? { contentType } : {};
    } catch (err) {
      if (isMissing(err)) return {};
      throw err;
    }
  }
}

/** Keys are `/`-separated relative paths; anything that could escape or alias a path is refused. */
function validateKey(key: string): void {
  if (typeof key !== 'string' || key === '') throw new InvalidBlobKeyError(String(key), 'empty');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new InvalidBlobKeyError(key, `longer than ${MAX_KEY_BYTES} bytes`);
  if (key.includes('\\')) throw new InvalidBlobKeyError(key, 'contains a backslash');
  if (key.includes('\0')) throw new InvalidBlobKeyError(key, 'contains a NUL character');
  if (key.startsWith('/') || path.isAbsolute(key)) throw new InvalidBlobKeyError(key, 'is an absolute path');
  const segments = key.split('/');
  for (const segment of segments) {
    if (segment === '') throw new InvalidBlobKeyError(key, 'has an empty path segment');
    if (segment === '.' || segment === '..') throw new InvalidBlobKeyError(key, `has a "${segment}" path segment`);
  }
  if (RESERVED_FIRST_SEGMENTS.has(segments[0]!)) {
    throw new InvalidBlobKeyError(key, `"${segments[0]}" is reserved by the store`);
  }
}

async function renameIntoPlace(from: string, to: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      // Inside the retry: a concurrent delete may prune the folder between mkdir's steps too.
      await mkdir(path.dirname(to), { recursive: true });
      await rename(from, to);
      return;
    } catch (err) {
      if (errorCode(err) !== 'ENOENT' || attempt >= MAX_RENAME_ATTEMPTS) throw err;
    }
  }
}

async function pruneEmptyDirs(dir: string, stopAt: string): Promise<void> {
  // Bounded by the depth of the key.
  while (dir.startsWith(stopAt + path.sep)) {
    try {
      await rmdir(dir);
    } catch {
      return; // Not empty (ENOTEMPTY/EEXIST), already gone, or in use: stop pruning.
    }
    dir = path.dirname(dir);
  }
}

async function statFile(file: string): Promise<Stats | null> {
  try {
    const stats = await stat(file);
    return stats.isFile() ? stats : null;
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

function toInfo(key: string, stats: Stats, contentType?: string): BlobInfo {
  const info: BlobInfo = { key, size: stats.size, lastModified: stats.mtime };
  if (contentType !== undefined) info.contentType = contentType;
  return info;
}

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/** ENOTDIR: a parent "folder" of the key is a blob, so the key cannot exist. */
function isMissing(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function ignoreMissing(err: unknown): void {
  if (!isMissing(err)) throw err;
}
