import type { AccountAccessService } from './account-access.js';
import type { AccountRecord, AccountType, MembershipRecord, PinnedItem, TokenRecord } from './accounts.js';
import type { AuthService } from './auth-service.js';
import type { Caller } from '../shared/caller.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../shared/errors.js';
import { assertAccountName, assertRoleName, nameKey } from '../shared/names.js';
import { collectPage, type Page, type PageRequest } from '../shared/paging.js';
import { type AccountAccess, type CustomRole, isBuiltInRole, missingPermissions, type Permission, permissionsOfRole } from './permissions.js';
import type { Platform } from '../shared/platform.js';

export interface NewAccountInput {
  type: AccountType;
  accountName: string;
  name?: string;
  email?: string;
  description?: string;
  password?: string;
  isAdmin?: boolean;
  /** Organisations: name of the parent organisation. */
  parent?: string;
}

export interface AccountPatch {
  accountName?: string;
  name?: string;
  email?: string;
  description?: string;
  password?: string;
  /** Required with `password` when users change their own password. */
  currentPassword?: string;
  /** Organisations: name of the new parent, or null to detach. */
  parent?: string | null;
  /** Users, administrators only. */
  isAdmin?: boolean;
  /** Users: the "Email notifications" setting (emails about failed flow runs). */
  emailNotifications?: boolean;
  /** Checked against what the caller may see by the caller of `update` (domain/stories/pins.ts). */
  pinnedItems?: PinnedItem[];
}

export const MIN_PASSWORD_LENGTH = 12;

/** How far up parent organisations ownership is followed (as AccessService follows membership). */
const MAX_PARENT_DEPTH = 8;

export function assertPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > 256) {
    throw new ValidationError(`password: must have ${MIN_PASSWORD_LENGTH} to 256 characters.`);
  }
}

/** Accounts, organisations, members, roles and tokens. */
export class AccountService {
  /** What other contexts remove with an account (its flows, hooks, datasets), registered at wiring, run in order. */
  private readonly deletionSteps: ((account: AccountRecord) => Promise<void>)[] = [];

  constructor(
    private readonly platform: Platform,
    private readonly access: AccountAccessService,
    private readonly auth: AuthService,
  ) {}

  onDelete(step: (account: AccountRecord) => Promise<void>): void {
    this.deletionSteps.push(step);
  }

  private now(): string {
    return this.platform.clock.now().toISOString();
  }

  get(accountName: string): Promise<AccountRecord> {
    return this.access.account(accountName);
  }

  /** Accounts in name order; `keep` filters them (`?q=`, `?type=`, see account-filters.ts). */
  list(page: PageRequest, keep: (a: AccountRecord) => boolean = () => true): Promise<Page<AccountRecord>> {
    return collectPage((r) => this.platform.store.listAccounts(r), async (a) => keep(a), page);
  }

  async parentName(account: AccountRecord): Promise<string | undefined> {
    if (!account.parentUid) return undefined;
    return (await this.platform.store.getAccount(account.parentUid))?.accountName;
  }

  /**
   * Bootstrap: creates the instance administrator when it does not exist yet. There is no caller
   * here; only start-up code and the operator CLI call this.
   */
  async ensureAdministrator(accountName: string, password: string): Promise<{ account: AccountRecord; created: boolean }> {
    assertAccountName(accountName, 'administrator account name');
    const existing = await this.platform.store.getAccountByName(accountName);
    if (existing) {
      if (!existing.isAdmin) throw new ConflictError(`Account "${accountName}" exists but is not an administrator; choose another name.`);
      return { account: existing, created: false };
    }
    assertPassword(password);
    const now = this.now();
    const account: AccountRecord = {
      uid: this.platform.ids.newId(),
      type: 'user',
      accountName,
      description: 'Instance administrator',
      createdAt: now,
      updatedAt: now,
      passwordHash: await this.platform.passwords.hash(password),
      isAdmin: true,
    };
    await this.platform.store.createAccount(account);
    return { account, created: true };
  }

