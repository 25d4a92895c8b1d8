import type { Readable } from 'node:stream';

/** A transport-neutral HTTP request: the same shape whether it came from node:http or API Gateway. */
export interface HttpRequest {
  method: string;
  /** Path without query string, percent-decoding left to the router. */
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /** Query parameters; repeated ones keep every value. */
  query: URLSearchParams;
  /** Raw body bytes (bodies on the API routes are small; uploads stream through other routes). */
  body: Buffer;
  /** On streaming routes (uploads) the body as a stream; `body` is then empty. */
  stream?: Readable;
  /** Origin the client used, e.g. `http://127.0.0.1:8080`; used for absolute links. */
  origin: string;
  sourceIp?: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body?: string | Buffer | Readable;
}
