/**
 * s3rver 3.7.1 stores multipart uploads (CreateMultipartUpload, UploadPart,
 * CompleteMultipartUpload) but answers two calls of the same API "method not allowed":
 * ListParts (GET ?uploadId) and AbortMultipartUpload (DELETE ?uploadId). @tus/s3-store needs
 * both (an upload's offset is the sum of its parts). This adds them to the stand-in, reading the
 * folder s3rver keeps each multipart upload in (`<bucket>/uploads/<uploadId>/{key,<n>,<n>.md5}`),
 * with S3's answers (ListPartsResult; NoSuchUpload 404 once the upload was completed or aborted).
 * Path-style requests only, as the SDK sends them to a 127.0.0.1 endpoint.
 */
import type S3rver from 's3rver';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;
interface S3rverInternals {
  middleware: Middleware[];
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Call before `run()`: Koa composes its middleware when it starts listening. */
export function addMultipartListing(server: S3rver): S3rver {
  const internals = server as unknown as S3rverInternals;
  const noSuchUpload = (ctx: KoaContext, uploadId: string) => {
    ctx.status = 404;
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message><UploadId>${escapeXml(uploadId)}</UploadId></Error>`;
  };
  internals.middleware.unshift(async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    const [, bucket, ...rest] = ctx.path.split('/');
    const key = rest.map(decodeURIComponent).join('/');
    if ((ctx.method !== 'GET' && ctx.method !== 'DELETE') || typeof uploadId !== 'string' || !bucket || !key) return next();
    const dir = join(internals.store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
    const storedKey = await readFile(join(dir, 'key'), 'utf8').catch(() => null);
    if (storedKey !== key) return noSuchUpload(ctx, uploadId);
    if (ctx.method === 'DELETE') {
      await rm(dir, { recursive: true, force: true });
      ctx.status = 204;
      ctx.body = null;
      return;
    }
    const marker = Number(ctx.query['part-number-marker'] ?? 0);
    const numbers = (await readdir(dir))
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .filter((n) => n > marker)
      .sort((a, b) => a - b);
    const parts: string[] = [];
    for (const n of numbers) {
      const [info, md5] = await Promise.all([stat(join(dir, String(n))), readFile(join(dir, `${n}.md5`), 'utf8').catch(() => '')]);
      parts.push(`<Part><PartNumber>${n}</PartNumber><LastModified>${info.mtime.toISOString()}</LastModified><ETag>"${md5}"</ETag><Size>${info.size}</Size></Part>`);
    }
    ctx.status = 200;
    ctx.type = 'application/xml';
    ctx.body =
      `<?xml version="1.0" encoding="UTF-8"?>\n<ListPartsResult><Bucket>${escapeXml(bucket)}</Bucket><Key>${escapeXml(key)}</Key><UploadId>${escapeXml(uploadId)}</UploadId>` +
      `<PartNumberMarker>${marker}</PartNumberMarker><NextPartNumberMarker>${numbers.at(-1) ?? marker}</NextPartNumberMarker><MaxParts>10000</MaxParts><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`;
  });
  return server;
}
