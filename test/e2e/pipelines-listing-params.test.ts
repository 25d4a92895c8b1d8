/**
 * Issue 14, area D: the listing parameters TriplyDB's OpenAPI documents (`/accounts` offset, sortBy,
 * sortDirection; `/datasets` since, sortDirection, and sortBy for an account's; `/stories` since,
 * sortBy, sortDirection): values checked (400 naming the parameter and the values allowed), sorted
 * listings paged through their Link. Over HTTP to the embedded platform.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextLinkOf, TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  for (const name of ['carl', 'bea', 'Dora']) await p.createUser(name.toLowerCase());
  for (const name of ['mid', 'zed', 'abc']) await p.createDataset('alice', name, 'public', alice);
  for (const name of ['two', 'three', 'one']) {
    const r = await p.request('POST', '/stories/alice', { token: alice, body: { name, accessLevel: 'public' } });
    if (r.status !== 201) throw new Error(`story: ${r.status} ${r.text}`);
  }
});
afterAll(async () => {
  await p?.stop();
});

type Named = { accountName?: string; name?: string; createdAt: string; updatedAt: string };
const get = async (path: string) => {
  const r = await p.request('GET', path, { token: alice });
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return r;
};
const names = (body: Named[]) => body.map((x) => x.accountName ?? x.name);
/** Follows the Link header (bounded) and gathers every page's names. */
const walk = async (path: string) => {
  const out: (string | undefined)[] = [];
  let url: string | undefined = `${p.url}${path}`;
  for (let i = 0; url && i < 20; i++) {
    const r = await get(url.slice(p.url.length));
    out.push(...names(r.body as Named[]));
    url = nextLinkOf(r);
  }
  return out;
};
const refused = async (path: string, message: RegExp) => {
  const r = await p.request('GET', path, { token: alice });
  expect(r.status, path).toBe(400);
  expect(r.body.message).toMatch(message);
};
const ascending = (xs: string[]) => xs.every((x, i) => i === 0 || xs[i - 1]! <= x);

describe('/accounts: offset, sortBy, sortDirection', () => {
  it('sort by name either way, by creation and change time, and page by offset', async () => {
    const asc = names((await get('/accounts?sortBy=accountNameLower')).body);
    expect(asc).toEqual([...asc].sort());
    expect(asc).toEqual(expect.arrayContaining(['alice', 'bea', 'carl', 'dora']));
    expect(names((await get('/accounts?sortBy=accountNameLower&sortDirection=desc')).body)).toEqual([...asc].reverse());
    const byCreation = (await get('/accounts?sortBy=createdAt&sortDirection=desc')).body as Named[];
    expect(ascending(byCreation.map((a) => a.createdAt).reverse())).toBe(true);
    expect(ascending(((await get('/accounts?sortBy=updatedAt')).body as Named[]).map((a) => a.updatedAt))).toBe(true);
    // Pages of two, by offset, through the Link header: the whole sorted list, once.
    const first = await get('/accounts?sortBy=accountNameLower&limit=2');
    expect(nextLinkOf(first)).toMatch(/offset=2/);
    expect(await walk('/accounts?sortBy=accountNameLower&limit=2')).toEqual(asc);
    expect(names((await get('/accounts?offset=1&limit=2&sortBy=accountNameLower')).body)).toEqual(asc.slice(1, 3));
    // Filters still apply.
    expect(names((await get('/accounts?q=ea&sortBy=accountNameLower')).body)).toEqual(['bea']);
  });
  it('refuse values the OpenAPI does not allow, naming the parameter and the allowed values', async () => {
    await refused('/accounts?sortBy=name', /sortBy: must be one of "accountNameLower", "createdAt", "updatedAt"/);
    await refused('/accounts?sortDirection=up', /sortDirection: must be one of "asc", "desc"/);
    await refused('/accounts?offset=-1', /offset: must be a whole number/);
    await refused('/accounts?offset=x', /offset/);
    await refused('/accounts?sortBy=createdAt&sortBy=updatedAt', /sortBy: give this query parameter at most once/);
  });
});

describe('/datasets: since, sortDirection, sortBy (an account’s)', () => {
  it('since is the Link cursor; sortDirection sorts by creation time; an account’s sort by name too', async () => {
    const first = await get('/datasets?limit=1');
    const cursor = new URL(nextLinkOf(first)!).searchParams.get('after')!;
    expect(cursor).toBeTruthy();
    const viaSince = await get(`/datasets?limit=1&since=${cursor}`);
    expect(viaSince.body).toEqual((await get(`/datasets?limit=1&after=${cursor}`)).body);
    await refused(`/datasets?since=${cursor}&after=${cursor}`, /since: give either since or after/);

    const newest = (await get('/datasets?sortDirection=desc')).body as Named[];
    expect(ascending(newest.map((d) => d.createdAt).reverse())).toBe(true);
    expect(names(newest)).toEqual(expect.arrayContaining(['mid', 'zed', 'abc']));
    expect(names((await get('/datasets/alice?sortBy=name')).body)).toEqual(['abc', 'mid', 'zed']);
    expect(names((await get('/datasets/alice?sortBy=name&sortDirection=desc')).body)).toEqual(['zed', 'mid', 'abc']);
    const paged = await get('/datasets/alice?sortBy=name&limit=2');
    expect(nextLinkOf(paged)).toMatch(/since=o2/);
    expect(await walk('/datasets/alice?sortBy=name&limit=2')).toEqual(['abc', 'mid', 'zed']);
    expect(ascending(((await get('/datasets/alice?sortBy=updatedAt')).body as Named[]).map((d) => d.updatedAt))).toBe(true);
  });
  it('refuse bad values, and sortBy where TriplyDB does not document it', async () => {
    await refused('/datasets/alice?sortBy=statements', /sortBy: must be one of "createdAt", "updatedAt", "name"/);
    await refused('/datasets?sortDirection=sideways', /sortDirection: must be one of "asc", "desc"/);
    await refused('/datasets?sortBy=name', /sortBy/);
    await refused('/datasets?since=o99999999', /since/);
    await refused('/datasets?since=not/a/cursor', /cursor/);
  });
});

describe('/stories: since, sortBy, sortDirection', () => {
  it('sort an account’s stories by name either way, and page by since', async () => {
    expect(names((await get('/stories/alice?sortBy=name')).body)).toEqual(['one', 'three', 'two']);
    expect(names((await get('/stories/alice?sortBy=name&sortDirection=desc')).body)).toEqual(['two', 'three', 'one']);
    expect(names((await get('/stories/alice?sortBy=name&since=1&limit=1')).body)).toEqual(['three']);
    const paged = await get('/stories/alice?sortBy=name&limit=2');
    expect(nextLinkOf(paged)).toMatch(/offset=2/);
    expect(await walk('/stories/alice?sortBy=name&limit=2')).toEqual(['one', 'three', 'two']);
    expect(await walk('/stories/alice?since=0&limit=2')).toHaveLength(3);
    expect(names((await get('/stories?sortDirection=desc')).body)).toEqual(['two', 'three', 'one']);
  });
  it('refuse bad values', async () => {
    await refused('/stories/alice?sortBy=createdAt', /sortBy: must be one of "name"/);
    await refused('/stories?sortBy=name', /sortBy/);
    await refused('/stories/alice?sortDirection=down', /sortDirection: must be one of "asc", "desc"/);
    await refused('/stories/alice?since=abc', /since: must be a whole number/);
    await refused('/stories/alice?since=1&offset=1', /since: give either since or offset/);
  });
});
