/**
 * The HTTP side of the SPARQL-protocol engine: requests to the external store's query, update and
 * Graph Store Protocol endpoints, with timeouts and the store's error messages read back.
 *
 * Queries (the per-request path) go over node:http(s) with a keep-alive agent of their own, as a
 * GET when the URL stays short: measured against Virtuoso 7 on loopback, fetch's form POST took
 * about 0.45 ms more per query than a GET on a kept-alive socket (undici's request machinery, and
 * Virtuoso reading a POST body). A custom `fetch` (tests) or header-computing auth (Neptune's
 * SigV4, which signs the body) keep the fetch POST. Loading, updates and counts use fetch.
 *
 * Answers larger than one TCP segment on a kept-alive socket often arrive 40 ms late: Virtuoso
 * writes with Nagle's algorithm on, and the receiving side delays its ACK (Linux: 40 ms) once a
 * connection is past its first exchanges (measured: a 125 KB CONSTRUCT answer 52 ms kept-alive,
 * 11 ms on a new connection; small answers 0.05–0.2 ms faster kept-alive). So the caller says
 * whether an answer is expected to be large (`fresh`): those go on a new connection.
 */
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { SparqlProtocolEngineOptions } from './options.js';

export const RESULTS_JSON = 'application/sparql-results+json';
export const N_TRIPLES = 'application/n-triples';

/** A term of SPARQL JSON results as the store sends them (Virtuoso adds `typed-literal`). */
export interface JsonTerm {
  type: 'uri' | 'bnode' | 'literal' | 'typed-literal' | 'triple';
  value: string;
  'xml:lang'?: string;
  datatype?: string;
}
export type Binding = Record<string, JsonTerm>;

const FORM_TYPE = 'application/x-www-form-urlencoded; charset=UTF-8';
/** Statuses by which a Graph Store Protocol endpoint says it cannot be used (here, anonymously). */
const GSP_UNUSABLE = new Set([401, 403, 404, 405, 415, 501]);

export class TimeoutSignal {
  readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  timedOut = false;
  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, Math.max(ms, 1));
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  clear(): void {
    clearTimeout(this.timer);
  }
}

/** A failed request to the external store, before mapping to the engine's errors. */
export class EndpointError extends Error {
  override name = 'EndpointError';
  constructor(
    message: string,
    readonly status: number,
    readonly sqlState?: string,
  ) {
    super(message);
  }
}

/** Response headers, read by name (case-insensitive). */
export interface HeaderReader {
  get(name: string): string | null;
}

export interface Sent {
  status: number;
  headers: HeaderReader;
  text: string;
}

/** The store could not be reached (connection refused, reset, DNS): no HTTP answer at all. */
export class UnreachableError extends Error {
  override name = 'UnreachableError';
}

/** Longest query URL sent as a GET (longer ones are POSTed); well inside Virtuoso's request-line limit. */
export const MAX_GET_URL = 4096;
/** Answers at least this long are "large": the same query is sent on a new connection next time. */
export const LARGE_ANSWER_BYTES = 32_768;

