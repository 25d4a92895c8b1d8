import type { Batch, ListRequest } from '../../ports/metadata-store.js';
import { ValidationError } from './errors.js';

export interface PageRequest {
  limit: number;
  after?: string;
}

export interface Page<T> {
  items: T[];
  /** Cursor of the next page; present only when at least one more visible item exists. */
  next?: string;
}

export const DEFAULT_PAGE_SIZE = 30;

/** What a listing answers to a cursor it did not hand out (forged, truncated or from another listing). */
export const INVALID_CURSOR = 'after: invalid cursor; use the cursor from the Link header of this listing.';
export const MAX_PAGE_SIZE = 100;

export function parsePageRequest(limit: string | null, after: string | null): PageRequest {
  let size = DEFAULT_PAGE_SIZE;
  if (limit !== null) {
    size = Number(limit);
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
      throw new ValidationError(`limit: must be a whole number from 1 to ${MAX_PAGE_SIZE}.`);
    }
  }
  if (after !== null && !/^[A-Za-z0-9_-]{1,2048}$/.test(after)) throw new ValidationError(INVALID_CURSOR);
  return { limit: size, after: after ?? undefined };
}

/**
 * Reads batches from the store and keeps the items the caller may see, until one page plus one
 * more item is found (so `next` is only given while more exist) or the store runs out. Bounded in
 * the number of batches read.
 */
export async function collectPage<T>(
  fetch: (request: ListRequest) => Promise<Batch<T>>,
  visible: (item: T) => Promise<boolean>,
  page: PageRequest,
  maxBatches = 50,
): Promise<Page<T>> {
  const kept: { item: T; cursor: string }[] = [];
  let after = page.after;
  for (let i = 0; i < maxBatches && kept.length <= page.limit; i++) {
    const batch = await fetch({ after, batch: Math.max(page.limit + 1, 25) });
    for (const entry of batch.items) {
      if (await visible(entry.item)) kept.push(entry);
      if (kept.length > page.limit) break;
    }
    const last = batch.items[batch.items.length - 1];
    if (!batch.more || !last) break;
    after = last.cursor;
  }
  const items = kept.slice(0, page.limit);
  const hasMore = kept.length > page.limit;
  return { items: items.map((e) => e.item), next: hasMore ? items[items.length - 1]?.cursor : undefined };
}
