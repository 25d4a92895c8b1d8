/** MetadataStore port: accounts, datasets, jobs, assets, services and saved queries as stored. */
import type { AccountRecord, MembershipRecord, SessionRecord, TokenRecord } from './records/accounts.js';
import type { AssetRecord, JobFileRecord, JobRecord, JobStatus } from './records/data.js';
import type { DatasetRecord } from './records/datasets.js';
import type { QueryVersionRecord, SavedQueryRecord } from './records/queries.js';
import type { ServiceRecord } from './records/sparql.js';

/** One item of a listing, with the opaque cursor that resumes the listing right after it. */
export interface Positioned<T> {
  item: T;
  cursor: string;
}

export interface Batch<T> {
  items: Positioned<T>[];
  /** True when the store may hold more items after the last one returned. */
  more: boolean;
}

/** Sign-in attempts counted under one key in the current window. */
export interface LoginAttempts {
  count: number;
  /** ISO instant the window began. */
  windowStart: string;
}

export interface ListRequest {
  /** Resume after this cursor (from `Positioned.cursor`). */
  after?: string;
  /** Upper bound on the items returned in one batch. */
  batch: number;
}

/**
 * Metadata of the platform (DynamoDB on AWS, dynalite locally). Every write is one conditional
 * single-item write, so no operation needs a transaction. Creating what exists throws a
 * `ConflictError`; a failed condition on update throws a `ConflictError` too.
 */
export interface MetadataStore {
  /** The instance secret, or null before the first token was ever issued. Read-only. */
  getInstanceSecret(): Promise<string | null>;
  /** Returns the instance secret, storing `candidate` if none exists yet (first writer wins). */
  ensureInstanceSecret(candidate: string): Promise<string>;

  /** Claims the name and writes the account; ConflictError if the name is taken. */
  createAccount(account: AccountRecord): Promise<void>;
  getAccount(uid: string): Promise<AccountRecord | null>;
  getAccountByName(accountName: string): Promise<AccountRecord | null>;
  /** Writes the whole record if `updatedAt` still equals `expectedUpdatedAt`. */
  replaceAccount(account: AccountRecord, expectedUpdatedAt: string): Promise<void>;
  /** Moves the name claim, then rewrites the account. ConflictError if the new name is taken. */
  renameAccount(account: AccountRecord, newName: string, updatedAt: string): Promise<AccountRecord>;
  /** Removes the account record and its name claim (its other items are removed by the caller). */
  deleteAccount(account: AccountRecord): Promise<void>;
  listAccounts(request: ListRequest): Promise<Batch<AccountRecord>>;
  countAdmins(): Promise<number>;

  putMembership(membership: MembershipRecord): Promise<void>;
  getMembership(orgUid: string, userUid: string): Promise<MembershipRecord | null>;
  deleteMembership(orgUid: string, userUid: string): Promise<void>;
  listMembers(orgUid: string): Promise<MembershipRecord[]>;
  listMembershipsOfUser(userUid: string): Promise<MembershipRecord[]>;

  putToken(token: TokenRecord): Promise<void>;
  getToken(uid: string, tokenId: string): Promise<TokenRecord | null>;
  listTokens(uid: string): Promise<TokenRecord[]>;
  /** Returns false when there was no such token. */
  deleteToken(uid: string, tokenId: string): Promise<boolean>;

  /**
   * Counts one sign-in attempt under `key` (an account name or a client address): adds one to the
   * window that began after `windowStartsAfter`, or starts a new window at `now` with a count of 1.
   * Conditional single-item writes, so concurrent attempts are all counted. `expiresAt` (epoch
   * seconds) only lets the table's TTL clean up; expiry is decided by the timestamps.
   */
  countLoginAttempt(key: string, now: string, windowStartsAfter: string, expiresAt: number): Promise<LoginAttempts>;
  /** Takes one attempt back (it signed in) while the window that began after `windowStartsAfter` lasts. */
  releaseLoginAttempt(key: string, windowStartsAfter: string): Promise<void>;
  clearLoginAttempts(key: string): Promise<void>;

  putSession(session: SessionRecord): Promise<void>;
  getSession(sessionHash: string): Promise<SessionRecord | null>;
  deleteSession(sessionHash: string): Promise<void>;

