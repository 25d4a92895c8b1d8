/**
 * The dataset side of the metadata store on the single table: datasets (by owner and name, by id,
 * by creation time), their import jobs and job files, assets and services.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../domain/shared/errors.js';
import { nameKey } from '../../domain/shared/names.js';
import type { Batch, ListRequest } from '../../ports/metadata-store.js';
import type { AssetRecord, JobFileRecord, JobRecord, JobStatus } from '../../ports/records/data.js';
import type { DatasetRecord } from '../../ports/records/datasets.js';
import type { ServiceRecord } from '../../ports/records/sparql.js';
import { AccountItems } from './dynamodb-account-items.js';
import { isConditionFailure, type Item } from './dynamodb-table.js';
import { K } from './dynamodb-metadata-keys.js';

const DELETED_MARKER_SECONDS = 7 * 24 * 3600;

/** Stacked on AccountItems, under DynamoDbMetadataStore (which adds saved queries). */
export abstract class DatasetItems extends AccountItems {
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
    await this.pointAt(dataset);
  }

  /** The by-id item: where the dataset's record is now (written before the old name goes). */
  private async pointAt(dataset: DatasetRecord): Promise<void> {
    await this.put({ ...K.datasetById(dataset.id), ownerUid: dataset.ownerUid, name: dataset.name });
  }

  getDataset(ownerUid: string, name: string): Promise<DatasetRecord | null> {
    return this.get<DatasetRecord>(K.dataset(ownerUid, name));
  }

  /**
   * Two consistent GetItems: the by-id item names the record's key. Graph swaps and blob cleanup
   * decide on this read, so it must not come from gsi2, which lags on AWS (a stale revision
   * there makes swaps conflict, and cleanup could keep an old manifest and miss a new one).
   * Only datasets created before the by-id item existed fall back to the index.
   */
  async getDatasetById(id: string): Promise<DatasetRecord | null> {
    const at = await this.get<{ ownerUid: string; name: string; deleted?: boolean }>(K.datasetById(id));
    if (at) {
      if (at.deleted) return null;
      const dataset = await this.get<DatasetRecord>(K.dataset(at.ownerUid, at.name));
      // A name can be taken again by another dataset once this one is deleted.
      return dataset?.id === id ? dataset : null;
    }
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
    await this.pointAt(renamed);
    await this.delete(K.dataset(dataset.ownerUid, dataset.name));
    return renamed;
  }

  /**
   * The by-id item stays as a marker for a week (TTL on AWS), so a by-id read never falls back to
   * the lagging index and finds the deleted record there.
   */
  async deleteDataset(dataset: DatasetRecord): Promise<void> {
    await this.delete(K.dataset(dataset.ownerUid, dataset.name));
    // Should this write fail, the by-id item leads to no record, which reads as deleted too.
    await this.put({ ...K.datasetById(dataset.id), ownerUid: dataset.ownerUid, name: dataset.name, deleted: true, expiresAt: Math.floor(Date.now() / 1000) + DELETED_MARKER_SECONDS });
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

  async deleteJobFile(datasetId: string, jobId: string, fileId: string): Promise<void> {
    await this.delete(K.jobFile(datasetId, jobId, fileId));
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
}
