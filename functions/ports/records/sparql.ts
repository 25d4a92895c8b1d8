/**
 * SPARQL services as stored: which snapshot of a dataset a service serves, and its state. Types
 * only; type names, reasoners and the view live in domain/sparql.
 */
import type { Reasoner } from '../sparql-engine.js';
import type { SearchServiceConfig } from '../search-index.js';

/** TriplyDB's service types; the spec calls them Sparql (virtuoso), RichSparql (jena) and textSearch (elasticSearch). */
export type ServiceType = 'virtuoso' | 'jena' | 'elasticSearch';
export type ServiceStatus = 'starting' | 'running' | 'updating' | 'stopped' | 'error';

export interface ServiceSnapshot {
  /** Blob key of the dataset manifest the service serves (null: the dataset had no graphs). */
  manifestKey: string | null;
  statements: number;
  graphCount: number;
}

/** A snapshot a host has loaded: its stored graph names (see adapters/common/sparql-protocol/snapshot-names.ts). */
export interface HostedSnapshot {
  /** The id in the stored graph names `urn:x-snapshot:ID:g`. */
  snapshotId: string;
  /** Original names of the loaded graphs (the inferred graph included when reasoning added any). */
  graphs: string[];
  /** Statements without a graph were loaded (into the snapshot's default bucket). */
  hasDefault: boolean;
  /** Statements loaded, inferences included. */
  statements: number;
}

/** The compute serving a service's snapshot (issue 19): a Fargate task on AWS, a virtuoso-t process embedded. */
export interface ServiceHost extends HostedSnapshot {
  /** The host's id for ServiceHosts.stop (an ECS task ARN, a local process key). */
  ref: string;
  /** SPARQL endpoint of the host's store (queries and updates). */
  endpoint: string;
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
  /** The host serving `snapshot`, when the service runs on a host (ServiceHosts). */
  host?: ServiceHost;
  /** A host launched for `pendingSnapshot ?? snapshot`, still loading. */
  pendingHost?: { ref: string; launchedAt: string };
  /** Text search services (elasticSearch): their index and component templates. */
  search?: SearchServiceConfig;
}
