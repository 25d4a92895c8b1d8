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
 * A read-through cache in front of the embedded runtime's store. It is exact, not eventual: the
 * embedded platform is the only writer of its LevelDB (dynalite holds the lock), every write goes
 * through this object, and any write clears the whole cache. A generation counter keeps a read
 * that raced a write from putting a stale value back. Not used on AWS, where many functions write.
 */
export function cachedMetadataStore(inner: MetadataStore): MetadataStore {
  const cache = new Map<string, Promise<unknown>>();
  let generation = 0;
  let writesInFlight = 0;

  const invalidate = () => {
    generation++;
    cache.clear();
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
          const result = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (writesInFlight === 0) {
            if (cache.size >= MAX_ENTRIES) cache.clear();
            cache.set(key, result);
            // A failed read or one that overlapped a write is not kept.
            result.then(
              () => {
                if (generation !== startedAt) cache.delete(key);
              },
              () => cache.delete(key),
            );
          }
          return result.then((v) => structuredClone(v));
        };
      }
      // Everything else writes: clear before (so no reader sees the old value after the write
      // starts) and after (so nothing read during the write survives it).
      return async (...args: unknown[]) => {
        writesInFlight++;
        invalidate();
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          writesInFlight--;
          invalidate();
        }
      };
    },
  });
}