  /** Administrators create users; any signed-in account creates organisations and owns them. */
  async create(caller: Caller | null, input: NewAccountInput): Promise<AccountRecord> {
    const signedIn = this.access.requireSignedIn(caller, 'create an account');
    this.access.requireWritableCredential(signedIn, 'create an account');
    assertAccountName(input.accountName);
    const now = this.now();
    const base = {
      uid: this.platform.ids.newId(),
      accountName: input.accountName,
      name: input.name,
      description: input.description ?? '',
      email: input.email,
      createdAt: now,
      updatedAt: now,
    };
    if (input.type === 'user') {
      if (!signedIn.isAdmin) throw new ForbiddenError('Forbidden. Only instance administrators create users.');
      if (input.password === undefined) throw new ValidationError('password: a new user needs a password.');
      assertPassword(input.password);
      const user: AccountRecord = {
        ...base,
        type: 'user',
        passwordHash: await this.platform.passwords.hash(input.password),
        isAdmin: input.isAdmin === true,
      };
      await this.platform.store.createAccount(user);
      return user;
    }
    if (input.password !== undefined) throw new ValidationError('password: organisations do not sign in; leave it out.');
    if (input.isAdmin !== undefined) throw new ValidationError('isAdmin: only users can be administrators.');
    const creator = await this.platform.store.getAccount(signedIn.uid);
    if (!creator || creator.type !== 'user') throw new ForbiddenError('Forbidden. Only users create organisations.');
    let parentUid: string | undefined;
    if (input.parent !== undefined) parentUid = (await this.parentFor(signedIn, input.parent)).uid;
    const org: AccountRecord = { ...base, type: 'org', parentUid, customRoles: [] };
    await this.platform.store.createAccount(org);
    await this.platform.store.putMembership({ orgUid: org.uid, userUid: creator.uid, role: 'owner', createdAt: now, updatedAt: now });
    return org;
  }

  /** A parent must be an organisation the caller manages. */
  private async parentFor(caller: Caller, parentName: string, child?: AccountRecord): Promise<AccountRecord> {
    const parent = await this.platform.store.getAccountByName(parentName);
    if (!parent || parent.type !== 'org') throw new ValidationError(`parent: "${parentName}" is not an organisation.`);
    await this.access.require(caller, parent, 'manageAccount', 'attach a child organisation');
    if (child) {
      // Refuse cycles: walk up from the new parent (bounded) and make sure we never meet the child.
      let cursor: AccountRecord | null = parent;
      for (let depth = 0; cursor && depth < 16; depth++) {
        if (cursor.uid === child.uid) throw new ValidationError('parent: an organisation cannot be its own ancestor.');
        cursor = cursor.parentUid ? await this.platform.store.getAccount(cursor.parentUid) : null;
      }
    }
    return parent;
  }

