import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ConflictError, ValidationError } from '../../domain/shared/errors.js';
import { INVALID_CURSOR } from '../../domain/shared/paging.js';
import type { Batch, ListRequest } from '../../ports/metadata-store.js';
import { TABLE_KEY_ATTRIBUTES, TABLE_SCHEMA } from './table-schema.js';

export type Item = Record<string, unknown>;
export type Key = Record<string, unknown>;

export const isConditionFailure = (e: unknown): boolean =>
  e instanceof ConditionalCheckFailedException || (e as { name?: string })?.name === 'ConditionalCheckFailedException';

/** Drops the key attributes so records come back exactly as the domain wrote them. */
export function strip<T>(item: Item): T {
  const out: Item = { ...item };
  for (const k of TABLE_KEY_ATTRIBUTES) delete out[k];
  return out as T;
}

const encodeCursor = (key: Key): string => Buffer.from(JSON.stringify(key)).toString('base64url');

/** A cursor is the base64url JSON of at most four key attributes, each within DynamoDB's key limit. */
const MAX_CURSOR_CHARS = 4096;
const MAX_KEY_VALUE_BYTES = 1024;

const invalidCursor = () => new ValidationError(INVALID_CURSOR);

/**
 * The start key of a query from its cursor. Only a key this very query could have written is
 * accepted (the query's key attributes, its partition, its sort-key prefix), so a forged cursor
 * is a 400 and never reaches the table as a malformed key.
 */
function decodeCursor(cursor: string | undefined, input: Pick<QueryCommandInput, 'IndexName' | 'ExpressionAttributeValues'>): Key | undefined {
  if (!cursor) return undefined;
  if (cursor.length > MAX_CURSOR_CHARS) throw invalidCursor();
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!key || typeof key !== 'object' || Array.isArray(key)) throw invalidCursor();
  const index = TABLE_SCHEMA.globalSecondaryIndexes.find((i) => i.indexName === input.IndexName);
  if (input.IndexName && !index) throw invalidCursor();
  const expected = [TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, ...(index ? [index.partitionKey, index.sortKey] : [])];
  const entries = Object.entries(key as Key);
  if (entries.length !== expected.length || !expected.every((name) => typeof (key as Key)[name] === 'string')) throw invalidCursor();
  if (entries.some(([, v]) => Buffer.byteLength(v as string) > MAX_KEY_VALUE_BYTES || (v as string).length === 0)) throw invalidCursor();
  const values = input.ExpressionAttributeValues ?? {};
  const partition = (key as Key)[index?.partitionKey ?? TABLE_SCHEMA.partitionKey];
  if (typeof values[':p'] === 'string' && partition !== values[':p']) throw invalidCursor();
  if (!index && typeof values[':s'] === 'string' && !((key as Key)[TABLE_SCHEMA.sortKey] as string).startsWith(values[':s'])) throw invalidCursor();
  return key as Key;
}

/**
 * The single table's item operations, shared by the stores built on it (metadata, flows):
 * consistent point reads, conditional creates, cursor-paged queries.
 */
export abstract class DynamoDbTable {
  constructor(
    protected readonly db: DynamoDBDocumentClient,
    protected readonly tableName: string,
  ) {}

  protected async get<T>(key: Key): Promise<T | null> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    return out.Item ? strip<T>(out.Item) : null;
  }

  /** Writes an item that must not exist yet; ConflictError with `conflictMessage` if it does. */
  protected async putNew(item: Item, conflictMessage: string): Promise<void> {
    try {
      await this.db.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError(conflictMessage);
      throw e;
    }
  }

  protected async put(item: Item): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: item }));
  }

  /** Returns whether there was an item to delete. */
  protected async delete(key: Key): Promise<boolean> {
    const out = await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: key, ReturnValues: 'ALL_OLD' }));
    return out.Attributes !== undefined;
  }

  /** Runs a query page; each item carries the cursor of its own key. */
  protected async queryBatch<T>(
    input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
    keyOf: (item: Item) => Key,
    request: ListRequest,
  ): Promise<Batch<T>> {
    const out = await this.db.send(
      new QueryCommand({ ...input, TableName: this.tableName, Limit: request.batch, ExclusiveStartKey: decodeCursor(request.after, input) }),
    );
    const items = (out.Items ?? []).map((item) => ({ item: strip<T>(item), cursor: encodeCursor(keyOf(item)) }));
    return { items, more: out.LastEvaluatedKey !== undefined };
  }

  /** Every item of a query, following pages; bounded because partitions here stay small. */
  protected async queryAllItems(input: Omit<QueryCommandInput, 'TableName'>, maxPages = 100): Promise<Item[]> {
    const all: Item[] = [];
    let start: Key | undefined;
    for (let page = 0; page < maxPages; page++) {
      const out = await this.db.send(new QueryCommand({ ...input, TableName: this.tableName, ExclusiveStartKey: start }));
      all.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
      if (!start) break;
    }
    return all;
  }

  protected async queryAll<T>(input: Omit<QueryCommandInput, 'TableName'>, maxPages = 100): Promise<T[]> {
    return (await this.queryAllItems(input, maxPages)).map((item) => strip<T>(item));
  }
}
