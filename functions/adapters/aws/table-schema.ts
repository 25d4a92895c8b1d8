/**
 * The single DynamoDB table, written once as data. `lib/stateful-stack.ts` builds the CDK table
 * from it and `functions/composition/local.ts` creates the same table in dynalite.
 *
 * Item families (pk / sk):
 *   INSTANCE / CONFIG                     instance secrets and bootstrap facts
 *   ACCNAME#<lower name> / ACCNAME        account name -> uid (conditional put keeps names unique)
 *   ACC#<uid> / ACCOUNT                   account (user or org); gsi1 lists all accounts by name
 *   ACC#<orgUid> / MEMBER#<userUid>       membership; gsi1 lists a user's organisations
 *   ACC#<uid> / TOKEN#<tokenId>           API token record (hash only)
 *   ACC#<uid> / DS#<lower name>           dataset; gsi1 lists all datasets, gsi2 finds it by id
 *   ACC#<uid> / QUERY#<lower name>        saved query; QUERYMOVED#<old name> redirects a renamed one
 *   QUERYV#<queryId> / V#<00000001>       one version of a saved query
 *   SESSION#<sha256> / SESSION            console session (expiresAt filtered on read, TTL on AWS)
 *   DSDATA#<datasetId> / DATASET          the dataset's owner and name (its by-id read, consistent,
 *                                         unlike gsi2 on AWS); `deleted` once it is gone
 *   DSDATA#<datasetId> / JOB#<jobId>     import job; JOBFILE#<jobId>#<fileId> its uploaded files;
 *                                         ASSET#<identifier> an asset with its versions;
 *                                         SERVICE#<lower name> a SPARQL service and its snapshot
 *   INSTANCE / FLOWSWITCHES               instance switches of the flows feature
 *   ACC#<uid> / FLOW#<lower flowId>       flow blueprint; gsi2 (FLOWUID#<uid> / FLOW) finds it by uid
 *   FLOWV#<blueprintUid> / V#<00000001>   one version of a flow (definition, executable)
 *   FLOWSECRET#<blueprintUid> / VALUES    the values of a flow's masked values
 *   RUN#<runId> / RUN                     flow run; gsi1 (FLOWRUNS#<blueprintUid> / <createdAt>#<id>)
 *                                         lists a flow's runs, gsi2 (RUNS / <createdAt>#<id>) all runs;
 *                                         TASK#<taskId> its task instances (log inline, 400 KB cap);
 *                                         SECRET the run's platform token while the run lasts
 */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
  globalSecondaryIndexes: [
    { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;

/** Every key attribute of the schema is a string. */
export const TABLE_KEY_ATTRIBUTES: readonly string[] = [
  TABLE_SCHEMA.partitionKey,
  TABLE_SCHEMA.sortKey,
  ...TABLE_SCHEMA.globalSecondaryIndexes.flatMap((i) => [i.partitionKey, i.sortKey]),
];
