import { ValidationError } from '../domain/shared/errors.js';
import type { Page, PageRequest } from '../domain/shared/paging.js';
import { singleQueryParam } from './request.js';
import type { HttpRequest } from './types.js';

/**
 * TriplyDB's listing parameters `sortBy`, `sortDirection` and `offset` (its OpenAPI): a sorted listing
 * reads the visible items (at most MAX_SORTED, through the listing's own cursor pages), sorts them
 * and answers one page by offset; its Link names the next page by offset (`since=o<offset>` where
 * the listing's cursor is `since`).
 */
export const MAX_SORTED = 5000;
export const MAX_OFFSET = 10_000;

export interface ListOrder<K extends string> {
  sortBy: K;
  direction: 'asc' | 'desc';
  offset: number;
}

const oneOf = (values: readonly string[]) => values.map((v) => `"${v}"`).join(', ');

/** `offset`: a whole number from 0 to MAX_OFFSET, or null when absent. */
export function offsetParam(req: HttpRequest, name = 'offset'): number | null {
  const raw = singleQueryParam(req, name);
  if (raw === null) return null;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > MAX_OFFSET) throw new ValidationError(`${name}: must be a whole number from 0 to ${MAX_OFFSET}.`);
  return n;
}

/**
 * The order asked for, or null when neither `sortBy` nor `sortDirection` (nor `offset`, where the
 * listing takes one) is given: the listing keeps its own order and cursor. Values are checked
 * against the OpenAPI's enums (400 naming the parameter and the values allowed).
 */
export function listOrder<K extends string>(req: HttpRequest, sortBys: readonly K[], defaultSortBy: K, offset: number | null = null): ListOrder<K> | null {
  const sortBy = singleQueryParam(req, 'sortBy');
  const direction = singleQueryParam(req, 'sortDirection');
  if (sortBy !== null && !sortBys.includes(sortBy as K)) throw new ValidationError(`sortBy: must be one of ${oneOf(sortBys)}.`);
  if (direction !== null && direction !== 'asc' && direction !== 'desc') throw new ValidationError('sortDirection: must be one of "asc", "desc".');
  if (sortBy === null && direction === null && offset === null) return null;
  return { sortBy: (sortBy as K | null) ?? defaultSortBy, direction: direction ?? 'asc', offset: offset ?? 0 };
}

/** A `since` cursor of a sorted listing (`o<offset>`), or null for the listing's own cursor. */
export function sortedSince(since: string | null): number | null {
  if (since === null || !/^o\d+$/.test(since)) return null;
  const n = Number(since.slice(1));
  if (n > MAX_OFFSET) throw new ValidationError(`since: an offset cursor is at most ${MAX_OFFSET}.`);
  return n;
}

/** Reads up to MAX_SORTED visible items through the listing's cursor pages. Bounded in calls. */
export async function readAll<T>(listPage: (page: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < MAX_SORTED / 100 && out.length < MAX_SORTED; i++) {
    const page = await listPage({ limit: 100, after });
    out.push(...page.items);
    if (!page.next) break;
    after = page.next;
  }
  return out;
}

/** Sorts by `key` (stable; ties keep the listing's order) and cuts one page; `more` when a next page exists. */
export function sortedPage<T>(items: T[], key: (item: T) => string | number, order: ListOrder<string>, limit: number): { items: T[]; more: boolean } {
  const sign = order.direction === 'desc' ? -1 : 1;
  const sorted = items
    .map((item, i) => ({ item, i, k: key(item) }))
    .sort((a, b) => (a.k < b.k ? -sign : a.k > b.k ? sign : a.i - b.i))
    .map((e) => e.item);
  return { items: sorted.slice(order.offset, order.offset + limit), more: sorted.length > order.offset + limit };
}

/** The Link to the next page of a sorted listing: the same query with the offset moved on. */
export function offsetLink(req: HttpRequest, apiUrl: string, param: 'offset' | 'since', next: number): Record<string, string> {
  const query = new URLSearchParams(req.query);
  query.delete('after');
  query.set(param, param === 'since' ? `o${next}` : String(next));
  return { link: `<${apiUrl}${req.path}?${query.toString()}>; rel="next"` };
}
