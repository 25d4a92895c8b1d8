/**
 * The MetadataStore on DynamoDB's single table; also runs unchanged against dynalite. One class
 * per concern, stacked so the store is one object: AccountItems (dynamodb-account-items.ts), then
 * DatasetItems (dynamodb-dataset-items.ts), then saved queries here. Keys: dynamodb-metadata-keys.ts.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../domain/shared/errors.js';
import { nameKey } from '../../domain/shared/names.js';
import type { Batch, ListRequest, MetadataStore } from '../../ports/metadata-store.js';
import type { QueryVersionRecord, SavedQueryRecord } from '../../ports/records/queries.js';
import { DatasetItems } from './dynamodb-dataset-items.js';
import { isConditionFailure, type Item } from './dynamodb-table.js';
import { K } from './dynamodb-metadata-keys.js';

export class DynamoDbMetadataStore extends DatasetItems implements MetadataStore {
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
