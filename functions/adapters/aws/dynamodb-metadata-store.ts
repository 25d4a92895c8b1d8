import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord, MembershipRecord, SessionRecord, TokenRecord } from '../../domain/accounts/accounts.js';
import type { AssetRecord } from '../../domain/data/assets.js';
import type { DatasetRecord } from '../../domain/datasets/datasets.js';
import type { JobFileRecord, JobRecord, JobStatus } from '../../domain/data/jobs.js';
import type { QueryVersionRecord, SavedQueryRecord } from '../../domain/queries/saved-queries.js';
import type { ServiceRecord } from '../../domain/sparql/services.js';
import { ConflictError } from '../../domain/shared/errors.js';
import { nameKey } from '../../domain/shared/names.js';
import type { Batch, ListRequest, LoginAttempts, MetadataStore } from '../../ports/metadata-store.js';
import { DynamoDbTable, isConditionFailure, type Item } from './dynamodb-table.js';

const K = {
  instance: { pk: 'INSTANCE', sk: 'CONFIG' },
  accountName: (name: string) => ({ pk: `ACCNAME#${nameKey(name)}`, sk: 'ACCNAME' }),
  account: (uid: string) => ({ pk: `ACC#${uid}`, sk: 'ACCOUNT' }),
  member: (orgUid: string, userUid: string) => ({ pk: `ACC#${orgUid}`, sk: `MEMBER#${userUid}` }),
  token: (uid: string, tokenId: string) => ({ pk: `ACC#${uid}`, sk: `TOKEN#${tokenId}` }),
  session: (hash: string) => ({ pk: `SESSION#${hash}`, sk: 'SESSION' }),
  loginAttempts: (key: string) => ({ pk: `LOGINATTEMPTS#${key}`, sk: 'LOGINATTEMPTS' }),
  dataset: (ownerUid: string, name: string) => ({ pk: `ACC#${ownerUid}`, sk: `DS#${nameKey(name)}` }),
  job: (datasetId: string, jobId: string) => ({ pk: `DSDATA#${datasetId}`, sk: `JOB#${jobId}` }),
  jobFile: (datasetId: string, jobId: string, fileId: string) => ({ pk: `DSDATA#${datasetId}`, sk: `JOBFILE#${jobId}#${fileId}` }),
  asset: (datasetId: string, identifier: string) => ({ pk: `DSDATA#${datasetId}`, sk: `ASSET#${identifier}` }),
  service: (datasetId: string, name: string) => ({ pk: `DSDATA#${datasetId}`, sk: `SERVICE#${nameKey(name)}` }),
  query: (ownerUid: string, name: string) => ({ pk: `ACC#${ownerUid}`, sk: `QUERY#${nameKey(name)}` }),
  queryRedirect: (ownerUid: string, name: string) => ({ pk: `ACC#${ownerUid}`, sk: `QUERYMOVED#${nameKey(name)}` }),
  queryVersion: (queryId: string, version: number) => ({ pk: `QUERYV#${queryId}`, sk: `V#${String(version).padStart(8, '0')}` }),
};

/** The MetadataStore on DynamoDB's single table; also runs unchanged against dynalite. */
export class DynamoDbMetadataStore extends DynamoDbTable implements MetadataStore {

  async getInstanceSecret(): Promise<string | null> {
    return (await this.get<{ secret: string }>(K.instance))?.secret ?? null;
  }

  async ensureInstanceSecret(candidate: string): Promise<string> {
    const existing = await this.getInstanceSecret();
    if (existing) return existing;
    try {
      await this.putNew({ ...K.instance, secret: candidate }, 'instance secret exists');
      return candidate;
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
      const winner = await this.get<{ secret: string }>(K.instance);
      if (!winner) throw new Error('instance secret vanished');
      return winner.secret;
    }
  }

  private accountItem(a: AccountRecord): Item {
    return {
      ...a,
      ...K.account(a.uid),
      gsi1pk: 'ACCOUNTS',
      gsi1sk: nameKey(a.accountName),
      ...(a.isAdmin ? { gsi2pk: 'ADMINS', gsi2sk: a.uid } : {}),
    };
  }

