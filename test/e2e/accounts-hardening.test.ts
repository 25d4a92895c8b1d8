/**
 * Issue 11, area E: organisation takeover through a "Manage account" role, password changes and
 * sessions, sign-in throttling, oversized path segments and forged cursors, data folder modes and
 * the Host header. Everything through HTTP against the embedded platform.
 */
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_WINDOW_SECONDS, MAX_LOGIN_ATTEMPTS_PER_ACCOUNT, MAX_LOGIN_ATTEMPTS_PER_ADDRESS } from '../../functions/domain/accounts/auth-service.js';
import { ROUTES } from '../../functions/http/route-table.js';
import { consoleSession } from '../support/flows.js';
import { TestPlatform } from '../support/platform.js';
import { systemClock } from '../../functions/adapters/common/node-crypto.js';

let p: TestPlatform;
let owner: string;
let manager: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  owner = await p.createUser('olga');
  manager = await p.createUser('mallory');
  await p.createUser('oscar');
});
afterAll(async () => {
  await p?.stop();
});

const roleOf = async (org: string, member: string) => (await p.request('GET', `/accounts/${org}/members/${member}`)).body.role as string;

describe('finding 8: a "Manage account" role does not take over the organisation', () => {
  beforeAll(async () => {
    await p.createOrg('victim-org', owner);
    const role = await p.request('POST', '/accounts/victim-org/roles', { token: owner, body: { name: 'admin-lite', permissions: ['manageAccount'] } });
    expect(role.status).toBe(201);
    await p.addMember('victim-org', 'mallory', 'admin-lite', owner);
  });

  it('refuses the reported path: promoting itself to owner, then demoting the owner', async () => {
    const promote = await p.request('PATCH', '/accounts/victim-org/members/mallory', { token: manager, body: { role: 'owner' } });
    expect(promote.status).toBe(403);
    expect(promote.body.message).toMatch(/Only owners of "victim-org" .* may make someone owner/);
    expect(await roleOf('victim-org', 'mallory')).toBe('admin-lite');

    const demote = await p.request('PATCH', '/accounts/victim-org/members/olga', { token: manager, body: { role: 'admin-lite' } });
    expect(demote.status).toBe(403);
    expect(demote.body.message).toMatch(/may demote an owner/);
    expect(await roleOf('victim-org', 'olga')).toBe('owner');

    const remove = await p.request('DELETE', '/accounts/victim-org/members/olga', { token: manager });
    expect(remove.status).toBe(403);
    expect(remove.body.message).toMatch(/may remove an owner/);
    expect(await roleOf('victim-org', 'olga')).toBe('owner');
  });

  it('refuses adding an accomplice as owner, reparenting the organisation or deleting it', async () => {
    const add = await p.request('POST', '/accounts/victim-org/members', { token: manager, body: { accountName: 'oscar', role: 'owner' } });
    expect(add.status).toBe(403);
    expect((await p.request('GET', '/accounts/victim-org/members/oscar')).status).toBe(404);

    // An organisation the manager owns, made parent: its owners would inherit everything.
    await p.createOrg('mallory-holding', manager);
    const reparent = await p.request('PATCH', '/accounts/victim-org', { token: manager, body: { parent: 'mallory-holding' } });
    expect(reparent.status).toBe(403);
    expect(reparent.body.message).toMatch(/change its parent organisation/);
    expect((await p.request('GET', '/accounts/victim-org')).body.parent).toBeUndefined();

    const deleted = await p.request('DELETE', '/accounts/victim-org', { token: manager });
    expect(deleted.status).toBe(403);
    expect((await p.request('GET', '/accounts/victim-org')).status).toBe(200);
  });

  it('refuses granting more than it holds: a custom role with every permission, created or widened', async () => {
    const all = ['manageAccount', 'writeDatasets', 'readFlows', 'createFlows', 'runFlows', 'manageFlowBlueprints', 'manageFlowMaskedValues'];
    const create = await p.request('POST', '/accounts/victim-org/roles', { token: manager, body: { name: 'everything', permissions: all } });
    expect(create.status).toBe(403);
    expect(create.body.message).toMatch(/that grants writeDatasets, createFlows, runFlows, manageFlowBlueprints, manageFlowMaskedValues/);
    expect((await p.request('GET', '/accounts/victim-org/roles')).body.map((r: { name: string }) => r.name)).not.toContain('everything');

    // Widening its own role is the same grant.
    const widen = await p.request('PATCH', '/accounts/victim-org/roles/admin-lite', { token: manager, body: { permissions: all } });
    expect(widen.status).toBe(403);
    const builtIn = await p.request('PATCH', '/accounts/victim-org/roles/owner', { token: manager, body: { permissions: [] } });
    expect(builtIn.status).toBe(403);

    // A role the owner made with more permissions cannot be handed out by the manager either.
    await p.request('POST', '/accounts/victim-org/roles', { token: owner, body: { name: 'editor', permissions: ['writeDatasets'] } });
    const self = await p.request('PATCH', '/accounts/victim-org/members/mallory', { token: manager, body: { role: 'editor' } });
    expect(self.status).toBe(403);
    expect(self.body.message).toMatch(/that grants writeDatasets/);
    const other = await p.request('POST', '/accounts/victim-org/members', { token: manager, body: { accountName: 'oscar', role: 'member' } });
    expect(other.status).toBe(403);
    expect(await roleOf('victim-org', 'mallory')).toBe('admin-lite');
    expect((await p.request('POST', '/datasets/victim-org', { token: manager, body: { name: 'planted' } })).status).toBe(403);
  });

  it('still lets the manager hand out what it holds, and owners do everything', async () => {
    await p.request('POST', '/accounts/victim-org/roles', { token: owner, body: { name: 'viewer', permissions: [] } });
    expect((await p.request('POST', '/accounts/victim-org/members', { token: manager, body: { accountName: 'oscar', role: 'viewer' } })).status).toBe(201);
    expect((await p.request('PATCH', '/accounts/victim-org/members/oscar', { token: manager, body: { role: 'admin-lite' } })).status).toBe(200);
    expect((await p.request('DELETE', '/accounts/victim-org/members/oscar', { token: manager })).status).toBe(204);
    // The owner promotes, and a second owner may then demote the first; the last owner stays.
    expect((await p.request('PATCH', '/accounts/victim-org/members/mallory', { token: owner, body: { role: 'owner' } })).status).toBe(200);
    expect((await p.request('PATCH', '/accounts/victim-org/members/olga', { token: manager, body: { role: 'member' } })).status).toBe(200);
    const last = await p.request('PATCH', '/accounts/victim-org/members/mallory', { token: manager, body: { role: 'member' } });
    expect(last.status).toBe(409);
    expect(last.body.message).toMatch(/without an owner/);
    expect((await p.request('DELETE', '/accounts/victim-org/members/mallory', { token: p.adminToken })).status).toBe(409);
  });
});

