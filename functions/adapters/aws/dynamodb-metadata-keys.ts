/**
 * Where the metadata store keeps each record in the single table: the partition and sort key of
 * every item (flows keep theirs in dynamodb-flow-store.ts). One table, so no write needs a transaction.
 */
import { nameKey } from '../../domain/shared/names.js';

export const K = {
  instance: { pk: 'INSTANCE', sk: 'CONFIG' },
  accountName: (name: string) => ({ pk: `ACCNAME#${nameKey(name)}`, sk: 'ACCNAME' }),
  account: (uid: string) => ({ pk: `ACC#${uid}`, sk: 'ACCOUNT' }),
  member: (orgUid: string, userUid: string) => ({ pk: `ACC#${orgUid}`, sk: `MEMBER#${userUid}` }),
  token: (uid: string, tokenId: string) => ({ pk: `ACC#${uid}`, sk: `TOKEN#${tokenId}` }),
  session: (hash: string) => ({ pk: `SESSION#${hash}`, sk: 'SESSION' }),
  loginAttempts: (key: string) => ({ pk: `LOGINATTEMPTS#${key}`, sk: 'LOGINATTEMPTS' }),
  dataset: (ownerUid: string, name: string) => ({ pk: `ACC#${ownerUid}`, sk: `DS#${nameKey(name)}` }),
  /** Where a dataset id leads (its owner and name), read with GetItem: the index (gsi2) may lag on AWS. */
  datasetById: (datasetId: string) => ({ pk: `DSDATA#${datasetId}`, sk: 'DATASET' }),
  job: (datasetId: string, jobId: string) => ({ pk: `DSDATA#${datasetId}`, sk: `JOB#${jobId}` }),
  jobFile: (datasetId: string, jobId: string, fileId: string) => ({ pk: `DSDATA#${datasetId}`, sk: `JOBFILE#${jobId}#${fileId}` }),
  asset: (datasetId: string, identifier: string) => ({ pk: `DSDATA#${datasetId}`, sk: `ASSET#${identifier}` }),
  service: (datasetId: string, name: string) => ({ pk: `DSDATA#${datasetId}`, sk: `SERVICE#${nameKey(name)}` }),
  query: (ownerUid: string, name: string) => ({ pk: `ACC#${ownerUid}`, sk: `QUERY#${nameKey(name)}` }),
  queryRedirect: (ownerUid: string, name: string) => ({ pk: `ACC#${ownerUid}`, sk: `QUERYMOVED#${nameKey(name)}` }),
  queryVersion: (queryId: string, version: number) => ({ pk: `QUERYV#${queryId}`, sk: `V#${String(version).padStart(8, '0')}` }),
};
