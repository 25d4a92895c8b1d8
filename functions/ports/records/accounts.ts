/**
 * Accounts as stored (users, organisations, memberships, tokens, sessions): the records the
 * MetadataStore port reads and writes. Types only; the views and rules live in domain/accounts.
 */

export type AccountType = 'user' | 'org';

/** What a role may do; `PERMISSIONS` in domain/accounts/permissions.ts lists them all. */
export type Permission =
  | 'manageAccount'
  | 'writeDatasets'
  | 'readFlows'
  | 'createFlows'
  | 'runFlows'
  | 'manageFlowBlueprints'
  | 'manageFlowMaskedValues';

export interface CustomRole {
  name: string;
  permissions: Permission[];
}

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
  /** Items shown on the account's page, in order (ids; resolved and filtered by who looks). */
  pinnedItems?: PinnedItem[];
  /** When an avatar was last set (its blob is `datasets/_avatars/<uid>` in the data bucket). */
  avatarUpdatedAt?: string;
}

export interface PinnedItem {
  type: 'Dataset' | 'Query' | 'Story';
  id: string;
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