describe('password changes', () => {
  it('need the current password from the user itself, not from an administrator resetting it', async () => {
    await p.createUser('paula', { password: 'paula-password-123' });
    const session = await consoleSession(p, 'paula', 'paula-password-123');
    const missing = await p.request('PATCH', '/accounts/paula', { headers: session, body: { password: 'paula-new-password-1' } });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/currentPassword: send your current password/);
    const wrong = await p.request('PATCH', '/accounts/paula', {
      headers: session,
      body: { password: 'paula-new-password-1', currentPassword: 'not-the-password' },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body.message).toMatch(/not your current password/);
    // Nothing changed: the old password still signs in.
    expect((await p.request('POST', '/login', { body: { accountName: 'paula', password: 'paula-password-123' } })).status).toBe(200);

    const reset = await p.request('PATCH', '/accounts/paula', { token: p.adminToken, body: { password: 'paula-reset-password-2' } });
    expect(reset.status).toBe(200);
    expect((await p.request('POST', '/login', { body: { accountName: 'paula', password: 'paula-reset-password-2' } })).status).toBe(200);
  });

  it('end every session opened before the change; API tokens keep working', async () => {
    const token = await p.createUser('quinn', { password: 'quinn-password-123' });
    const first = await consoleSession(p, 'quinn', 'quinn-password-123');
    const second = await consoleSession(p, 'quinn', 'quinn-password-123');
    expect((await p.request('GET', '/me', { headers: first })).status).toBe(200);
    const changed = await p.request('PATCH', '/accounts/quinn', {
      headers: second,
      body: { password: 'quinn-new-password-1', currentPassword: 'quinn-password-123' },
    });
    expect(changed.status).toBe(200);
    const old = await p.request('GET', '/me', { headers: first });
    expect(old.status).toBe(401);
    expect(old.body.message).toMatch(/password changed/);
    // The session that made the change is renewed: new cookies and CSRF token, the old ones end.
    expect((await p.request('GET', '/me', { headers: second })).status).toBe(401);
    const renewed = {
      cookie: changed.headers.getSetCookie().map((c) => c.split(';')[0]).join('; '),
      'x-csrf-token': changed.body.csrfToken as string,
    };
    expect(renewed.cookie).toMatch(/ldp_session=/);
    expect((await p.request('PATCH', '/accounts/quinn', { headers: renewed, body: { name: 'Quinn' } })).status).toBe(200);
    expect((await p.request('GET', '/me', { token })).status).toBe(200);
    const fresh = await consoleSession(p, 'quinn', 'quinn-new-password-1');
    expect((await p.request('GET', '/me', { headers: fresh })).status).toBe(200);
    expect((await p.request('POST', '/login', { body: { accountName: 'quinn', password: 'quinn-password-123' } })).status).toBe(401);
  });
});

