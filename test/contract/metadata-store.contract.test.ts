/**
 * The MetadataStore contract against DynamoDbMetadataStore on dynalite (in memory), with the
 * table created exactly as the embedded platform creates it, and against the embedded platform's
 * read cache in front of it (which must be exact: every read sees every earlier write).
 */
import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalDynamo, startDynalite } from '../support/dynalite.js';
import { DynamoDbMetadataStore } from '../../functions/adapters/aws/dynamodb-metadata-store.js';
import { K } from '../../functions/adapters/aws/dynamodb-metadata-keys.js';
import { cachedMetadataStore } from '../../functions/adapters/local/cached-metadata-store.js';
import { documentClient } from '../../functions/composition/aws.js';
import { ensureTable } from '../../functions/composition/local.js';
import { ConflictError } from '../../functions/domain/shared/errors.js';
import type { MetadataStore } from '../../functions/ports/metadata-store.js';
import type { AccountRecord, MembershipRecord, TokenRecord } from '../../functions/ports/records/accounts.js';
import type { AssetRecord, JobRecord } from '../../functions/ports/records/data.js';
import type { DatasetRecord } from '../../functions/ports/records/datasets.js';
import type { QueryVersionRecord, SavedQueryRecord } from '../../functions/ports/records/queries.js';
import type { ServiceRecord } from '../../functions/ports/records/sparql.js';

const TABLE = 'platform-metadata-store-test';
const T0 = '2024-05-01T10:00:00.000Z';
const T1 = '2024-05-02T10:00:00.000Z';

let dynamo: LocalDynamo;
let client: DynamoDBClient;
let store: MetadataStore;
let tableName: string;

beforeAll(async () => {
  dynamo = await startDynalite();
  client = dynamo.client;
});

