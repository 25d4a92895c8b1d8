/**
 * A SPARQL failure raised below the ports: the parser pool (here in rdf/) and the engines are
 * both "overloaded" when busy, and the HTTP layer answers either with 503. Defined here so rdf/
 * needs nothing from ports/; ports/sparql-engine.ts re-exports it as part of the engine port.
 */
export class EngineOverloadedError extends Error {
  override name = 'EngineOverloadedError';
}