function headerReader(message: IncomingMessage): HeaderReader {
  return {
    get: (name) => {
      const value = message.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

export class Endpoints {
  private readonly fetchImpl: typeof fetch;
  readonly updateEndpoint: string;
  /** Keep-alive agent of the query path (undefined: queries go through fetch; see the module comment). */
  private readonly agent: HttpAgent | undefined;
  constructor(readonly options: SparqlProtocolEngineOptions) {
    this.fetchImpl = options.fetch ?? fetch;
    this.updateEndpoint = options.updateEndpoint ?? options.queryEndpoint;
    if (!options.fetch && options.auth?.type !== 'headers') {
      const https = new URL(options.queryEndpoint).protocol === 'https:';
      // Idle sockets are unref'd by the agent (they never hold the process) and closed after 30 s.
      const settings = { keepAlive: true, maxFreeSockets: 16, timeout: 30_000, scheduling: 'lifo' as const };
      this.agent = https ? new HttpsAgent(settings) : new HttpAgent(settings);
    }
  }

  /** Closes the query path's idle sockets. */
  close(): void {
    this.agent?.destroy();
  }

  /**
   * A query over node:http(s): GET on a kept-alive socket (POST when the URL would be long). A
   * request on a reused socket that the server had closed meanwhile is sent once more on a new one.
   */
  private async sendQuery(params: URLSearchParams, accept: string, timeout: TimeoutSignal, fresh: boolean): Promise<Sent> {
    const agent = this.agent!;
    const base = this.options.queryEndpoint;
    const query = params.toString();
    const getUrl = `${base}${base.includes('?') ? '&' : '?'}${query}`;
    const get = getUrl.length <= MAX_GET_URL;
    const headers: Record<string, string> = { accept };
    const auth = this.options.auth;
    if (auth?.type === 'basic') headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    if (!get) {
      headers['content-type'] = FORM_TYPE;
      headers['content-length'] = String(Buffer.byteLength(query));
    }
    const once = (): Promise<Sent> =>
      new Promise<Sent>((resolve, reject) => {
        const send = agent instanceof HttpsAgent ? httpsRequest : httpRequest;
        const req = send(get ? getUrl : base, { method: get ? 'GET' : 'POST', headers, agent: fresh ? false : agent, signal: timeout.signal }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: headerReader(res), text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        });
        req.on('error', (e: NodeJS.ErrnoException) => {
          if (timeout.timedOut || e.name === 'AbortError') reject(e);
          else reject(Object.assign(new UnreachableError(e.message), { code: e.code, reused: req.reusedSocket }));
        });
        req.end(get ? undefined : query);
      });
    try {
      return await once();
    } catch (e) {
      const failed = e as UnreachableError & { code?: string; reused?: boolean };
      if (failed instanceof UnreachableError && failed.reused && (failed.code === 'ECONNRESET' || failed.code === 'EPIPE')) return once();
      throw e;
    }
  }

  /** Sends a request and reads the whole body; aborted (TimeoutSignal.timedOut) after `timeoutMs`. */
  async send(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeout: TimeoutSignal): Promise<Sent> {
    const all: Record<string, string> = { ...headers };
    const auth = this.options.auth;
    if (auth?.type === 'basic') all.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    else if (auth?.type === 'headers') Object.assign(all, await auth.headers({ method, url, headers: { ...all }, body: body ?? '' }));
    const response = await this.fetchImpl(url, { method, headers: all, body, signal: timeout.signal });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text };
  }

  /** A form-encoded SPARQL Update; throws EndpointError unless 2xx. */
  async update(text: string): Promise<string> {
    const timeout = new TimeoutSignal(this.options.requestTimeoutMs ?? 300_000);
    try {
      const sent = await this.send('POST', this.updateEndpoint, { 'content-type': FORM_TYPE, accept: RESULTS_JSON }, new URLSearchParams({ update: text }).toString(), timeout);
      if (sent.status < 200 || sent.status >= 300) throw failure(sent);
      return sent.text;
    } catch (e) {
      if (timeout.timedOut) throw new Error(`a SPARQL update ran longer than ${this.options.requestTimeoutMs ?? 300_000} ms`);
      throw e;
    } finally {
      timeout.clear();
    }
  }

  /** A form-encoded query with an explicit Accept; returns the raw response (any status). */
  /** `fresh`: the answer is expected to be large (see the module comment): sent on a new connection. */
  async query(text: string, accept: string, timeout: TimeoutSignal, serverTimeoutMs?: number, fresh = false): Promise<Sent> {
    const form = new URLSearchParams({ query: text });
    const parameter = this.options.serverTimeoutParameter === undefined ? 'timeout' : this.options.serverTimeoutParameter;
    if (parameter && serverTimeoutMs !== undefined) form.set(parameter, String(Math.max(1, Math.floor(serverTimeoutMs))));
    if (this.agent) return this.sendQuery(form, accept, timeout, fresh);
    return this.send('POST', this.options.queryEndpoint, { 'content-type': FORM_TYPE, accept }, form.toString(), timeout);
  }

  /** A query for internal use (counts): JSON results, throws on failure. */
  async select(text: string): Promise<Binding[]> {
    const timeout = new TimeoutSignal(this.options.requestTimeoutMs ?? 300_000);
    try {
      const sent = await this.query(text, RESULTS_JSON, timeout);
      if (sent.status < 200 || sent.status >= 300 || sent.headers.get('x-sql-state')?.startsWith('S1T')) throw failure(sent);
      return (JSON.parse(sent.text) as { results: { bindings: Binding[] } }).results.bindings;
    } catch (e) {
      if (timeout.timedOut) throw new Error(`a SPARQL query ran longer than ${this.options.requestTimeoutMs ?? 300_000} ms`);
      throw e;
    } finally {
      timeout.clear();
    }
  }

  /** POSTs N-Triples into a graph; returns the status when the endpoint refused as unusable. */
  async graphStorePost(graph: string, ntriples: string): Promise<'ok' | 'unusable'> {
    const url = new URL(this.options.graphStoreEndpoint!);
    url.searchParams.set('graph', graph);
    const timeout = new TimeoutSignal(this.options.requestTimeoutMs ?? 300_000);
    try {
      const sent = await this.send('POST', url.toString(), { 'content-type': `${N_TRIPLES}; charset=utf-8`, accept: '*/*' }, ntriples, timeout);
      if (sent.status >= 200 && sent.status < 300) return 'ok';
      if (GSP_UNUSABLE.has(sent.status)) return 'unusable';
      throw failure(sent);
    } catch (e) {
      if (timeout.timedOut) throw new Error(`a Graph Store Protocol POST ran longer than ${this.options.requestTimeoutMs ?? 300_000} ms`);
      throw e;
    } finally {
      timeout.clear();
    }
  }
}

/** The message of a failed response: Virtuoso's `Virtuoso 37000 Error SP030: ...` line(s), without the echoed query. */
export function failure(sent: Sent): EndpointError {
  let text = sent.text;
  if (/^\s*<(!DOCTYPE|html)/i.test(text)) text = text.replace(/<[^>]*>/g, ' ');
  text = text.split(/\n\s*SPARQL query:/)[0]!.replace(/\s+/g, ' ').trim();
  const state = sent.headers.get('x-sql-state') ?? /^Virtuoso (\w{5}) Error/.exec(text)?.[1];
  const message = sent.headers.get('x-sql-message') ?? text;
  return new EndpointError(message.slice(0, 2000) || `HTTP ${sent.status}`, sent.status, state ?? undefined);
}
