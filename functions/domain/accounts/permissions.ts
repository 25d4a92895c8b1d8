/**
 * Permissions and roles. A member of an organisation holds one role there; the role grants a set
 * of permissions. Membership of a parent organisation counts for its children.
 */
import type { CustomRole, Permission } from '../../ports/records/accounts.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type { CustomRole, Permission } from '../../ports/records/accounts.js';

export const PERMISSIONS = [
  'manageAccount',
  'writeDatasets',
  'readFlows',
  'createFlows',
  'runFlows',
  'manageFlowBlueprints',
  'manageFlowMaskedValues',
] as const satisfies readonly Permission[];
// Compile-time check that the list names every Permission (the type lives with the stored records).
true satisfies (Permission extends (typeof PERMISSIONS)[number] ? true : false);

/** Read flows is part of every role (spec: "part of every role"). */
export const ALWAYS_GRANTED: readonly Permission[] = ['readFlows'];

export const BUILT_IN_ROLES: Readonly<Record<'owner' | 'member', readonly Permission[]>> = {
  owner: PERMISSIONS,
  member: ['writeDatasets', 'readFlows', 'createFlows', 'runFlows'],
};

export const isBuiltInRole = (role: string): role is keyof typeof BUILT_IN_ROLES =>
  role === 'owner' || role === 'member';

/** Permissions a read-only token keeps: nothing that changes state. */
export const READ_ONLY_PERMISSIONS: readonly Permission[] = ['readFlows'];

/** The permissions of `role` in an organisation whose custom roles are `customRoles`. */
export function permissionsOfRole(role: string, customRoles: readonly CustomRole[]): Set<Permission> {
  if (isBuiltInRole(role)) return new Set(BUILT_IN_ROLES[role]);
  const custom = customRoles.find((r) => r.name === role);
  return new Set<Permission>([...ALWAYS_GRANTED, ...(custom?.permissions ?? [])]);
}

/** What the caller may do on one account (user or organisation). */
export interface AccountAccess {
  /** Owner of the account itself, a member of the organisation (directly or via a parent), or an administrator. */
  isMember: boolean;
  permissions: ReadonlySet<Permission>;
}

export const NO_ACCESS: AccountAccess = { isMember: false, permissions: new Set() };
export const FULL_ACCESS: AccountAccess = { isMember: true, permissions: new Set(PERMISSIONS) };

/** A read-only token keeps membership (it may read private data) but loses every write permission. */
export function restrictToReadOnly(access: AccountAccess): AccountAccess {
  return {
    isMember: access.isMember,
    permissions: new Set([...access.permissions].filter((p) => READ_ONLY_PERMISSIONS.includes(p))),
  };
}

/** The permissions of `granted` that `held` lacks: nobody grants more than they hold. */
export function missingPermissions(granted: Iterable<Permission>, held: ReadonlySet<Permission>): Permission[] {
  return [...new Set(granted)].filter((p) => !held.has(p));
}

export function mergeAccess(a: AccountAccess, b: AccountAccess): AccountAccess {
  return { isMember: a.isMember || b.isMember, permissions: new Set([...a.permissions, ...b.permissions]) };
}
