/** Dataset create/read/update/delete/list with TriplyDB field names, validation and paging. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextLinkOf, TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
});
afterAll(async () => {
  await p?.stop();
});

describe('POST /datasets/{account}', () => {
  it('creates a dataset with the TriplyDB fields and ignores unknown fields', async () => {
    const res = await p.request('POST', '/datasets/alice', {
      token: alice,
      body: {
        name: 'pets',
        displayName: 'Pets',
        description: 'Cats and dogs',
        accessLevel: 'public',
        license: 'CC0 1.0',
        prefixes: { ex: 'https://example.org/' },
        // importDataset() of the official client spreads a whole dataset object into the body.
        id: 'ignored',
        statements: 99,
        owner: { accountName: 'someone-else' },
        topics: [],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'pets',
      displayName: 'Pets',
      description: 'Cats and dogs',
      accessLevel: 'public',
      license: 'CC0 1.0',
      owner: { accountName: 'alice', type: 'user' },
      graphCount: 0,
      statements: 0,
      serviceCount: 0,
      assetCount: 0,
      prefixes: [{ prefixLabel: 'ex', iri: 'https://example.org/', scope: 'local' }],
    });
    expect(res.body.id).toMatch(/^[0-9a-f]{24}$/);
    expect(res.body.createdAt).toBe(res.body.updatedAt);
    const again = await p.request('GET', '/datasets/alice/pets');
    expect(again.body).toEqual(res.body);
  });

  it('defaults to private, with no license, and display name = name', async () => {
    const res = await p.request('POST', '/datasets/alice', { token: alice, body: { name: 'plain' } });
    expect(res.body).toMatchObject({ accessLevel: 'private', displayName: 'plain', description: '' });
    expect(res.body.license).toBeUndefined();
  });

  it('answers 409 for an existing name (case-insensitive) and writes nothing', async () => {
    const res = await p.request('POST', '/datasets/alice', { token: alice, body: { name: 'PETS', description: 'other' } });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/already exists/);
    expect((await p.request('GET', '/datasets/alice/pets')).body.description).toBe('Cats and dogs');
  });

  it('validates every field with a message that says what to fix', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: '____' }, /A dataset name can only contain/],
      [{ name: 'x'.repeat(41) }, /A dataset name can only contain/],
      [{}, /name: is required/],
      [{ name: 'ok', accessLevel: 'secret' }, /accessLevel: must be "public", "internal" or "private"/],
      [{ name: 'ok', license: 'WTFPL' }, /license: must be one of/],
      [{ name: 'ok', description: 'x'.repeat(10_001) }, /description: at most 10000 characters/],
      [{ name: 'ok', prefixes: [{ prefixLabel: 'bad label', iri: 'https://e/' }] }, /prefixes\[0\]\.prefixLabel/],
      [{ name: 'ok', prefixes: [{ prefixLabel: 'ok', iri: 'not an iri' }] }, /prefixes\[0\]\.iri: must be an absolute IRI/],
      [['an', 'array'], /body: /],
    ];
    for (const [body, message] of cases) {
      const res = await p.request('POST', '/datasets/alice', { token: alice, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect((await p.request('GET', '/datasets/alice/ok', { token: alice })).status).toBe(404);
  });

  it('answers 404 for an unknown account and 413 for an oversized body', async () => {
    expect((await p.request('POST', '/datasets/ghost', { token: alice, body: { name: 'x' } })).status).toBe(404);
    const huge = await p.request('POST', '/datasets/alice', {
      token: alice,
      rawBody: JSON.stringify({ name: 'big', description: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.message).toMatch(/larger than/);
  });
});

describe('PATCH /datasets/{account}/{dataset}', () => {
  it('changes metadata, renames, and clears the license with null', async () => {
    await p.createDataset('alice', 'draft', 'private', alice);
    const res = await p.request('PATCH', '/datasets/alice/draft', {
      token: alice,
      body: { displayName: 'Final', accessLevel: 'internal', license: 'CC BY', exampleResources: ['https://example.org/a'], tags: ['x'] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ displayName: 'Final', accessLevel: 'internal', license: 'CC BY', exampleResources: ['https://example.org/a'] });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(res.body.createdAt));
    const renamed = await p.request('PATCH', '/datasets/alice/draft', { token: alice, body: { name: 'final', license: null } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'final', displayName: 'Final', id: res.body.id });
    expect(renamed.body.license).toBeUndefined();
    expect((await p.request('GET', '/datasets/alice/draft', { token: alice })).status).toBe(404);
    expect((await p.request('GET', '/datasets/alice/final', { token: alice })).body.accessLevel).toBe('internal');
  });

  it('refuses a rename onto an existing dataset and keeps both', async () => {
    await p.createDataset('alice', 'one', 'private', alice);
    await p.createDataset('alice', 'two', 'private', alice);
    const res = await p.request('PATCH', '/datasets/alice/one', { token: alice, body: { name: 'two', description: 'lost?' } });
    expect(res.status).toBe(409);
    expect((await p.request('GET', '/datasets/alice/one', { token: alice })).body.description).toBe('');
    expect((await p.request('GET', '/datasets/alice/two', { token: alice })).status).toBe(200);
  });

  it('validates the patch and changes nothing on error', async () => {
    const bad = await p.request('PATCH', '/datasets/alice/pets', { token: alice, body: { description: 'new', accessLevel: 'nope' } });
    expect(bad.status).toBe(400);
    expect((await p.request('GET', '/datasets/alice/pets')).body.description).toBe('Cats and dogs');
    const badIri = await p.request('PATCH', '/datasets/alice/pets', { token: alice, body: { exampleResources: ['relative/iri'] } });
    expect(badIri.status).toBe(400);
    expect(badIri.body.message).toMatch(/exampleResources\[0\]/);
  });
});

describe('prefixes', () => {
  it('are added by PATCH, listed, and removed one by one', async () => {
    await p.createDataset('alice', 'vocab', 'public', alice);
    const res = await p.request('PATCH', '/datasets/alice/vocab/prefixes', {
      token: alice,
      body: [
        { prefixLabel: 'schema', iri: 'https://schema.org/', scope: 'local' },
        { prefixLabel: 'ex', iri: 'https://example.org/' },
      ],
    });
    expect(res.status).toBe(200);
    const list = await p.request('GET', '/datasets/alice/vocab/prefixes?scope=local');
    expect(list.body).toEqual([
      { prefixLabel: 'schema', iri: 'https://schema.org/', scope: 'local' },
      { prefixLabel: 'ex', iri: 'https://example.org/', scope: 'local' },
    ]);
    expect((await p.request('DELETE', '/datasets/alice/vocab/prefixes/ex', { token: alice })).status).toBe(204);
    expect((await p.request('DELETE', '/datasets/alice/vocab/prefixes/ex', { token: alice })).status).toBe(404);
    expect((await p.request('GET', '/datasets/alice/vocab/prefixes?scope=local')).body).toHaveLength(1);
  });
});

describe('DELETE /datasets/{account}/{dataset}', () => {
  it('deletes, then answers 404; the name can be reused', async () => {
    await p.createDataset('alice', 'temp', 'public', alice);
    expect((await p.request('DELETE', '/datasets/alice/temp', { token: alice })).status).toBe(204);
    expect((await p.request('GET', '/datasets/alice/temp')).status).toBe(404);
    expect((await p.request('DELETE', '/datasets/alice/temp', { token: alice })).status).toBe(404);
    await p.createDataset('alice', 'temp', 'public', alice);
  });
});

describe('listing', () => {
  it('pages /datasets/{account} by name with an absolute Link only while more exist', async () => {
    const bob = await p.createUser('bob');
    const names = Array.from({ length: 7 }, (_, i) => `set-${String.fromCharCode(103 - i)}`);
    for (const name of names) await p.createDataset('bob', name, 'public', bob);
    const seen: string[] = [];
    let path: string | undefined = '/datasets/bob?limit=3';
    let pages = 0;
    while (path && pages < 10) {
      const res = await p.request('GET', path);
      pages++;
      seen.push(...res.body.map((d: { name: string }) => d.name));
      const next = nextLinkOf(res);
      if (next) expect(next).toMatch(new RegExp(`^${p.url}/datasets/bob\\?limit=3&after=`));
      path = next?.slice(p.url.length);
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...names].sort());
    // Exactly one page: no Link at all.
    const all = await p.request('GET', '/datasets/bob?limit=7');
    expect(all.body).toHaveLength(7);
    expect(all.headers.get('link')).toBeNull();
  });

  it('lists the instance newest-last and skips what the caller may not see without short pages', async () => {
    const carol = await p.createUser('carol');
    for (let i = 0; i < 5; i++) await p.createDataset('carol', `hidden-${i}`, 'private', carol);
    await p.createDataset('carol', 'visible', 'public', carol);
    const seen: string[] = [];
    let path: string | undefined = '/datasets?limit=4';
    for (let i = 0; path && i < 20; i++) {
      const res = await p.request('GET', path);
      expect(res.status).toBe(200);
      if (nextLinkOf(res)) expect(res.body).toHaveLength(4);
      seen.push(...res.body.map((d: { owner: { accountName: string }; name: string }) => `${d.owner.accountName}/${d.name}`));
      path = nextLinkOf(res)?.slice(p.url.length);
    }
    expect(seen).toContain('carol/visible');
    expect(seen.some((s) => s.includes('hidden'))).toBe(false);
    expect(seen.indexOf('alice/pets')).toBeLessThan(seen.indexOf('carol/visible'));
  });

  it('answers 404 for the datasets of an unknown account', async () => {
    expect((await p.request('GET', '/datasets/ghost')).status).toBe(404);
  });
});

describe('the router', () => {
  it('answers unknown paths with 404 and wrong methods with 405 naming the allowed ones', async () => {
    const unknown = await p.request('GET', '/nothing/here');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/No route/);
    const wrong = await p.request('PUT', '/datasets/alice/pets', { token: alice, body: {} });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('PATCH');
    expect(wrong.body.message).toMatch(/use GET or PATCH or DELETE/);
  });

  it('answers a malformed escape in the path with 400', async () => {
    const res = await p.request('GET', '/datasets/alice/%E0%A4%A');
    expect(res.status).toBe(400);
  });
});
