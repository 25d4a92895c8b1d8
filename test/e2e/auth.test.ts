/** /info, /me, API tokens and console sessions, through HTTP against the embedded platform. */
import { readFile, stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice', { password: 'alice-password-123' });
});
afterAll(async () => {
  await p?.stop();
});

const decodeJwtPayload = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

describe('GET /info', () => {
  it('describes the instance for the TriplyDB client', async () => {
    const res = await p.request('GET', '/info');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-triply-api')).toBeNull();
    expect(res.body.apiUrl).toBe(p.url);
    expect(res.body.apiUrl.endsWith('/')).toBe(false);
    expect(res.body.version).toMatch(/^\d{2}\.\d{1,2}\.\d+$/);
    expect(res.body.featureToggles).toBeTypeOf('object');
    expect(res.body.enabledServices).toEqual(expect.arrayContaining(['virtuoso', 'jena']));
    expect(typeof res.body.consoleUrl).toBe('string');
  });
});

describe('GET /me', () => {
  it('answers 401 with a JSON message without a token', async () => {
    const res = await p.request('GET', '/me?verbose=');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthorized.' });
  });

  it('returns the account of the token, with its private fields', async () => {
    const res = await p.request('GET', '/me?verbose=', { token: alice });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'user', accountName: 'alice', role: 'light' });
    expect(res.body.uid).toMatch(/^[0-9a-f]{24}$/);
    expect(res.body.passwordHash).toBeUndefined();
  });

  it('rejects a malformed, tampered or foreign token with 401', async () => {
    for (const bad of ['not-a-jwt', `${alice}x`, alice.replace(/\.[^.]+$/, '.AAAA')]) {
      const res = await p.request('GET', '/me', { token: bad });
      expect(res.status).toBe(401);
      expect(res.body.message).toMatch(/invalid or has been revoked/);
    }
    const noBearer = await p.request('GET', '/me', { headers: { authorization: alice } });
    expect(noBearer.status).toBe(401);
    expect(noBearer.body.message).toMatch(/Bearer/);
  });

  it('rejects a bad token even on public routes instead of treating it as anonymous', async () => {
    const res = await p.request('GET', '/datasets', { token: 'garbage' });
    expect(res.status).toBe(401);
  });
});

