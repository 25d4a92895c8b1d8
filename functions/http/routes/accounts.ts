import { z } from 'zod';
import { accountView, membershipView, tokenView } from '../../domain/accounts/accounts.js';
import type { AccountRecord } from '../../domain/accounts/accounts.js';
import type { Caller } from '../../domain/shared/caller.js';
import { parsePageRequest } from '../../domain/shared/paging.js';
import { PERMISSIONS } from '../../domain/accounts/permissions.js';
import type { Operations, Services } from '../api.js';
import { jsonResponse } from '../errors.js';
import { nextLink, parseJsonBody, singleQueryParam, validate } from '../request.js';
import { allowQueryParams, flagParam, withoutQueryParams } from '../query-params.js';
import { listOrder, offsetLink, offsetParam, readAll, sortedPage } from '../list-order.js';

const ACCOUNT_SORT = ['accountNameLower', 'createdAt', 'updatedAt'] as const;
import { accountMatches } from '../../domain/accounts/account-filters.js';
import { UnauthenticatedError, ValidationError } from '../../domain/shared/errors.js';
import { checkPins, MAX_PINNED_ITEMS, PIN_TYPES, resolvePins } from '../../domain/stories/pins.js';
import type { OperationContext } from '../api.js';
import { accountExtras } from './account-extras.js';
import { pinResolver } from './showcase.js';
import { sessionCookies } from './auth.js';

const ListFilter = z.object({
  q: z.string().max(256, 'at most 256 characters').optional(),
  type: z.enum(['user', 'org'], 'must be "user" or "org"').optional(),
});

const text = (max: number) => z.string().max(max, `at most ${max} characters`);
/** Names that are looked up (members, parents): bounded before they become storage keys. */
const accountNameRef = (message?: string) => z.string(message).max(40, 'an account name has at most 40 characters');
const email = z.email('must be an e-mail address').max(254);

export const NewAccountBody = z.object({
  type: z.enum(['user', 'org'], 'must be "user" or "org"'),
  accountName: z.string('is required'),
  name: text(256).optional(),
  email: email.optional(),
  description: text(4096).optional(),
  password: z.string().optional(),
  isAdmin: z.boolean().optional(),
  parent: accountNameRef().optional(),
});

export const NewOrgBody = NewAccountBody.omit({ type: true, password: true, isAdmin: true });

export const AccountPatchBody = z.object({
  accountName: z.string().optional(),
  name: text(256).optional(),
  email: email.optional(),
  description: text(4096).optional(),
  password: z.string().optional(),
  currentPassword: text(256).optional(),
  parent: accountNameRef().nullable().optional(),
  isAdmin: z.boolean().optional(),
  emailNotifications: z.boolean().optional(),
  pinnedItems: z
    .array(z.object({ type: z.enum(PIN_TYPES, `must be one of ${PIN_TYPES.join(', ')}`), item: z.string('is the id of the item').max(64) }))
    .max(MAX_PINNED_ITEMS, `at most ${MAX_PINNED_ITEMS} items`)
    .optional(),
});

export const MemberBody = z.object({ accountName: accountNameRef('is required'), role: z.string('is required').max(40) });
export const RoleChangeBody = z.object({ role: z.string('is required').max(40) });
const permissionList = z.array(z.enum(PERMISSIONS, `must be one of ${PERMISSIONS.join(', ')}`)).max(PERMISSIONS.length);
export const RoleBody = z.object({ name: z.string('is required'), permissions: permissionList });
export const RolePatchBody = z.object({ permissions: permissionList });
export const TokenBody = z.object({ description: text(256).default(''), readOnly: z.boolean().default(false) });

/** Email and admin details only for the account itself and administrators. */
const canSeePrivate = (caller: Caller | null, account: AccountRecord) => !!caller && (caller.isAdmin || caller.uid === account.uid);

/** The account as TriplyDB shows it; `full` (one account, not a listing) adds counts and an organisation's members. */
export async function view(services: Services, caller: Caller | null, account: AccountRecord, apiUrl: string, full = false, extra: Record<string, unknown> = {}) {
  return accountView(account, {
    showPrivate: canSeePrivate(caller, account),
    parentName: await services.accounts.parentName(account),
    extra: {
      pinnedItems: await resolvePins(caller, account.pinnedItems, pinResolver(services, apiUrl)),
      ...(account.avatarUpdatedAt ? { avatarUrl: `${apiUrl}/imgs/avatars/a/${account.uid}?v=${Date.parse(account.avatarUpdatedAt)}` } : {}),
      ...(full ? await accountExtras(services, caller, account) : {}),
      ...extra,
    },
  });
}

