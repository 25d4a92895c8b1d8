import type { AccountRecord } from '../accounts/accounts.js';
import { accountView } from '../accounts/accounts.js';

export const ACCESS_LEVELS = ['public', 'internal', 'private'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

export const LICENSES = [
  'CC0 1.0',
  'CC BY',
  'CC BY-ND',
  'CC BY-NC',
  'CC BY-NC-ND',
  'CC BY-NC-SA',
  'CC BY-SA v4.0',
  'ODC-By',
  'ODC-ODbL',
  'PDDL',
  'GFDL',
  'CC-BY-SA',
] as const;
export type License = (typeof LICENSES)[number];

export interface Prefix {
  prefixLabel: string;
  iri: string;
}

export interface DatasetRecord {
  id: string;
  ownerUid: string;
  name: string;
  displayName: string;
  description: string;
  accessLevel: AccessLevel;
  license?: License;
  prefixes: Prefix[];
  exampleResources: string[];
  tags: string[];
  createdAt: string;
  updatedAt: string;
  graphCount: number;
  statements: number;
  serviceCount: number;
  assetCount: number;
  /** Blob key of the current graph manifest (see graphs.ts); absent while the dataset has no graphs. */
  graphsManifest?: string;
  lastGraphsUpdateTime?: string;
  /** Incremented on every write; writes are conditional on it so concurrent changes never interleave. */
  revision: number;
}

export const datasetView = (d: DatasetRecord, owner: AccountRecord): Record<string, unknown> => ({
  id: d.id,
  name: d.name,
  displayName: d.displayName,
  description: d.description,
  owner: accountView(owner),
  accessLevel: d.accessLevel,
  license: d.license,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
  graphCount: d.graphCount,
  statements: d.statements,
  serviceCount: d.serviceCount,
  assetCount: d.assetCount,
  lastGraphsUpdateTime: d.lastGraphsUpdateTime,
  tags: d.tags,
  topics: [],
  prefixes: d.prefixes.map((p) => ({ ...p, scope: 'local' })),
  exampleResources: d.exampleResources,
  hasDataQualityIssues: false,
  toggles: {},
});

/**
 * Who may see a dataset: public to anyone, internal to any signed-in account, private to members
 * of the owning account (and administrators, who are members of everything).
 */
export function canReadDataset(level: AccessLevel, signedIn: boolean, isMemberOfOwner: boolean): boolean {
  if (level === 'public') return true;
  if (level === 'internal') return signedIn;
  return isMemberOfOwner;
}
