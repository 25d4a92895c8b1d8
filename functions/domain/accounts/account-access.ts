/**
 * What a caller may do on an account: membership and permissions (following parent
 * organisations), sign-in and read-only credential checks, and loading an account by name.
 */
import type { AccountRecord } from './accounts.js';
import type { Caller } from '../shared/caller.js';
import { isReadOnly } from '../shared/caller.js';
import { NotFoundError, UnauthenticatedError, ForbiddenError } from '../shared/errors.js';
import type { AccountAccess, Permission } from './permissions.js';
import { FULL_ACCESS, NO_ACCESS, mergeAccess, permissionsOfRole, restrictToReadOnly } from './permissions.js';
import type { Platform } from '../shared/platform.js';

/** How deep organisation parents are followed; guards against cycles too. */
const MAX_PARENT_DEPTH = 8;

/** Resolves what a caller may do on accounts. */
export class AccountAccessService {
  constructor(protected readonly platform: Platform) {}

  /** Membership and permissions of `caller` on `account`, following parent organisations. */
  async accountAccess(caller: Caller | null, account: AccountRecord): Promise<AccountAccess> {
    if (!caller) return NO_ACCESS;
    let access: AccountAccess;
    if (caller.isAdmin || caller.uid === account.uid) access = FULL_ACCESS;
    else if (account.type === 'user') access = NO_ACCESS;
    else access = await this.organisationAccess(caller.uid, account, 0);
    return isReadOnly(caller) ? restrictToReadOnly(access) : access;
  }

  private async organisationAccess(userUid: string, org: AccountRecord, depth: number): Promise<AccountAccess> {
    const membership = await this.platform.store.getMembership(org.uid, userUid);
    let access: AccountAccess = membership
      ? { isMember: true, permissions: permissionsOfRole(membership.role, org.customRoles ?? []) }
      : NO_ACCESS;
    if (org.parentUid && depth < MAX_PARENT_DEPTH) {
      const parent = await this.platform.store.getAccount(org.parentUid);
      if (parent) access = mergeAccess(access, await this.organisationAccess(userUid, parent, depth + 1));
    }
    return access;
  }

  /**
   * Throws unless the caller holds `permission` on `account`. Anonymous callers get 401 (sign in);
   * read-only tokens get 401 as the TriplyDB client expects; others get 403.
   */
  async require(caller: Caller | null, account: AccountRecord, permission: Permission, what: string): Promise<AccountAccess> {
    if (!caller) throw new UnauthenticatedError(`Unauthorized. Sign in or send an API token to ${what}.`);
    const access = await this.accountAccess(caller, account);
    if (access.permissions.has(permission)) return access;
    if (isReadOnly(caller)) {
      throw new UnauthenticatedError(`Unauthorized. This API token is read-only; use a token with write access to ${what}.`);
    }
    throw new ForbiddenError(`Forbidden. Account "${caller.accountName}" may not ${what} of "${account.accountName}".`);
  }

  requireSignedIn(caller: Caller | null, what: string): Caller {
    if (!caller) throw new UnauthenticatedError(`Unauthorized. Sign in or send an API token to ${what}.`);
    return caller;
  }

  requireWritableCredential(caller: Caller, what: string): void {
    if (isReadOnly(caller)) {
      throw new UnauthenticatedError(`Unauthorized. This API token is read-only; use a token with write access to ${what}.`);
    }
  }

  /** Loads an account by name or answers 404. */
  async account(accountName: string): Promise<AccountRecord> {
    const account = await this.platform.store.getAccountByName(accountName);
    if (!account) throw new NotFoundError(`Account "${accountName}" does not exist.`);
    return account;
  }
}
