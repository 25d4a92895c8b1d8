/** Users, organisations, members, roles and parent organisations, through HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextLinkOf, TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
});
afterAll(async () => {
  await p?.stop();
});

describe('POST /accounts', () => {
  it('lets administrators create users, nobody else', async () => {
    const body = { type: 'user', accountName: 'dora', password: 'dora-password-123', email: 'dora@example.org' };
    expect((await p.request('POST', '/accounts', { body })).status).toBe(401);
    const byUser = await p.request('POST', '/accounts', { token: alice, body });
    expect(byUser.status).toBe(403);
    expect(byUser.body.message).toMatch(/administrators create users/);
    const byAdmin = await p.request('POST', '/accounts', { token: p.adminToken, body });
    expect(byAdmin.status).toBe(201);
    expect(byAdmin.body).toMatchObject({ type: 'user', accountName: 'dora' });
    expect(byAdmin.body.password).toBeUndefined();
    expect(byAdmin.body.passwordHash).toBeUndefined();
    const login = await p.request('POST', '/login', { body: { accountName: 'dora', password: 'dora-password-123' } });
    expect(login.status).toBe(200);
  });

  it('validates names, passwords and types, and refuses duplicates with 409', async () => {
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ type: 'user', accountName: 'bad name', password: 'long-enough-pass' }, 400, /accountName: an account name can only contain/],
      [{ type: 'user', accountName: '-dash', password: 'long-enough-pass' }, 400, /accountName/],
      [{ type: 'user', accountName: 'a'.repeat(41), password: 'long-enough-pass' }, 400, /1 to 40 characters/],
      [{ type: 'user', accountName: 'me', password: 'long-enough-pass' }, 400, /reserved/],
      [{ type: 'user', accountName: 'shorty', password: 'short' }, 400, /password: must have 12/],
      [{ type: 'user', accountName: 'nopass' }, 400, /password: a new user needs a password/],
      [{ type: 'robot', accountName: 'r2d2' }, 400, /type: must be "user" or "org"/],
      [{ type: 'user', accountName: 'mailer', password: 'long-enough-pass', email: 'not-an-email' }, 400, /email/],
      [{ type: 'user', accountName: 'ALICE', password: 'long-enough-pass' }, 409, /already exists/],
    ];
    for (const [body, status, message] of cases) {
      const res = await p.request('POST', '/accounts', { token: p.adminToken, body });
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.message).toMatch(message);
    }
  });

  it('lets any signed-in user create an organisation it then owns', async () => {
    const res = await p.request('POST', '/accounts', { token: bob, body: { type: 'org', accountName: 'bobs-lab', name: "Bob's lab" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'org', accountName: 'bobs-lab', name: "Bob's lab" });
    const members = await p.request('GET', '/accounts/bobs-lab/members', { token: bob });
    expect(members.body).toEqual([expect.objectContaining({ role: 'owner', user: expect.objectContaining({ accountName: 'bob' }) })]);
    const orgs = await p.request('GET', '/accounts/bob/orgs');
    expect(orgs.body.map((o: { accountName: string }) => o.accountName)).toEqual(['bobs-lab']);
    const me = await p.request('GET', '/me', { token: bob });
    expect(me.body.orgs.map((o: { accountName: string }) => o.accountName)).toEqual(['bobs-lab']);
    // The client's createOrganization route does the same.
    const viaClientRoute = await p.request('POST', '/accounts/bob/orgs', { token: bob, body: { accountName: 'bobs-other-lab' } });
    expect(viaClientRoute.status).toBe(201);
    expect((await p.request('POST', '/accounts/bob/orgs', { token: alice, body: { accountName: 'not-hers' } })).status).toBe(403);
  });
});

describe('GET and PATCH /accounts/{account}', () => {
  it('shows accounts to anyone but the email only to the account itself and administrators', async () => {
    await p.request('PATCH', '/accounts/alice', { token: alice, body: { email: 'alice@example.org', name: 'Alice' } });
    const anonymous = await p.request('GET', '/accounts/alice?verbose=');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toMatchObject({ type: 'user', accountName: 'alice', name: 'Alice' });
    expect(anonymous.body.email).toBeUndefined();
    expect((await p.request('GET', '/accounts/alice', { token: alice })).body.email).toBe('alice@example.org');
    expect((await p.request('GET', '/accounts/alice', { token: p.adminToken })).body.email).toBe('alice@example.org');
    expect((await p.request('GET', '/accounts/nobody')).status).toBe(404);
  });

  it('lets only the account itself (or an owner, or an administrator) change it', async () => {
    expect((await p.request('PATCH', '/accounts/alice', { body: { name: 'x' } })).status).toBe(401);
    expect((await p.request('PATCH', '/accounts/alice', { token: bob, body: { name: 'x' } })).status).toBe(403);
    expect((await p.request('PATCH', '/accounts/alice', { token: p.adminToken, body: { description: 'by admin' } })).status).toBe(200);
    expect((await p.request('PATCH', '/accounts/alice', { token: alice, body: { isAdmin: true } })).status).toBe(403);
  });

  it('renames an account; the old name is free and the data follows', async () => {
    const carl = await p.createUser('carl');
    await p.createDataset('carl', 'notes', 'public', carl);
    const res = await p.request('PATCH', '/accounts/carl', { token: carl, body: { accountName: 'carlos' } });
    expect(res.status).toBe(200);
    expect(res.body.accountName).toBe('carlos');
    expect((await p.request('GET', '/accounts/carl')).status).toBe(404);
    expect((await p.request('GET', '/datasets/carlos/notes')).status).toBe(200);
    expect((await p.request('GET', '/me', { token: carl })).body.accountName).toBe('carlos');
    const clash = await p.request('PATCH', '/accounts/carlos', { token: carl, body: { accountName: 'alice' } });
    expect(clash.status).toBe(409);
    expect((await p.request('GET', '/accounts/carlos')).status).toBe(200);
  });
});

describe('organisation members', () => {
  beforeAll(async () => {
    await p.createOrg('acme', alice);
  });

  it('are added, changed and removed by owners only', async () => {
    expect((await p.request('POST', '/accounts/acme/members', { token: bob, body: { accountName: 'bob', role: 'owner' } })).status).toBe(403);
    const added = await p.request('POST', '/accounts/acme/members', { token: alice, body: { accountName: 'bob', role: 'member' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ role: 'member', user: { accountName: 'bob' } });
    expect((await p.request('POST', '/accounts/acme/members', { token: alice, body: { accountName: 'bob', role: 'member' } })).status).toBe(409);
    expect((await p.request('GET', '/accounts/acme/members/bob')).body.role).toBe('member');
    // A member cannot promote itself.
    expect((await p.request('PATCH', '/accounts/acme/members/bob', { token: bob, body: { role: 'owner' } })).status).toBe(403);
    const promoted = await p.request('PATCH', '/accounts/acme/members/bob', { token: alice, body: { role: 'owner' } });
    expect(promoted.status).toBe(200);
    expect(promoted.body.role).toBe('owner');
    await p.request('PATCH', '/accounts/acme/members/bob', { token: alice, body: { role: 'member' } });
    expect((await p.request('DELETE', '/accounts/acme/members/bob', { token: alice })).status).toBe(204);
    expect((await p.request('GET', '/accounts/acme/members/bob')).status).toBe(404);
  });

  it('validate the member and the role', async () => {
    const unknownUser = await p.request('POST', '/accounts/acme/members', { token: alice, body: { accountName: 'ghost', role: 'member' } });
    expect(unknownUser.status).toBe(400);
    const unknownRole = await p.request('POST', '/accounts/acme/members', { token: alice, body: { accountName: 'bob', role: 'chief' } });
    expect(unknownRole.status).toBe(400);
    expect(unknownRole.body.message).toMatch(/use one of owner, member/);
    const org = await p.request('POST', '/accounts/acme/members', { token: alice, body: { accountName: 'acme', role: 'member' } });
    expect(org.status).toBe(400);
    expect((await p.request('GET', '/accounts/alice/members')).status).toBe(404);
  });

  it('never leave an organisation without an owner', async () => {
    const demote = await p.request('PATCH', '/accounts/acme/members/alice', { token: alice, body: { role: 'member' } });
    expect(demote.status).toBe(409);
    expect(demote.body.message).toMatch(/without an owner/);
    expect((await p.request('DELETE', '/accounts/acme/members/alice', { token: alice })).status).toBe(409);
  });

  it('may leave by themselves', async () => {
    await p.addMember('acme', 'bob', 'member', alice);
    expect((await p.request('DELETE', '/accounts/acme/members/bob', { token: bob })).status).toBe(204);
  });
});

describe('custom roles', () => {
  it('are defined by owners and grant exactly their permissions', async () => {
    await p.createOrg('museum', alice);
    const curator = await p.request('POST', '/accounts/museum/roles', {
      token: alice,
      body: { name: 'curator', permissions: ['writeDatasets'] },
    });
    expect(curator.status).toBe(201);
    expect(curator.body.permissions.sort()).toEqual(['readFlows', 'writeDatasets']);
    await p.request('POST', '/accounts/museum/roles', { token: alice, body: { name: 'guest', permissions: [] } });
    const roles = await p.request('GET', '/accounts/museum/roles', { token: alice });
    expect(roles.body.map((r: { name: string }) => r.name)).toEqual(['owner', 'member', 'curator', 'guest']);

    await p.addMember('museum', 'bob', 'guest', alice);
    await p.createDataset('museum', 'collection', 'private', alice);
    expect((await p.request('GET', '/datasets/museum/collection', { token: bob })).status).toBe(200);
    expect((await p.request('PATCH', '/datasets/museum/collection', { token: bob, body: { description: 'x' } })).status).toBe(403);
    await p.request('PATCH', '/accounts/museum/members/bob', { token: alice, body: { role: 'curator' } });
    expect((await p.request('PATCH', '/datasets/museum/collection', { token: bob, body: { description: 'x' } })).status).toBe(200);
    // Curators do not manage the organisation.
    expect((await p.request('POST', '/accounts/museum/roles', { token: bob, body: { name: 'boss', permissions: ['manageAccount'] } })).status).toBe(403);
  });

  it('validate names and permissions, and cannot be deleted while held', async () => {
    const bad = [
      [{ name: 'owner', permissions: [] }, /built-in role/],
      [{ name: 'Bad Name', permissions: [] }, /role name starts with a lower-case letter/],
      [{ name: 'fine', permissions: ['fly'] }, /permissions\.0: must be one of manageAccount/],
      [{ name: 'curator', permissions: [] }, /already exists/],
    ] as const;
    for (const [body, message] of bad) {
      const res = await p.request('POST', '/accounts/museum/roles', { token: alice, body });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.body.message).toMatch(message);
    }
    const held = await p.request('DELETE', '/accounts/museum/roles/curator', { token: alice });
    expect(held.status).toBe(409);
    expect((await p.request('DELETE', '/accounts/museum/roles/guest', { token: alice })).status).toBe(204);
    expect((await p.request('DELETE', '/accounts/museum/roles/guest', { token: alice })).status).toBe(404);
  });
});

describe('parent organisations', () => {
  it('pass membership of the parent on to the child', async () => {
    const dave = await p.createUser('dave');
    await p.createOrg('holding', alice);
    await p.addMember('holding', 'dave', 'member', alice);
    // Only someone who manages the parent may attach a child to it.
    const refused = await p.request('POST', '/accounts', { token: bob, body: { type: 'org', accountName: 'sneaky', parent: 'holding' } });
    expect(refused.status).toBe(403);
    await p.createOrg('subsidiary', alice, { parent: 'holding' });
    expect((await p.request('GET', '/accounts/subsidiary')).body.parent).toBe('holding');
    await p.createDataset('subsidiary', 'internal-notes', 'private', alice);
    expect((await p.request('GET', '/datasets/subsidiary/internal-notes', { token: dave })).status).toBe(200);
    expect((await p.request('POST', '/datasets/subsidiary', { token: dave, body: { name: 'by-dave' } })).status).toBe(201);
    expect((await p.request('GET', '/datasets/subsidiary/internal-notes', { token: bob })).status).toBe(404);
    const cycle = await p.request('PATCH', '/accounts/holding', { token: alice, body: { parent: 'subsidiary' } });
    expect(cycle.status).toBe(400);
    expect(cycle.body.message).toMatch(/own ancestor/);
    // Detaching the child ends the inherited access.
    await p.request('PATCH', '/accounts/subsidiary', { token: alice, body: { parent: null } });
    expect((await p.request('GET', '/datasets/subsidiary/internal-notes', { token: dave })).status).toBe(404);
  });
});

describe('deleting accounts', () => {
  it('removes an organisation with its datasets, for owners only', async () => {
    await p.createOrg('doomed', alice);
    await p.createDataset('doomed', 'data', 'public', alice);
    expect((await p.request('DELETE', '/accounts/doomed', { token: bob })).status).toBe(403);
    expect((await p.request('DELETE', '/accounts/doomed', { token: alice })).status).toBe(204);
    expect((await p.request('GET', '/accounts/doomed')).status).toBe(404);
    expect((await p.request('GET', '/datasets/doomed/data')).status).toBe(404);
    // The name is free again and the old datasets do not come back.
    await p.createOrg('doomed', alice);
    expect((await p.request('GET', '/datasets/doomed')).body).toEqual([]);
  });

  it('removes users only by administrators, never the last administrator', async () => {
    const erin = await p.createUser('erin');
    expect((await p.request('DELETE', '/accounts/erin', { token: erin })).status).toBe(403);
    expect((await p.request('DELETE', '/accounts/erin', { token: p.adminToken })).status).toBe(204);
    expect((await p.request('GET', '/me', { token: erin })).status).toBe(401);
    const last = await p.request('DELETE', '/accounts/admin', { token: p.adminToken });
    expect(last.status).toBe(409);
  });
});

describe('GET /accounts', () => {
  it('pages with an absolute Link header that is present only while more exist', async () => {
    const seen: string[] = [];
    let url: string | undefined = `${p.url}/accounts?limit=3`;
    for (let i = 0; url && i < 50; i++) {
      const res = await p.request('GET', url.slice(p.url.length));
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.map((a: { accountName: string }) => a.accountName));
      url = nextLinkOf(res);
      if (url) expect(url.startsWith(`${p.url}/accounts?`)).toBe(true);
    }
    expect(url).toBeUndefined();
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(['admin', 'alice', 'bob', 'acme']));
    expect((await p.request('GET', '/accounts?limit=0')).status).toBe(400);
    expect((await p.request('GET', '/accounts?limit=abc')).status).toBe(400);
    expect((await p.request('GET', '/accounts?after=%%%')).status).toBe(400);
  });
});