/** Changes an account; `pinnedItems` must be items the caller may see. */
export async function applyAccountPatch(ctx: OperationContext, accountName: string) {
  const { req, services, caller, apiUrl } = ctx;
  const body = parseJsonBody(req, AccountPatchBody);
  const pins = body.pinnedItems
    ? await checkPins(caller, body.pinnedItems.map((p) => ({ type: p.type, id: p.item })), pinResolver(services, apiUrl))
    : undefined;
  const account = await services.accounts.update(caller, accountName, { ...body, pinnedItems: pins });
  // A password change ends every session; the console session that made it gets a new one.
  if (body.password !== undefined && caller?.credential.kind === 'session' && caller.uid === account.uid) {
    const renewed = await services.auth.openSession(account);
    return jsonResponse(200, await view(services, caller, account, apiUrl, true, { csrfToken: renewed.csrfToken }), {
      'set-cookie': sessionCookies(renewed.sessionId, renewed.csrfToken, apiUrl),
    });
  }
  return jsonResponse(200, await view(services, caller, account, apiUrl, true));
}

const operations: Operations = {
  async listAccounts({ req, services, caller, apiUrl }) {
    allowQueryParams(req, ['limit', 'after', 'q', 'type', 'verbose', 'offset', 'sortBy', 'sortDirection']);
    const page = parsePageRequest(singleQueryParam(req, 'limit'), singleQueryParam(req, 'after'));
    const filter = validate(ListFilter, { q: singleQueryParam(req, 'q') ?? undefined, type: singleQueryParam(req, 'type') ?? undefined });
    // `verbose`: each account as its own page shows it (counts, an organisation's members).
    const verbose = flagParam(req, 'verbose');
    // TriplyDB's `offset`, `sortBy`, `sortDirection`: sorted in memory, paged by offset (http/list-order.ts).
    const order = listOrder(req, ACCOUNT_SORT, 'accountNameLower', offsetParam(req));
    if (order) {
      if (page.after) throw new ValidationError('after: not with offset, sortBy or sortDirection; follow the Link header.');
      const all = await readAll((p) => services.accounts.list(p, (a) => accountMatches(a, filter)));
      const key = (a: AccountRecord) => (order.sortBy === 'accountNameLower' ? a.accountName.toLowerCase() : order.sortBy === 'createdAt' ? a.createdAt : (a.updatedAt ?? a.createdAt));
      const sorted = sortedPage(all, key, order, page.limit);
      const body = await Promise.all(sorted.items.map((a) => view(services, caller, a, apiUrl, verbose)));
      return jsonResponse(200, body, sorted.more ? offsetLink(req, apiUrl, 'offset', order.offset + page.limit) : undefined);
    }
    const result = await services.accounts.list(page, (a) => accountMatches(a, filter));
    const body = await Promise.all(result.items.map((a) => view(services, caller, a, apiUrl, verbose)));
    return jsonResponse(200, body, nextLink(req, apiUrl, result.next));
  },

  async createAccount({ req, services, caller, apiUrl }) {
    const body = parseJsonBody(req, NewAccountBody);
    const account = await services.accounts.create(caller, body);
    return jsonResponse(201, await view(services, caller, account, apiUrl));
  },

  async getAccount({ req, params, services, caller, apiUrl }) {
    allowQueryParams(req, ['verbose']);
    const account = await services.accounts.get(params.account!);
    return jsonResponse(200, await view(services, caller, account, apiUrl, true));
  },

  updateAccount: (ctx) => {
    allowQueryParams(ctx.req, ['verbose']);
    return applyAccountPatch(ctx, ctx.params.account!);
  },

  /** `PATCH /me`: the signed-in account changes itself. */
  updateMe: (ctx) => {
    allowQueryParams(ctx.req, ['verbose']);
    if (!ctx.caller) throw new UnauthenticatedError('Unauthorized.');
    return applyAccountPatch(ctx, ctx.caller.accountName);
  },

  /** `DELETE /me`: as deleting the account by name (a user is deleted by an administrator only). */
  async deleteMe({ services, caller }) {
    if (!caller) throw new UnauthenticatedError('Unauthorized.');
    await services.accounts.delete(caller, caller.accountName);
    return { status: 204, headers: {} };
  },

  async deleteAccount({ params, services, caller }) {
    await services.accounts.delete(caller, params.account!);
    return { status: 204, headers: {} };
  },

  async listOrganizationsOfUser({ req, params, services, caller, apiUrl }) {
    allowQueryParams(req, []);
    const orgs = await services.accounts.organisationsOf(params.account!);
    return jsonResponse(200, await Promise.all(orgs.map((o) => view(services, caller, o, apiUrl))));
  },

  async createOrganizationForUser({ req, params, services, caller, apiUrl }) {
    const body = parseJsonBody(req, NewOrgBody);
    const org = await services.accounts.createOrganisationFor(caller, params.account!, body);
    return jsonResponse(201, await view(services, caller, org, apiUrl, true));
  },

  async listMembers({ req, params, services }) {
    allowQueryParams(req, []);
    const members = await services.accounts.members(params.account!);
    return jsonResponse(200, members.map((m) => membershipView(m.membership, m.user)));
  },

  async addMember({ req, params, services, caller }) {
    const body = parseJsonBody(req, MemberBody);
    const m = await services.accounts.addMember(caller, params.account!, body.accountName, body.role);
    return jsonResponse(201, membershipView(m.membership, m.user));
  },

  async getMember({ req, params, services }) {
    allowQueryParams(req, []);
    const m = await services.accounts.member(params.account!, params.member!);
    return jsonResponse(200, membershipView(m.membership, m.user));
  },

  async updateMember({ req, params, services, caller }) {
    const body = parseJsonBody(req, RoleChangeBody);
    const m = await services.accounts.changeMemberRole(caller, params.account!, params.member!, body.role);
    return jsonResponse(200, membershipView(m.membership, m.user));
  },

  async removeMember({ params, services, caller }) {
    await services.accounts.removeMember(caller, params.account!, params.member!);
    return { status: 204, headers: {} };
  },

  async listRoles({ req, params, services }) {
    allowQueryParams(req, []);
    const custom = await services.accounts.roles(params.account!);
    return jsonResponse(200, [
      { name: 'owner', builtIn: true, permissions: [...PERMISSIONS] },
      { name: 'member', builtIn: true, permissions: ['writeDatasets', 'readFlows', 'createFlows', 'runFlows'] },
      ...custom.map((r) => ({ ...r, builtIn: false })),
    ]);
  },

  async createRole({ req, params, services, caller }) {
    const body = parseJsonBody(req, RoleBody);
    const role = await services.accounts.createRole(caller, params.account!, body.name, body.permissions);
    return jsonResponse(201, { ...role, builtIn: false });
  },

  async updateRole({ req, params, services, caller }) {
    const body = parseJsonBody(req, RolePatchBody);
    const role = await services.accounts.updateRole(caller, params.account!, params.role!, body.permissions);
    return jsonResponse(200, { ...role, builtIn: false });
  },

  async deleteRole({ params, services, caller }) {
    await services.accounts.deleteRole(caller, params.account!, params.role!);
    return { status: 204, headers: {} };
  },

  async listTokens({ req, params, services, caller }) {
    allowQueryParams(req, []);
    const tokens = await services.accounts.tokens(caller, params.account!);
    return jsonResponse(200, tokens.map(tokenView));
  },

  /** The only response that ever carries the token string. */
  async createToken({ req, params, services, caller, apiUrl }) {
    const body = parseJsonBody(req, TokenBody);
    const { record, token } = await services.accounts.createToken(caller, params.account!, body, apiUrl);
    return jsonResponse(201, { ...tokenView(record), token });
  },

  async deleteToken({ params, services, caller }) {
    await services.accounts.deleteToken(caller, params.account!, params.tokenId!);
    return { status: 204, headers: {} };
  },
};

/** Writes take no query parameters (account changes take `verbose`, as the TriplyDB client sends it). */
export const accountOperations: Operations = withoutQueryParams(operations, ['createAccount', 'deleteAccount', 'deleteMe', 'createOrganizationForUser', 'addMember', 'updateMember', 'removeMember', 'createRole', 'updateRole', 'deleteRole', 'createToken', 'deleteToken']);