  async update(caller: Caller | null, accountName: string, patch: AccountPatch): Promise<AccountRecord> {
    const account = await this.access.account(accountName);
    await this.access.require(caller, account, 'manageAccount', 'change the account');
    const signedIn = caller as Caller;
    let next: AccountRecord = { ...account, updatedAt: this.now() };
    if (patch.name !== undefined) next.name = patch.name;
    if (patch.email !== undefined) next.email = patch.email;
    if (patch.description !== undefined) next.description = patch.description;
    if (patch.pinnedItems !== undefined) next.pinnedItems = patch.pinnedItems;
    if (patch.password !== undefined) {
      if (account.type !== 'user') throw new ValidationError('password: organisations do not have a password.');
      assertPassword(patch.password);
      // A stolen session or token must not be enough to lock the owner out: prove the old password.
      if (signedIn.uid === account.uid) await this.checkCurrentPassword(account, patch.currentPassword);
      next.passwordHash = await this.platform.passwords.hash(patch.password);
      // Every session opened before now ends (API tokens stay: they are revoked one by one).
      next.sessionGeneration = (account.sessionGeneration ?? 0) + 1;
    } else if (patch.currentPassword !== undefined) {
      throw new ValidationError('currentPassword: only send it together with a new password.');
    }
    if (patch.emailNotifications !== undefined) {
      if (account.type !== 'user') throw new ValidationError('emailNotifications: only users have notification settings.');
      next.emailNotifications = patch.emailNotifications;
    }
    if (patch.isAdmin !== undefined) {
      if (!signedIn.isAdmin) throw new ForbiddenError('Forbidden. Only instance administrators grant or revoke administration.');
      if (account.type !== 'user') throw new ValidationError('isAdmin: only users can be administrators.');
      if (!patch.isAdmin && account.isAdmin && (await this.platform.store.countAdmins()) <= 1) {
        throw new ConflictError('isAdmin: this is the last administrator; make another user administrator first.');
      }
      next.isAdmin = patch.isAdmin;
    }
    if (patch.parent !== undefined) {
      if (account.type !== 'org') throw new ValidationError('parent: only organisations have a parent.');
      // A parent's members inherit access here, so attaching one hands the organisation over.
      await this.requireOwner(signedIn, account, 'change its parent organisation');
      next.parentUid = patch.parent === null ? undefined : (await this.parentFor(signedIn, patch.parent, account)).uid;
    }
    if (patch.accountName !== undefined && patch.accountName !== account.accountName) {
      assertAccountName(patch.accountName);
      await this.platform.store.replaceAccount(next, account.updatedAt);
      next = await this.platform.store.renameAccount(next, patch.accountName, this.now());
    } else {
      await this.platform.store.replaceAccount(next, account.updatedAt);
    }
    return next;
  }

  /**
   * Deletes an account and everything it owns. Each step is idempotent, so a failure part-way
   * can be retried; the account record goes last, so a half-deleted account stays visible.
   */
  async delete(caller: Caller | null, accountName: string): Promise<void> {
    const account = await this.access.account(accountName);
    if (account.type === 'user') {
      const signedIn = this.access.requireSignedIn(caller, 'delete a user');
      if (!signedIn.isAdmin) throw new ForbiddenError('Forbidden. Only instance administrators delete users.');
      if (account.isAdmin && (await this.platform.store.countAdmins()) <= 1) {
        throw new ConflictError('This is the last administrator; make another user administrator first.');
      }
      for (const m of await this.platform.store.listMembershipsOfUser(account.uid)) {
        await this.assertNotLastOwner(m.orgUid, account.uid, 'delete this user');
      }
    } else {
      await this.access.require(caller, account, 'manageAccount', 'delete the organisation');
      await this.requireOwner(caller as Caller, account, 'delete the organisation');
    }
    const store = this.platform.store;
    // Its flow schedules and hooks go first (their runs would act as it), then its flows and datasets.
    for (const step of this.deletionSteps) await step(account);
    for (const t of await store.listTokens(account.uid)) await store.deleteToken(t.uid, t.tokenId);
    for (const m of await store.listMembers(account.uid)) await store.deleteMembership(m.orgUid, m.userUid);
    for (const m of await store.listMembershipsOfUser(account.uid)) await store.deleteMembership(m.orgUid, m.userUid);
    await store.deleteAccount(account);
  }

  async organisationsOf(userName: string): Promise<AccountRecord[]> {
    const user = await this.access.account(userName);
    if (user.type !== 'user') throw new NotFoundError(`User "${userName}" does not exist.`);
    const memberships = await this.platform.store.listMembershipsOfUser(user.uid);
    const orgs = await Promise.all(memberships.map((m) => this.platform.store.getAccount(m.orgUid)));
    return orgs.filter((o): o is AccountRecord => o !== null).sort((a, b) => nameKey(a.accountName).localeCompare(nameKey(b.accountName)));
  }

