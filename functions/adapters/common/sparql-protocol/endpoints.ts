/**
 * The HTTP side of the SPARQL-protocol engine: requests to the external store's query, update and
 * Graph Store Protocol endpoints, with timeouts and the store's error messages read back.
 */
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

export interface Sent {
  status: number;
  headers: Headers;
  text: string;
}

export class Endpoints {
  private readonly fetchImpl: typeof fetch;
  readonly updateEndpoint: string;
  constructor(readonly options: SparqlProtocolEngineOptions) {
    this.fetchImpl = options.fetch ?? fetch;
    this.updateEndpoint = options.updateEndpoint ?? options.queryEndpoint;
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
  async query(text: string, accept: string, timeout: TimeoutSignal, serverTimeoutMs?: number): Promise<Sent> {
    const form = new URLSearchParams({ query: text });
    const parameter = this.options.serverTimeoutParameter === undefined ? 'timeout' : this.options.serverTimeoutParameter;
    if (parameter && serverTimeoutMs !== undefined) form.set(parameter, String(Math.max(1, Math.floor(serverTimeoutMs))));
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