describe('API tokens', () => {
  it('are JWTs whose iss is the API URL, shown once and stored only as a hash', async () => {
    const created = await p.request('POST', '/accounts/alice/tokens', { token: alice, body: { description: 'ci' } });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    const claims = decodeJwtPayload(token);
    expect(claims.iss).toBe(p.url);
    expect(claims.jti).toBe(created.body.tokenId);
    expect(/^[\x20-\x7F]+$/.test(token)).toBe(true);

    const list = await p.request('GET', '/accounts/alice/tokens', { token: alice });
    expect(list.status).toBe(200);
    expect(list.body.map((t: { tokenId: string }) => t.tokenId)).toContain(created.body.tokenId);
    expect(list.text).not.toContain(token);
    expect(list.text).not.toMatch(/hash/i);
  });

  it('stop working once revoked', async () => {
    const created = await p.request('POST', '/accounts/alice/tokens', { token: alice, body: { description: 'short-lived' } });
    const token = created.body.token as string;
    expect((await p.request('GET', '/me', { token })).status).toBe(200);
    const del = await p.request('DELETE', `/accounts/alice/tokens/${created.body.tokenId}`, { token: alice });
    expect(del.status).toBe(204);
    expect((await p.request('GET', '/me', { token })).status).toBe(401);
    expect((await p.request('DELETE', `/accounts/alice/tokens/${created.body.tokenId}`, { token: alice })).status).toBe(404);
  });

  it('read-only tokens read but never write', async () => {
    const readOnly = await p.createToken('alice', alice, true);
    expect((await p.request('GET', '/me', { token: readOnly })).status).toBe(200);
    await p.createDataset('alice', 'secret', 'private', alice);
    expect((await p.request('GET', '/datasets/alice/secret', { token: readOnly })).status).toBe(200);
    const write = await p.request('POST', '/datasets/alice', { token: readOnly, body: { name: 'nope' } });
    expect(write.status).toBe(401);
    expect(write.body.message).toMatch(/^Unauthorized\. This API token is read-only/);
    const newToken = await p.request('POST', '/accounts/alice/tokens', { token: readOnly, body: {} });
    expect(newToken.status).toBe(401);
  });

  it('belong to their user: others may not list, create or revoke them', async () => {
    const bob = await p.createUser('bob');
    expect((await p.request('GET', '/accounts/alice/tokens', { token: bob })).status).toBe(403);
    expect((await p.request('POST', '/accounts/alice/tokens', { token: bob, body: {} })).status).toBe(403);
    expect((await p.request('GET', '/accounts/alice/tokens')).status).toBe(401);
    const mine = await p.request('GET', '/accounts/alice/tokens', { token: alice });
    const someId = mine.body[0].tokenId;
    expect((await p.request('DELETE', `/accounts/alice/tokens/${someId}`, { token: bob })).status).toBe(403);
    expect((await p.request('GET', '/accounts/alice/tokens', { token: p.adminToken })).status).toBe(200);
  });

  it('validate their input', async () => {
    const res = await p.request('POST', '/accounts/alice/tokens', { token: alice, body: { readOnly: 'yes' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^readOnly: /);
    const long = await p.request('POST', '/accounts/alice/tokens', { token: alice, body: { description: 'x'.repeat(300) } });
    expect(long.status).toBe(400);
    expect(long.body.message).toMatch(/description: at most 256 characters/);
  });
});

describe('console sessions', () => {
  const login = (accountName: string, password: string) =>
    p.request('POST', '/login', { body: { accountName, password } });

  const cookieHeader = (res: { headers: Headers }) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');

  it('sign in with a password, set HttpOnly SameSite cookies, and need the CSRF token to write', async () => {
    const res = await login('alice', 'alice-password-123');
    expect(res.status).toBe(200);
    expect(res.body.accountName).toBe('alice');
    const setCookies = res.headers.getSetCookie();
    const session = setCookies.find((c) => c.startsWith('ldp_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    const cookie = cookieHeader(res);
    const csrf = res.body.csrfToken as string;

    const me = await p.request('GET', '/me', { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body.accountName).toBe('alice');

    const withoutCsrf = await p.request('POST', '/datasets/alice', { headers: { cookie }, body: { name: 'from-console' } });
    expect(withoutCsrf.status).toBe(403);
    expect(withoutCsrf.body.message).toMatch(/x-csrf-token/);
    const wrongCsrf = await p.request('POST', '/datasets/alice', {
      headers: { cookie, 'x-csrf-token': 'wrong' },
      body: { name: 'from-console' },
    });
    expect(wrongCsrf.status).toBe(403);
    const withCsrf = await p.request('POST', '/datasets/alice', {
      headers: { cookie, 'x-csrf-token': csrf },
      body: { name: 'from-console' },
    });
    expect(withCsrf.status).toBe(201);

    const logout = await p.request('POST', '/logout', { headers: { cookie, 'x-csrf-token': csrf } });
    expect(logout.status).toBe(204);
    expect((await p.request('GET', '/me', { headers: { cookie } })).status).toBe(401);
  });

  it('refuse wrong passwords and unknown accounts with the same message', async () => {
    const wrong = await login('alice', 'not-her-password');
    const unknown = await login('nobody', 'whatever-password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.headers.getSetCookie()).toEqual([]);
  });

  it('validate the login body', async () => {
    expect((await p.request('POST', '/login', { body: { accountName: 'alice' } })).status).toBe(400);
    const notJson = await p.request('POST', '/login', { rawBody: 'accountName=alice', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(notJson.status).toBe(415);
    const broken = await p.request('POST', '/login', { rawBody: '{"accountName":', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/not valid JSON/);
  });

  it('logout with a token is refused', async () => {
    const res = await p.request('POST', '/logout', { token: alice });
    expect(res.status).toBe(400);
  });
});

describe('the first administrator', () => {
  it('has a token in an owner-only file that works', async () => {
    const info = await stat(p.platform.adminTokenFile);
    expect(info.mode & 0o777).toBe(0o600);
    const me = await p.request('GET', '/me', { token: p.adminToken });
    expect(me.body).toMatchObject({ accountName: 'admin', role: 'siteAdmin' });
  });

  it('signs in with ADMIN_PASSWORD', async () => {
    const res = await p.request('POST', '/login', { body: { accountName: 'admin', password: TestPlatform.ADMIN_PASSWORD } });
    expect(res.status).toBe(200);
  });
});

describe('a restart', () => {
  it('keeps data and reuses the administrator token; a generated password is written beside it', async () => {
    const first = await TestPlatform.start({ adminPassword: undefined, adminAccount: 'root' });
    const passwordFile = first.platform.adminPasswordFile!;
    expect((await stat(passwordFile)).mode & 0o777).toBe(0o600);
    const password = (await readFile(passwordFile, 'utf8')).trim();
    await first.createDataset('root', 'kept', 'private', first.adminToken);
    await first.stop({ keepData: true });

    const second = await TestPlatform.start({ dataDir: first.dataDir, adminPassword: undefined, adminAccount: 'root' });
    try {
      expect(second.adminToken).toBe(first.adminToken);
      const ds = await second.request('GET', '/datasets/root/kept', { token: second.adminToken });
      expect(ds.status).toBe(200);
      const login = await second.request('POST', '/login', { body: { accountName: 'root', password } });
      expect(login.status).toBe(200);
    } finally {
      await second.stop();
      const { rm } = await import('node:fs/promises');
      await rm(first.dataDir, { recursive: true, force: true });
    }
  });
});
