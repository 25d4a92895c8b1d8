import type { AccessService } from './access-service.js';
import type { AccountRecord } from '../accounts/accounts.js';
import type { Caller } from '../shared/caller.js';
import { newDefaultGraphName, type AccessLevel, type DatasetRecord, type License, type Prefix } from './datasets.js';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.js';
import { assertAbsoluteIri, assertDatasetName, assertPrefixLabel } from '../shared/names.js';
import { collectPage, type Page, type PageRequest } from '../shared/paging.js';
import type { Platform } from '../shared/platform.js';

export interface NewDatasetInput {
  name: string;
  displayName?: string;
  description?: string;
  accessLevel?: AccessLevel;
  license?: License;
  prefixes?: Prefix[];
}

export interface DatasetPatch {
  name?: string;
  displayName?: string;
  description?: string;
  accessLevel?: AccessLevel;
  license?: License | null;
  exampleResources?: string[];
  tags?: string[];
}

export const MAX_PREFIXES = 500;

export interface DatasetWithOwner {
  dataset: DatasetRecord;
  owner: AccountRecord;
}

function checkPrefixes(prefixes: Prefix[]): Prefix[] {
  if (prefixes.length > MAX_PREFIXES) throw new ValidationError(`prefixes: at most ${MAX_PREFIXES} prefixes per dataset.`);
  prefixes.forEach((p, i) => {
    assertPrefixLabel(p.prefixLabel, `prefixes[${i}].prefixLabel`);
    assertAbsoluteIri(p.iri, `prefixes[${i}].iri`);
  });
  return prefixes;
}

/** Merges prefixes by label: later ones win, order of first appearance kept. */
function mergePrefixes(current: Prefix[], added: Prefix[]): Prefix[] {
  const byLabel = new Map(current.map((p) => [p.prefixLabel, p] as const));
  for (const p of added) byLabel.set(p.prefixLabel, { prefixLabel: p.prefixLabel, iri: p.iri });
  return [...byLabel.values()];
}

