import type { Readable } from 'node:stream';
import type { AccountRecord } from '../accounts/accounts.js';
import type { Caller } from '../shared/caller.js';
import { ConflictError } from '../shared/errors.js';
import type { Platform } from '../shared/platform.js';
import type { AccessService } from '../datasets/access-service.js';
import type { SavedQueryRecord } from './saved-queries.js';

/** How the last run of a saved query went (TriplyDB's `executionStats`); a blob per query. */
export interface ExecutionStats {
  executedAt: string;
  executionTimeInMs: number;
  resultCount?: number;
  status: 'Success' | 'Service error' | 'Parsing error' | 'No suitable service' | 'No dataset';
  errorMessage?: string;
}

/** Under `datasets/`, where every data bucket grant is held (no dataset id starts with `_`). */
export const statsKey = (queryId: string) => `datasets/_query-stats/${queryId}.json`;
/** Version lists in views are bounded (the newest ones). */
export const MAX_VERSIONS_SHOWN = 100;

async function readJson<T>(body: Readable | null): Promise<T | null> {
  if (!body) return null;
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Uint8Array));
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

/** Saved queries' extra fields (versions, execution statistics) and ownership transfer. */
export class QueryExtras {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
  ) {}

  async versionsInformation(q: SavedQueryRecord): Promise<{ version: number; accountName: string; createdAt: string }[]> {
    const first = Math.max(1, q.numberOfVersions - MAX_VERSIONS_SHOWN + 1);
    const versions = await Promise.all(
      Array.from({ length: q.numberOfVersions - first + 1 }, (_, i) => this.platform.store.getQueryVersion(q.id, first + i)),
    );
    return versions.filter((v) => v !== null).map((v) => ({ version: v.version, accountName: v.accountName, createdAt: v.createdAt }));
  }

  async executionStats(queryId: string): Promise<ExecutionStats | undefined> {
    return (await readJson<ExecutionStats>(await this.platform.blobs.data.get(statsKey(queryId)))) ?? undefined;
  }

  async recordExecution(queryId: string, stats: ExecutionStats): Promise<void> {
    await this.platform.blobs.data.put(statsKey(queryId), JSON.stringify(stats), { contentType: 'application/json' });
  }

  /** Removes what a deleted query left here (its statistics). */
  async forget(queryId: string): Promise<void> {
    await this.platform.blobs.data.delete(statsKey(queryId));
  }

  /**
   * Moves a query to another account the caller may write to (TriplyDB's chown). Versions are
   * keyed by the query's id, so the moved query gets a new id and its versions are copied over
   * before the old query (and its versions) go.
   */
  async chown(caller: Caller | null, query: SavedQueryRecord, owner: AccountRecord, toAccount: string): Promise<{ query: SavedQueryRecord; owner: AccountRecord }> {
    await this.access.require(caller, owner, 'writeDatasets', 'move queries');
    const target = await this.access.account(toAccount);
    await this.access.require(caller, target, 'writeDatasets', `move queries to "${toAccount}"`);
    if (target.uid === owner.uid) return { query, owner };
    const store = this.platform.store;
    if (await store.getQuery(target.uid, query.name)) throw new ConflictError(`"${toAccount}" already has a query named "${query.name}".`);
    const moved: SavedQueryRecord = { ...query, id: this.platform.ids.newId(), ownerUid: target.uid, updatedAt: this.platform.clock.now().toISOString() };
    for (let v = 1; v <= query.numberOfVersions; v++) {
      const version = await store.getQueryVersion(query.id, v);
      if (version) await store.putQueryVersion({ ...version, queryId: moved.id });
    }
    await store.createQuery(moved);
    await store.deleteQuery(query);
    await this.forget(query.id);
    return { query: moved, owner: target };
  }
}
