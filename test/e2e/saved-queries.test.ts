/** Saved queries: versions, access, variables, formats, paging, redirects, and the official client. */
import App from '@triply/triplydb';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let datasetId: string;

const PEOPLE = Array.from({ length: 250 }, (_, i) => `<https://example.org/p${String(i).padStart(3, '0')}> <https://example.org/name> "Person ${i}" ; a <https://example.org/${i % 2 ? 'Odd' : 'Even'}> .`).join('\n');

const create = (body: Record<string, unknown>, token = alice) => p.request('POST', '/queries/alice', { token, body });

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  datasetId = (await p.createDataset('alice', 'people', 'public', alice)).id;
  const job = await importFiles(p, alice, 'alice/people', [{ name: 'people.ttl', content: PEOPLE }], { defaultGraphName: 'https://example.org/graph' });
  expect(job.status).toBe('finished');
});
afterAll(async () => {
  await p?.stop();
});

describe('saved queries', () => {
  it('are created with TriplyDB fields, versioned, and read at any version', async () => {
    const res = await create({
      name: 'names',
      accessLevel: 'public',
      dataset: datasetId,
      description: 'Names of people',
      serviceConfig: { type: 'speedy' },
      requestConfig: { payload: { query: 'SELECT ?p ?name WHERE { ?p <https://example.org/name> ?name } ORDER BY ?p' } },
      variables: [],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'names',
      version: 1,
      numberOfVersions: 1,
      accessLevel: 'public',
      owner: { accountName: 'alice' },
      dataset: { id: datasetId, name: 'people' },
      serviceConfig: { type: 'speedy' },
      renderConfig: { output: 'Table' },
      link: `${p.url}/queries/alice/names`,
      service: `${p.url}/datasets/alice/people/sparql`,
    });
    const v2 = await p.request('POST', '/queries/alice/names', {
      token: alice,
      body: { requestConfig: { payload: { query: 'SELECT ?name WHERE { ?p <https://example.org/name> ?name } ORDER BY ?name' } } },
    });
    expect(v2.body).toMatchObject({ version: 2, numberOfVersions: 2 });
    expect((await p.request('GET', '/queries/alice/names')).body.requestConfig.payload.query).toMatch(/SELECT \?name WHERE/);
    expect((await p.request('GET', '/queries/alice/names/1')).body).toMatchObject({ version: 1, requestConfig: { payload: { query: expect.stringMatching(/SELECT \?p \?name/) } } });
    expect((await p.request('GET', '/queries/alice/names/3')).status).toBe(404);
    expect((await p.request('GET', '/queries/alice/names/zero')).status).toBe(400);
  });

  it('validate their input', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ name: 'bad name', requestConfig: { payload: { query: 'ASK {}' } } }, /name: a query name/],
      [{ name: 'nope', requestConfig: { payload: { query: 'SELEC *' } } }, /does not parse/],
      [{ name: 'nope', requestConfig: { payload: {} } }, /query string is required/],
      [{ name: 'nope', requestConfig: { payload: { query: 'ASK {}' } }, variables: [{ name: 'x', termType: 'Blank' }] }, /termType/],
      [{ name: 'nope', requestConfig: { payload: { query: 'ASK {}' } }, variables: [{ name: 'x', termType: 'NamedNode', defaultValue: 'not an iri' }] }, /x: .* not an absolute IRI/],
      [{ name: 'nope', requestConfig: { payload: { query: 'ASK {}' } }, serviceConfig: { type: 'oracle' } }, /serviceConfig.type/],
      [{ name: 'names', requestConfig: { payload: { query: 'ASK {}' } } }, /already exists/],
    ];
    for (const [body, message] of bad) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.body.message).toMatch(message);
    }
    expect((await create({ name: 'x', requestConfig: { payload: { query: 'ASK {}' } } }, bob)).status).toBe(403);
  });

  it('answer the query text with #+ annotations for Accept: text/plain', async () => {
    const res = await p.request('GET', '/queries/alice/names', { headers: { accept: 'text/plain' } });
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^#\+ description: Names of people\n#\+ endpoint: http:\/\/127\.0\.0\.1:\d+\/datasets\/alice\/people\/sparql\n#\+ endpoint_in_url: false\n\nSELECT \?name/);
  });

  it('redirect from their old name after a rename, also for the text representation', async () => {
    await create({ name: 'old-name', accessLevel: 'public', dataset: datasetId, requestConfig: { payload: { query: 'ASK { ?s ?p ?o }' } } });
    const renamed = await p.request('PATCH', '/queries/alice/old-name', { token: alice, body: { name: 'new-name', description: 'renamed' } });
    expect(renamed.body).toMatchObject({ name: 'new-name', description: 'renamed' });
    const moved = await p.request('GET', '/queries/alice/old-name/run?x=1');
    expect(moved.status).toBe(301);
    expect(moved.headers.get('location')).toBe(`${p.url}/queries/alice/new-name/run?x=1`);
    const followed = await fetch(`${p.url}/queries/alice/old-name`, { headers: { accept: 'text/plain' } });
    expect(followed.status).toBe(200);
    expect(await followed.text()).toMatch(/ASK/);
  });

  it('follow their own access level and the dataset they run against', async () => {
    await create({ name: 'secret', accessLevel: 'private', dataset: datasetId, requestConfig: { payload: { query: 'ASK { ?s ?p ?o }' } } });
    expect((await p.request('GET', '/queries/alice/secret')).status).toBe(404);
    expect((await p.request('GET', '/queries/alice/secret', { token: bob })).status).toBe(404);
    expect((await p.request('GET', '/queries/alice/secret/run', { token: bob })).status).toBe(404);
    expect((await p.request('GET', '/queries/alice/secret', { token: alice })).status).toBe(200);
    const hiddenDs = (await p.createDataset('alice', 'hidden', 'private', alice)).id;
    await create({ name: 'public-over-private', accessLevel: 'public', dataset: hiddenDs, requestConfig: { payload: { query: 'ASK {}' } } });
    expect((await p.request('GET', '/queries/alice/public-over-private')).status).toBe(404);
    const all = await p.request('GET', '/queries?limit=100');
    const names = all.body.map((q: { name: string }) => q.name);
    expect(names).toContain('names');
    expect(names).not.toContain('secret');
    expect(names).not.toContain('public-over-private');
    expect((await p.request('PATCH', '/queries/alice/names', { token: bob, body: { description: 'x' } })).status).toBe(403);
    expect((await p.request('DELETE', '/queries/alice/names', { body: {} })).status).toBe(401);
  });
});