  async createAccount(account: AccountRecord): Promise<void> {
    const message = `An account named "${account.accountName}" already exists.`;
    await this.putNew({ ...K.accountName(account.accountName), uid: account.uid }, message);
    try {
      await this.putNew(this.accountItem(account), message);
    } catch (e) {
      await this.delete(K.accountName(account.accountName));
      throw e;
    }
  }

  getAccount(uid: string): Promise<AccountRecord | null> {
    return this.get<AccountRecord>(K.account(uid));
  }

  async getAccountByName(accountName: string): Promise<AccountRecord | null> {
    const claim = await this.get<{ uid: string }>(K.accountName(accountName));
    if (!claim) return null;
    const account = await this.getAccount(claim.uid);
    // A claim without its account is the trace of an interrupted create or rename.
    return account && nameKey(account.accountName) === nameKey(accountName) ? account : null;
  }

  async replaceAccount(account: AccountRecord, expectedUpdatedAt: string): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.accountItem(account),
          ConditionExpression: 'attribute_exists(pk) AND updatedAt = :expected',
          ExpressionAttributeValues: { ':expected': expectedUpdatedAt },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError('The account changed meanwhile; read it again and retry.');
      throw e;
    }
  }

  async renameAccount(account: AccountRecord, newName: string, updatedAt: string): Promise<AccountRecord> {
    const renamed = { ...account, accountName: newName, updatedAt };
    const sameKey = nameKey(newName) === nameKey(account.accountName);
    if (!sameKey) await this.putNew({ ...K.accountName(newName), uid: account.uid }, `An account named "${newName}" already exists.`);
    try {
      await this.replaceAccount(renamed, account.updatedAt);
    } catch (e) {
      if (!sameKey) await this.delete(K.accountName(newName));
      throw e;
    }
    if (!sameKey) await this.delete(K.accountName(account.accountName));
    else await this.put({ ...K.accountName(newName), uid: account.uid });
    return renamed;
  }

  async deleteAccount(account: AccountRecord): Promise<void> {
    await this.delete(K.account(account.uid));
    await this.delete(K.accountName(account.accountName));
  }

  listAccounts(request: ListRequest): Promise<Batch<AccountRecord>> {
    return this.queryBatch<AccountRecord>(
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p',
        ExpressionAttributeValues: { ':p': 'ACCOUNTS' },
      },
      (i) => ({ pk: i.pk, sk: i.sk, gsi1pk: i.gsi1pk, gsi1sk: i.gsi1sk }),
      request,
    );
  }

  async countAdmins(): Promise<number> {
    const admins = await this.queryAll<AccountRecord>({
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :p',
      ExpressionAttributeValues: { ':p': 'ADMINS' },
    });
    return admins.length;
  }

  async putMembership(m: MembershipRecord): Promise<void> {
    await this.put({ ...m, ...K.member(m.orgUid, m.userUid), gsi1pk: `MEMBEROF#${m.userUid}`, gsi1sk: m.orgUid });
  }

  getMembership(orgUid: string, userUid: string): Promise<MembershipRecord | null> {
    return this.get<MembershipRecord>(K.member(orgUid, userUid));
  }

  async deleteMembership(orgUid: string, userUid: string): Promise<void> {
    await this.delete(K.member(orgUid, userUid));
  }

  listMembers(orgUid: string): Promise<MembershipRecord[]> {
    return this.queryAll<MembershipRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `ACC#${orgUid}`, ':s': 'MEMBER#' },
    });
  }

  listMembershipsOfUser(userUid: string): Promise<MembershipRecord[]> {
    return this.queryAll<MembershipRecord>({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': `MEMBEROF#${userUid}` },
    });
  }

  async putToken(token: TokenRecord): Promise<void> {
    await this.putNew({ ...token, ...K.token(token.uid, token.tokenId) }, 'token id collision');
  }

  getToken(uid: string, tokenId: string): Promise<TokenRecord | null> {
    return this.get<TokenRecord>(K.token(uid, tokenId));
  }

  listTokens(uid: string): Promise<TokenRecord[]> {
    return this.queryAll<TokenRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `ACC#${uid}`, ':s': 'TOKEN#' },
    });
  }

  deleteToken(uid: string, tokenId: string): Promise<boolean> {
    return this.delete(K.token(uid, tokenId));
  }

  async countLoginAttempt(key: string, now: string, windowStartsAfter: string, expiresAt: number): Promise<LoginAttempts> {
    // Either the current window grows by one, or a new window replaces a missing or ended one;
    // a racing writer makes one of the two conditions fail, and the loop tries the other.
    for (let round = 0; round < 5; round++) {
      try {
        const out = await this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: K.loginAttempts(key),
            UpdateExpression: 'ADD attempts :one',
            ConditionExpression: 'attribute_exists(pk) AND windowStart > :after',
            ExpressionAttributeValues: { ':one': 1, ':after': windowStartsAfter },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return { count: Number(out.Attributes?.attempts), windowStart: String(out.Attributes?.windowStart) };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
      try {
        await this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...K.loginAttempts(key), attempts: 1, windowStart: now, expiresAt },
            ConditionExpression: 'attribute_not_exists(pk) OR windowStart <= :after',
            ExpressionAttributeValues: { ':after': windowStartsAfter },
          }),
        );
        return { count: 1, windowStart: now };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    }
    throw new ConflictError('Too many sign-in attempts at the same moment; try again.');
  }

  async releaseLoginAttempt(key: string, windowStartsAfter: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: K.loginAttempts(key),
          UpdateExpression: 'ADD attempts :minusOne',
          ConditionExpression: 'attribute_exists(pk) AND windowStart > :after AND attempts > :zero',
          ExpressionAttributeValues: { ':minusOne': -1, ':after': windowStartsAfter, ':zero': 0 },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  async clearLoginAttempts(key: string): Promise<void> {
    await this.delete(K.loginAttempts(key));
  }

  async putSession(session: SessionRecord): Promise<void> {
    await this.putNew({ ...session, ...K.session(session.sessionHash) }, 'session id collision');
  }

  getSession(sessionHash: string): Promise<SessionRecord | null> {
    return this.get<SessionRecord>(K.session(sessionHash));
  }

  async deleteSession(sessionHash: string): Promise<void> {
    await this.delete(K.session(sessionHash));
  }

  private datasetItem(d: DatasetRecord): Item {
    return {
      ...d,
      ...K.dataset(d.ownerUid, d.name),
      gsi1pk: 'DATASETS',
      gsi1sk: `${d.createdAt}#${d.id}`,
      gsi2pk: `DSID#${d.id}`,
      gsi2sk: 'DS',
    };
  }

  async createDataset(dataset: DatasetRecord): Promise<void> {
    await this.putNew(this.datasetItem(dataset), `A dataset named "${dataset.name}" already exists in this account.`);
  }

  getDataset(ownerUid: string, name: string): Promise<DatasetRecord | null> {
    return this.get<DatasetRecord>(K.dataset(ownerUid, name));
  }

  async getDatasetById(id: string): Promise<DatasetRecord | null> {
    const found = await this.queryAll<DatasetRecord>({
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :p',
      ExpressionAttributeValues: { ':p': `DSID#${id}` },
    });
    // During a rename two items share the id for a moment; the newer revision is the truth.
    return found.sort((a, b) => b.revision - a.revision)[0] ?? null;
  }

  async updateDataset(dataset: DatasetRecord): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.datasetItem(dataset),
          ConditionExpression: 'attribute_exists(pk) AND revision = :expected',
          ExpressionAttributeValues: { ':expected': dataset.revision - 1 },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError('The dataset changed meanwhile; read it again and retry.');
      throw e;
    }
  }

  async renameDataset(dataset: DatasetRecord, newName: string): Promise<DatasetRecord> {
    const renamed: DatasetRecord = { ...dataset, name: newName, revision: dataset.revision + 1 };
    if (nameKey(newName) === nameKey(dataset.name)) {
      await this.updateDataset(renamed);
      return renamed;
    }
    await this.putNew(this.datasetItem(renamed), `A dataset named "${newName}" already exists in this account.`);
    await this.delete(K.dataset(dataset.ownerUid, dataset.name));
    return renamed;
  }

  async deleteDataset(dataset: DatasetRecord): Promise<void> {
    await this.delete(K.dataset(dataset.ownerUid, dataset.name));
  }

  listDatasets(ownerUid: string | null, request: ListRequest): Promise<Batch<DatasetRecord>> {
    if (ownerUid === null) {
      return this.queryBatch<DatasetRecord>(
        {
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :p',
          ExpressionAttributeValues: { ':p': 'DATASETS' },
        },
        (i) => ({ pk: i.pk, sk: i.sk, gsi1pk: i.gsi1pk, gsi1sk: i.gsi1sk }),
        request,
      );
    }
    return this.queryBatch<DatasetRecord>(
      {
        KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
        ExpressionAttributeValues: { ':p': `ACC#${ownerUid}`, ':s': 'DS#' },
      },
      (i) => ({ pk: i.pk, sk: i.sk }),
      request,
    );
  }

  async createJob(job: JobRecord): Promise<void> {
    await this.putNew({ ...job, ...K.job(job.datasetId, job.jobId) }, 'job id collision');
  }

  getJob(datasetId: string, jobId: string): Promise<JobRecord | null> {
    return this.get<JobRecord>(K.job(datasetId, jobId));
  }

  async updateJob(job: JobRecord, expected: readonly JobStatus[]): Promise<void> {
    const values: Record<string, unknown> = {};
    expected.forEach((status, i) => (values[`:s${i}`] = status));
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...job, ...K.job(job.datasetId, job.jobId) },
          ConditionExpression: `#status IN (${expected.map((_, i) => `:s${i}`).join(', ')})`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError(`The job is no longer ${expected.join(' or ')}.`);
      throw e;
    }
  }

  listJobs(datasetId: string): Promise<JobRecord[]> {
    return this.queryAll<JobRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `DSDATA#${datasetId}`, ':s': 'JOB#' },
    });
  }

  async deleteJob(datasetId: string, jobId: string): Promise<void> {
    for (const f of await this.listJobFiles(datasetId, jobId)) await this.delete(K.jobFile(datasetId, jobId, f.fileId));
    await this.delete(K.job(datasetId, jobId));
  }

  async putJobFile(file: JobFileRecord): Promise<void> {
    await this.put({ ...file, ...K.jobFile(file.datasetId, file.jobId, file.fileId) });
  }

  listJobFiles(datasetId: string, jobId: string): Promise<JobFileRecord[]> {
    return this.queryAll<JobFileRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `DSDATA#${datasetId}`, ':s': `JOBFILE#${jobId}#` },
    });
  }

  async createAsset(asset: AssetRecord): Promise<void> {
    await this.putNew({ ...asset, ...K.asset(asset.datasetId, asset.identifier) }, 'asset id collision');
  }

  getAsset(datasetId: string, identifier: string): Promise<AssetRecord | null> {
    return this.get<AssetRecord>(K.asset(datasetId, identifier));
  }

  async replaceAsset(asset: AssetRecord, expectedUpdatedAt: string): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...asset, ...K.asset(asset.datasetId, asset.identifier) },
          ConditionExpression: 'attribute_exists(pk) AND updatedAt = :expected',
          ExpressionAttributeValues: { ':expected': expectedUpdatedAt },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError('The asset changed meanwhile; retry.');
      throw e;
    }
  }

  async deleteAsset(datasetId: string, identifier: string): Promise<void> {
    await this.delete(K.asset(datasetId, identifier));
  }

  listAssets(datasetId: string): Promise<AssetRecord[]> {
    return this.queryAll<AssetRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `DSDATA#${datasetId}`, ':s': 'ASSET#' },
    });
  }

  async createService(service: ServiceRecord): Promise<void> {
    await this.putNew({ ...service, ...K.service(service.datasetId, service.name) }, `A service named "${service.name}" already exists in this dataset.`);
  }

  getService(datasetId: string, name: string): Promise<ServiceRecord | null> {
    return this.get<ServiceRecord>(K.service(datasetId, name));
  }

  async replaceService(service: ServiceRecord, expectedUpdatedAt: string): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...service, ...K.service(service.datasetId, service.name) },
          ConditionExpression: 'attribute_exists(pk) AND updatedAt = :expected',
          ExpressionAttributeValues: { ':expected': expectedUpdatedAt },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError('The service changed meanwhile; read it again and retry.');
      throw e;
    }
  }

  async renameService(service: ServiceRecord, newName: string, updatedAt: string): Promise<ServiceRecord> {
    const renamed = { ...service, name: newName, updatedAt };
    if (nameKey(newName) === nameKey(service.name)) {
      await this.replaceService(renamed, service.updatedAt);
      return renamed;
    }
    await this.putNew({ ...renamed, ...K.service(service.datasetId, newName) }, `A service named "${newName}" already exists in this dataset.`);
    await this.delete(K.service(service.datasetId, service.name));
    return renamed;
  }

  async deleteService(datasetId: string, name: string): Promise<void> {
    await this.delete(K.service(datasetId, name));
  }

  listServices(datasetId: string): Promise<ServiceRecord[]> {
    return this.queryAll<ServiceRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `DSDATA#${datasetId}`, ':s': 'SERVICE#' },
    });
  }

  private queryItem(q: SavedQueryRecord): Item {
    return { ...q, ...K.query(q.ownerUid, q.name), gsi1pk: 'QUERIES', gsi1sk: `${q.createdAt}#${q.id}` };
  }

  async createQuery(query: SavedQueryRecord): Promise<void> {
    await this.putNew(this.queryItem(query), `A query named "${query.name}" already exists in this account.`);
    await this.delete(K.queryRedirect(query.ownerUid, query.name));
  }

  getQuery(ownerUid: string, name: string): Promise<SavedQueryRecord | null> {
    return this.get<SavedQueryRecord>(K.query(ownerUid, name));
  }

  async replaceQuery(query: SavedQueryRecord, expectedUpdatedAt: string): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.queryItem(query),
          ConditionExpression: 'attribute_exists(pk) AND updatedAt = :expected',
          ExpressionAttributeValues: { ':expected': expectedUpdatedAt },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError('The query changed meanwhile; read it again and retry.');
      throw e;
    }
  }

  async renameQuery(query: SavedQueryRecord, newName: string, updatedAt: string): Promise<SavedQueryRecord> {
    const renamed = { ...query, name: newName, updatedAt };
    if (nameKey(newName) === nameKey(query.name)) {
      await this.replaceQuery(renamed, query.updatedAt);
      return renamed;
    }
    await this.putNew(this.queryItem(renamed), `A query named "${newName}" already exists in this account.`);
    await this.put({ ...K.queryRedirect(query.ownerUid, query.name), name: newName });
    await this.delete(K.queryRedirect(query.ownerUid, newName));
    await this.delete(K.query(query.ownerUid, query.name));
    return renamed;
  }

  async queryRedirect(ownerUid: string, oldName: string): Promise<string | null> {
    return (await this.get<{ name: string }>(K.queryRedirect(ownerUid, oldName)))?.name ?? null;
  }

  async deleteQuery(query: SavedQueryRecord): Promise<void> {
    for (let v = 1; v <= query.numberOfVersions; v++) await this.delete(K.queryVersion(query.id, v));
    await this.delete(K.query(query.ownerUid, query.name));
  }

  listQueries(ownerUid: string | null, request: ListRequest): Promise<Batch<SavedQueryRecord>> {
    if (ownerUid === null) {
      return this.queryBatch<SavedQueryRecord>(
        { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :p', ExpressionAttributeValues: { ':p': 'QUERIES' } },
        (i) => ({ pk: i.pk, sk: i.sk, gsi1pk: i.gsi1pk, gsi1sk: i.gsi1sk }),
        request,
      );
    }
    return this.queryBatch<SavedQueryRecord>(
      { KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)', ExpressionAttributeValues: { ':p': `ACC#${ownerUid}`, ':s': 'QUERY#' } },
      (i) => ({ pk: i.pk, sk: i.sk }),
      request,
    );
  }

  async putQueryVersion(version: QueryVersionRecord): Promise<void> {
    await this.putNew({ ...version, ...K.queryVersion(version.queryId, version.version) }, `Version ${version.version} was saved meanwhile; retry.`);
  }

  getQueryVersion(queryId: string, version: number): Promise<QueryVersionRecord | null> {
    return this.get<QueryVersionRecord>(K.queryVersion(queryId, version));
  }
}