  /** Creates an organisation owned by `userName` (the route the TriplyDB client uses). */
  async createOrganisationFor(caller: Caller | null, userName: string, input: Omit<NewAccountInput, 'type'>): Promise<AccountRecord> {
    const signedIn = this.access.requireSignedIn(caller, 'create an organisation');
    const user = await this.access.account(userName);
    if (user.uid !== signedIn.uid && !signedIn.isAdmin) {
      throw new ForbiddenError(`Forbidden. Only "${userName}" creates organisations under its own name.`);
    }
    return this.create(signedIn, { ...input, type: 'org' });
  }

  private async organisation(accountName: string): Promise<AccountRecord> {
    const org = await this.access.account(accountName);
    if (org.type !== 'org') throw new NotFoundError(`Organisation "${accountName}" does not exist; "${accountName}" is a user.`);
    return org;
  }

  async members(accountName: string): Promise<{ membership: MembershipRecord; user: AccountRecord }[]> {
    const org = await this.organisation(accountName);
    const memberships = await this.platform.store.listMembers(org.uid);
    const users = await Promise.all(memberships.map((m) => this.platform.store.getAccount(m.userUid)));
    return memberships
      .map((membership, i) => ({ membership, user: users[i] }))
      .filter((m): m is { membership: MembershipRecord; user: AccountRecord } => m.user != null)
      .sort((a, b) => nameKey(a.user.accountName).localeCompare(nameKey(b.user.accountName)));
  }

  async member(accountName: string, memberName: string): Promise<{ membership: MembershipRecord; user: AccountRecord }> {
    const org = await this.organisation(accountName);
    const user = await this.platform.store.getAccountByName(memberName);
    const membership = user && (await this.platform.store.getMembership(org.uid, user.uid));
    if (!user || !membership) throw new NotFoundError(`"${memberName}" is not a member of "${accountName}".`);
    return { membership, user };
  }

  private assertRoleExists(org: AccountRecord, role: string): void {
    if (!isBuiltInRole(role) && !(org.customRoles ?? []).some((r) => r.name === role)) {
      const names = ['owner', 'member', ...(org.customRoles ?? []).map((r) => r.name)];
      throw new ValidationError(`role: "${role}" is not a role of "${org.accountName}"; use one of ${names.join(', ')}.`);
    }
  }

  private async assertNotLastOwner(orgUid: string, userUid: string, what: string): Promise<void> {
    const members = await this.platform.store.listMembers(orgUid);
    const owners = members.filter((m) => m.role === 'owner');
    if (owners.length === 1 && owners[0]?.userUid === userUid) {
      throw new ConflictError(`Cannot ${what}: it would leave the organisation without an owner. Make another member owner first.`);
    }
  }

  private async checkCurrentPassword(account: AccountRecord, currentPassword: string | undefined): Promise<void> {
    if (currentPassword === undefined || currentPassword === '') {
      throw new ValidationError('currentPassword: send your current password to change it.');
    }
    if (!(await this.auth.confirmPassword(account, currentPassword))) {
      throw new ForbiddenError('Forbidden. currentPassword is not your current password; the password was not changed.');
    }
  }

  /** Owners of the organisation (directly or of a parent organisation) and instance administrators. */
  private async isOwner(caller: Caller, org: AccountRecord): Promise<boolean> {
    if (caller.isAdmin) return true;
    let current: AccountRecord | null = org;
    for (let depth = 0; current && depth <= MAX_PARENT_DEPTH; depth++) {
      if ((await this.platform.store.getMembership(current.uid, caller.uid))?.role === 'owner') return true;
      current = current.parentUid ? await this.platform.store.getAccount(current.parentUid) : null;
    }
    return false;
  }

  private async requireOwner(caller: Caller, org: AccountRecord, what: string): Promise<void> {
    if (!(await this.isOwner(caller, org))) {
      throw new ForbiddenError(`Forbidden. Only owners of "${org.accountName}" (or instance administrators) may ${what}.`);
    }
  }