afterAll(async () => {
  await dynamo?.stop();
});

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}${Math.random().toString(36).slice(2, 8)}`;

const account = (overrides: Partial<AccountRecord> = {}): AccountRecord => ({
  uid: unique('uid'),
  type: 'user',
  accountName: unique('user-'),
  description: '',
  createdAt: T0,
  updatedAt: T0,
  ...overrides,
});

const dataset = (ownerUid: string, overrides: Partial<DatasetRecord> = {}): DatasetRecord => ({
  id: unique('ds'),
  ownerUid,
  name: 'Pizzas',
  displayName: 'Pizzas',
  description: '',
  accessLevel: 'public',
  prefixes: [{ prefixLabel: 'ex', iri: 'https://example.org/' }],
  exampleResources: [],
  tags: ['food'],
  createdAt: T0,
  updatedAt: T0,
  graphCount: 0,
  statements: 0,
  serviceCount: 0,
  assetCount: 0,
  revision: 1,
  ...overrides,
});

const job = (datasetId: string, overrides: Partial<JobRecord> = {}): JobRecord => ({
  jobId: unique('job'),
  datasetId,
  type: 'upload',
  status: 'created',
  defaultGraphName: 'https://example.org/graphs/default',
  overwriteAll: false,
  mergeGraphs: false,
  createdAt: T0,
  updatedAt: T0,
  ...overrides,
});

const asset = (datasetId: string, overrides: Partial<AssetRecord> = {}): AssetRecord => ({
  identifier: unique('asset'),
  datasetId,
  assetName: 'menu.pdf',
  createdAt: T0,
  updatedAt: T0,
  versions: [{ id: 'v1', uploadedAt: T0, fileSize: 10, blobKey: 'assets/a/v1', contentType: 'application/pdf' }],
  ...overrides,
});

const service = (datasetId: string, overrides: Partial<ServiceRecord> = {}): ServiceRecord => ({
  id: unique('svc'),
  datasetId,
  name: 'Main',
  type: 'virtuoso',
  reasoner: 'None',
  status: 'starting',
  snapshot: { manifestKey: 'manifests/m1', statements: 3, graphCount: 1 },
  createdAt: T0,
  updatedAt: T0,
  ...overrides,
});

const query = (ownerUid: string, overrides: Partial<SavedQueryRecord> = {}): SavedQueryRecord => ({
  id: unique('q'),
  ownerUid,
  name: 'Top-Pizzas',
  description: '',
  accessLevel: 'public',
  serviceType: 'speedy',
  tags: [],
  numberOfVersions: 1,
  createdAt: T0,
  updatedAt: T0,
  ...overrides,
});

const queryVersion = (queryId: string, version: number): QueryVersionRecord => ({
  queryId,
  version,
  query: `SELECT * { ?s ?p ?o } LIMIT ${version}`,
  renderConfig: { output: 'table' },
  variables: [],
  createdAt: T0,
  accountName: 'alice',
});

/** Every item of a listing, batch by batch, following cursors. */
async function listAll<T>(list: (after: string | undefined) => Promise<{ items: { item: T; cursor: string }[]; more: boolean }>): Promise<{ items: T[]; batches: number }> {
  const items: T[] = [];
  let after: string | undefined;
  let batches = 0;
  for (;;) {
    const batch = await list(after);
    batches++;
    items.push(...batch.items.map((p) => p.item));
    if (!batch.more || batch.items.length === 0) break;
    after = batch.items[batch.items.length - 1]!.cursor;
    if (batches > 200) throw new Error('listing does not end');
  }
  return { items, batches };
}

const rawKey = (key: { pk: string; sk: string }) => ({ pk: { S: key.pk }, sk: { S: key.sk } });

const VARIANTS: [string, (inner: MetadataStore) => MetadataStore][] = [
  ['DynamoDbMetadataStore', (inner) => inner],
  ['DynamoDbMetadataStore behind the embedded read cache', cachedMetadataStore],
];

describe.each(VARIANTS)('MetadataStore contract: %s', (_name, wrap) => {
  beforeAll(async () => {
    // Each variant gets its own table (the instance secret and the instance-wide listings are per table).
    const table = unique(`${TABLE}-`);
    await ensureTable(client, table);
    tableName = table;
    store = wrap(new DynamoDbMetadataStore(documentClient(client), table));
  });

  describe('instance secret', () => {
    it('is null until ensured; the first candidate wins, later ones get it back', async () => {
      expect(await store.getInstanceSecret()).toBeNull();
      expect(await store.ensureInstanceSecret('first')).toBe('first');
      expect(await store.ensureInstanceSecret('second')).toBe('first');
      expect(await store.getInstanceSecret()).toBe('first');
    });
  });

  describe('accounts', () => {
    it('creates an account and finds it by uid and by name in any case', async () => {
      const a = account({ accountName: unique('Alice-'), email: 'alice@example.org', passwordHash: 'scrypt$x', customRoles: [{ name: 'editor', permissions: ['writeDatasets'] }] });
      await store.createAccount(a);
      expect(await store.getAccount(a.uid)).toEqual(a);
      expect(await store.getAccountByName(a.accountName.toUpperCase())).toEqual(a);
      expect(await store.getAccount(unique('nobody'))).toBeNull();
      expect(await store.getAccountByName(unique('nobody-'))).toBeNull();
    });

    it('refuses a second account of the same name in any case, and leaves the first alone', async () => {
      const a = account();
      await store.createAccount(a);
      const twin = account({ accountName: a.accountName.toUpperCase() });
      await expect(store.createAccount(twin)).rejects.toThrow(new ConflictError(`An account named "${twin.accountName}" already exists.`));
      expect(await store.getAccount(twin.uid)).toBeNull();
      expect(await store.getAccountByName(a.accountName)).toEqual(a);
    });

    it('replaces an account only while its stored updatedAt is the expected one', async () => {
      const a = account();
      await store.createAccount(a);
      const changed = { ...a, description: 'changed', updatedAt: T1 };
      await store.replaceAccount(changed, T0);
      expect(await store.getAccount(a.uid)).toEqual(changed);
      await expect(store.replaceAccount({ ...a, description: 'stale' }, T0)).rejects.toBeInstanceOf(ConflictError);
      expect((await store.getAccount(a.uid))?.description).toBe('changed');
    });

    it('renames an account: the new name finds it, the old one is free; a taken name is refused', async () => {
      const a = account();
      const b = account();
      await store.createAccount(a);
      await store.createAccount(b);
      const newName = unique('renamed-');
      const renamed = await store.renameAccount(a, newName, T1);
      expect(renamed).toEqual({ ...a, accountName: newName, updatedAt: T1 });
      expect(await store.getAccountByName(newName)).toEqual(renamed);
      expect(await store.getAccountByName(a.accountName)).toBeNull();
      await store.createAccount(account({ accountName: a.accountName }));

      await expect(store.renameAccount(renamed, b.accountName, T1)).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getAccount(a.uid)).toEqual(renamed);
      // A change of case only keeps the account and its name.
      const recased = await store.renameAccount(renamed, newName.toUpperCase(), '2024-05-03T00:00:00.000Z');
      expect(await store.getAccountByName(newName)).toEqual(recased);
    });

    it('deletes an account and frees its name', async () => {
      const a = account();
      await store.createAccount(a);
      await store.deleteAccount(a);
      expect(await store.getAccount(a.uid)).toBeNull();
      expect(await store.getAccountByName(a.accountName)).toBeNull();
      await store.createAccount(account({ accountName: a.accountName }));
    });

    it('lists accounts by name, in batches', async () => {
      const prefix = unique('list-');
      for (const n of ['c', 'A', 'b']) await store.createAccount(account({ accountName: `${prefix}${n}` }));
      const { items, batches } = await listAll((after) => store.listAccounts({ batch: 2, after }));
      expect(items.map((a) => a.accountName).filter((n) => n.startsWith(prefix))).toEqual([`${prefix}A`, `${prefix}b`, `${prefix}c`]);
      expect(batches).toBeGreaterThanOrEqual(2);
    });

    it('counts administrators', async () => {
      const before = await store.countAdmins();
      await store.createAccount(account({ isAdmin: true }));
      await store.createAccount(account({ isAdmin: false }));
      expect(await store.countAdmins()).toBe(before + 1);
    });
  });

  describe('memberships', () => {
    it('are found by organisation and user, listed both ways, and deleted', async () => {
      const org = unique('org');
      const [u1, u2] = [unique('u'), unique('u')];
      const m1: MembershipRecord = { orgUid: org, userUid: u1, role: 'owner', createdAt: T0, updatedAt: T0 };
      const m2: MembershipRecord = { orgUid: org, userUid: u2, role: 'member', createdAt: T0, updatedAt: T0 };
      await store.putMembership(m1);
      await store.putMembership(m2);
      expect(await store.getMembership(org, u1)).toEqual(m1);
      expect((await store.listMembers(org)).sort((a, b) => a.userUid.localeCompare(b.userUid))).toEqual([m1, m2].sort((a, b) => a.userUid.localeCompare(b.userUid)));
      expect(await store.listMembershipsOfUser(u2)).toEqual([m2]);
      // Putting again replaces (a role change).
      await store.putMembership({ ...m2, role: 'owner', updatedAt: T1 });
      expect((await store.getMembership(org, u2))?.role).toBe('owner');
      await store.deleteMembership(org, u1);
      expect(await store.getMembership(org, u1)).toBeNull();
      expect(await store.listMembershipsOfUser(u1)).toEqual([]);
    });
  });

  describe('tokens', () => {
    it('stores tokens once, lists only the tokens of the account, and says whether a delete removed one', async () => {
      const uid = unique('uid');
      const token: TokenRecord = { uid, tokenId: 't1', description: 'ci', readOnly: true, tokenHash: 'h1', createdAt: T0 };
      await store.putToken(token);
      await expect(store.putToken({ ...token, description: 'again' })).rejects.toBeInstanceOf(ConflictError);
      await store.putMembership({ orgUid: uid, userUid: unique('u'), role: 'member', createdAt: T0, updatedAt: T0 });
      expect(await store.getToken(uid, 't1')).toEqual(token);
      expect(await store.listTokens(uid)).toEqual([token]);
      expect(await store.deleteToken(uid, 't1')).toBe(true);
      expect(await store.deleteToken(uid, 't1')).toBe(false);
      expect(await store.getToken(uid, 't1')).toBeNull();
    });
  });

  describe('sign-in attempts', () => {
    const now = '2024-05-01T10:00:00.000Z';
    const windowStartsAfter = '2024-05-01T09:45:00.000Z';
    const expiresAt = Date.parse(now) / 1000 + 900;

    it('counts attempts in the current window, takes one back, starts a new window when it ended, and clears', async () => {
      const key = unique('alice-');
      expect(await store.countLoginAttempt(key, now, windowStartsAfter, expiresAt)).toEqual({ count: 1, windowStart: now });
      expect(await store.countLoginAttempt(key, '2024-05-01T10:01:00.000Z', windowStartsAfter, expiresAt)).toEqual({ count: 2, windowStart: now });
      await store.releaseLoginAttempt(key, windowStartsAfter);
      expect((await store.countLoginAttempt(key, now, windowStartsAfter, expiresAt)).count).toBe(2);
      // The window began before `windowStartsAfter`: a new one starts.
      const later = '2024-05-01T10:20:00.000Z';
      expect(await store.countLoginAttempt(key, later, '2024-05-01T10:05:00.000Z', expiresAt)).toEqual({ count: 1, windowStart: later });
      await store.clearLoginAttempts(key);
      expect((await store.countLoginAttempt(key, later, windowStartsAfter, expiresAt)).count).toBe(1);
      // Releasing where nothing is counted is harmless.
      await store.releaseLoginAttempt(unique('nobody-'), windowStartsAfter);
    });

    it('counts every one of concurrent attempts', async () => {
      const key = unique('burst-');
      const counts = await Promise.all(Array.from({ length: 6 }, () => store.countLoginAttempt(key, now, windowStartsAfter, expiresAt)));
      expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });

  describe('sessions', () => {
    it('are stored once, read back and deleted', async () => {
      const session = { sessionHash: unique('s'), uid: 'u1', csrfToken: 'csrf', generation: 2, createdAt: T0, expiresAt: 1_900_000_000 };
      await store.putSession(session);
      await expect(store.putSession(session)).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getSession(session.sessionHash)).toEqual(session);
      await store.deleteSession(session.sessionHash);
      expect(await store.getSession(session.sessionHash)).toBeNull();
    });
  });

  describe('datasets', () => {
    it('creates a dataset and finds it by owner and name in any case, and by id; a second of that name is refused', async () => {
      const owner = unique('owner');
      const d = dataset(owner);
      await store.createDataset(d);
      expect(await store.getDataset(owner, 'PIZZAS')).toEqual(d);
      expect(await store.getDatasetById(d.id)).toEqual(d);
      expect(await store.getDataset(unique('other'), 'Pizzas')).toBeNull();
      expect(await store.getDatasetById(unique('none'))).toBeNull();
      await expect(store.createDataset(dataset(owner, { name: 'pizzas' }))).rejects.toBeInstanceOf(ConflictError);
    });

    it('updates a dataset only from the revision before', async () => {
      const owner = unique('owner');
      const d = dataset(owner);
      await store.createDataset(d);
      const next = { ...d, description: 'More pizza', revision: 2, updatedAt: T1 };
      await store.updateDataset(next);
      expect(await store.getDatasetById(d.id)).toEqual(next);
      await expect(store.updateDataset({ ...d, description: 'stale', revision: 2 })).rejects.toBeInstanceOf(ConflictError);
      expect((await store.getDataset(owner, 'Pizzas'))?.description).toBe('More pizza');
    });

    it('renames a dataset (the next revision); the old name is free, a taken name is refused', async () => {
      const owner = unique('owner');
      const d = dataset(owner);
      await store.createDataset(d);
      await store.createDataset(dataset(owner, { name: 'Pasta' }));
      const renamed = await store.renameDataset(d, 'Pizzeria');
      expect(renamed).toEqual({ ...d, name: 'Pizzeria', revision: 2 });
      expect(await store.getDataset(owner, 'pizzeria')).toEqual(renamed);
      expect(await store.getDataset(owner, 'Pizzas')).toBeNull();
      expect(await store.getDatasetById(d.id)).toEqual(renamed);
      await expect(store.renameDataset(renamed, 'PASTA')).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getDatasetById(d.id)).toEqual(renamed);
      // A change of case only is an update of the same dataset.
      const recased = await store.renameDataset(renamed, 'PIZZERIA');
      expect(await store.getDataset(owner, 'pizzeria')).toEqual(recased);
    });

    it('finds a dataset by id from its own key, not from gsi2 (which lags on AWS: here the item is taken out of the index)', async () => {
      const owner = unique('owner');
      const d = dataset(owner);
      // What a lagging index looks like to a reader: the item is not in gsi2 yet, or has old values there.
      const leaveIndex = () =>
        client.send(new UpdateItemCommand({ TableName: tableName, Key: rawKey(K.dataset(owner, d.name)), UpdateExpression: 'REMOVE gsi2pk, gsi2sk' }));
      await store.createDataset(d);
      await leaveIndex();
      expect(await store.getDatasetById(d.id)).toEqual(d);
      const next = { ...d, description: 'swapped', revision: 2, updatedAt: T1 };
      await store.updateDataset(next);
      await leaveIndex();
      expect(await store.getDatasetById(d.id)).toEqual(next);
      const renamed = await store.renameDataset(next, 'Pizzeria');
      await client.send(new UpdateItemCommand({ TableName: tableName, Key: rawKey(K.dataset(owner, 'Pizzeria')), UpdateExpression: 'REMOVE gsi2pk, gsi2sk' }));
      expect(await store.getDatasetById(d.id)).toEqual(renamed);
    });

    it('a deleted dataset is not found by its id, even when a new dataset takes its name', async () => {
      const owner = unique('owner');
      const d = dataset(owner);
      await store.createDataset(d);
      await store.deleteDataset(d);
      const again = dataset(owner);
      await store.createDataset(again);
      expect(await store.getDatasetById(d.id)).toBeNull();
      expect(await store.getDatasetById(again.id)).toEqual(again);
    });

    it('deletes a dataset and frees its name', async () => {
      const owner = unique('owner');
      const d = dataset(owner);
      await store.createDataset(d);
      await store.deleteDataset(d);
      expect(await store.getDataset(owner, 'Pizzas')).toBeNull();
      expect(await store.getDatasetById(d.id)).toBeNull();
      await store.createDataset(dataset(owner));
    });

    it("lists an owner's datasets by name, and the instance's by creation time, in batches", async () => {
      const owner = unique('owner');
      const names = ['delta', 'Alpha', 'charlie', 'Bravo'];
      for (const [i, name] of names.entries()) await store.createDataset(dataset(owner, { name, createdAt: `2030-01-0${i + 1}T00:00:00.000Z` }));
      await store.createDataset(dataset(unique('other'), { name: 'alpha' }));
      const own = await listAll((after) => store.listDatasets(owner, { batch: 3, after }));
      expect(own.items.map((d) => d.name)).toEqual(['Alpha', 'Bravo', 'charlie', 'delta']);
      expect(own.batches).toBeGreaterThanOrEqual(2);
      const all = await listAll((after) => store.listDatasets(null, { batch: 3, after }));
      expect(all.items.filter((d) => d.ownerUid === owner).map((d) => d.name)).toEqual(names);
    });
  });

  describe('import jobs and their files', () => {
    it('creates a job once, updates it only from an expected status, lists and deletes it with its files', async () => {
      const datasetId = unique('ds');
      const j = job(datasetId);
      await store.createJob(j);
      await expect(store.createJob(j)).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getJob(datasetId, j.jobId)).toEqual(j);

      const pending = { ...j, status: 'pending' as const, updatedAt: T1 };
      await store.updateJob(pending, ['created']);
      expect(await store.getJob(datasetId, j.jobId)).toEqual(pending);
      await expect(store.updateJob({ ...j, status: 'canceled' }, ['created', 'downloading'])).rejects.toThrow(new ConflictError('The job is no longer created or downloading.'));
      expect((await store.getJob(datasetId, j.jobId))?.status).toBe('pending');

      const file = { jobId: j.jobId, datasetId, fileId: 'f1', fileName: 'pizzas.ttl', fileSize: 42, blobKey: 'uploads/f1', createdAt: T0 };
      await store.putJobFile(file);
      const other = job(datasetId);
      await store.createJob(other);
      expect(await store.listJobFiles(datasetId, j.jobId)).toEqual([file]);
      expect((await store.listJobs(datasetId)).map((x) => x.jobId).sort()).toEqual([j.jobId, other.jobId].sort());

      await store.deleteJob(datasetId, j.jobId);
      expect(await store.getJob(datasetId, j.jobId)).toBeNull();
      expect(await store.listJobFiles(datasetId, j.jobId)).toEqual([]);
      expect((await store.listJobs(datasetId)).map((x) => x.jobId)).toEqual([other.jobId]);
    });
  });

  describe('assets', () => {
    it('creates an asset once, replaces it only from the expected updatedAt, lists and deletes it', async () => {
      const datasetId = unique('ds');
      const a = asset(datasetId);
      await store.createAsset(a);
      await expect(store.createAsset(a)).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getAsset(datasetId, a.identifier)).toEqual(a);

      const versioned = { ...a, updatedAt: T1, versions: [...a.versions, { id: 'v2', uploadedAt: T1, fileSize: 12, blobKey: 'assets/a/v2' }] };
      await store.replaceAsset(versioned, T0);
      expect(await store.getAsset(datasetId, a.identifier)).toEqual(versioned);
      await expect(store.replaceAsset({ ...a, assetName: 'stale' }, T0)).rejects.toBeInstanceOf(ConflictError);

      expect(await store.listAssets(datasetId)).toEqual([versioned]);
      await store.deleteAsset(datasetId, a.identifier);
      expect(await store.getAsset(datasetId, a.identifier)).toBeNull();
      expect(await store.listAssets(datasetId)).toEqual([]);
    });
  });

  describe('services', () => {
    it('creates a service once per name in any case, replaces it only from the expected updatedAt, lists and deletes it', async () => {
      const datasetId = unique('ds');
      const s = service(datasetId);
      await store.createService(s);
      await expect(store.createService(service(datasetId, { name: 'MAIN' }))).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getService(datasetId, 'main')).toEqual(s);

      const running = { ...s, status: 'running' as const, loadedAt: T1, loadedStatements: 3, updatedAt: T1 };
      await store.replaceService(running, T0);
      expect(await store.getService(datasetId, 'Main')).toEqual(running);
      await expect(store.replaceService({ ...s, status: 'error' }, T0)).rejects.toBeInstanceOf(ConflictError);
      expect(await store.listServices(datasetId)).toEqual([running]);

      await store.deleteService(datasetId, 'Main');
      expect(await store.getService(datasetId, 'Main')).toBeNull();
      expect(await store.listServices(datasetId)).toEqual([]);
    });

    it('renames a service; the old name is free, a taken name is refused', async () => {
      const datasetId = unique('ds');
      const s = service(datasetId);
      await store.createService(s);
      await store.createService(service(datasetId, { name: 'Backup' }));
      const renamed = await store.renameService(s, 'Primary', T1);
      expect(renamed).toEqual({ ...s, name: 'Primary', updatedAt: T1 });
      expect(await store.getService(datasetId, 'primary')).toEqual(renamed);
      expect(await store.getService(datasetId, 'Main')).toBeNull();
      await expect(store.renameService(renamed, 'backup', T1)).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getService(datasetId, 'Primary')).toEqual(renamed);
    });
  });

  describe('saved queries and their versions', () => {
    it('creates a query once per name in any case and replaces it only from the expected updatedAt', async () => {
      const owner = unique('owner');
      const q = query(owner);
      await store.createQuery(q);
      await expect(store.createQuery(query(owner, { name: 'top-pizzas' }))).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getQuery(owner, 'TOP-PIZZAS')).toEqual(q);
      const saved = { ...q, numberOfVersions: 2, updatedAt: T1 };
      await store.replaceQuery(saved, T0);
      expect(await store.getQuery(owner, 'Top-Pizzas')).toEqual(saved);
      await expect(store.replaceQuery({ ...q, description: 'stale' }, T0)).rejects.toBeInstanceOf(ConflictError);
    });

    it('renames a query and leaves a redirect under the old name, until a new query takes that name', async () => {
      const owner = unique('owner');
      const q = query(owner);
      await store.createQuery(q);
      const renamed = await store.renameQuery(q, 'Best-Pizzas', T1);
      expect(renamed).toEqual({ ...q, name: 'Best-Pizzas', updatedAt: T1 });
      expect(await store.getQuery(owner, 'best-pizzas')).toEqual(renamed);
      expect(await store.getQuery(owner, 'Top-Pizzas')).toBeNull();
      expect(await store.queryRedirect(owner, 'top-pizzas')).toBe('Best-Pizzas');
      expect(await store.queryRedirect(owner, unique('never-'))).toBeNull();
      await store.createQuery(query(owner));
      expect(await store.queryRedirect(owner, 'Top-Pizzas')).toBeNull();
      await expect(store.renameQuery(renamed, 'top-pizzas', T1)).rejects.toBeInstanceOf(ConflictError);
    });

    it('stores each version once and deletes a query with its versions', async () => {
      const owner = unique('owner');
      const q = query(owner, { numberOfVersions: 2 });
      await store.createQuery(q);
      await store.putQueryVersion(queryVersion(q.id, 1));
      await store.putQueryVersion(queryVersion(q.id, 2));
      await expect(store.putQueryVersion({ ...queryVersion(q.id, 2), query: 'ASK {}' })).rejects.toThrow(new ConflictError('Version 2 was saved meanwhile; retry.'));
      expect(await store.getQueryVersion(q.id, 2)).toEqual(queryVersion(q.id, 2));
      expect(await store.getQueryVersion(q.id, 3)).toBeNull();
      await store.deleteQuery(q);
      expect(await store.getQuery(owner, q.name)).toBeNull();
      expect(await store.getQueryVersion(q.id, 1)).toBeNull();
      expect(await store.getQueryVersion(q.id, 2)).toBeNull();
    });

    it("lists an owner's queries by name, and the instance's by creation time, in batches", async () => {
      const owner = unique('owner');
      const names = ['delta', 'Alpha', 'charlie', 'Bravo'];
      for (const [i, name] of names.entries()) await store.createQuery(query(owner, { name, createdAt: `2031-01-0${i + 1}T00:00:00.000Z` }));
      const own = await listAll((after) => store.listQueries(owner, { batch: 3, after }));
      expect(own.items.map((q) => q.name)).toEqual(['Alpha', 'Bravo', 'charlie', 'delta']);
      expect(own.batches).toBeGreaterThanOrEqual(2);
      const all = await listAll((after) => store.listQueries(null, { batch: 3, after }));
      expect(all.items.filter((q) => q.ownerUid === owner).map((q) => q.name)).toEqual(names);
    });
  });
});
