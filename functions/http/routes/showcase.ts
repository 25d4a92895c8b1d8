import type { PinnedItem } from '../../domain/accounts/accounts.js';
import { datasetView } from '../../domain/datasets/datasets.js';
import { savedQueryView } from '../../domain/queries/saved-queries.js';
import type { Caller } from '../../domain/shared/caller.js';
import type { PinResolver } from '../../domain/stories/pins.js';
import { StoryService } from '../../domain/stories/story-service.js';
import { storyView, type StoryRecord } from '../../domain/stories/stories.js';
import type { AccountRecord } from '../../domain/accounts/accounts.js';
import type { Services } from '../api.js';

/** Bound on the instance-wide scan that finds a saved query by id (queries are stored by owner and name). */
const MAX_QUERY_BATCHES = 20;

export const storiesOf = (services: Services) => new StoryService(services.platform, services.access);

/** A saved query by id, as the caller may see it (its view), or null. */
export async function queryViewById(services: Services, caller: Caller | null, id: string, apiUrl: string): Promise<Record<string, unknown> | null> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return null;
  let after: string | undefined;
  for (let i = 0; i < MAX_QUERY_BATCHES; i++) {
    const batch = await services.platform.store.listQueries(null, { after, batch: 100 });
    const hit = batch.items.find((e) => e.item.id === id)?.item;
    if (hit) {
      const owner = await services.platform.store.getAccount(hit.ownerUid);
      if (!owner) return null;
      try {
        const found = await services.savedQueries.get(caller, owner.accountName, hit.name);
        const endpoint = services.savedQueries.endpointOf(found, apiUrl, await services.savedQueries.serviceName(found));
        return savedQueryView(found.query, found.version, found.owner, found.dataset, { query: `${apiUrl}/queries/${owner.accountName}/${hit.name}`, endpoint });
      } catch {
        return null;
      }
    }
    const last = batch.items[batch.items.length - 1];
    if (!batch.more || !last) return null;
    after = last.cursor;
  }
  return null;
}

/** The view of a story, with the queries its elements show (those the caller may see). */
export async function fullStoryView(services: Services, caller: Caller | null, story: StoryRecord, owner: AccountRecord, apiUrl: string) {
  const queries = new Map<string, Record<string, unknown>>();
  for (const e of story.content) {
    if (e.type === 'query' && e.query && !queries.has(e.query)) {
      const v = await queryViewById(services, caller, e.query, apiUrl);
      if (v) queries.set(e.query, v);
    }
  }
  return storyView(story, owner, apiUrl, queries);
}

/** Finds pinned items (datasets, queries, stories by id) as the caller may see them. */
export const pinResolver = (services: Services, apiUrl: string): PinResolver => async (caller, item: PinnedItem) => {
  if (item.type === 'Dataset') {
    const dataset = /^[A-Za-z0-9_-]{1,64}$/.test(item.id) ? await services.platform.store.getDatasetById(item.id) : null;
    const owner = dataset && (await services.platform.store.getAccount(dataset.ownerUid));
    if (!dataset || !owner || !(await services.access.canReadDataset(caller, dataset, owner))) return null;
    return datasetView(dataset, owner);
  }
  if (item.type === 'Query') return queryViewById(services, caller, item.id, apiUrl);
  const found = await storiesOf(services).byId(caller, item.id);
  return found ? storyView(found.story, found.owner, apiUrl, new Map()) : null;
};
