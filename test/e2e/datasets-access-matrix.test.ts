/**
 * The access matrix of the dataset routes: every route × caller × access level, through HTTP
 * against the embedded platform. A dataset the caller may not see answers 404, exactly as a
 * missing one; a visible dataset the caller may not change answers 401 (anonymous or read-only
 * token) or 403 (signed in without the permission).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';

type Level = 'public' | 'internal' | 'private';
type CallerName = 'anonymous' | 'outsider' | 'viewer' | 'member' | 'owner' | 'owner (read-only token)' | 'administrator';

const LEVELS: Level[] = ['public', 'internal', 'private'];
const CALLERS: CallerName[] = ['anonymous', 'outsider', 'viewer', 'member', 'owner', 'owner (read-only token)', 'administrator'];

/** Members of the owning organisation: any role. */
const isMember = (c: CallerName) => ['viewer', 'member', 'owner', 'owner (read-only token)', 'administrator'].includes(c);

function expectedRead(level: Level, caller: CallerName): 200 | 404 {
  if (level === 'public') return 200;
  if (level === 'internal') return caller === 'anonymous' ? 404 : 200;
  return isMember(caller) ? 200 : 404;
}

function expectedWrite(level: Level, caller: CallerName, success: number): number {
  if (expectedRead(level, caller) === 404) return 404;
  if (caller === 'anonymous' || caller === 'owner (read-only token)') return 401;
  if (caller === 'outsider' || caller === 'viewer') return 403;
  return success;
}

let p: TestPlatform;
const tokens: Partial<Record<CallerName, string>> = {};
const ORG = 'acme';

beforeAll(async () => {
  p = await TestPlatform.start();
  const alice = await p.createUser('alice');
  tokens.owner = alice;
  tokens['owner (read-only token)'] = await p.createToken('alice', alice, true);
  tokens.member = await p.createUser('bob');
  tokens.outsider = await p.createUser('carol');
  tokens.viewer = await p.createUser('vera');
  tokens.administrator = p.adminToken;
  await p.createOrg(ORG, alice);
  await p.addMember(ORG, 'bob', 'member', alice);
  // A custom role without dataset writes: sees private data, changes nothing.
  const role = await p.request('POST', `/accounts/${ORG}/roles`, { token: alice, body: { name: 'viewer', permissions: ['runFlows'] } });
  expect(role.status).toBe(201);
  await p.addMember(ORG, 'vera', 'viewer', alice);
  for (const level of LEVELS) await p.createDataset(ORG, `ds-${level}`, level, alice);
});

afterAll(async () => {
  await p?.stop();
});

const as = (caller: CallerName) => tokens[caller];

describe.each(LEVELS)('a %s dataset', (level) => {
  const ds = `/datasets/${ORG}/ds-${level}`;

  describe.each(CALLERS)('called by %s', (caller) => {
    it(`GET the dataset → ${expectedRead(level, caller)}`, async () => {
      const res = await p.request('GET', ds, { token: as(caller) });
      expect(res.status).toBe(expectedRead(level, caller));
      if (res.status === 200) expect(res.body).toMatchObject({ name: `ds-${level}`, accessLevel: level, owner: { accountName: ORG } });
      else expect(res.body).toEqual({ message: `Dataset "${ORG}/ds-${level}" does not exist.` });
    });

    it('GET its prefixes', async () => {
      const res = await p.request('GET', `${ds}/prefixes`, { token: as(caller) });
      expect(res.status).toBe(expectedRead(level, caller));
    });

    it('sees it in the account listing and the instance listing only when it may read it', async () => {
      for (const path of [`/datasets/${ORG}?limit=100`, '/datasets?limit=100']) {
        const res = await p.request('GET', path, { token: as(caller) });
        expect(res.status).toBe(200);
        const names = (res.body as { name: string }[]).map((d) => d.name);
        expect(names.includes(`ds-${level}`)).toBe(expectedRead(level, caller) === 200);
      }
    });

    it(`PATCH the dataset → ${expectedWrite(level, caller, 200)}`, async () => {
      const description = `changed by ${caller}`;
      const res = await p.request('PATCH', ds, { token: as(caller), body: { description } });
      expect(res.status).toBe(expectedWrite(level, caller, 200));
      expect(typeof res.body.message === 'string' || res.body.description === description).toBe(true);
      const after = await p.request('GET', ds, { token: tokens.owner });
      if (res.status !== 200) expect(after.body.description).not.toBe(description);
      else expect(after.body.description).toBe(description);
    });

    it('PATCH and DELETE its prefixes', async () => {
      const label = `p${CALLERS.indexOf(caller)}`;
      const add = await p.request('PATCH', `${ds}/prefixes`, {
        token: as(caller),
        body: [{ prefixLabel: label, iri: 'https://example.org/ns#' }],
      });
      expect(add.status).toBe(expectedWrite(level, caller, 200));
      // Give the owner's prefix to delete so every caller's DELETE has a target.
      await p.request('PATCH', `${ds}/prefixes`, { token: tokens.owner, body: [{ prefixLabel: `${label}x`, iri: 'https://example.org/x#' }] });
      const del = await p.request('DELETE', `${ds}/prefixes/${label}x`, { token: as(caller) });
      expect(del.status).toBe(expectedWrite(level, caller, 204));
    });

    it(`DELETE the dataset → ${expectedWrite(level, caller, 204)}`, async () => {
      const name = `del-${level}-${CALLERS.indexOf(caller)}`;
      await p.createDataset(ORG, name, level, tokens.owner!);
      const res = await p.request('DELETE', `/datasets/${ORG}/${name}`, { token: as(caller) });
      expect(res.status).toBe(expectedWrite(level, caller, 204));
      const after = await p.request('GET', `/datasets/${ORG}/${name}`, { token: tokens.owner });
      expect(after.status).toBe(res.status === 204 ? 404 : 200);
    });
  });
});

describe('creating a dataset in the organisation', () => {
  const expected: Record<CallerName, number> = {
    anonymous: 401,
    outsider: 403,
    viewer: 403,
    member: 201,
    owner: 201,
    'owner (read-only token)': 401,
    administrator: 201,
  };
  it.each(CALLERS)('by %s', async (caller) => {
    const name = `new-${CALLERS.indexOf(caller)}`;
    const res = await p.request('POST', `/datasets/${ORG}`, { token: as(caller), body: { name, accessLevel: 'private' } });
    expect(res.status).toBe(expected[caller]);
    const after = await p.request('GET', `/datasets/${ORG}/${name}`, { token: tokens.owner });
    expect(after.status).toBe(res.status === 201 ? 200 : 404);
  });

  it('in a user account is only for that user and administrators', async () => {
    expect((await p.request('POST', '/datasets/alice', { token: tokens.member, body: { name: 'x' } })).status).toBe(403);
    expect((await p.request('POST', '/datasets/alice', { token: tokens.administrator, body: { name: 'by-admin' } })).status).toBe(201);
    expect((await p.request('POST', '/datasets/alice', { token: tokens.owner, body: { name: 'by-alice' } })).status).toBe(201);
  });
});
