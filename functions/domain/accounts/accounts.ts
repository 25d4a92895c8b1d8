import type { AccountRecord, MembershipRecord, TokenRecord } from '../../ports/records/accounts.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type { AccountRecord, AccountType, MembershipRecord, PinnedItem, SessionRecord, TokenRecord } from '../../ports/records/accounts.js';

/** The public JSON of an account, with TriplyDB field names. Email only for its owner and admins. */
export function accountView(
  account: AccountRecord,
  options: { showPrivate: boolean; parentName?: string; extra?: Record<string, unknown> } = { showPrivate: false },
): Record<string, unknown> {
  const view: Record<string, unknown> = {
    type: account.type,
    accountType: account.type === 'user' ? 'user' : 'group',
    uid: account.uid,
    accountName: account.accountName,
    name: account.name,
    description: account.description,
    createdAt: account.createdAt,
    updatedAt: account.updatedAt,
    pinnedItems: [],
  };
  if (account.type === 'user') {
    view.role = account.isAdmin ? 'siteAdmin' : 'light';
    if (options.showPrivate) {
      view.email = account.email;
      view.emailNotifications = account.emailNotifications !== false;
    }
  } else {
    view.email = account.email;
    if (options.parentName) view.parent = options.parentName;
  }
  return { ...view, ...options.extra };
}

/** An account's avatar in the data bucket: under `datasets/`, where every data bucket grant is held (no dataset id starts with `_`). */
export const accountAvatarKey = (uid: string): string => `datasets/_avatars/${uid}`;

export const membershipView = (m: MembershipRecord, user: AccountRecord): Record<string, unknown> => ({
  role: m.role,
  user: accountView(user),
  createdAt: m.createdAt,
  updatedAt: m.updatedAt,
});

export const tokenView = (t: TokenRecord): Record<string, unknown> => ({
  tokenId: t.tokenId,
  description: t.description,
  readOnly: t.readOnly,
  scopes: t.readOnly ? { acc: 'read', ds: 'read', us: 'read', tok: 'read' } : { acc: 'write', ds: 'write', us: 'write', tok: 'write' },
  createdAt: t.createdAt,
});