  /** Nobody grants more than they hold: every permission of what is granted must be the caller's. */
  private requireHolds(caller: Caller, org: AccountRecord, access: AccountAccess, granted: Iterable<Permission>, what: string): void {
    const missing = missingPermissions(granted, access.permissions);
    if (missing.length > 0) {
      throw new ForbiddenError(
        `Forbidden. "${caller.accountName}" may not ${what}: that grants ${missing.join(', ')}, which it does not hold in "${org.accountName}".`,
      );
    }
  }

  /** Giving `role` to someone: owner only by owners; any other role only by holders of all it grants. */
  private async requireMayGrant(caller: Caller, org: AccountRecord, access: AccountAccess, role: string, what: string): Promise<void> {
    if (role === 'owner') return this.requireOwner(caller, org, 'make someone owner');
    this.requireHolds(caller, org, access, permissionsOfRole(role, org.customRoles ?? []), what);
  }

  async addMember(caller: Caller | null, accountName: string, memberName: string, role: string) {
    const org = await this.organisation(accountName);
    const access = await this.access.require(caller, org, 'manageAccount', 'add members');
    this.assertRoleExists(org, role);
    await this.requireMayGrant(caller as Caller, org, access, role, `give the role "${role}"`);
    const user = await this.platform.store.getAccountByName(memberName);
    if (!user || user.type !== 'user') throw new ValidationError(`accountName: "${memberName}" is not a user of this instance.`);
    if (await this.platform.store.getMembership(org.uid, user.uid)) {
      throw new ConflictError(`"${memberName}" is already a member of "${accountName}"; change the role with PATCH instead.`);
    }
    const now = this.now();
    const membership = { orgUid: org.uid, userUid: user.uid, role, createdAt: now, updatedAt: now };
    await this.platform.store.putMembership(membership);
    return { membership, user };
  }

  async changeMemberRole(caller: Caller | null, accountName: string, memberName: string, role: string) {
    const org = await this.organisation(accountName);
    const access = await this.access.require(caller, org, 'manageAccount', 'change member roles');
    this.assertRoleExists(org, role);
    const { membership, user } = await this.member(accountName, memberName);
    if (membership.role === 'owner' && role !== 'owner') await this.requireOwner(caller as Caller, org, 'demote an owner');
    await this.requireMayGrant(caller as Caller, org, access, role, `give the role "${role}"`);
    if (membership.role === 'owner' && role !== 'owner') await this.assertNotLastOwner(org.uid, user.uid, 'change this role');
    const updated = { ...membership, role, updatedAt: this.now() };
    await this.platform.store.putMembership(updated);
    return { membership: updated, user };
  }

  /** Owners remove anyone; a member may leave by removing itself. */
  async removeMember(caller: Caller | null, accountName: string, memberName: string): Promise<void> {
    const org = await this.organisation(accountName);
    const signedIn = this.access.requireSignedIn(caller, 'remove members');
    const { membership, user } = await this.member(accountName, memberName);
    if (user.uid === signedIn.uid) this.access.requireWritableCredential(signedIn, 'leave the organisation');
    else {
      await this.access.require(caller, org, 'manageAccount', 'remove members');
      if (membership.role === 'owner') await this.requireOwner(signedIn, org, 'remove an owner');
    }
    await this.assertNotLastOwner(org.uid, user.uid, 'remove this member');
    await this.platform.store.deleteMembership(org.uid, user.uid);
  }

  async roles(accountName: string): Promise<CustomRole[]> {
    const org = await this.organisation(accountName);
    return org.customRoles ?? [];
  }

