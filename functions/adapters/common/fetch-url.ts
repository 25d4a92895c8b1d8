import { Readable, Transform } from 'node:stream';
import type { FetchedFile, UrlFetcher } from '../../ports/url-fetcher.js';
import { guardedFetch, type OutboundPolicy } from './outbound-guard.js';

/** The file name a download gets: Content-Disposition, else the last path segment. */
function fileNameOf(url: URL, disposition: string | null): string {
  const fromHeader = disposition && /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)?.[1];
  const name = fromHeader ? decodeURIComponent(fromHeader) : decodeURIComponent(url.pathname.split('/').pop() ?? '');
  return name.replace(/[^\w.-]/g, '_') || 'download';
}

/**
 * Downloads with undici's fetch, following redirects, bounded in bytes and time, and only to
 * destinations the outbound policy allows (checked on the addresses actually connected to).
 */
export const urlFetcher = (policy: OutboundPolicy): UrlFetcher => ({
  request(url, { timeoutMs, ...init }) {
    return guardedFetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) }, policy);
  },

  async fetch(url, { maxBytes, timeoutMs, headers }) {
    const response = await guardedFetch(url, { signal: AbortSignal.timeout(timeoutMs), ...(headers ? { headers } : {}) }, policy);
    if (!response.ok || !response.body) throw new Error(`the server answered ${response.status} ${response.statusText}`);
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) throw new Error(`the file is larger than ${maxBytes} bytes`);
    let seen = 0;
    // A transform counts without starting the flow before the consumer reads.
    const limited = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(
      new Transform({
        transform(chunk: Buffer, _enc, next) {
          seen += chunk.length;
          next(seen > maxBytes ? new Error(`the file is larger than ${maxBytes} bytes`) : null, chunk);
        },
      }),
    );
    const file: FetchedFile = {
      body: limited,
      fileName: fileNameOf(new URL(response.url || url), response.headers.get('content-disposition')),
      contentType: response.headers.get('content-type') ?? undefined,
    };
    return file;
  },
});
