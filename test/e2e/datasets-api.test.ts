/** Issue 14, area B: dataset and query routes as TriplyDB has them (prefixes, chown, filters, query fields). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let carol: string;
let peopleId: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  carol = await p.createUser('carol');
  await p.createOrg('acme', alice);
  await p.addMember('acme', 'bob', 'member', alice);
  peopleId = (await p.createDataset('alice', 'people', 'public', alice)).id;
  await p.request('PATCH', '/datasets/alice/people', { token: alice, body: { description: 'Everyone we know', tags: ['persons'] } });
  await p.createDataset('alice', 'places', 'public', alice);
  await p.createDataset('alice', 'hidden', 'private', alice);
  const job = await importFiles(p, alice, 'alice/people', [{ name: 'p.ttl', content: '<https://e.org/a> <https://e.org/name> "A" .\n<https://e.org/b> <https://e.org/name> "B" .' }]);
  expect(job.status).toBe('finished');
});
afterAll(async () => {
  await p?.stop();
});

describe('prefixes (issue 14)', () => {
  it('global prefixes: the list and one by label', async () => {
    const all = await p.request('GET', '/prefixes');
    expect(all.status).toBe(200);
    expect(all.body).toContainEqual({ prefixLabel: 'rdf', iri: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#', scope: 'global' });
    expect((await p.request('GET', '/prefixes/xsd')).body).toBe('http://www.w3.org/2001/XMLSchema#');
    expect((await p.request('GET', '/prefixes/nope')).status).toBe(404);
    expect((await p.request('GET', '/prefixes?foo=1')).status).toBe(400);
  });

  it('dataset prefixes: POST adds, PUT replaces, one is read, put and deleted; only writers change them', async () => {
    const ds = '/datasets/alice/places/prefixes';
    const added = await p.request('POST', ds, { token: alice, body: [{ prefixLabel: 'ex', iri: 'https://example.org/' }] });
    expect(added.status).toBe(200);
    expect(added.body).toEqual([{ prefixLabel: 'ex', iri: 'https://example.org/', scope: 'local' }]);
    const replaced = await p.request('PUT', ds, { token: alice, body: { geo: 'http://www.opengis.net/ont/geosparql#', ex2: 'https://example.org/2/' } });
    expect(replaced.body.map((x: any) => x.prefixLabel)).toEqual(['geo', 'ex2']);
    expect((await p.request('GET', `${ds}/geo`)).body).toBe('http://www.opengis.net/ont/geosparql#');
    expect((await p.request('GET', `${ds}/rdfs`)).body).toBe('http://www.w3.org/2000/01/rdf-schema#');
    expect((await p.request('GET', `${ds}/ex`)).status).toBe(404);
    const put = await p.request('PUT', `${ds}/ex`, { token: alice, body: { iri: 'https://example.org/again/' } });
    expect(put.status).toBe(200);
    expect(put.body).toBe('https://example.org/again/');
    expect((await p.request('GET', `${ds}?scope=global`)).body.every((x: any) => x.scope === 'global')).toBe(true);
    // Without a scope: its own, then the global ones it does not override (the TriplyDB client's getPrefixes).
    await p.request('PUT', `${ds}/rdfs`, { token: alice, body: { iri: 'https://example.org/my-rdfs#' } });
    const all = (await p.request('GET', ds)).body;
    expect(all.filter((x: any) => x.prefixLabel === 'rdfs')).toEqual([{ prefixLabel: 'rdfs', iri: 'https://example.org/my-rdfs#', scope: 'local' }]);
    expect(all).toContainEqual({ prefixLabel: 'xsd', iri: 'http://www.w3.org/2001/XMLSchema#', scope: 'global' });
    expect((await p.request('GET', `${ds}?scope=local`)).body.every((x: any) => x.scope === 'local')).toBe(true);
    expect((await p.request('GET', `${ds}?scope=everything`)).status).toBe(400);
    // Validation and access.
    expect((await p.request('PUT', `${ds}/ex`, { token: alice, body: { iri: 'not an iri' } })).status).toBe(400);
    expect((await p.request('PUT', `${ds}/ex`, { token: alice, body: {} })).status).toBe(400);
    expect((await p.request('PUT', `${ds}/ex`, { token: carol, body: { iri: 'https://x.org/' } })).status).toBe(403);
    expect((await p.request('POST', ds, { body: [{ prefixLabel: 'y', iri: 'https://y.org/' }] })).status).toBe(401);
    expect((await p.request('PUT', ds, { token: carol, body: {} })).status).toBe(403);
    expect((await p.request('GET', '/datasets/alice/hidden/prefixes/rdf', { token: carol })).status).toBe(404);
  });
});

describe('dataset listings and chown (issue 14)', () => {
  it('filter by q, add services with verbose, and refuse unknown parameters', async () => {
    const q = await p.request('GET', '/datasets?q=PERSONS');
    expect(q.body.map((d: any) => d.name)).toEqual(['people']);
    expect((await p.request('GET', '/datasets/alice?q=plac')).body.map((d: any) => d.name)).toEqual(['places']);
    expect((await p.request('GET', '/datasets/alice?q=hid', { token: carol })).body).toEqual([]);
    expect((await p.request('GET', '/datasets/alice?q=hid', { token: alice })).body.map((d: any) => d.name)).toEqual(['hidden']);
    const verbose = await p.request('GET', '/datasets/alice?verbose=');
    expect(verbose.body.every((d: any) => Array.isArray(d.services))).toBe(true);
    expect((await p.request('GET', '/datasets/alice')).body.some((d: any) => 'services' in d)).toBe(false);
    const unknown = await p.request('GET', '/datasets?sortBy=name&bogus=1');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/unknown query parameter/);
    expect((await p.request('GET', '/datasets/alice/people?foo=bar')).status).toBe(400);
    // Writes take none: the parameter is named, and nothing changes.
    const write = await p.request('PATCH', '/datasets/alice/places?displayName=x', { token: alice, body: { description: 'changed?' } });
    expect(write.status).toBe(400);
    expect(write.body.message).toMatch(/^displayName: unknown query parameter/);
    expect((await p.request('GET', '/datasets/alice/places')).body.description).not.toBe('changed?');
    expect((await p.request('POST', '/queries/alice?force=1', { token: alice, body: { name: 'x' } })).status).toBe(400);
    expect((await p.request('POST', '/stories/alice?x=1', { token: alice, body: { name: 'x' } })).status).toBe(400);
    expect((await p.request('POST', '/datasets/alice/places/hooks?x=1', { token: alice, body: { url: 'https://example.org/' } })).status).toBe(400);
    expect((await p.request('POST', '/accounts/acme/members?x=1', { token: alice, body: { accountName: 'carol', role: 'member' } })).status).toBe(400);
  });

  it('chown moves a dataset (its data too) to an account the caller may write to', async () => {
    await p.createDataset('alice', 'moving', 'public', alice);
    const job = await importFiles(p, alice, 'alice/moving', [{ name: 'm.ttl', content: '<https://e.org/m> <https://e.org/p> "m" .' }]);
    expect(job.status).toBe('finished');
    // Carol may not move it, nor may alice move it to carol's account.
    expect((await p.request('POST', '/datasets/alice/moving/chown', { token: carol, body: { toAccount: 'carol' } })).status).toBe(403);
    expect((await p.request('POST', '/datasets/alice/moving/chown', { token: alice, body: { toAccount: 'carol' } })).status).toBe(403);
    expect((await p.request('POST', '/datasets/alice/moving/chown', { token: alice, body: {} })).status).toBe(400);
    expect((await p.request('POST', '/datasets/alice/moving/chown', { token: alice, body: { toAccount: 'nobody' } })).status).toBe(404);
    const moved = await p.request('POST', '/datasets/alice/moving/chown', { token: alice, body: { toAccount: 'acme' } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ name: 'moving', owner: { accountName: 'acme' }, statements: 1 });
    expect((await p.request('GET', '/datasets/alice/moving')).status).toBe(404);
    const graphs = await p.request('GET', '/datasets/acme/moving/graphs');
    expect(graphs.status).toBe(200);
    expect(graphs.body).toHaveLength(1);
    // Taken name at the target: 409.
    await p.createDataset('alice', 'moving', 'public', alice);
    expect((await p.request('POST', '/datasets/alice/moving/chown', { token: alice, body: { toAccount: 'acme' } })).status).toBe(409);
  });
});

describe('saved queries (issue 14)', () => {
  it('show versionsInformation, executionStats and serviceConfig.service; a new version answers 200; chown moves them', async () => {
    const created = await p.request('POST', '/queries/alice', {
      token: alice,
      body: { name: 'names', accessLevel: 'public', dataset: peopleId, serviceConfig: { type: 'speedy' }, requestConfig: { payload: { query: 'SELECT ?n WHERE { ?s <https://e.org/name> ?n }' } } },
    });
    expect(created.status).toBe(201);
    expect(created.body.executionStats).toEqual({ status: 'No information' });
    expect(created.body.serviceConfig).toMatchObject({ type: 'speedy', service: { type: 'speedy' } });
    const v2 = await p.request('POST', '/queries/alice/names', { token: alice, body: { requestConfig: { payload: { query: 'SELECT ?n WHERE { ?s <https://e.org/name> ?n } ORDER BY ?n' } } } });
    expect(v2.status).toBe(200);
    expect(v2.body.versionsInformation.map((v: any) => [v.version, v.accountName])).toEqual([[1, 'alice'], [2, 'alice']]);
    expect((await p.request('GET', '/queries/alice/names/run')).body).toHaveLength(2);
    const got = await p.request('GET', '/queries/alice/names');
    expect(got.body.executionStats).toMatchObject({ status: 'Success', resultCount: 2 });
    expect(typeof got.body.executionStats.executionTimeInMs).toBe('number');
    expect((await p.request('GET', '/accounts/alice', { token: carol })).body.queryCount).toBe(1);
    expect((await p.request('GET', '/queries?nope=1')).status).toBe(400);

    expect((await p.request('POST', '/queries/alice/names/chown', { token: carol, body: { toAccount: 'carol' } })).status).toBe(403);
    expect((await p.request('POST', '/queries/alice/names/chown', { token: alice, body: { toAccount: 7 } })).status).toBe(400);
    const moved = await p.request('POST', '/queries/alice/names/chown', { token: alice, body: { toAccount: 'acme' } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ name: 'names', owner: { accountName: 'acme' }, numberOfVersions: 2 });
    expect((await p.request('GET', '/queries/alice/names')).status).toBe(404);
    expect((await p.request('GET', '/queries/acme/names/1')).body.requestConfig.payload.query).toMatch(/SELECT \?n/);
  });
});
