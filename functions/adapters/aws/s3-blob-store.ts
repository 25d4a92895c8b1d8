import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';

import type { BlobBody, BlobInfo, BlobStore } from '../../ports/blob-store.js';

const MIB = 1024 * 1024;
/** S3 refuses multipart parts under 5 MiB (except the last one). */
const MIN_PART_SIZE = 5 * MIB;
const DEFAULT_PART_SIZE = 8 * MIB;
/** The largest object a single CopyObject copies. */
const MAX_COPY_OBJECT_BYTES = 5 * 1024 * MIB;
/** S3's hard limit on parts per multipart upload. */
const MAX_PARTS = 10_000;

export interface S3BlobStoreOptions {
  /** Bytes buffered per multipart part; also the largest stream sent as a single PutObject. */
  partSize?: number;
  /** ListObjectsV2 MaxKeys; only tests need to change it (to exercise pagination). */
  listPageSize?: number;
}

/**
 * BlobStore on one S3 bucket. The client is injected, so endpoints, credentials and checksum
 * settings come from the composition root (or `AWS_ENDPOINT_URL_S3` etc.), never from here.
 *
 * S3 makes every PutObject and CompleteMultipartUpload atomic, which gives the port's "old blob or
 * whole new blob" guarantee for free.
 */
export class S3BlobStore implements BlobStore {
  private readonly partSize: number;
  private readonly listPageSize: number | undefined;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    options: S3BlobStoreOptions = {},
  ) {
    this.partSize = options.partSize ?? DEFAULT_PART_SIZE;
    if (this.partSize < MIN_PART_SIZE) throw new Error(`partSize must be at least ${MIN_PART_SIZE} bytes`);
    this.listPageSize = options.listPageSize;
  }

  signedUrl(key: string, expiresInSeconds: number, download: { contentType?: string; contentDisposition?: string } = {}): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: download.contentType,
      ResponseContentDisposition: download.contentDisposition,
    });
    return getSignedUrl(this.client, command, { expiresIn: expiresInSeconds });
  }

  async put(key: string, body: BlobBody, options?: { contentType?: string }): Promise<BlobInfo> {
    const contentType = options?.contentType;
    if (!(body instanceof Readable)) {
      await this.putObject(key, body, contentType);
      return toInfo(key, typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength, contentType);
    }
    return this.putStream(key, body, contentType);
  }

  async get(key: string): Promise<Readable | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      // In Node the SDK's body is an http.IncomingMessage; anything else means a browser build.
      if (!(out.Body instanceof Readable)) throw new Error(`S3 GetObject for ${key} returned no Node stream`);
      return out.Body;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async head(key: string): Promise<BlobInfo | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      const info: BlobInfo = { key, size: out.ContentLength ?? 0, lastModified: out.LastModified ?? new Date(0) };
      if (out.ContentType !== undefined) info.contentType = out.ContentType;
      return info;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /** CopyObject (one request, up to 5 GB; larger blobs stream through get and put). */
  async copy(from: string, to: string): Promise<BlobInfo | null> {
    const info = await this.head(from);
    if (!info) return null;
    if (info.size > MAX_COPY_OBJECT_BYTES) {
      const body = await this.get(from);
      return body ? this.put(to, body, { contentType: info.contentType }) : null;
    }
    await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: `${this.bucket}/${encodeURIComponent(from).replace(/%2F/g, '/')}` }));
    return { ...info, key: to, lastModified: new Date() };
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for a missing key, so "delete missing is a no-op" needs no special case.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async *list(prefix: string): AsyncIterable<BlobInfo> {
    let continuationToken: string | undefined;
    // Terminates when S3 stops truncating; a truncated page without a token would loop forever.
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix === '' ? undefined : prefix,
          ContinuationToken: continuationToken,
          MaxKeys: this.listPageSize,
        }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield { key: object.Key, size: object.Size ?? 0, lastModified: object.LastModified ?? new Date(0) };
      }
      if (page.IsTruncated && !page.NextContinuationToken) {
        throw new Error('S3 ListObjectsV2 returned a truncated page without a continuation token');
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
  }

  private async putObject(key: string, body: Buffer | Uint8Array | string, contentType?: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }),
    );
  }

  /**
   * Streams of unknown length: buffer one part at a time, so memory stays at about one part. A
   * stream shorter than one part is a single PutObject; anything else becomes a multipart upload,
   * aborted on any error so no orphaned parts are billed.
   */
  private async putStream(key: string, body: Readable, contentType?: string): Promise<BlobInfo> {
    const chunks = readParts(body, this.partSize);
    try {
      return await this.uploadParts(key, chunks, contentType);
    } finally {
      // On an early failure this destroys the source stream instead of leaving it paused forever.
      await chunks.return(undefined);
    }
  }

  private async uploadParts(
    key: string,
    chunks: AsyncGenerator<Buffer, void, undefined>,
    contentType?: string,
  ): Promise<BlobInfo> {
    const first = await chunks.next();
    const firstPart = first.done ? Buffer.alloc(0) : first.value;
    // readParts only yields a short part at the end of the stream, so this is the whole blob.
    if (firstPart.byteLength < this.partSize) {
      await this.putObject(key, firstPart, contentType);
      return toInfo(key, firstPart.byteLength, contentType);
    }

    const { UploadId: uploadId } = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }),
    );
    if (!uploadId) throw new Error(`S3 CreateMultipartUpload for ${key} returned no UploadId`);
    try {
      const parts: CompletedPart[] = [];
      let size = 0;
      const uploadPart = async (part: Buffer): Promise<void> => {
        const partNumber = parts.length + 1;
        if (partNumber > MAX_PARTS) throw new Error(`Blob ${key} needs more than ${MAX_PARTS} parts`);
        const out = await this.client.send(
          new UploadPartCommand({
            Bucket: this.bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber: partNumber,
            Body: part,
          }),
        );
        parts.push({ PartNumber: partNumber, ETag: out.ETag });
        size += part.byteLength;
      };
      await uploadPart(firstPart);
      // Sequential on purpose: the stream is paused while a part uploads (backpressure).
      for await (const part of chunks) await uploadPart(part);

      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
      return toInfo(key, size, contentType);
    } catch (err) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }))
        .catch(() => undefined); // Keep the original error; a bucket lifecycle rule cleans up leftovers.
      throw err;
    }
  }
}

/** Re-chunks a byte stream into buffers of at least `partSize` bytes (the last may be smaller). */
async function* readParts(body: Readable, partSize: number): AsyncGenerator<Buffer, void, undefined> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of body) {
    const buffer = toBuffer(chunk);
    pending.push(buffer);
    pendingBytes += buffer.byteLength;
    if (pendingBytes >= partSize) {
      yield Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes);
}

function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError('Blob streams must yield bytes or strings, not objects');
}

/**
 * PutObject and CompleteMultipartUpload do not return LastModified; the local clock is close
 * enough for a write receipt, and `head` gives the authoritative value.
 */
function toInfo(key: string, size: number, contentType?: string): BlobInfo {
  const info: BlobInfo = { key, size, lastModified: new Date() };
  if (contentType !== undefined) info.contentType = contentType;
  return info;
}

/** GetObject says NoSuchKey; HeadObject has no body, so the SDK names the 404 NotFound. */
function isNotFound(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'NoSuchKey' || name === 'NotFound';
}
