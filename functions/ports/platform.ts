/** Small ports the domain needs besides storage. */
/** Time, for the domain: it never reads the system clock or sets timers itself. */
export interface Clock {
  now(): Date;
  /** Resolves after `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
  /** Calls `action` once after `ms` milliseconds unless the returned cancel function runs first. */
  after(ms: number, action: () => void): () => void;
}

export interface Ids {
  /** A random, URL-safe, unguessable identifier (24 hex characters). */
  newId(): string;
  /** `bytes` random bytes, base64url encoded. */
  randomToken(bytes: number): string;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
}

export interface TokenCodec {
  /** Signs a JWT whose `iss` is the API URL, `sub` the account uid and `jti` the token id. */
  sign(claims: { iss: string; sub: string; jti: string }, secret: string): Promise<string>;
  /** The claims of a validly signed token, or null. */
  verify(token: string, secret: string): Promise<{ sub: string; jti: string } | null>;
  /** SHA-256, hex; used to store tokens and session ids without keeping them. */
  digest(value: string): string;
}

/** Runs long work outside the request (in-process locally; an async worker invocation on AWS). */
export interface TaskQueue {
  /** Resolves once the work is durably queued (on Lambda, before the response is sent). */
  enqueueImport(datasetId: string, jobId: string): Promise<void>;
  /** Loads (or checks) a service's snapshot and marks the service running. */
  enqueueServiceLoad(datasetId: string, serviceId: string): Promise<void>;
}

export interface FetchedFile {
  body: import('node:stream').Readable;
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

export interface FinishedUpload {
  uploadId: string;
  fileName: string;
  size: number;
  /** Where the bytes are: a key in the uploads bucket. */
  blobKey: string;
  /** The client's Upload-Metadata (e.g. `versionOf` for assets). */
  metadata: Record<string, string>;
}

/**
 * Resumable uploads (tus 1.0.0). `scope` is the URL path the uploads of one job or one dataset's
 * assets live under; an upload created under one scope is not reachable from another.
 */
export interface ResumableUploads {
  handle(
    request: Request,
    context: {
      scope: string;
      /** Absolute base URL for Location headers. */
      baseUrl: string;
      /** A body (e.g. the asset's JSON) turns the final PATCH's 204 into a 200 with that body. */
      onFinish(upload: FinishedUpload): Promise<{ body?: string; headers?: Record<string, string> } | void>;
    },
  ): Promise<Response>;
  /** Uploads created under a scope ending in `scopeSuffix` that have not received all their bytes yet. */
  unfinished?(scopeSuffix: string): Promise<UnfinishedUpload[]>;
}

export interface UnfinishedUpload {
  fileName: string;
  /** Bytes received so far. */
  offset: number;
  /** Declared length; undefined when the client deferred it. */
  size?: number;
}

/** Where a SPARQL store's data comes from: N-Quads text in chunks, re-readable (for reloads). */
export interface SnapshotSource {
  statements: number;
  chunks(): AsyncIterable<string>;
}

export interface EngineQuery {
  query: string;
  /** Media type of the wanted serialization (SPARQL results or RDF). */
  format: string;
  /**
   * The protocol's dataset (default-graph-uri / named-graph-uri): when either is given, exactly
   * these graphs. When neither is given and the query has no FROM, the default graph is the union
   * of all graphs and every graph is a named graph.
   */
  defaultGraphs?: string[];
  namedGraphs?: string[];
  /** The query has FROM / FROM NAMED clauses, which then define its dataset. */
  queryDefinesDataset?: boolean;
  baseIri?: string;
  timeoutMs: number;
}

/** A loaded, queryable snapshot. Query results come back serialized (strings, not objects). */
export interface SparqlStore {
  readonly statements: number;
  query(request: EngineQuery): Promise<string>;
  /** Applies a SPARQL Update and returns the graphs afterwards as N-Triples per graph name. */
  update?(update: string, baseIri?: string): Promise<Map<string, string>>;
  close(): Promise<void>;
}

export type Reasoner = 'None' | 'RDFS' | 'OWL';

export interface SparqlEngine {
  open(source: SnapshotSource, options: { reasoner: Reasoner; replicas?: number }): Promise<SparqlStore>;
}

/** Engine failures the HTTP layer maps to statuses (timeout 504, overload 503, bad query 400). */
export class EngineTimeoutError extends Error {
  override name = 'EngineTimeoutError';
}
export class EngineOverloadedError extends Error {
  override name = 'EngineOverloadedError';
}
export class EngineQueryError extends Error {
  override name = 'EngineQueryError';
}
