import busboy from 'busboy';
import { Readable, Transform } from 'node:stream';
import { TooLargeError, ValidationError } from '../domain/shared/errors.js';
import type { BlobStore } from '../ports/blob-store.js';
import { MAX_JSON_BODY_BYTES } from './request.js';
import type { HttpRequest, HttpResponse } from './types.js';

export const isMultipart = (req: HttpRequest) => /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');

/** Reads a streamed body into `req.body` (bounded), so JSON helpers work on streaming routes. */
export async function bufferBody(req: HttpRequest, limit = MAX_JSON_BODY_BYTES): Promise<HttpRequest> {
  if (!req.stream) return req;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.stream) {
    size += chunk.length;
    if (size > limit) throw new TooLargeError(`The request body is larger than ${limit} bytes.`);
    chunks.push(Buffer.from(chunk));
  }
  return { ...req, body: Buffer.concat(chunks), stream: undefined };
}

export interface ReceivedFile {
  fileName: string;
  size: number;
  blobKey: string;
  contentType?: string;
}

/**
 * Receives a multipart/form-data body of at most `limit` bytes: files go straight to the blob
 * store under `keyPrefix`, fields are returned. On any failure the stored files are deleted.
 */
export async function receiveMultipart(
  req: HttpRequest,
  blobs: BlobStore,
  keyPrefix: string,
  newId: () => string,
  limit: number,
  tooLargeMessage: string,
): Promise<{ fields: Record<string, string>; files: ReceivedFile[] }> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared >= limit) throw new TooLargeError(tooLargeMessage);
  if (!req.stream) throw new ValidationError('The multipart body is missing.');
  const fields: Record<string, string> = {};
  const files: ReceivedFile[] = [];
  const pending: Promise<unknown>[] = [];
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers as Record<string, string>, limits: { fileSize: limit, files: 100, fields: 50, fieldSize: 64 * 1024 } });
  } catch (e) {
    throw new ValidationError(`The multipart body cannot be read: ${(e as Error).message}`);
  }
  let total = 0;
  let tooLarge = false;
  let storeFailure: { error: unknown } | undefined;
  const done = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (_name, stream, info) => {
      const blobKey = `${keyPrefix}${newId()}`;
      const file: ReceivedFile = { fileName: info.filename || 'upload', size: 0, blobKey, contentType: info.mimeType };
      files.push(file);
      // Refuse as soon as the limit is reached instead of reading the rest of a large body.
      const refuse = () => {
        tooLarge = true;
        reject(new TooLargeError(tooLargeMessage));
      };
      // Count through a transform: a 'data' listener would start the flow before the store reads.
      const counted = new Transform({
        transform(chunk: Buffer, _enc, next) {
          file.size += chunk.length;
          total += chunk.length;
          if (total >= limit) refuse();
          next(null, chunk);
        },
      });
      stream.on('limit', refuse);
      // A store that throws at once must fail this request, not escape the event listener.
      // (The failure goes to `done`; this promise then settles quietly, never unhandled.)
      pending.push(
        Promise.resolve()
          .then(() => blobs.put(blobKey, stream.pipe(counted)))
          .catch((e: unknown) => {
            // Drain the rest of this file so busboy reaches the next part (and 'close').
            stream.unpipe(counted);
            stream.resume();
            storeFailure ??= { error: e };
            reject(e);
          }),
      );
    });
    parser.on('error', (e: Error) => reject(new ValidationError(`The multipart body cannot be read: ${e.message}`)));
    parser.on('close', () => resolve());
  });
  try {
    Readable.from(req.stream).pipe(parser);
    await done;
    await Promise.all(pending);
    if (storeFailure) throw storeFailure.error;
    if (tooLarge) throw new TooLargeError(tooLargeMessage);
    return { fields, files };
  } catch (e) {
    await Promise.allSettled(pending);
    for (const f of files) await blobs.delete(f.blobKey).catch(() => {});
    throw e;
  }
}

/** A web Request for libraries that speak fetch's API (the tus server). */
export function toWebRequest(req: HttpRequest, apiUrl: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== 'host') headers.set(k, v);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.stream !== undefined;
  const query = req.query.toString();
  return new Request(`${apiUrl}${req.path}${query ? `?${query}` : ''}`, {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req.stream!) as ReadableStream) : undefined,
    // @ts-expect-error Node's fetch needs duplex for streamed request bodies.
    duplex: hasBody ? 'half' : undefined,
  });
}

export async function fromWebResponse(response: Response): Promise<HttpResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => (headers[k] = v));
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers, body: body.length ? body : undefined };
}
