/** The options of the SPARQL-protocol engine: endpoints, credentials, timeouts and batch sizes. */
import type { Logger } from '../../../ports/logger.js';

export type EndpointAuth =
  | { type: 'basic'; username: string; password: string }
  /** Computes extra headers per request, e.g. an AWS SigV4 signature for Neptune IAM auth. */
  | {
      type: 'headers';
      headers: (request: { method: string; url: string; headers: Record<string, string>; body: string }) => Promise<Record<string, string>> | Record<string, string>;
    };

export interface SparqlProtocolEngineOptions {
  /** Where load fallbacks and cleanup failures are logged; default: the process logger. */
  logger?: Logger;
  /** SPARQL 1.1 Protocol query endpoint, e.g. `http://127.0.0.1:8890/sparql`. */
  queryEndpoint: string;
  /** SPARQL 1.1 Update endpoint; default: the query endpoint. */
  updateEndpoint?: string;
  /** Graph Store Protocol endpoint (Virtuoso: `/sparql-graph-crud`); without it loads use SPARQL Update. */
  graphStoreEndpoint?: string;
  auth?: EndpointAuth;
  /** Per request of loading, counting, reasoning and dropping (default 300 s). */
  requestTimeoutMs?: number;
  /** Protocol parameter asking the server to stop a query after N ms (Virtuoso: `timeout`, the default); null: none. */
  serverTimeoutParameter?: string | null;
  /** Queries sent at once per snapshot (default 8); more wait, and past `maxWaitingQueries` (256) are refused. */
  maxConcurrentQueries?: number;
  maxWaitingQueries?: number;
  /** Statements per Graph Store Protocol request (default 20 000). */
  gspBatchStatements?: number;
  /** Statements per INSERT DATA request (default 1 000). */
  updateBatchStatements?: number;
  /** Statements with blank nodes per INSERT..WHERE request (default 400; Virtuoso fails above ~1 000). */
  blankNodeBatchStatements?: number;
  /** Load requests in flight at once (default 2). */
  loadConcurrency?: number;
  fetch?: typeof fetch;
}