describe('oversized path segments and forged cursors', () => {
  it('answer 400 with a message on every route of the route table, for 1 KB and 4 KB segments', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const size of [1024, 4096]) {
      const long = 'a'.repeat(size - 4) + '%C3%A9'.repeat(2); // multi-byte too: bytes, not characters, count
      for (const route of ROUTES) {
        const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
        for (const target of names) {
          const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === target ? long : 'x'));
          const res = await p.request(route.method, path, { token: p.adminToken });
          sent++;
          const hasMessage = route.method === 'HEAD' || (typeof res.body === 'object' ? typeof res.body.message === 'string' : res.text.length > 0);
          if (res.status !== 400 || !hasMessage) failures.push(`${route.method} ${route.path} {${target}} ${size} B: ${res.status} ${res.text.slice(0, 120)}`);
        }
      }
    }
    expect(sent).toBeGreaterThan(200);
    expect(failures).toEqual([]);
    const one = await p.request('GET', `/datasets/${'d'.repeat(1024)}`);
    expect(one.body.message).toMatch(/account: the path segment is longer than 256 bytes/);
    // Segments that match no route at all stay a 404 with a message.
    const unmatched = await p.request('GET', `/${'z'.repeat(4096)}/a/b/c/d/e/f`);
    expect(unmatched.status).toBe(404);
    expect(unmatched.body.message).toMatch(/No route/);
  });

  it('answer 400 to oversized account names in bodies that are looked up (members, parents)', async () => {
    await p.createOrg('size-org', owner);
    const long = 'n'.repeat(4096);
    const cases = [
      await p.request('POST', '/accounts/size-org/members', { token: owner, body: { accountName: long, role: 'member' } }),
      await p.request('POST', '/accounts', { token: owner, body: { type: 'org', accountName: 'size-child', parent: long } }),
      await p.request('PATCH', '/accounts/size-org', { token: owner, body: { parent: long } }),
      await p.request('POST', '/login', { body: { accountName: long, password: 'whatever-password' } }),
    ];
    for (const res of cases) {
      expect(res.status, res.text).toBe(400);
      expect(res.body.message).toMatch(/at most 40 characters/);
    }
  });

  it('answer 400 "invalid cursor" to forged, foreign and oversized cursors on every listing', async () => {
    await p.createDataset('olga', 'with-graphs', 'public', owner);
    await p.createDataset('olga', 'second', 'public', owner);
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const realAccounts = await p.request('GET', '/accounts?limit=1');
    const accountsCursor = /after=([^&>]+)/.exec(realAccounts.headers.get('link') ?? '')?.[1];
    expect(accountsCursor).toBeDefined();
    // The real cursor works where it came from.
    expect((await p.request('GET', `/accounts?limit=1&after=${accountsCursor}`)).status).toBe(200);
    const forged = [
      'eyJhIjoxfQ', // {"a":1}, from the report
      b64({ pk: 'ACC#nobody', sk: 'DS#x' }),
      b64({ pk: 'ACC#x', sk: 'ACCOUNT', gsi1pk: 'DATASETS', gsi1sk: 'y'.repeat(1500) }),
      b64({ pk: 'ACC#x', sk: 'ACCOUNT', gsi1pk: 'ACCOUNTS', gsi1sk: 1 }),
      b64([1, 2]),
      b64('x'.repeat(1200)),
      'A'.repeat(2048),
      accountsCursor!,
    ];
    const listings = ['/accounts', '/datasets', '/datasets/olga', '/datasets/olga/with-graphs/graphs', '/queries', '/queries/olga'];
    const failures: string[] = [];
    for (const listing of listings) {
      for (const cursor of forged) {
        if (listing === '/accounts' && cursor === accountsCursor) continue;
        const res = await p.request('GET', `${listing}?after=${cursor}`, { token: p.adminToken });
        if (res.status !== 400 || !/invalid cursor/.test(res.body?.message ?? '')) {
          failures.push(`${listing} after=${cursor.slice(0, 40)}: ${res.status} ${res.text.slice(0, 120)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('sign-in throttling', () => {
  let q: TestPlatform;
  let nowMs = Date.parse('2026-11-24T10:00:00.000Z');
  const clock = { ...systemClock, now: () => new Date(nowMs) };
  const login = (accountName: string, password: string) => q.request('POST', '/login', { body: { accountName, password } });

  beforeAll(async () => {
    q = await TestPlatform.start({ clock });
    await q.createUser('rita', { password: 'rita-password-123' });
    await q.createUser('sam', { password: 'sam-password-1234' });
  });
  afterAll(async () => {
    await q?.stop();
  });

  it('answers 429 with Retry-After after 10 wrong passwords, even to the right one, until the window ends', async () => {
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS_PER_ACCOUNT; i++) expect((await login('rita', `wrong-guess-${i}`)).status).toBe(401);
    const locked = await login('rita', 'rita-password-123');
    expect(locked.status).toBe(429);
    expect(locked.body.message).toMatch(/Too many sign-in attempts; try again in \d+ seconds/);
    expect(Number(locked.headers.get('retry-after'))).toBe(LOGIN_WINDOW_SECONDS);
    // Other accounts are not locked out by it.
    expect((await login('sam', 'sam-password-1234')).status).toBe(200);
    // A stolen session cannot keep guessing through the password change either.
    const session = await consoleSession(q, 'sam', 'sam-password-1234');
    nowMs += 60_000;
    expect(Number((await login('rita', 'rita-password-123')).headers.get('retry-after'))).toBe(LOGIN_WINDOW_SECONDS - 60);
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS_PER_ACCOUNT; i++) {
      const guess = await q.request('PATCH', '/accounts/sam', { headers: session, body: { password: 'sam-new-password-12', currentPassword: `guess-${i}` } });
      expect(guess.status).toBe(403);
    }
    const lockedChange = await q.request('PATCH', '/accounts/sam', {
      headers: session,
      body: { password: 'sam-new-password-12', currentPassword: 'sam-password-1234' },
    });
    expect(lockedChange.status).toBe(429);
    // The window passes (the Clock port): the right password works again.
    nowMs += LOGIN_WINDOW_SECONDS * 1000;
    expect((await login('rita', 'rita-password-123')).status).toBe(200);
  });

  it('does not let guesses from one address lock the account out for its owner elsewhere', async () => {
    nowMs += LOGIN_WINDOW_SECONDS * 1000 + 1;
    // Another loopback address stands for the attacker's machine.
    const fromAttacker = (password: string) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ accountName: 'sam', password });
        const url = new URL('/login', q.url);
        const req = httpRequest(
          { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress: '127.0.0.2', timeout: 10_000, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', reject);
        req.end(body);
      });
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS_PER_ACCOUNT; i++) expect(await fromAttacker(`guess-${i}`)).toBe(401);
    expect(await fromAttacker('sam-password-1234')).toBe(429);
    // Sam, from their own address, signs in.
    expect((await login('sam', 'sam-password-1234')).status).toBe(200);
  });

  it('gives unknown accounts the same answers, and limits one client address across names', async () => {
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS_PER_ACCOUNT; i++) await login('no-such-user', `guess-${i}`);
    const unknown = await login('no-such-user', 'guess');
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS_PER_ACCOUNT; i++) await login('rita', `wrong-again-${i}`);
    const known = await login('rita', 'guess');
    expect(unknown.status).toBe(429);
    expect(known.status).toBe(429);
    expect(unknown.body).toEqual(known.body);
    expect(unknown.headers.get('retry-after')).toBe(known.headers.get('retry-after'));

    nowMs += LOGIN_WINDOW_SECONDS * 1000 + 1;
    // Spread over many names (none reaches its own limit), the address limit still holds.
    let refused: Awaited<ReturnType<typeof login>> | undefined;
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS_PER_ADDRESS + 5 && !refused; i++) {
      const res = await login(`spray-${i}`, 'Winter2026!');
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(401);
    }
    expect(refused?.body.message).toMatch(/Too many sign-in attempts/);
    expect((await login('sam', 'sam-password-1234')).status).toBe(429);
  });
});

describe('data folder modes', () => {
  it('makes an existing 0755 data folder, its metadata store and secret files owner-only at start', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ldp-modes-'));
    try {
      await chmod(dataDir, 0o755);
      await mkdir(join(dataDir, 'metadata'), { mode: 0o755 });
      await chmod(join(dataDir, 'metadata'), 0o755);
      // First start (generated administrator password), then an operator loosens every mode.
      const first = await TestPlatform.start({ dataDir, adminPassword: undefined });
      await first.stop();
      const loosen = async (dir: string): Promise<void> => {
        await chmod(dir, 0o755);
        for (const entry of await readdir(dir, { withFileTypes: true })) {
          if (entry.isDirectory()) await loosen(join(dir, entry.name));
          else if (entry.isFile()) await chmod(join(dir, entry.name), 0o644);
        }
      };
      await loosen(dataDir);
      expect((await stat(join(dataDir, 'admin-token'))).mode & 0o777).toBe(0o644);

      const second = await TestPlatform.start({ dataDir, adminPassword: undefined });
      try {
        const modeOf = async (path: string) => (await stat(path)).mode & 0o777;
        expect(await modeOf(dataDir)).toBe(0o700);
        expect(await modeOf(join(dataDir, 'admin-token'))).toBe(0o600);
        expect(await modeOf(join(dataDir, 'admin-password'))).toBe(0o600);
        expect(await modeOf(join(dataDir, 'metadata'))).toBe(0o700);
        const metadataFiles: string[] = [];
        const collect = async (dir: string): Promise<void> => {
          for (const entry of await readdir(dir, { withFileTypes: true })) {
            const path = join(dir, entry.name);
            if (entry.isDirectory()) {
              expect(await modeOf(path), path).toBe(0o700);
              await collect(path);
            } else if (entry.isFile()) metadataFiles.push(path);
          }
        };
        await collect(join(dataDir, 'metadata'));
        expect(metadataFiles.length).toBeGreaterThan(0);
        const loosened = [];
        for (const file of metadataFiles) if ((await modeOf(file)) !== 0o600) loosened.push(file);
        expect(loosened).toEqual([]);
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the Host header', () => {
  /** fetch will not send a forged Host; node:http will. Bounded by a timeout. */
  const withHost = (method: string, path: string, host: string, body?: unknown) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = httpRequest(
        `${p.url}${path}`,
        {
          method,
          timeout: 10_000,
          headers: {
            host,
            authorization: `Bearer ${p.adminToken}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(payload);
    });
  const issuerOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).iss as string;

  it('does not change the API URL: token issuer, Link headers and /info keep the pinned URL', async () => {
    for (const host of ['evil.example', 'evil.example:80', `localhost.evil.example:${new URL(p.url).port}`]) {
      const token = await withHost('POST', '/accounts/admin/tokens', host, { description: 'forged host' });
      expect(token.status).toBe(201);
      expect(issuerOf(token.body.token)).toBe(p.url);
      const info = await withHost('GET', '/info', host);
      expect(info.body.apiUrl).toBe(p.url);
      const listing = await withHost('GET', '/accounts?limit=1', host);
      expect(String(listing.headers.link)).toMatch(new RegExp(`^<${p.url.replace(/\./g, '\\.')}/accounts\\?`));
    }
    // The administrator token written at first start carries the same issuer.
    expect(issuerOf(p.adminToken)).toBe(p.url);
  });
});
