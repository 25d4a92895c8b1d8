import type { MetadataStore } from '../../ports/metadata-store.js';

/** Point reads served from memory; everything else passes through. */
const CACHED_READS = new Set<keyof MetadataStore>([
  'getInstanceSecret',
  'getAccount',
  'getAccountByName',
  'getMembership',
  'getToken',
  'getSession',
  'getDataset',
  'getDatasetById',
  'getQuery',
  'queryRedirect',
  'getQueryVersion',
  'getService',
  'listServices',
]);

/** Reads that are not cached (listings, counts) and must not invalidate anything. */
const UNCACHED_READS = new Set<keyof MetadataStore>([
  'listAccounts',
  'countAdmins',
  'listMembers',
  'listMembershipsOfUser',
  'listTokens',
  'listDatasets',
  'getJob',
  'listJobs',
  'listJobFiles',
  'getAsset',
  'listAssets',
  'listQueries',
]);

const MAX_ENTRIES = 20_000;

/**
 * Writes that can change only some cached reads. Flow runs issue and revoke a token each, and a
 * token write must not empty the account and dataset reads every request depends on. Any write
 * not listed here clears everything.
 */
const WRITE_SCOPES: Partial<Record<keyof MetadataStore, readonly (keyof MetadataStore)[]>> = {
  putToken: ['getToken'],
  deleteToken: ['getToken'],
  putSession: ['getSession'],
  deleteSession: ['getSession'],
  // Sign-in counters are never cached: their writes leave every cached read alone.
  countLoginAttempt: [],
  releaseLoginAttempt: [],
  clearLoginAttempts: [],
};

/**
 * A read-through cache in front of the embedded runtime's store. It is exact, not eventual: the
 * embedded platform is the only writer of its LevelDB (dynalite holds the lock), every write goes
 * through this object, and any write clears the whole cache. A generation counter keeps a read
 * that raced a write from putting a stale value back. Not used on AWS, where many functions write.
 */
export function cachedMetadataStore(inner: MetadataStore): MetadataStore {
  const cache = new Map<string, Promise<unknown>>();
  // A write of everything bumps `generation`; a scoped write bumps its reads' own generations.
  let generation = 0;
  let writesInFlight = 0;
  const scopedGenerations = new Map<string, number>();
  const scopedWritesInFlight = new Map<string, number>();

  const invalidate = (scope?: readonly string[]) => {
    if (!scope) {
      generation++;
      cache.clear();
      return;
    }
    for (const name of scope) scopedGenerations.set(name, (scopedGenerations.get(name) ?? 0) + 1);
    for (const key of cache.keys()) {
      if (scope.includes(key.slice(0, key.indexOf('\u0000')))) cache.delete(key);
    }
  };

  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const name = property as keyof MetadataStore;
      if (UNCACHED_READS.has(name)) return value.bind(target);
      if (CACHED_READS.has(name)) {
        return (...args: unknown[]) => {
          const key = `${String(name)}\u0000${JSON.stringify(args)}`;
          // Callers get their own copy, so one caller's mutation never leaks into another's read.
          const hit = cache.get(key);
          if (hit) return hit.then((v) => structuredClone(v));
          const startedAt = generation;
          const scopedAt = scopedGenerations.get(name) ?? 0;
          const result = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (writesInFlight === 0 && !scopedWritesInFlight.get(name)) {
            if (cache.size >= MAX_ENTRIES) cache.clear();
            cache.set(key, result);
            // A failed read or one that overlapped a write is not kept.
            result.then(
              () => {
                if (generation !== startedAt || (scopedGenerations.get(name) ?? 0) !== scopedAt) cache.delete(key);
              },
              () => cache.delete(key),
            );
          }
          return result.then((v) => structuredClone(v));
        };
      }
      // Everything else writes: clear before (so no reader sees the old value after the write
      // starts) and after (so nothing read during the write survives it).
      const scope = WRITE_SCOPES[name];
      return async (...args: unknown[]) => {
        if (scope) for (const r of scope) scopedWritesInFlight.set(r, (scopedWritesInFlight.get(r) ?? 0) + 1);
        else writesInFlight++;
        invalidate(scope);
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          if (scope) for (const r of scope) scopedWritesInFlight.set(r, (scopedWritesInFlight.get(r) ?? 1) - 1);
          else writesInFlight--;
          invalidate(scope);
        }
      };
    },
  });
}
