import type { CustomRole } from './permissions.js';

export type AccountType = 'user' | 'org';

/** An account as stored. Users carry a password hash; organisations carry roles and a parent. */
export interface AccountRecord {
  uid: string;
  type: AccountType;
  accountName: string;
  name?: string;
  description: string;
  email?: string;
  createdAt: string;
  updatedAt: string;
  /** Users only. A slow hash (scrypt), never returned. */
  passwordHash?: string;
  /** Users only: a password change counts this up, and sessions of an older generation end. */
  sessionGeneration?: number;
  /** Users only: instance administrator. */
  isAdmin?: boolean;
  /** Users only: the "Email notifications" setting (flow failure emails); on unless false. */
  emailNotifications?: boolean;
  /** Organisations only. */
  parentUid?: string;
  customRoles?: CustomRole[];
}

export interface MembershipRecord {
  orgUid: string;
  userUid: string;
  role: string;
  createdAt: string;
  updatedAt: string;
}

export interface TokenRecord {
  uid: string;
  tokenId: string;
  description: string;
  readOnly: boolean;
  /** SHA-256 of the whole token string; the token itself is shown once and never stored. */
  tokenHash: string;
  createdAt: string;
}

export interface SessionRecord {
  sessionHash: string;
  uid: string;
  csrfToken: string;
  /** The account's `sessionGeneration` when the session opened (absent: 0). */
  generation?: number;
  createdAt: string;
  /** Epoch seconds (the table's TTL attribute). */
  expiresAt: number;
}

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
