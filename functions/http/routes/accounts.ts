import { z } from 'zod';
import { accountView, membershipView, tokenView } from '../../domain/accounts/accounts.js';
import type { AccountRecord } from '../../domain/accounts/accounts.js';
import type { Caller } from '../../domain/shared/caller.js';
import { parsePageRequest } from '../../domain/shared/paging.js';
import { PERMISSIONS } from '../../domain/accounts/permissions.js';
import type { Operations, Services } from '../api.js';
import { jsonResponse } from '../errors.js';
import { nextLink, parseJsonBody, singleQueryParam } from '../request.js';
import { sessionCookies } from './auth.js';

const text = (max: number) => z.string().max(max, `at most ${max} characters`);
/** Names that are looked up (members, parents): bounded before they become storage keys. */
const accountNameRef = (message?: string) => z.string(message).max(40, 'an account name has at most 40 characters');
const email = z.email('must be an e-mail address').max(254);

const NewAccountBody = z.object({
  type: z.enum(['user', 'org'], 'must be "user" or "org"'),
  accountName: z.string('is required'),
  name: text(256).optional(),
  email: email.optional(),
  description: text(4096).optional(),
  password: z.string().optional(),
  isAdmin: z.boolean().optional(),
  parent: accountNameRef().optional(),
});

const NewOrgBody = NewAccountBody.omit({ type: true, password: true, isAdmin: true });

const AccountPatchBody = z.object({
  accountName: z.string().optional(),
  name: text(256).optional(),
  email: email.optional(),
  description: text(4096).optional(),
  password: z.string().optional(),
  currentPassword: text(256).optional(),
  parent: accountNameRef().nullable().optional(),
  isAdmin: z.boolean().optional(),
  emailNotifications: z.boolean().optional(),
});

const MemberBody = z.object({ accountName: accountNameRef('is required'), role: z.string('is required').max(40) });
const RoleChangeBody = z.object({ role: z.string('is required').max(40) });
const permissionList = z.array(z.enum(PERMISSIONS, `must be one of ${PERMISSIONS.join(', ')}`)).max(PERMISSIONS.length);
const RoleBody = z.object({ name: z.string('is required'), permissions: permissionList });
const RolePatchBody = z.object({ permissions: permissionList });
const TokenBody = z.object({ description: text(256).default(''), readOnly: z.boolean().default(false) });

/** Email and admin details only for the account itself and administrators. */
const canSeePrivate = (caller: Caller | null, account: AccountRecord) => !!caller && (caller.isAdmin || caller.uid === account.uid);

async function view(services: Services, caller: Caller | null, account: AccountRecord) {
  return accountView(account, {
    showPrivate: canSeePrivate(caller, account),
    parentName: await services.accounts.parentName(account),
  });
}

export const accountOperations: Operations = {
  async listAccounts({ req, services, caller, apiUrl }) {
    const page = parsePageRequest(singleQueryParam(req, 'limit'), singleQueryParam(req, 'after'));
    const result = await services.accounts.list(page);
    const body = await Promise.all(result.items.map((a) => view(services, caller, a)));
    return jsonResponse(200, body, nextLink(req, apiUrl, result.next));
  },

  async createAccount({ req, services, caller }) {
    const body = parseJsonBody(req, NewAccountBody);
    const account = await services.accounts.create(caller, body);
    return jsonResponse(201, await view(services, caller, account));
  },

  async getAccount({ params, services, caller }) {
    const account = await services.accounts.get(params.account!);
    return jsonResponse(200, await view(services, caller, account));
  },

  async updateAccount({ req, params, services, caller, apiUrl }) {
    const body = parseJsonBody(req, AccountPatchBody);
    const account = await services.accounts.update(caller, params.account!, body);
    // A password change ends every session; the console session that made it gets a new one.
    if (body.password !== undefined && caller?.credential.kind === 'session' && caller.uid === account.uid) {
      const renewed = await services.auth.openSession(account);
      return jsonResponse(200, { ...(await view(services, caller, account)), csrfToken: renewed.csrfToken }, {
        'set-cookie': sessionCookies(renewed.sessionId, renewed.csrfToken, apiUrl),
      });
    }
    return jsonResponse(200, await view(services, caller, account));
  },

  async deleteAccount({ params, services, caller }) {
    await services.accounts.delete(caller, params.account!);
    return { status: 204, headers: {} };
  },

  async listOrganizationsOfUser({ params, services, caller }) {
    const orgs = await services.accounts.organisationsOf(params.account!);
    return jsonResponse(200, await Promise.all(orgs.map((o) => view(services, caller, o))));
  },

  async createOrganizationForUser({ req, params, services, caller }) {
    const body = parseJsonBody(req, NewOrgBody);
    const org = await services.accounts.createOrganisationFor(caller, params.account!, body);
    return jsonResponse(201, await view(services, caller, org));
  },

  async listMembers({ params, services }) {
    const members = await services.accounts.members(params.account!);
    return jsonResponse(200, members.map((m) => membershipView(m.membership, m.user)));
  },

  async addMember({ req, params, services, caller }) {
    const body = parseJsonBody(req, MemberBody);
    const m = await services.accounts.addMember(caller, params.account!, body.accountName, body.role);
    return jsonResponse(201, membershipView(m.membership, m.user));
  },

  async getMember({ params, services }) {
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

  async listRoles({ params, services }) {
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

  async listTokens({ params, services, caller }) {
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
