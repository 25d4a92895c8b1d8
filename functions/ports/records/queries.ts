/**
 * Saved queries as stored, with their versions. Types only; names, variables and views are
 * checked and built in domain/queries.
 */
import type { AccessLevel } from './datasets.js';

/** Where a saved query runs: the dataset's own endpoint (`speedy`) or its service of a type. */
export type QueryServiceType = 'speedy' | 'virtuoso' | 'jena';

export interface QueryVariable {
  name: string;
  termType: 'NamedNode' | 'Literal';
  datatype?: string;
  language?: string;
  defaultValue?: string;
  required: boolean;
  allowedValues: string[];
}

export interface SavedQueryRecord {
  id: string;
  ownerUid: string;
  name: string;
  displayName?: string;
  description: string;
  accessLevel: AccessLevel;
  datasetId?: string;
  serviceType: QueryServiceType;
  tags: string[];
  numberOfVersions: number;
  createdAt: string;
  updatedAt: string;
}

export interface QueryVersionRecord {
  queryId: string;
  version: number;
  query: string;
  renderConfig: { output: string; settings?: Record<string, unknown> };
  variables: QueryVariable[];
  headers?: Record<string, string>;
  ldFrame?: Record<string, unknown>;
  createdAt: string;
  /** Who saved this version. */
  accountName: string;
}
