import { once } from 'node:events';
import { createGzip, type Gzip } from 'node:zlib';
import type { BlobInfo, BlobStore } from '../ports/blob-store.js';
import { LineSet } from './line-set.js';

/** Chunks handed to gzip: big enough that per-write overhead vanishes. */
const CHUNK_CHARS = 256 * 1024;

/**
 * Writes one graph blob: distinct canonical N-Triples lines, gzip-compressed, streamed to the
 * blob store with backpressure. Compression favours speed and small per-graph memory, since an
 * import may write many graphs at once.
 */
export class GraphBlobWriter {
  private readonly gzip: Gzip;
  private readonly stored: Promise<BlobInfo>;
  private readonly lines = new LineSet();
  private pending: string[] = [];
  private pendingChars = 0;

  constructor(
    blobs: BlobStore,
    readonly blobKey: string,
  ) {
    this.gzip = createGzip({ level: 1, memLevel: 6, windowBits: 14 });
    this.stored = blobs.put(blobKey, this.gzip, { contentType: 'application/n-triples' });
    // Surface a failed put at end(), not as an unhandled rejection now.
    this.stored.catch(() => {});
  }

  get statements(): number {
    return this.lines.size;
  }

  /** Adds a line (without its newline) unless the graph already holds it. */
  async add(line: string): Promise<void> {
    if (!this.lines.add(line)) return;
    this.pending.push(line);
    this.pendingChars += line.length + 1;
    if (this.pendingChars >= CHUNK_CHARS) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = `${this.pending.join('\n')}\n`;
    this.pending = [];
    this.pendingChars = 0;
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
