import type { PinnedItem } from '../accounts/accounts.js';
import type { Caller } from '../shared/caller.js';
import { ValidationError } from '../shared/errors.js';

export const MAX_PINNED_ITEMS = 20;
export const PIN_TYPES = ['Dataset', 'Query', 'Story'] as const;

/** Finds a pinnable item by id and returns its public view, or null when the caller may not see it (or it is gone). */
export type PinResolver = (caller: Caller | null, item: PinnedItem) => Promise<Record<string, unknown> | null>;

/** Checks pins an account is given: at most MAX_PINNED_ITEMS, no duplicates, each an item the caller may see. */
export async function checkPins(caller: Caller | null, items: PinnedItem[], resolve: PinResolver): Promise<PinnedItem[]> {
  if (items.length > MAX_PINNED_ITEMS) throw new ValidationError(`pinnedItems: at most ${MAX_PINNED_ITEMS} items.`);
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    const key = `${item.type}:${item.id}`;
    if (seen.has(key)) throw new ValidationError(`pinnedItems[${i}]: ${item.type} "${item.id}" is pinned twice.`);
    seen.add(key);
    if (!(await resolve(caller, item))) throw new ValidationError(`pinnedItems[${i}].item: no ${item.type.toLowerCase()} "${item.id}" that you may see.`);
  }
  return items.map(({ type, id }) => ({ type, id }));
}

/** The pins as TriplyDB shows them (`{type, item: <full object>}`), leaving out what this caller may not see. */
export async function resolvePins(caller: Caller | null, items: PinnedItem[] | undefined, resolve: PinResolver): Promise<{ type: string; item: Record<string, unknown> }[]> {
  const resolved = await Promise.all((items ?? []).map(async (p) => ({ type: p.type, item: await resolve(caller, p) })));
  return resolved.filter((p): p is { type: PinnedItem['type']; item: Record<string, unknown> } => p.item !== null);
}