describe('running', () => {
  it('pages SELECT results as a JSON array of bindings with first/prev/next links', async () => {
    const first = await p.request('GET', '/queries/alice/names/1/run?pageSize=100');
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(100);
    expect(first.body[0]).toEqual({ p: 'https://example.org/p000', name: 'Person 0' });
    const link = first.headers.get('link')!;
    expect(link).toMatch(/rel="first"/);
    expect(link).not.toMatch(/rel="prev"/);
    const next = /<([^>]+)>; rel="next"/.exec(link)![1]!;
    expect(next).toBe(`${p.url}/queries/alice/names/1/run?pageSize=100&page=2`);
    const third = await p.request('GET', '/queries/alice/names/1/run?pageSize=100&page=3');
    expect(third.body).toHaveLength(50);
    expect(third.headers.get('link')).not.toMatch(/rel="next"/);
    expect(third.headers.get('link')).toMatch(/page=2>; rel="prev"/);
    expect((await p.request('GET', '/queries/alice/names/1/run?pageSize=10001')).status).toBe(400);
    expect((await p.request('GET', '/queries/alice/names/1/run?page=0')).status).toBe(400);
    expect((await p.request('GET', '/queries/alice/names/1/run?page=9')).body).toEqual([]);
  });

  it('serves every format by extension or Accept', async () => {
    const tsv = await p.request('GET', '/queries/alice/names/1/run.tsv?pageSize=2');
    expect(tsv.text).toBe('?p\t?name\n<https://example.org/p000>\t"Person 0"\n<https://example.org/p001>\t"Person 1"\n');
    const csv = await p.request('GET', '/queries/alice/names/1/run.csv?pageSize=1');
    expect(csv.text).toBe('p,name\r\nhttps://example.org/p000,Person 0\r\n');
    const srj = await p.request('GET', '/queries/alice/names/1/run?pageSize=1', { headers: { accept: 'application/sparql-results+json' } });
    expect(JSON.parse(srj.text).head.vars).toEqual(['p', 'name']);
    const srx = await p.request('GET', '/queries/alice/names/1/run.srx?pageSize=1');
    expect(srx.text).toMatch(/<binding name="name"><literal>Person 0<\/literal><\/binding>/);
    expect((await p.request('GET', '/queries/alice/names/1/run.ttl')).status).toBe(406);
  });

  it('substitute variables by type, check them, and leave unset optional ones unbound', async () => {
    await create({
      name: 'by-class',
      accessLevel: 'public',
      dataset: datasetId,
      requestConfig: { payload: { query: 'SELECT ?p WHERE { ?p a ?class ; <https://example.org/name> ?name } ORDER BY ?p LIMIT 3' } },
      variables: [
        { name: 'class', termType: 'NamedNode', required: true, allowedValues: ['https://example.org/Odd', 'https://example.org/Even'] },
        { name: 'name', termType: 'Literal' },
      ],
    });
    const odd = await p.request('GET', `/queries/alice/by-class/run?class=${encodeURIComponent('https://example.org/Odd')}`);
    expect(odd.body.map((r: { p: string }) => r.p)).toEqual(['https://example.org/p001', 'https://example.org/p003', 'https://example.org/p005']);
    const named = await p.request('GET', `/queries/alice/by-class/run?class=${encodeURIComponent('https://example.org/Even')}&name=${encodeURIComponent('Person 4')}`);
    expect(named.body).toEqual([{ p: 'https://example.org/p004' }]);
    const missing = await p.request('GET', '/queries/alice/by-class/run');
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/^class: this variable is required/);
    const outside = await p.request('GET', `/queries/alice/by-class/run?class=${encodeURIComponent('https://example.org/Other')}`);
    expect(outside.status).toBe(400);
    expect(outside.body.message).toMatch(/^class: .* not allowed/);
    const injection = await p.request('GET', `/queries/alice/by-class/run?class=${encodeURIComponent('https://example.org/Odd')}&name=${encodeURIComponent('x" } ; DROP ALL #')}`);
    expect(injection.status).toBe(200);
    expect(injection.body).toEqual([]);
    const text = await p.request('GET', `/queries/alice/by-class/text?class=${encodeURIComponent('https://example.org/Odd')}`);
    expect(text.text).toMatch(/<https:\/\/example\.org\/Odd>/);
  });

  it('runs CONSTRUCT as N-Triples by default, page by page', async () => {
    await create({
      name: 'labels',
      accessLevel: 'public',
      dataset: datasetId,
      requestConfig: { payload: { query: 'CONSTRUCT { ?p <https://example.org/label> ?name } WHERE { ?p <https://example.org/name> ?name } ORDER BY ?p' } },
    });
    const page = await p.request('GET', '/queries/alice/labels/run.nt?pageSize=100&page=3');
    expect(page.headers.get('content-type')).toMatch(/^application\/n-triples/);
    expect(page.text.trim().split('\n')).toHaveLength(50);
    expect(page.headers.get('link')).not.toMatch(/rel="next"/);
    const first = await p.request('GET', '/queries/alice/labels/run?pageSize=100');
    expect(first.headers.get('link')).toMatch(/rel="next"/);
    expect((await p.request('GET', '/queries/alice/labels/run.csv')).status).toBe(406);
  });

  it('runs on a service of the configured type, and says when none is running', async () => {
    await create({ name: 'on-virtuoso', accessLevel: 'public', dataset: datasetId, serviceConfig: { type: 'virtuoso' }, requestConfig: { payload: { query: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }' } } });
    const none = await p.request('GET', '/queries/alice/on-virtuoso/run');
    expect(none.status).toBe(503);
    expect(none.body.message).toMatch(/no running virtuoso service/);
    await p.request('POST', '/datasets/alice/people/services', { token: alice, body: { name: 'sparql', type: 'virtuoso' } });
    for (let i = 0; i < 200; i++) {
      if ((await p.request('GET', '/datasets/alice/people/services/sparql')).body.status === 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await p.request('GET', '/queries/alice/on-virtuoso/run')).body).toEqual([{ n: '500' }]);
  });

  it('runs update queries with POST only, for writers', async () => {
    await create({
      name: 'add-person',
      accessLevel: 'public',
      dataset: datasetId,
      requestConfig: { payload: { query: 'INSERT DATA { GRAPH <https://example.org/graph> { <https://example.org/new> <https://example.org/name> "New" } }' } },
    });
    expect((await p.request('GET', '/queries/alice/add-person/run')).status).toBe(400);
    expect((await p.request('POST', '/queries/alice/add-person/run', { token: bob })).status).toBe(403);
    const done = await p.request('POST', '/queries/alice/add-person/run', { token: alice });
    expect(done.status).toBe(200);
    expect(done.body.statements).toBe(501);
  });
});

describe('the official TriplyDB client', () => {
  it('adds, reads, runs across pages, writes TSV and adds versions', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ldp-queries-'));
    try {
      const app = App.get(alice);
      const account = await app.getAccount();
      const ds = await account.getDataset('people');
      const query = await account.addQuery('client-query', {
        dataset: ds,
        queryString: 'SELECT ?p ?name WHERE { ?p <https://example.org/name> ?name FILTER(STRSTARTS(STR(?p), "https://example.org/p")) } ORDER BY ?p',
        serviceType: 'speedy',
        accessLevel: 'internal',
      });
      expect((await query.getInfo()).numberOfVersions).toBe(1);
      const again = await account.getQuery('client-query');
      expect((await again.getInfo()).requestConfig?.payload.query).toMatch(/ORDER BY/);
      const rows = await again.results().bindings().toArray();
      expect(rows).toHaveLength(250);
      expect(rows[0]).toEqual({ p: 'https://example.org/p000', name: 'Person 0' });
      // The client asks 5,000 rows a page: 6,000 rows need two pages, followed through Link.
      const pairs = await account.addQuery('client-pairs', {
        dataset: ds,
        queryString: 'SELECT ?a ?b WHERE { ?a <https://example.org/name> ?x . ?b <https://example.org/name> ?y } ORDER BY ?a ?b LIMIT 6000',
        serviceType: 'speedy',
        accessLevel: 'internal',
      });
      const many = await pairs.results().bindings().toArray();
      expect(many).toHaveLength(6000);
      expect(new Set(many.map((r) => `${r.a} ${r.b}`)).size).toBe(6000);
      const tsv = join(dir, 'out.tsv');
      await pairs.results().bindings().toFile(tsv);
      const lines = (await readFile(tsv, 'utf8')).trim().split('\n');
      expect(lines[0]).toBe('?a\t?b');
      expect(lines).toHaveLength(6001);
      await again.addVersion({ queryString: 'SELECT ?name WHERE { ?p <https://example.org/name> ?name }' });
      expect((await again.getInfo(true)).numberOfVersions).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
