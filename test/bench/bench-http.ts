/**
 * Small HTTP helpers shared by the SPARQL and saved-query benches: JSON calls with the admin token,
 * a tus upload, a multipart import, and a timed GET over one keep-alive connection (node:http, so
 * the client's own cost per request stays small next to the server's).
 */
import { createReadStream } from 'node:fs';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { RunningPlatform } from './embedded-server.js';

export interface Api {
  url: string;
  headers: Record<string, string>;
  /** A JSON call as the administrator's token, or with `as` instead (a console session). */
  json(method: string, path: string, body?: unknown, as?: Record<string, string>): Promise<any>;
}

export function apiFor(platform: RunningPlatform): Api {
  const headers = { authorization: `Bearer ${platform.adminToken}` };
  return {
    url: platform.url,
    headers,
    async json(method, path, body, as) {
      const send = () =>
        fetch(`${platform.url}${path}`, {
          method,
          headers: { ...(as ?? headers), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      // A kept-alive connection the server closed as idle just as this request took it (the
      // server's keepAliveTimeout is 5 s): the request never arrived, so send it once more.
      const res = await send().catch((e: Error & { cause?: { code?: string } }) => {
        if (e.cause?.code !== 'UND_ERR_SOCKET') throw e;
        return send();
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One raw request on a fresh connection (uploads). */
function rawRequest(url: string, method: string, headers: Record<string, string>, body?: NodeJS.ReadableStream): Promise<{ res: IncomingMessage; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ res, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body) {
      body.on('error', reject);
      body.pipe(req);
    } else req.end();
  });
}

const TUS_CHUNK = 16 * 1024 * 1024;

/** tus 1.0.0: create the upload, then PATCH it in chunks streamed from the file. */
export async function tusUpload(api: Api, addUrl: string, file: string, fileName: string, size: number): Promise<void> {
  const tus = { ...api.headers, 'tus-resumable': '1.0.0' };
  const created = await rawRequest(addUrl, 'POST', {
    ...tus,
    'upload-length': String(size),
    'upload-metadata': `filename ${Buffer.from(fileName).toString('base64')}`,
    'content-length': '0',
  });
  const location = created.res.headers.location;
  if (created.res.statusCode !== 201 || !location) throw new Error(`tus create: ${created.res.statusCode} ${created.text}`);
  for (let offset = 0; offset < size; offset += TUS_CHUNK) {
    const length = Math.min(TUS_CHUNK, size - offset);
    const body = createReadStream(file, { start: offset, end: offset + length - 1, highWaterMark: 1024 * 1024 });
    const patched = await rawRequest(
      location,
      'PATCH',
      { ...tus, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', 'content-length': String(length) },
      body,
    );
    if (patched.res.statusCode !== 204) throw new Error(`tus PATCH at ${offset}: ${patched.res.statusCode} ${patched.text}`);
  }
}

/** Polls a job until it ends; throws unless it finished. */
export async function waitForJob(api: Api, jobPath: string, what: string): Promise<any> {
  for (;;) {
    const state = await api.json('GET', jobPath);
    if (state.status === 'finished') return state;
    if (state.status === 'error' || state.status === 'canceled') throw new Error(`import of ${what}: ${state.status}: ${state.error?.message}`);
    await sleep(25);
  }
}

/** A job, the file over tus, start, poll until finished. */
export async function tusImport(api: Api, dataset: string, file: string, fileName: string, size: number, jobBody: Record<string, unknown> = {}): Promise<any> {
  const job = await api.json('POST', `/datasets/${dataset}/jobs`, jobBody);
  const jobPath = `/datasets/${dataset}/jobs/${job.jobId}`;
  await tusUpload(api, `${api.url}${jobPath}/add`, file, fileName, size);
  await api.json('POST', `${jobPath}/start`);
  return waitForJob(api, jobPath, fileName);
}

/** The simple multipart route (files under 5 MB), started at once; poll until finished. */
export async function multipartImport(api: Api, dataset: string, fileName: string, content: string, fields: Record<string, string> = {}): Promise<any> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([content]), fileName);
  const res = await fetch(`${api.url}/datasets/${dataset}/jobs`, { method: 'POST', headers: api.headers, body: form });
  const job = await res.json();
  if (res.status !== 201) throw new Error(`multipart import: ${res.status} ${JSON.stringify(job)}`);
  return waitForJob(api, `/datasets/${dataset}/jobs/${job.jobId}`, fileName);
}

export interface TimedResponse {
  status: number;
  /** Milliseconds from sending the request to the first body byte, and to the last. */
  firstByteMs: number;
  ms: number;
  bytes: number;
  body: Buffer;
  contentType: string;
}

/**
 * GETs over one keep-alive connection, timed from the request to the last body byte. A request
 * on a kept-alive socket that the server closed meanwhile (its keep-alive timeout passed while this
 * process was busy with an in-process run) is retried once on a fresh socket; only the retry counts.
 */
export class TimedClient {
  private agent = new Agent({ keepAlive: true, maxSockets: 1 });

  async get(url: string, headers: Record<string, string> = {}): Promise<TimedResponse> {
    try {
      return await this.once(url, headers);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ECONNRESET' && code !== 'EPIPE') throw e;
      return this.once(url, headers);
    }
  }

  private once(url: string, headers: Record<string, string>): Promise<TimedResponse> {
    return new Promise((resolve, reject) => {
      const start = performance.now();
      let firstByteMs = NaN;
      const req = httpRequest(url, { headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          if (bytes === 0) firstByteMs = performance.now() - start;
          bytes += c.length;
          chunks.push(c);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            firstByteMs,
            ms: performance.now() - start,
            bytes,
            body: Buffer.concat(chunks),
            contentType: String(res.headers['content-type'] ?? ''),
          }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Figures

/** As load.ts: the value at or above p % of the sorted samples (p99 of 50 runs is the slowest). */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

export interface Stats {
  runs: number;
  median: number;
  p99: number;
  min: number;
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return { runs: sorted.length, median: percentile(sorted, 50), p99: percentile(sorted, 99), min: sorted[0]! };
}

export const ms = (v: number) => (v >= 100 ? `${v.toFixed(0)} ms` : v >= 10 ? `${v.toFixed(1)} ms` : `${v.toFixed(2)} ms`);
/** A difference in milliseconds with its sign: `+1.20 ms`, `−3.4 ms`. */
export const deltaMs = (v: number) => `${v < 0 ? '−' : '+'}${ms(Math.abs(v))}`;
export const int = (n: number) => Math.round(n).toLocaleString('en');
export const secs = (s: number) => `${s.toFixed(s < 10 ? 2 : 1)} s`;
export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
export function perSecond(statements: number, seconds: number): string {
  const r = statements / seconds;
  return r >= 1e6 ? `${(r / 1e6).toFixed(2)}M st/s` : `${(r / 1e3).toFixed(0)}k st/s`;
}
/** A ratio with two decimals, three when two would round it onto the aim (1.20× could be 1.204×). */
export const ratioFixed = (ratio: number, aim: number) => ratio.toFixed(Math.abs(ratio - aim) < 0.005 ? 3 : 2);
export const aimText = (met: boolean) => (met ? 'aim met' : 'aim missed');
