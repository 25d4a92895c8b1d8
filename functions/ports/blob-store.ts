import type { Readable } from 'node:stream';

export interface BlobInfo {
  key: string;
  size: number;
  lastModified: Date;
  contentType?: string;
}

export type BlobBody = Buffer | Uint8Array | string | Readable;

/**
 * One bucket of immutable-ish blobs (graphs, assets, uploads, artifacts). Keys are `/`-separated
 * paths of safe characters. Writes are atomic: a reader sees the old blob or the whole new one.
 */
export interface BlobStore {
  put(key: string, body: BlobBody, options?: { contentType?: string }): Promise<BlobInfo>;
  /** The blob as a stream, or null when it does not exist. */
  get(key: string): Promise<Readable | null>;
  head(key: string): Promise<BlobInfo | null>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Copies a blob to another key of the same store within the store itself (S3 CopyObject, a file
   * copy), so the bytes need not pass through the caller. Resolves to null when `from` is missing.
   */
  copy?(from: string, to: string): Promise<BlobInfo | null>;
  /** All blobs under a prefix, in key order. */
  list(prefix: string): AsyncIterable<BlobInfo>;
  /**
   * A short-lived URL anyone holding it may GET the blob from (stores reachable over HTTP only:
   * S3 has it, the embedded filesystem store does not, so there stored files stream through the
   * server). `download` sets the Content-Type and Content-Disposition the URL answers with.
   */
  signedUrl?(key: string, expiresInSeconds: number, download?: { contentType?: string; contentDisposition?: string }): Promise<string>;
}