/** Datasets: create, read, change, delete and list, with access control on every call. */
export class DatasetService {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
  ) {}

  /** `apiUrl`: the API's public URL, under which the dataset's default graph is named for good. */
  async create(caller: Caller | null, accountName: string, input: NewDatasetInput, apiUrl: string): Promise<DatasetWithOwner> {
    const owner = await this.access.account(accountName);
    await this.access.require(caller, owner, 'writeDatasets', 'create datasets');
    assertDatasetName(input.name);
    const now = this.platform.clock.now().toISOString();
    const dataset: DatasetRecord = {
      id: this.platform.ids.newId(),
      ownerUid: owner.uid,
      name: input.name,
      displayName: input.displayName ?? input.name,
      description: input.description ?? '',
      accessLevel: input.accessLevel ?? 'private',
      license: input.license,
      prefixes: checkPrefixes(mergePrefixes([], input.prefixes ?? [])),
      defaultGraphName: newDefaultGraphName(apiUrl, owner.accountName, input.name),
      exampleResources: [],
      tags: [],
      createdAt: now,
      updatedAt: now,
      graphCount: 0,
      statements: 0,
      serviceCount: 0,
      assetCount: 0,
      revision: 1,
    };
    await this.platform.store.createDataset(dataset);
    return { dataset, owner };
  }

  get(caller: Caller | null, accountName: string, datasetName: string): Promise<DatasetWithOwner> {
    return this.access.readableDataset(caller, accountName, datasetName);
  }

  async update(caller: Caller | null, accountName: string, datasetName: string, patch: DatasetPatch): Promise<DatasetWithOwner> {
    const { owner, dataset } = await this.access.writableDataset(caller, accountName, datasetName, 'change datasets');
    const next: DatasetRecord = {
      ...dataset,
      updatedAt: this.platform.clock.now().toISOString(),
      revision: dataset.revision + 1,
    };
    if (patch.displayName !== undefined) next.displayName = patch.displayName;
    if (patch.description !== undefined) next.description = patch.description;
    if (patch.accessLevel !== undefined) next.accessLevel = patch.accessLevel;
    if (patch.license !== undefined) next.license = patch.license ?? undefined;
    if (patch.tags !== undefined) next.tags = patch.tags;
    if (patch.exampleResources !== undefined) {
      next.exampleResources = patch.exampleResources.map((iri, i) => assertAbsoluteIri(iri, `exampleResources[${i}]`));
    }
    if (patch.name !== undefined && patch.name !== dataset.name) {
      assertDatasetName(patch.name);
      // The rename writes the new item with every other change in it.
      const renamed = await this.platform.store.renameDataset({ ...next, revision: dataset.revision }, patch.name);
      return { owner, dataset: renamed };
    }
    await this.platform.store.updateDataset(next);
    return { owner, dataset: next };
  }

  async delete(caller: Caller | null, accountName: string, datasetName: string): Promise<void> {
    const { dataset } = await this.access.writableDataset(caller, accountName, datasetName, 'delete datasets');
    await this.platform.store.deleteDataset(dataset);
    await this.removeContents(dataset.id);
  }

  /**
   * Removes every dataset of an account that is being deleted (a step of the account's deletion).
   * Contents go before each record: a failure part-way leaves the record, so the account's
   * deletion retried finds the dataset again and finishes it (record first, a retry would find
   * nothing and leave the blobs behind for good).
   */
  async removeAllOf(accountUid: string): Promise<void> {
    const store = this.platform.store;
    for (let round = 0; round < 1000; round++) {
      const batch = await store.listDatasets(accountUid, { batch: 100 });
      for (const { item } of batch.items) {
        await this.removeContents(item.id);
        await store.deleteDataset(item);
      }
      if (!batch.more || batch.items.length === 0) break;
    }
  }

  /**
   * Removes what a deleted dataset owned: jobs, assets, service records and every blob under its prefix. The
   * dataset record goes first, so a failure here leaves unreachable leftovers, never a half dataset.
   */
  async removeContents(datasetId: string): Promise<void> {
    const { store, blobs } = this.platform;
    for (const job of await store.listJobs(datasetId)) await store.deleteJob(datasetId, job.jobId);
    for (const asset of await store.listAssets(datasetId)) await store.deleteAsset(datasetId, asset.identifier);
    for (const service of await store.listServices(datasetId)) await store.deleteService(datasetId, service.name);
    for await (const blob of blobs.data.list(`datasets/${datasetId}/`)) await blobs.data.delete(blob.key);
  }

  async addPrefixes(caller: Caller | null, accountName: string, datasetName: string, prefixes: Prefix[]): Promise<DatasetWithOwner> {
    const { owner, dataset } = await this.access.writableDataset(caller, accountName, datasetName, 'change prefixes');
    const next = {
      ...dataset,
      prefixes: checkPrefixes(mergePrefixes(dataset.prefixes, prefixes)),
      updatedAt: this.platform.clock.now().toISOString(),
      revision: dataset.revision + 1,
    };
    await this.platform.store.updateDataset(next);
    return { owner, dataset: next };
  }

  /** Replaces every prefix of the dataset (PUT …/prefixes). */
  async replacePrefixes(caller: Caller | null, accountName: string, datasetName: string, prefixes: Prefix[]): Promise<DatasetWithOwner> {
    const { owner, dataset } = await this.access.writableDataset(caller, accountName, datasetName, 'change prefixes');
    const next = { ...dataset, prefixes: checkPrefixes(mergePrefixes([], prefixes)), updatedAt: this.platform.clock.now().toISOString(), revision: dataset.revision + 1 };
    await this.platform.store.updateDataset(next);
    return { owner, dataset: next };
  }

  /**
   * Moves a dataset to another account the caller may create datasets in (TriplyDB's chown). Its
   * id stays, so its graphs, assets, jobs and services (all keyed by id) go with it. The record is
   * written under the new owner after the old one goes (the by-id pointer then names the new one);
   * should that write fail, the old record is put back.
   */
  async chown(caller: Caller | null, accountName: string, datasetName: string, toAccount: string): Promise<DatasetWithOwner> {
    const { owner, dataset } = await this.access.writableDataset(caller, accountName, datasetName, 'move datasets');
    const target = await this.access.account(toAccount);
    await this.access.require(caller, target, 'writeDatasets', `move datasets to "${toAccount}"`);
    if (target.uid === owner.uid) return { owner, dataset };
    if (await this.platform.store.getDataset(target.uid, dataset.name)) {
      throw new ConflictError(`"${toAccount}" already has a dataset named "${dataset.name}".`);
    }
    const moved: DatasetRecord = { ...dataset, ownerUid: target.uid, updatedAt: this.platform.clock.now().toISOString(), revision: dataset.revision + 1 };
    await this.platform.store.deleteDataset(dataset);
    try {
      await this.platform.store.createDataset(moved);
    } catch (e) {
      await this.platform.store.createDataset(dataset);
      throw e;
    }
    return { owner: target, dataset: moved };
  }

  async removePrefix(caller: Caller | null, accountName: string, datasetName: string, label: string): Promise<void> {
    const { dataset } = await this.access.writableDataset(caller, accountName, datasetName, 'change prefixes');
    if (!dataset.prefixes.some((p) => p.prefixLabel === label)) throw new NotFoundError(`Prefix "${label}" does not exist.`);
    await this.platform.store.updateDataset({
      ...dataset,
      prefixes: dataset.prefixes.filter((p) => p.prefixLabel !== label),
      updatedAt: this.platform.clock.now().toISOString(),
      revision: dataset.revision + 1,
    });
  }

  /** Datasets the caller may see, of one account or of the whole instance. */
  async list(caller: Caller | null, accountName: string | null, page: PageRequest, keep: (d: DatasetRecord) => boolean = () => true): Promise<Page<DatasetWithOwner>> {
    const owners = new Map<string, Promise<AccountRecord | null>>();
    const ownerOf = (uid: string) => {
      let owner = owners.get(uid);
      if (!owner) owners.set(uid, (owner = this.platform.store.getAccount(uid)));
      return owner;
    };
    let ownerUid: string | null = null;
    if (accountName !== null) {
      const owner = await this.access.account(accountName);
      owners.set(owner.uid, Promise.resolve(owner));
      ownerUid = owner.uid;
    }
    const readable = new Map<string, Promise<boolean>>();
    const visible = async (d: DatasetRecord) => {
      if (!keep(d)) return false;
      const owner = await ownerOf(d.ownerUid);
      if (!owner) return false;
      if (d.accessLevel !== 'private') return this.access.canReadDataset(caller, d, owner);
      let memo = readable.get(owner.uid);
      if (!memo) readable.set(owner.uid, (memo = this.access.canReadDataset(caller, d, owner)));
      return memo;
    };
    const result = await collectPage((r) => this.platform.store.listDatasets(ownerUid, r), visible, page);
    const items = await Promise.all(
      result.items.map(async (dataset) => ({ dataset, owner: (await ownerOf(dataset.ownerUid)) as AccountRecord })),
    );
    return { items, next: result.next };
  }
}
