import { once } from 'node:events';
import { createGzip, type Gzip, type ZlibOptions } from 'node:zlib';
import type { BlobInfo, BlobStore } from '../../ports/blob-store.js';
import { LineSet } from '../../rdf/parse/line-set.js';

/** Chunks handed to gzip: big enough that per-write overhead vanishes. */
const CHUNK_CHARS = 256 * 1024;
/** Bytes a writer queues for gzip before its caller waits. */
const GZIP_QUEUE_BYTES = 768 * 1024;

/**
 * Writes one graph blob: distinct canonical N-Triples lines, gzip-compressed, streamed to the
 * blob store with backpressure. Compression favours speed and small per-graph memory, since an
 * import may write many graphs at once.
 */
export class GraphBlobWriter {
  private readonly gzip: Gzip;
  private readonly stored: Promise<BlobInfo>;
  private readonly lines = new LineSet();
  /** Lines not yet handed to gzip (V8 concatenates strings cheaply, as ropes). */
  private pending = '';

  constructor(
    blobs: BlobStore,
    readonly blobKey: string,
  ) {
    // A few chunks may queue before a writer waits, so the parse worker and gzip (in libuv's thread pool) overlap.
    // (zlib streams take stream options; ZlibOptions does not list them.)
    const options: ZlibOptions & { highWaterMark: number } = { level: 1, memLevel: 6, windowBits: 14, highWaterMark: GZIP_QUEUE_BYTES };
    this.gzip = createGzip(options);
    this.stored = blobs.put(blobKey, this.gzip, { contentType: 'application/n-triples' });
    // Surface a failed put at end(), not as an unhandled rejection now.
    this.stored.catch(() => {});
  }

  /** Lines written through {@link writeDistinct}, whose distinctness the caller saw to. */
  private distinct = 0;

  get statements(): number {
    return this.lines.size + this.distinct;
  }

  /**
   * Writes complete lines (UTF-8) already known to be distinct within the graph (an import's parse
   * worker drops duplicates). Returns a promise only when the caller must wait for gzip to drain.
   */
  writeDistinct(bytes: Uint8Array, lines: number): Promise<void> | undefined {
    this.distinct += lines;
    return this.gzip.write(bytes) ? undefined : once(this.gzip, 'drain').then(() => undefined);
  }

  /**
   * Adds a line (without its newline) unless the graph already holds it. Returns a promise only
   * when the caller must wait for gzip to drain, so the hot loop avoids an await per line.
   */
  add(line: string): Promise<void> | undefined {
    if (!this.lines.add(line)) return undefined;
    this.pending += `${line}\n`;
    return this.pending.length >= CHUNK_CHARS ? this.flush() : undefined;
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = this.pending;
    this.pending = '';
    if (!this.gzip.write(chunk)) await once(this.gzip, 'drain');
  }

  async end(): Promise<BlobInfo> {
    await this.flush();
    this.gzip.end();
    return this.stored;
  }

  /** Stops writing after a failure; the caller deletes the blob. */
  abort(): void {
    this.gzip.destroy();
  }
}
