import type { AccountRecord } from '../accounts/accounts.js';
import { accountView } from '../accounts/accounts.js';
import type { AccessLevel, DatasetRecord, License } from '../../ports/records/datasets.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type { AccessLevel, DatasetRecord, License, Prefix } from '../../ports/records/datasets.js';

export const ACCESS_LEVELS = ['public', 'internal', 'private'] as const satisfies readonly AccessLevel[];
// Compile-time check that the list names every AccessLevel (the type lives with the stored records).
true satisfies (AccessLevel extends (typeof ACCESS_LEVELS)[number] ? true : false);

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
] as const satisfies readonly License[];
true satisfies (License extends (typeof LICENSES)[number] ? true : false);

/** The name a new dataset's default graph gets: under the API's URL, by the names it is made with. */
export const newDefaultGraphName = (apiUrl: string, accountName: string, datasetName: string): string =>
  `${apiUrl}/${encodeURIComponent(accountName)}/${encodeURIComponent(datasetName)}/graphs/default`;

/**
 * The dataset's default graph: the name fixed when it was made, or, for a dataset made before
 * names were recorded, the name it would have got (by its owner's and its own current name).
 */
export const defaultGraphOf = (d: DatasetRecord, owner: AccountRecord, apiUrl: string): string =>
  d.defaultGraphName ?? newDefaultGraphName(apiUrl, owner.accountName, d.name);

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
  defaultGraphName: d.defaultGraphName,
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