  /** ConflictError if the owner already has a dataset of that name (case-insensitive). */
  createDataset(dataset: DatasetRecord): Promise<void>;
  getDataset(ownerUid: string, name: string): Promise<DatasetRecord | null>;
  getDatasetById(id: string): Promise<DatasetRecord | null>;
  /** Writes `dataset` (with its revision already incremented) if the stored revision is `dataset.revision - 1`. */
  updateDataset(dataset: DatasetRecord): Promise<void>;
  /** Claims the new name, then removes the old item; ConflictError if the name is taken. */
  renameDataset(dataset: DatasetRecord, newName: string): Promise<DatasetRecord>;
  deleteDataset(dataset: DatasetRecord): Promise<void>;
  /** Datasets of one owner by name, or of the whole instance by creation time. */
  listDatasets(ownerUid: string | null, request: ListRequest): Promise<Batch<DatasetRecord>>;

  createJob(job: JobRecord): Promise<void>;
  getJob(datasetId: string, jobId: string): Promise<JobRecord | null>;
  /** Writes the job if its stored status is one of `expected`; ConflictError otherwise. */
  updateJob(job: JobRecord, expected: readonly JobStatus[]): Promise<void>;
  listJobs(datasetId: string): Promise<JobRecord[]>;
  deleteJob(datasetId: string, jobId: string): Promise<void>;
  putJobFile(file: JobFileRecord): Promise<void>;
  listJobFiles(datasetId: string, jobId: string): Promise<JobFileRecord[]>;
  /** Deleting a missing file is not an error. */
  deleteJobFile(datasetId: string, jobId: string, fileId: string): Promise<void>;

  /** ConflictError if the identifier exists. */
  createAsset(asset: AssetRecord): Promise<void>;
  getAsset(datasetId: string, identifier: string): Promise<AssetRecord | null>;
  /** Writes the asset if its stored `updatedAt` is `expectedUpdatedAt`; ConflictError otherwise. */
  replaceAsset(asset: AssetRecord, expectedUpdatedAt: string): Promise<void>;
  deleteAsset(datasetId: string, identifier: string): Promise<void>;
  listAssets(datasetId: string): Promise<AssetRecord[]>;

  /** ConflictError if the dataset has a service of that name (case-insensitive). */
  createService(service: ServiceRecord): Promise<void>;
  getService(datasetId: string, name: string): Promise<ServiceRecord | null>;
  /** Writes the service if its stored `updatedAt` is `expectedUpdatedAt`; ConflictError otherwise. */
  replaceService(service: ServiceRecord, expectedUpdatedAt: string): Promise<void>;
  /** Claims the new name, then removes the old item; ConflictError if the name is taken. */
  renameService(service: ServiceRecord, newName: string, updatedAt: string): Promise<ServiceRecord>;
  deleteService(datasetId: string, name: string): Promise<void>;
  listServices(datasetId: string): Promise<ServiceRecord[]>;

  /** ConflictError if the owner has a query of that name (case-insensitive). */
  createQuery(query: SavedQueryRecord): Promise<void>;
  getQuery(ownerUid: string, name: string): Promise<SavedQueryRecord | null>;
  /** Writes the query if its stored `updatedAt` is `expectedUpdatedAt`; ConflictError otherwise. */
  replaceQuery(query: SavedQueryRecord, expectedUpdatedAt: string): Promise<void>;
  /** Claims the new name, leaves a redirect under the old one, removes the old item. */
  renameQuery(query: SavedQueryRecord, newName: string, updatedAt: string): Promise<SavedQueryRecord>;
  /** The current name of a query renamed away from `oldName`, if any. */
  queryRedirect(ownerUid: string, oldName: string): Promise<string | null>;
  deleteQuery(query: SavedQueryRecord): Promise<void>;
  /** Queries of one owner by name, or of the whole instance by creation time. */
  listQueries(ownerUid: string | null, request: ListRequest): Promise<Batch<SavedQueryRecord>>;
  /** ConflictError if the version exists (two saves at once: one wins, the other retries). */
  putQueryVersion(version: QueryVersionRecord): Promise<void>;
  getQueryVersion(queryId: string, version: number): Promise<QueryVersionRecord | null>;
}