  private async saveRoles(
    caller: Caller | null,
    accountName: string,
    change: (roles: CustomRole[], org: AccountRecord) => Promise<CustomRole[]>,
    granted: readonly Permission[] = [],
  ) {
    const org = await this.organisation(accountName);
    const access = await this.access.require(caller, org, 'manageAccount', 'define roles');
    this.requireHolds(caller as Caller, org, access, granted, 'define this role');
    const roles = await change([...(org.customRoles ?? [])], org);
    await this.platform.store.replaceAccount({ ...org, customRoles: roles, updatedAt: this.now() }, org.updatedAt);
    return roles;
  }

  async createRole(caller: Caller | null, accountName: string, name: string, permissions: Permission[]): Promise<CustomRole> {
    assertRoleName(name);
    const role: CustomRole = { name, permissions: [...new Set<Permission>(['readFlows', ...permissions])] };
    await this.saveRoles(caller, accountName, async (roles) => {
      if (roles.some((r) => r.name === name)) throw new ConflictError(`Role "${name}" already exists; change it with PATCH.`);
      if (roles.length >= 50) throw new ValidationError('An organisation has at most 50 custom roles.');
      return [...roles, role];
    }, role.permissions);
    return role;
  }

  async updateRole(caller: Caller | null, accountName: string, name: string, permissions: Permission[]): Promise<CustomRole> {
    if (isBuiltInRole(name)) throw new ForbiddenError(`Forbidden. "${name}" is a built-in role; its permissions never change.`);
    const role: CustomRole = { name, permissions: [...new Set<Permission>(['readFlows', ...permissions])] };
    await this.saveRoles(caller, accountName, async (roles) => {
      const i = roles.findIndex((r) => r.name === name);
      if (i < 0) throw new NotFoundError(`Role "${name}" does not exist.`);
      roles[i] = role;
      return roles;
    }, role.permissions);
    return role;
  }

  async deleteRole(caller: Caller | null, accountName: string, name: string): Promise<void> {
    await this.saveRoles(caller, accountName, async (roles, org) => {
      if (!roles.some((r) => r.name === name)) throw new NotFoundError(`Role "${name}" does not exist.`);
      const holders = (await this.platform.store.listMembers(org.uid)).filter((m) => m.role === name);
      if (holders.length > 0) throw new ConflictError(`Role "${name}" is held by ${holders.length} member(s); give them another role first.`);
      return roles.filter((r) => r.name !== name);
    });
  }

  /** Tokens belong to users; only the user (or an administrator) sees and manages them. */
  private async tokenOwner(caller: Caller | null, userName: string, what: string): Promise<{ user: AccountRecord; caller: Caller }> {
    const signedIn = this.access.requireSignedIn(caller, what);
    const user = await this.access.account(userName);
    if (user.type !== 'user') throw new NotFoundError(`User "${userName}" does not exist.`);
    if (user.uid !== signedIn.uid && !signedIn.isAdmin) {
      throw new ForbiddenError(`Forbidden. Only "${userName}" manages its own API tokens.`);
    }
    return { user, caller: signedIn };
  }

  async tokens(caller: Caller | null, userName: string): Promise<TokenRecord[]> {
    const { user } = await this.tokenOwner(caller, userName, 'list API tokens');
    return (await this.platform.store.listTokens(user.uid)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async createToken(caller: Caller | null, userName: string, input: { description: string; readOnly: boolean }, apiUrl: string) {
    const { user, caller: signedIn } = await this.tokenOwner(caller, userName, 'create an API token');
    this.access.requireWritableCredential(signedIn, 'create an API token');
    return this.auth.issueToken(user, input, apiUrl);
  }

  async deleteToken(caller: Caller | null, userName: string, tokenId: string): Promise<void> {
    const { user, caller: signedIn } = await this.tokenOwner(caller, userName, 'revoke an API token');
    // A read-only token may revoke itself (useful after a leak), nothing else.
    if (!(signedIn.credential.kind === 'token' && signedIn.credential.tokenId === tokenId)) {
      this.access.requireWritableCredential(signedIn, 'revoke an API token');
    }
    await this.auth.revokeToken(user, tokenId);
  }
}
