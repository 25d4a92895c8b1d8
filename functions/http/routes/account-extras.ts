import type { AccountRecord } from '../../domain/accounts/accounts.js';
import { membershipView } from '../../domain/accounts/accounts.js';
import type { Caller } from '../../domain/shared/caller.js';
import type { Page, PageRequest } from '../../domain/shared/paging.js';
import type { Services } from '../api.js';

/** Counting reads at most this many pages of 100: counts past 2 000 stay at 2 000. */
const MAX_COUNT_PAGES = 20;

async function count<T>(list: (page: PageRequest) => Promise<Page<T>>): Promise<number> {
  let n = 0;
  let after: string | undefined;
  for (let i = 0; i < MAX_COUNT_PAGES; i++) {
    const page = await list({ limit: 100, after });
    n += page.items.length;
    if (!page.next) break;
    after = page.next;
  }
  return n;
}

/**
 * What one account's page shows beyond its record: how many datasets and queries the caller may
 * see there, and an organisation's members.
 */
export async function accountExtras(services: Services, caller: Caller | null, account: AccountRecord): Promise<Record<string, unknown>> {
  const [datasetCount, queryCount] = await Promise.all([
    count((p) => services.datasets.list(caller, account.accountName, p)),
    count((p) => services.savedQueries.list(caller, account.accountName, p)),
  ]);
  const extras: Record<string, unknown> = { datasetCount, queryCount };
  if (account.type === 'org') {
    const members = await services.accounts.members(account.accountName);
    extras.members = members.map((m) => membershipView(m.membership, m.user));
  }
  return extras;
}
