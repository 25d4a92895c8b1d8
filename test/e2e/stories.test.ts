/** Issue 14, area B: stories (the ten /stories operations), the client's addStory and pinItems. */
import App from '@triply/triplydb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';
import { ONE_PIXEL_PNG as PNG, multipartFile as multipart } from '../support/images.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let carol: string;
let queryId: string;
let privateQueryId: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  carol = await p.createUser('carol');
  await p.createOrg('acme', alice);
  await p.addMember('acme', 'bob', 'member', alice);
  const ds = await p.createDataset('alice', 'people', 'public', alice);
  const q = (name: string, accessLevel: string) =>
    p.request('POST', '/queries/alice', { token: alice, body: { name, accessLevel, dataset: ds.id, requestConfig: { payload: { query: 'SELECT * WHERE { ?s ?p ?o } LIMIT 1' } } } });
  queryId = (await q('open-query', 'public')).body.id;
  privateQueryId = (await q('closed-query', 'private')).body.id;
});
afterAll(async () => {
  await p?.stop();
});

describe('stories (issue 14)', () => {
  it('are created, read, changed, listed and deleted, with access levels', async () => {
    const created = await p.request('POST', '/stories/alice', {
      token: alice,
      body: { name: 'tour', displayName: 'A tour', accessLevel: 'public', content: [{ type: 'paragraph', paragraph: '# Hello' }, { type: 'query', query: queryId, width: 'fullWidth' }] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'tour', displayName: 'A tour', accessLevel: 'public', owner: { accountName: 'alice' }, link: `${p.url}/stories/alice/tour` });
    expect(created.body.content[0]).toMatchObject({ type: 'paragraph', paragraph: '# Hello', id: expect.any(String) });
    expect(created.body.content[1]).toMatchObject({ type: 'query', width: 'fullWidth', query: { id: queryId, name: 'open-query' } });
    await p.request('POST', '/stories/alice', { token: alice, body: { name: 'draft' } });

    // Who may see what.
    expect((await p.request('GET', '/stories/alice/tour')).status).toBe(200);
    expect((await p.request('GET', '/stories/alice/draft', { token: carol })).status).toBe(404);
    expect((await p.request('GET', '/stories/alice/draft', { token: alice })).body.accessLevel).toBe('private');
    expect((await p.request('GET', '/stories/alice')).body.map((s: any) => s.name)).toEqual(['tour']);
    expect((await p.request('GET', '/stories/alice', { token: alice })).body.map((s: any) => s.name).sort()).toEqual(['draft', 'tour']);
    expect((await p.request('GET', '/stories?q=TOU')).body.map((s: any) => s.name)).toEqual(['tour']);
    expect((await p.request('GET', '/stories?color=1')).status).toBe(400);
    // sortBy is TriplyDB's (issue 14 area D, test/e2e/pipelines-listing-params.test.ts); an unknown parameter is refused.
    expect((await p.request('GET', '/stories/alice?sortBy=name&sortDirection=desc', { token: alice })).body.map((s: any) => s.name)).toEqual(['tour', 'draft']);
    expect((await p.request('GET', '/stories/alice?orderBy=name')).body.message).toMatch(/^orderBy: unknown query parameter/);

    // Who may change them; what is refused.
    expect((await p.request('POST', '/stories/alice', { token: carol, body: { name: 'x' } })).status).toBe(403);
    expect((await p.request('POST', '/stories/alice', { body: { name: 'x' } })).status).toBe(401);
    expect((await p.request('POST', '/stories/alice', { token: alice, body: { name: 'tour' } })).status).toBe(409);
    expect((await p.request('POST', '/stories/alice', { token: alice, body: { name: 'bad name!' } })).status).toBe(400);
    expect((await p.request('POST', '/stories/alice', { token: alice, body: { name: 'q', content: [{ type: 'chart' }] } })).status).toBe(400);
    // A query the writer may not see cannot be shown.
    const hidden = await p.request('PATCH', '/stories/alice/tour', { token: carol, body: { content: [] } });
    expect(hidden.status).toBe(403);
    await p.request('PATCH', '/stories/alice/tour', { token: alice, body: {} });
    const carolStory = await p.request('POST', '/stories/carol', { token: carol, body: { name: 'mine', content: [{ type: 'query', query: privateQueryId }] } });
    expect(carolStory.status).toBe(400);
    expect(carolStory.body.message).toMatch(/content\[0\]\.query/);

    const patched = await p.request('PATCH', '/stories/alice/draft', { token: alice, body: { name: 'final', accessLevel: 'internal', content: [{ type: 'query', query: privateQueryId }] } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'final', accessLevel: 'internal' });
    expect((await p.request('GET', '/stories/alice/draft', { token: alice })).status).toBe(404);
    // Carol may read the internal story, but not the private query in it.
    const asCarol = await p.request('GET', '/stories/alice/final', { token: carol });
    expect(asCarol.status).toBe(200);
    expect(asCarol.body.content[0].query).toBeUndefined();
    expect((await p.request('DELETE', '/stories/alice/final', { token: carol })).status).toBe(403);
    expect((await p.request('DELETE', '/stories/alice/final', { token: alice })).status).toBe(204);
    expect((await p.request('GET', '/stories/alice/final', { token: alice })).status).toBe(404);
  });

  it('copy, chown and banners', async () => {
    await p.request('POST', '/stories/alice', { token: alice, body: { name: 'moving', accessLevel: 'public' } });
    const banner = await p.request('POST', '/stories/alice/moving/banner.webp', { token: alice, ...multipart('banner', PNG, 'image/png') });
    expect(banner.status).toBe(200);
    expect(banner.body.bannerUrl).toContain('/alice/moving/banner.webp?v=1');
    expect((await p.request('POST', '/stories/alice/moving/banner.webp', { token: carol, ...multipart('banner', PNG, 'image/png') })).status).toBe(403);
    const img = await fetch(banner.body.bannerUrl);
    expect(img.status).toBe(200);
    expect(Buffer.from(await img.arrayBuffer())).toEqual(PNG);

    const copy = await p.request('POST', '/stories/alice/moving/copy', { token: carol, body: { toAccount: 'carol' } });
    expect(copy.status).toBe(201);
    expect(copy.body.owner.accountName).toBe('carol');
    expect((await p.request('POST', '/stories/alice/moving/copy', { token: carol, body: { toAccount: 'acme' } })).status).toBe(403);
    expect((await p.request('POST', '/stories/alice/moving/chown', { token: carol, body: { toAccount: 'carol' } })).status).toBe(403);
    expect((await p.request('POST', '/stories/alice/moving/chown', { token: alice, body: {} })).status).toBe(400);
    const moved = await p.request('POST', '/stories/alice/moving/chown', { token: alice, body: { toAccount: 'acme' } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ owner: { accountName: 'acme' }, bannerUrl: expect.stringContaining('/acme/moving/banner.webp') });
    expect((await p.request('GET', '/stories/alice/moving')).status).toBe(404);
    expect((await p.request('GET', '/stories/acme/moving/banner')).status).toBe(200);
  });

  it('the official client: addStory, getStory, getStories, pinItems, setAvatar', async () => {
    const app = App.get(alice);
    const account = await app.getAccount();
    const query = await account.getQuery('open-query');
    const story = await account.addStory('client-story', { accessLevel: 'public', content: [{ type: 'paragraph', paragraph: 'Hi' }, { type: 'query', query }] } as any);
    const info = await story.getInfo();
    expect(info.content.map((e: any) => e.type)).toEqual(['paragraph', 'query']);
    expect((await (await account.getStory('client-story')).getInfo()).id).toBe(info.id);
    const names: string[] = [];
    for await (const s of account.getStories()) names.push((await s.getInfo()).name);
    expect(names).toContain('client-story');
    const ds = await account.getDataset('people');
    await account.pinItems([ds, story, query]);
    const pinned = (await p.request('GET', '/accounts/alice')).body.pinnedItems;
    expect(pinned.map((i: any) => [i.type, i.item.name])).toEqual([['Dataset', 'people'], ['Story', 'client-story'], ['Query', 'open-query']]);
    await account.setAvatar(PNG);
    expect((await p.request('GET', '/accounts/alice')).body.avatarUrl).toContain('/imgs/avatars/a/');
    await ds.setAvatar(PNG);
    expect((await ds.getInfo(true)).avatarUrl).toContain('imgs/avatars/d/');
    await story.delete();
    expect((await p.request('GET', '/stories/alice/client-story')).status).toBe(404);
    expect((await p.request('GET', '/accounts/alice')).body.pinnedItems.map((i: any) => i.type)).toEqual(['Dataset', 'Query']);
  });
});
