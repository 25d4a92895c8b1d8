/** Issue 14, area B: accounts as TriplyDB has them (/me changes, members, counts, pins, filters, avatars). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';
import { ONE_PIXEL_PNG as PNG, multipartFile as multipart } from '../support/images.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let carol: string;
let publicDs: { id: string };
let privateDs: { id: string };

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  carol = await p.createUser('carol');
  await p.createOrg('acme', alice, { description: 'Acme research' });
  await p.addMember('acme', 'bob', 'member', alice);
  publicDs = await p.createDataset('alice', 'open', 'public', alice);
  privateDs = await p.createDataset('alice', 'secret', 'private', alice);
});
afterAll(async () => {
  await p?.stop();
});

describe('accounts (issue 14)', () => {
  it('organisations list their members; accounts count the datasets and queries the caller may see', async () => {
    const org = await p.request('GET', '/accounts/acme', { token: carol });
    expect(org.status).toBe(200);
    expect(org.body.members.map((m: any) => [m.user.accountName, m.role]).sort()).toEqual([['alice', 'owner'], ['bob', 'member']]);
    expect((await p.request('GET', '/accounts/alice', { token: alice })).body).toMatchObject({ datasetCount: 2, queryCount: 0 });
    expect((await p.request('GET', '/accounts/alice', { token: carol })).body).toMatchObject({ datasetCount: 1 });
    expect((await p.request('GET', '/accounts/alice')).body).toMatchObject({ datasetCount: 1 });
    expect((await p.request('GET', '/me?verbose=', { token: alice })).body).toMatchObject({ accountName: 'alice', datasetCount: 2, pinnedItems: [] });
  });

  it('filter /accounts by q and type, and refuse parameters they do not know', async () => {
    const orgs = await p.request('GET', '/accounts?type=org', { token: alice });
    expect(orgs.body.map((a: any) => a.accountName)).toEqual(['acme']);
    const users = await p.request('GET', '/accounts?type=user&q=AL', { token: alice });
    expect(users.body.map((a: any) => a.accountName)).toEqual(['alice']);
    expect((await p.request('GET', '/accounts?q=research', { token: alice })).body.map((a: any) => a.accountName)).toEqual(['acme']);
    const verbose = (await p.request('GET', '/accounts?type=org&verbose=', { token: alice })).body;
    expect(verbose[0]).toMatchObject({ accountName: 'acme', datasetCount: 0, members: expect.any(Array) });
    expect((await p.request('GET', '/accounts?type=org', { token: alice })).body[0].members).toBeUndefined();
    const bad = await p.request('GET', '/accounts?type=group');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/type/);
    const unknown = await p.request('GET', '/accounts?colour=red');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/colour: unknown query parameter/);
    expect((await p.request('GET', '/accounts/alice?sort=x')).status).toBe(400);
    for (const path of ['/accounts/acme/members?x=1', '/accounts/acme/roles?x=1', '/accounts/alice/orgs?x=1', '/accounts/alice/tokens?x=1', '/me?x=1']) {
      const res = await p.request('GET', path, { token: alice });
      expect(res.status, path).toBe(400);
      expect(res.body.message, path).toMatch(/^x: unknown query parameter/);
    }
  });

  it('pin items the caller may see, shown only to those who may see them', async () => {
    const pin = await p.request('PATCH', '/accounts/alice?verbose=', {
      token: alice,
      body: { pinnedItems: [{ type: 'Dataset', item: publicDs.id }, { type: 'Dataset', item: privateDs.id }] },
    });
    expect(pin.status).toBe(200);
    expect(pin.body.pinnedItems.map((i: any) => [i.type, i.item.name])).toEqual([['Dataset', 'open'], ['Dataset', 'secret']]);
    // Others see only what they may see.
    expect((await p.request('GET', '/accounts/alice', { token: carol })).body.pinnedItems.map((i: any) => i.item.name)).toEqual(['open']);
    // Bob may not pin alice's private dataset on his own page (he cannot see it), nor change alice's pins.
    const hidden = await p.request('PATCH', '/me', { token: bob, body: { pinnedItems: [{ type: 'Dataset', item: privateDs.id }] } });
    expect(hidden.status).toBe(400);
    expect(hidden.body.message).toMatch(/pinnedItems\[0\]\.item/);
    expect((await p.request('PATCH', '/accounts/alice', { token: bob, body: { pinnedItems: [] } })).status).toBe(403);
    expect((await p.request('PATCH', '/me', { token: bob, body: { pinnedItems: [{ type: 'Thing', item: 'x' }] } })).status).toBe(400);
  });

  it('PATCH /me changes the caller; DELETE /me follows the account deletion rules', async () => {
    const me = await p.request('PATCH', '/me', { token: carol, body: { name: 'Carol C', description: 'hello' } });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ accountName: 'carol', name: 'Carol C', description: 'hello' });
    expect((await p.request('PATCH', '/me', { body: { name: 'x' } })).status).toBe(401);
    expect((await p.request('PATCH', '/me', { token: carol, body: { name: 7 } })).status).toBe(400);
    // Users are deleted by administrators only, /me included.
    expect((await p.request('DELETE', '/me', { token: carol })).status).toBe(403);
    expect((await p.request('DELETE', '/me')).status).toBe(401);
    const dave = await p.createUser('dave');
    await p.request('PATCH', '/accounts/dave', { token: p.adminToken, body: { isAdmin: true } });
    expect((await p.request('DELETE', '/me', { token: dave })).status).toBe(204);
    expect((await p.request('GET', '/accounts/dave')).status).toBe(404);
  });

  it('set and serve avatars of accounts and datasets, for those who may change them', async () => {
    const { uid } = (await p.request('GET', '/accounts/alice')).body;
    const set = await p.request('POST', `/imgs/avatars/a/${uid}`, { token: alice, ...multipart('avatar', PNG, 'image/png') });
    expect(set.status).toBe(200);
    expect((await p.request('POST', `/imgs/avatars/a/${uid}`, { token: bob, ...multipart('avatar', PNG, 'image/png') })).status).toBe(403);
    expect((await p.request('POST', `/imgs/avatars/a/${uid}`, { token: alice, ...multipart('avatar', Buffer.from('x'), 'text/plain') })).status).toBe(400);
    expect((await p.request('POST', `/imgs/avatars/a/${uid}`, { token: alice, ...multipart('picture', PNG, 'image/png') })).status).toBe(400);
    const account = (await p.request('GET', '/accounts/alice')).body;
    expect(account.avatarUrl).toContain(`/imgs/avatars/a/${uid}`);
    const img = await fetch(account.avatarUrl);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await img.arrayBuffer())).toEqual(PNG);

    expect((await p.request('POST', `/imgs/avatars/d/${privateDs.id}`, { token: carol, ...multipart('avatar', PNG, 'image/png') })).status).toBe(404);
    expect((await p.request('POST', `/imgs/avatars/d/${publicDs.id}`, { token: carol, ...multipart('avatar', PNG, 'image/png') })).status).toBe(403);
    expect((await p.request('POST', `/imgs/avatars/d/${privateDs.id}`, { token: alice, ...multipart('avatar', PNG, 'image/png') })).status).toBe(200);
    const ds = (await p.request('GET', '/datasets/alice/secret', { token: alice })).body;
    expect(ds.avatarUrl).toContain('imgs/avatars/d/');
    expect((await p.request('GET', `/imgs/avatars/d/${privateDs.id}`, { token: alice })).status).toBe(200);
    expect((await p.request('GET', `/imgs/avatars/d/${privateDs.id}`)).status).toBe(404);
  });
});
