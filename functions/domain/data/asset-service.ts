import type { Readable } from 'node:stream';
import type { AccessService } from '../datasets/access-service.js';
import { type AssetRecord, type AssetVersion, MAX_ASSET_NAME_LENGTH, MAX_ASSET_VERSIONS } from './assets.js';
import type { Caller } from '../shared/caller.js';
import type { DatasetRecord } from '../datasets/datasets.js';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.js';
import type { Platform } from '../shared/platform.js';

const MAX_RETRIES = 8;

export interface IncomingFile {
  fileName: string;
  size: number;
  /** Where the bytes are now, in the uploads store. */
  uploadKey: string;
  contentType?: string;
}

const assetBlobKey = (datasetId: string, identifier: string, versionId: string) => `datasets/${datasetId}/assets/${identifier}/${versionId}`;

export function assertAssetName(name: string): string {
  if (!name || name.length > MAX_ASSET_NAME_LENGTH || /[/\\\u0000-\u001f]/.test(name) || name === '.' || name === '..') {
    throw new ValidationError(`fileName: an asset name has 1 to ${MAX_ASSET_NAME_LENGTH} characters and no slashes or control characters.`);
  }
  return name;
}

/** Assets with versions. Reads follow dataset read access; uploads and deletes need write access. */
export class AssetService {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
  ) {}

  private now(): string {
    return this.platform.clock.now().toISOString();
  }

  async list(caller: Caller | null, account: string, datasetName: string) {
    const { dataset, owner } = await this.access.readableDataset(caller, account, datasetName);
    const assets = await this.platform.store.listAssets(dataset.id);
    return { dataset, owner, assets: assets.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.assetName.localeCompare(b.assetName)) };
  }

  async byName(caller: Caller | null, account: string, datasetName: string, fileName: string) {
    const { dataset, owner, assets } = await this.list(caller, account, datasetName);
    const asset = assets.find((a) => a.assetName === fileName);
    if (!asset) throw new NotFoundError(`Asset "${fileName}" does not exist in ${account}/${datasetName}.`);
    return { dataset, owner, asset };
  }

  private async asset(dataset: DatasetRecord, identifier: string, label: string): Promise<AssetRecord> {
    const asset = await this.platform.store.getAsset(dataset.id, identifier);
    if (!asset) throw new NotFoundError(`Asset "${identifier}" does not exist in ${label}.`);
    return asset;
  }

  /** The asset version a caller may download (the latest when `versionId` is null), without its bytes. */
  async locate(caller: Caller | null, account: string, datasetName: string, identifier: string, versionId: string | null) {
    const { dataset } = await this.access.readableDataset(caller, account, datasetName);
    const asset = await this.asset(dataset, identifier, `${account}/${datasetName}`);
    const version = versionId === null ? asset.versions[asset.versions.length - 1] : asset.versions.find((v) => v.id === versionId);
    if (!version) throw new NotFoundError(`Version "${versionId}" of asset "${asset.assetName}" does not exist.`);
    return { asset, version };
  }

  /** The bytes of a version `locate` found. */
  async open(asset: AssetRecord, version: AssetVersion): Promise<Readable> {
    const body: Readable | null = await this.platform.blobs.data.get(version.blobKey);
    if (!body) throw new NotFoundError(`The file of asset "${asset.assetName}" is missing.`);
    return body;
  }


  /** Checks the caller may upload here, before any byte is received. */
  async writable(caller: Caller | null, account: string, datasetName: string) {
    return this.access.writableDataset(caller, account, datasetName, 'upload assets');
  }

  /**
   * Stores an uploaded file as a new asset, or as a new version of `versionOf`. The bytes move
   * from the uploads store into the data store; on failure nothing is recorded.
   */
  async store(dataset: DatasetRecord, file: IncomingFile, versionOf: string | undefined, apiUrl?: string): Promise<AssetRecord> {
    assertAssetName(file.fileName);
    const versionId = this.platform.ids.newId();
    const now = this.now();
    let asset: AssetRecord | null = null;
    if (versionOf) {
      asset = await this.platform.store.getAsset(dataset.id, versionOf);
      if (!asset) throw new NotFoundError(`versionOf: asset "${versionOf}" does not exist in this dataset.`);
      if (asset.versions.length >= MAX_ASSET_VERSIONS) throw new ValidationError(`An asset keeps at most ${MAX_ASSET_VERSIONS} versions; delete old ones first.`);
    } else if ((await this.platform.store.listAssets(dataset.id)).some((a) => a.assetName === file.fileName)) {
      throw new ConflictError(`An asset named "${file.fileName}" already exists; upload a new version of it (versionOf) or delete it first.`);
    }
    const identifier = asset?.identifier ?? this.platform.ids.newId();
    const blobKey = assetBlobKey(dataset.id, identifier, versionId);
    const source = await this.platform.blobs.uploads.get(file.uploadKey);
    if (!source) throw new ValidationError('The uploaded file is gone; upload it again.');
    const stored = await this.platform.blobs.data.put(blobKey, source, { contentType: file.contentType });
    const version: AssetVersion = { id: versionId, uploadedAt: now, fileSize: stored.size, blobKey, contentType: file.contentType };
    try {
      if (asset) {
        for (let attempt = 0; ; attempt++) {
          const next = { ...asset, updatedAt: now, versions: [...asset.versions, version] };
          try {
            await this.platform.store.replaceAsset(next, asset.updatedAt);
            asset = next;
            break;
          } catch (e) {
            if (!(e instanceof ConflictError) || attempt >= MAX_RETRIES) throw e;
            asset = await this.asset(dataset, identifier, 'this dataset');
          }
        }
      } else {
        asset = { identifier, datasetId: dataset.id, assetName: file.fileName, createdAt: now, updatedAt: now, versions: [version] };
        await this.platform.store.createAsset(asset);
        await this.countAssets(dataset.id);
      }
    } catch (e) {
      await this.platform.blobs.data.delete(blobKey).catch(() => {});
      throw e;
    }
    await this.platform.blobs.uploads.delete(file.uploadKey).catch(() => {});
    await this.platform.events.assetStored({ datasetId: dataset.id, identifier, versionId, ...(apiUrl ? { apiUrl } : {}) });
    return asset;
  }

  /** Deletes an asset, or one of its versions; answers what is left of the asset (null when nothing). */
  async delete(caller: Caller | null, account: string, datasetName: string, identifier: string, versionId: string | null): Promise<AssetRecord | null> {
    const { dataset } = await this.access.writableDataset(caller, account, datasetName, 'delete assets');
    return this.remove(dataset, await this.asset(dataset, identifier, `${account}/${datasetName}`), versionId);
  }

  /** Deletes every asset of the dataset (`DELETE …/assets`). */
  async deleteAll(caller: Caller | null, account: string, datasetName: string): Promise<void> {
    const { dataset } = await this.access.writableDataset(caller, account, datasetName, 'delete assets');
    for (const asset of await this.platform.store.listAssets(dataset.id)) await this.remove(dataset, asset, null);
  }

  private async remove(dataset: DatasetRecord, asset: AssetRecord, versionId: string | null): Promise<AssetRecord | null> {
    const doomed = versionId === null ? asset.versions : asset.versions.filter((v) => v.id === versionId);
    if (doomed.length === 0) throw new NotFoundError(`Version "${versionId}" of asset "${asset.assetName}" does not exist.`);
    const kept = asset.versions.filter((v) => !doomed.includes(v));
    let left: AssetRecord | null = null;
    if (kept.length === 0) {
      await this.platform.store.deleteAsset(dataset.id, asset.identifier);
      await this.countAssets(dataset.id);
    } else {
      left = { ...asset, versions: kept, updatedAt: this.now() };
      await this.platform.store.replaceAsset(left, asset.updatedAt);
    }
    for (const v of doomed) await this.platform.blobs.data.delete(v.blobKey).catch(() => {});
    return left;
  }

  /** Recounts the dataset's assets into its record (recounting makes retries and races harmless). */
  private async countAssets(datasetId: string): Promise<void> {
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      const dataset = await this.platform.store.getDatasetById(datasetId);
      if (!dataset) return;
      const assetCount = (await this.platform.store.listAssets(datasetId)).length;
      if (assetCount === dataset.assetCount) return;
      try {
        await this.platform.store.updateDataset({ ...dataset, assetCount, revision: dataset.revision + 1 });
        return;
      } catch (e) {
        if (!(e instanceof ConflictError)) throw e;
      }
    }
  }
}
