/**
 * Filling a SPARQL host (issue 19): wait until the host's Virtuoso answers, then load a snapshot
 * into it with the SPARQL-protocol engine's loader and describe what was loaded, so that other
 * processes attach to it (`SparqlProtocolEngine.attach`). Used by the Fargate task's loader
 * container (functions/containers/sparql-loader.ts) and the embedded virtuoso-t hosts
 * (adapters/local/virtuoso-service-hosts.ts).
 */
import type { HostLoad } from '../../../ports/service-hosts.js';
import { SparqlProtocolEngine, type SparqlProtocolEngineOptions } from './engine.js';

/** The endpoints of a Virtuoso listening on `base` (e.g. `http://127.0.0.1:8890`). */
export function virtuosoEndpoints(base: string): { queryEndpoint: string; graphStoreEndpoint: string } {
  const root = base.replace(/\/+$/, '');
  return { queryEndpoint: `${root}/sparql`, graphStoreEndpoint: `${root}/sparql-graph-crud` };
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once `queryEndpoint` answers `ASK {}`; rejects after `timeoutMs`, or at once when
 * `gone()` says the server process ended.
 */
export async function waitForSparql(queryEndpoint: string, options: { timeoutMs: number; gone?: () => string | null }): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let last = 'no answer';
  for (let attempt = 0; attempt < 100_000; attempt++) {
    const gone = options.gone?.();
    if (gone) throw new Error(`the SPARQL store ended while starting: ${gone}`);
    try {
      const res = await fetch(queryEndpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
        body: new URLSearchParams({ query: 'ASK {}' }),
        signal: AbortSignal.timeout(2000),
      });
      await res.text();
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) break;
    await delay(250);
  }
  throw new Error(`the SPARQL store at ${queryEndpoint} did not answer within ${options.timeoutMs} ms (${last})`);
}

/** Loads a snapshot into the store at `options` and describes it (what the lifecycle records as the host). */
export function hostLoad(options: SparqlProtocolEngineOptions): HostLoad {
  return async (source, reasoner) => {
    const store = await new SparqlProtocolEngine(options).load(source, reasoner);
    return store.describe();
  };
}
