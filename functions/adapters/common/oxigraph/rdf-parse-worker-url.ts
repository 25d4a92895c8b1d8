/**
 * Where the RDF parse worker module is. Resolved relative to this module, which in a Lambda
 * bundle is the asset's `index.mjs`: lib/constructs/app-function.ts copies the worker beside it.
 */
export const RDF_PARSE_WORKER_URL = new URL('./rdf-parse-worker.mjs', import.meta.url);
