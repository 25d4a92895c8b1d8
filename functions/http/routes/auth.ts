import { z } from 'zod';
import { accountView } from '../../domain/accounts/accounts.js';
import { CSRF_COOKIE, SESSION_COOKIE, SESSION_TTL_SECONDS } from '../../domain/accounts/auth-service.js';
import { UnauthenticatedError } from '../../domain/shared/errors.js';
import type { Operations } from '../api.js';
import { jsonResponse } from '../errors.js';
import { parseJsonBody } from '../request.js';
import { allowQueryParams, checkQueryParams } from '../query-params.js';
import { resolvePins } from '../../domain/stories/pins.js';
import { accountExtras } from './account-extras.js';
import { pinResolver } from './showcase.js';

export const LoginBody = z.object({
  accountName: z.string('is required').min(1, 'is required').max(40, 'an account name has at most 40 characters'),
  password: z.string('is required').min(1, 'is required').max(256, 'at most 256 characters'),
});

const cookie = (name: string, value: string, maxAge: number, secure: boolean, httpOnly: boolean) =>
  [`${name}=${encodeURIComponent(value)}`, 'Path=/', `Max-Age=${maxAge}`, 'SameSite=Strict', httpOnly ? 'HttpOnly' : '', secure ? 'Secure' : '']
    .filter(Boolean)
    .join('; ');

/** The Set-Cookie headers of a console session (also sent when a password change renews it). */
export const sessionCookies = (sessionId: string, csrfToken: string, apiUrl: string): string[] => {
  const secure = apiUrl.startsWith('https:');
  return [cookie(SESSION_COOKIE, sessionId, SESSION_TTL_SECONDS, secure, true), cookie(CSRF_COOKIE, csrfToken, SESSION_TTL_SECONDS, secure, false)];
};

export const authOperations: Operations = checkQueryParams({
  async getMe({ req, caller, services, apiUrl }) {
    allowQueryParams(req, ['verbose']);
    if (!caller) throw new UnauthenticatedError('Unauthorized.');
    const account = await services.accounts.get(caller.accountName);
    const orgs = await services.accounts.organisationsOf(account.accountName);
    const extra = {
      orgs: orgs.map((o) => accountView(o)),
      pinnedItems: await resolvePins(caller, account.pinnedItems, pinResolver(services, apiUrl)),
      ...(account.avatarUpdatedAt ? { avatarUrl: `${apiUrl}/imgs/avatars/a/${account.uid}?v=${Date.parse(account.avatarUpdatedAt)}` } : {}),
      ...(await accountExtras(services, caller, account)),
    };
    return jsonResponse(200, accountView(account, { showPrivate: true, extra }));
  },

  /** Opens a console session: an HttpOnly session cookie plus a CSRF token for the console's writes. */
  async login({ req, services, apiUrl }) {
    const body = parseJsonBody(req, LoginBody);
    const { account, sessionId, csrfToken } = await services.auth.login(body.accountName, body.password, req.sourceIp);
    return jsonResponse(200, { ...accountView(account, { showPrivate: true }), csrfToken }, {
      'set-cookie': sessionCookies(sessionId, csrfToken, apiUrl),
    });
  },

  async logout({ caller, services, apiUrl }) {
    await services.auth.logout(caller);
    const secure = apiUrl.startsWith('https:');
    return {
      status: 204,
      headers: { 'set-cookie': [cookie(SESSION_COOKIE, '', 0, secure, true), cookie(CSRF_COOKIE, '', 0, secure, false)] },
    };
  },
}, { getMe: ['verbose'] });
