/** SparqlEngine port: loads a dataset snapshot into a queryable store (oxigraph workers, Virtuoso, Fuseki, Neptune). */

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

/**
 * What changed from the snapshot a store holds to the next one (a sync, issue 18): graphs that
 * went (IRIs), then N-Quads removed and added. Never holds blank nodes (their labels are scoped to
 * one load, so a change with them is loaded whole instead).
 */
export interface SnapshotChange {
  dropGraphs: string[];
  removed: string;
  added: string;
}

/** A loaded, queryable snapshot. Query results come back serialized (strings, not objects). */
export interface SparqlStore {
  readonly statements: number;
  query(request: EngineQuery): Promise<string>;
  /**
   * Moves the store to the next snapshot by applying `change` (queries see the old snapshot or the
   * new one, never a mix); `next` is what it reloads from afterwards. Rejects, leaving the store on
   * the old snapshot, when it could not; then load `next` whole.
   */
  apply?(change: SnapshotChange, next: SnapshotSource): Promise<void>;
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
/** Busy (503); defined in rdf/, whose SPARQL parser pool raises it too. */
export { EngineOverloadedError } from '../rdf/sparql-errors.js';
export class EngineQueryError extends Error {
  override name = 'EngineQueryError';
}
/** A well-formed request the engine could not carry out (DROP of a graph that does not exist): 422. */
export class EngineExecutionError extends Error {
  override name = 'EngineExecutionError';
}
