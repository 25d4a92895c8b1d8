/** UrlFetcher port: outbound HTTP made on a user's behalf (URL imports, flow tasks). */
import type { Readable } from 'node:stream';

export interface FetchedFile {
  body: Readable;
  fileName: string;
  contentType?: string;
}

/**
 * Requests the platform makes on a user's behalf (URL imports, flow tasks), only to destinations
 * the instance allows (never cloud metadata; private networks only where allowed).
 */
export interface UrlFetcher {
  /** Downloads a file, bounded in size and time. `headers` may hold secrets: never log them. */
  fetch(url: string, options: { maxBytes: number; timeoutMs: number; headers?: Record<string, string> }): Promise<FetchedFile>;
  /** One HTTP request (redirects followed and checked); the caller reads and bounds the body. */
  request(url: string, init: { method: string; headers?: Record<string, string>; body?: string; timeoutMs: number }): Promise<Response>;
}
