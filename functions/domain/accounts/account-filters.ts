import type { AccountRecord, AccountType } from './accounts.js';

/** The filters of `GET /accounts`: `q` (a case-insensitive part of the name, display name or description) and `type`. */
export interface AccountFilter {
  q?: string;
  type?: AccountType;
}

/** Whether an account passes the listing's filters. */
export function accountMatches(account: AccountRecord, filter: AccountFilter): boolean {
  if (filter.type && account.type !== filter.type) return false;
  if (filter.q) {
    const q = filter.q.toLowerCase();
    const fields = [account.accountName, account.name ?? '', account.description];
    if (!fields.some((f) => f.toLowerCase().includes(q))) return false;
  }
  return true;
}
