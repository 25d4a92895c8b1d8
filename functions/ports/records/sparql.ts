/**
 * SPARQL services as stored: which snapshot of a dataset a service serves, and its state. Types
 * only; type names, reasoners and the view live in domain/sparql.
 */
import type { Reasoner } from '../sparql-engine.js';

/** TriplyDB's service types; the spec calls them Sparql (virtuoso) and RichSparql (jena). */
export type ServiceType = 'virtuoso' | 'jena';
export type ServiceStatus = 'starting' | 'running' | 'updating' | 'stopped' | 'error';

export interface ServiceSnapshot {
  /** Blob key of the dataset manifest the service serves (null: the dataset had no graphs). */
  manifestKey: string | null;
  statements: number;
  graphCount: number;
}

export interface ServiceRecord {
  id: string;
  datasetId: string;
  name: string;
  type: ServiceType;
  reasoner: Reasoner;
  status: ServiceStatus;
  snapshot: ServiceSnapshot;
  /** While syncing: the snapshot being loaded; the old one keeps answering. */
  pendingSnapshot?: ServiceSnapshot;
  createdAt: string;
  updatedAt: string;
  loadedAt?: string;
  error?: { message: string };
  /** Statements in the loaded store, inferences included. */
  loadedStatements?: number;
}
