/**
 * The lifecycle of text search services (type elasticSearch; the spec's textSearch), as
 * ServiceLifecycle's OtherServiceTypes: ServiceLifecycle keeps the records, access and actions
 * (create, start, stop, sync, rename, delete, outOfSync); this builds the index of a snapshot.
 *
 * A start or sync builds the index of the target snapshot under its own key beside the old one,
 * then marks the service running on the new snapshot (one conditional write) and drops the old
 * index: searches never see half an index. A failed build leaves a start in error and a sync on
 * its old index.
 */
import type { SearchIndexes } from '../../ports/search-index.js';
import type { GraphCatalog } from '../data/graph-catalog.js';
import type { Platform } from '../shared/platform.js';
import type { OtherServiceTypes, ServiceRecord, ServiceSnapshot, ServiceType } from '../sparql/service-types.js';
import { collectDocuments } from './documents.js';
import { mappingsOf, searchConfigOf } from './search-config.js';

/** The index of a service's snapshot: under its dataset's keys, so removing a dataset removes it. */
export function indexKey(service: Pick<ServiceRecord, 'datasetId' | 'id'>, snapshot: ServiceSnapshot): string {
  const manifest = snapshot.manifestKey ? (snapshot.manifestKey.split('/').pop() ?? 'm').replace(/\.json$/, '').replace(/[^A-Za-z0-9_-]/g, '_') : 'empty';
  return `datasets/${service.datasetId}/search/${service.id}/${manifest}`;
}

export class SearchLifecycle implements OtherServiceTypes {
  constructor(
    private readonly platform: Platform,
    private readonly catalog: GraphCatalog,
  ) {}

  private get indexes(): SearchIndexes {
    return this.platform.search;
  }

  serves(type: ServiceType): boolean {
    return type === 'elasticSearch';
  }

  configure(config: unknown): Pick<ServiceRecord, 'search'> {
    return { search: searchConfigOf(config) };
  }

  async prepare(service: ServiceRecord, change: (apply: (s: ServiceRecord) => ServiceRecord | null) => Promise<ServiceRecord | null>): Promise<void> {
    const target = service.pendingSnapshot ?? service.snapshot;
    const key = indexKey(service, target);
    const now = () => this.platform.clock.now().toISOString();
    let built: { documents: number };
    try {
      const manifest = await this.catalog.manifestAt(target.manifestKey);
      const collected = await collectDocuments(this.catalog.nquads(manifest), mappingsOf(service.search));
      built = await this.indexes.build(key, { documents: toAsync(collected.documents()), mappings: collected.types });
    } catch (e) {
      this.platform.logger.error('building a search index failed', { serviceId: service.id, error: e });
      await change((s) => ({
        ...s,
        status: s.status === 'updating' ? 'running' : 'error',
        pendingSnapshot: undefined,
        error: { message: `Indexing the data failed: ${(e as Error).message}` },
      }));
      return;
    }
    let replaced: ServiceSnapshot | undefined;
    const recorded = await change((s) => {
      const wanted = (s.status === 'starting' || s.status === 'updating') && (s.pendingSnapshot ?? s.snapshot).manifestKey === target.manifestKey;
      if (!wanted) return null;
      replaced = s.snapshot;
      return { ...s, status: 'running', snapshot: target, pendingSnapshot: undefined, loadedAt: now(), loadedStatements: target.statements, error: undefined };
    });
    if (!replaced || recorded?.status !== 'running') {
      // No longer wanted (stopped, deleted or synced again meanwhile): this index serves no one,
      // unless the service serves (or is about to index again) this very snapshot.
      const stillOurs = recorded && recorded.status !== 'stopped' && recorded.status !== 'error' && indexKey(recorded, recorded.pendingSnapshot ?? recorded.snapshot) === key;
      if (!stillOurs) await this.indexes.drop(key).catch(() => {});
      return;
    }
    this.platform.logger.info('search index built', { serviceId: service.id, documents: built.documents });
    if (indexKey(service, replaced) !== key) {
      await this.indexes.drop(indexKey(service, replaced)).catch(() => {});
      await this.catalog.collect(service.datasetId, await this.catalog.manifestAt(replaced.manifestKey));
    }
  }

  async release(service: ServiceRecord): Promise<void> {
    for (const snapshot of [service.snapshot, service.pendingSnapshot]) if (snapshot) await this.indexes.drop(indexKey(service, snapshot));
  }
}

async function* toAsync<T>(items: Iterable<T>): AsyncGenerator<T> {
  yield* items;
}
