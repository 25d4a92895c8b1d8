/** SPARQL services: lifecycle, snapshots and sync, the protocol, formats, reasoning, limits, access. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { select, startService, waitForService } from '../support/services.js';

let p: TestPlatform;
let alice: string;
let bob: string;

const DATA = `@prefix ex: <https://example.org/> .
<https://example.org/g1> { ex:tom a ex:Cat ; ex:name "Tom" . ex:jerry a ex:Mouse ; ex:name "Jerry" . }
<https://example.org/g2> { ex:spike a ex:Dog ; ex:name "Spike" ; ex:chases ex:tom . }
`;
const ENDPOINT = '/datasets/alice/zoo/services/main/sparql';

beforeAll(async () => {
  p = await TestPlatform.start({
    settings: { sparql: { queryTimeoutMs: 1500, maxStatements: 1000, replicas: 2 } },
  });
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  await p.createDataset('alice', 'zoo', 'public', alice);
  const job = await importFiles(p, alice, 'alice/zoo', [{ name: 'zoo.trig', content: DATA }]);
  expect(job.status).toBe('finished');
});
afterAll(async () => {
  await p?.stop();
});

describe('services', () => {
  it('start, report TriplyDB ServiceMetadata and answer queries', async () => {
    const service = await startService(p, alice, 'alice/zoo', { name: 'main' });
    expect(service).toMatchObject({
      name: 'main',
      type: 'virtuoso',
      status: 'running',
      outOfSync: false,
      numberOfLoadedStatements: 7,
      endpoint: `${p.url}${ENDPOINT}`,
    });
    // The served snapshot by an opaque id, never a storage path.
    expect(service.version).toMatch(/^[A-Za-z0-9_-]+$/);
    const rows = await select(p, undefined, ENDPOINT, 'SELECT ?name WHERE { ?x <https://example.org/name> ?name } ORDER BY ?name');
    expect(rows.map((r) => r.name)).toEqual(['Jerry', 'Spike', 'Tom']);
    const list = await p.request('GET', '/datasets/alice/zoo/services');
    expect(list.body.map((s: { name: string }) => s.name)).toEqual(['main']);
    expect((await p.request('GET', '/datasets/alice/zoo')).body.serviceCount).toBe(1);
    const graphs = await p.request('GET', '/datasets/alice/zoo/services/main/graphs');
    expect(graphs.body).toEqual([
      { graphName: 'https://example.org/g1', status: 'loaded', statements: 4 },
      { graphName: 'https://example.org/g2', status: 'loaded', statements: 3 },
    ]);
  });

  it('accept the spec names and older TriplyDB names as type aliases, and refuse unknown types', async () => {
    const rich = await p.request('POST', '/datasets/alice/zoo/services', { token: alice, body: { name: 'rich', type: 'RichSparql' } });
    expect(rich.body.type).toBe('jena');
    const old = await p.request('POST', '/datasets/alice/zoo/services', { token: alice, body: { name: 'old', type: 'sparql' } });
    expect(old.body.type).toBe('virtuoso');
    const bad = await p.request('POST', '/datasets/alice/zoo/services', { token: alice, body: { name: 'x', type: 'blazingfast' } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).not.toMatch(/Service of type|Invalid service type/);
    const dup = await p.request('POST', '/datasets/alice/zoo/services', { token: alice, body: { name: 'MAIN' } });
    expect(dup.status).toBe(409);
    for (const name of ['rich', 'old']) expect((await p.request('DELETE', `/datasets/alice/zoo/services/${name}`, { token: alice })).status).toBe(204);
  });
});

describe('the SPARQL protocol', () => {
  const q = 'SELECT ?s WHERE { ?s a <https://example.org/Cat> }';

  it('takes a query by GET, URL-encoded POST and direct POST', async () => {
    const get = await p.request('GET', `${ENDPOINT}?query=${encodeURIComponent(q)}`);
    const form = await p.request('POST', ENDPOINT, { rawBody: `query=${encodeURIComponent(q)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const direct = await p.request('POST', ENDPOINT, { rawBody: q, headers: { 'content-type': 'application/sparql-query' } });
    for (const res of [get, form, direct]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/sparql-results\+json/);
      expect(JSON.parse(res.text).results.bindings[0].s.value).toBe('https://example.org/tom');
    }
  });

  it('applies default-graph-uri and named-graph-uri', async () => {
    const names = await select(p, undefined, `${ENDPOINT}?default-graph-uri=${encodeURIComponent('https://example.org/g2')}`.replace('?', '?'), 'SELECT ?n WHERE { ?x <https://example.org/name> ?n }').catch(() => null);
    expect(names).toBeNull(); // select() adds its own ?query=, so build the URL by hand below
    const url = `${ENDPOINT}?default-graph-uri=${encodeURIComponent('https://example.org/g2')}&query=${encodeURIComponent('SELECT ?n WHERE { ?x <https://example.org/name> ?n }')}`;
    const res = await p.request('GET', url);
    expect(JSON.parse(res.text).results.bindings.map((b: { n: { value: string } }) => b.n.value)).toEqual(['Spike']);
    const named = `${ENDPOINT}?named-graph-uri=${encodeURIComponent('https://example.org/g1')}&query=${encodeURIComponent('SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }')}`;
    expect(JSON.parse((await p.request('GET', named)).text).results.bindings.map((b: { g: { value: string } }) => b.g.value)).toEqual(['https://example.org/g1']);
  });

  it('answers 400 without a query, with two queries, or with a syntax error; 415 and 405 for the wrong request', async () => {
    const none = await p.request('GET', ENDPOINT);
    expect(none.status).toBe(400);
    expect(none.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(none.text).toMatch(/exactly one "query"/);
    expect((await p.request('GET', `${ENDPOINT}?query=${encodeURIComponent(q)}&query=${encodeURIComponent(q)}`)).status).toBe(400);
    const broken = await p.request('GET', `${ENDPOINT}?query=${encodeURIComponent('SELEC * WHERE {}')}`);
    expect(broken.status).toBe(400);
    expect(broken.text).toMatch(/does not parse/);
    const wrongType = await p.request('POST', ENDPOINT, { rawBody: q, headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).toBe(415);
    expect((await p.request('PUT', ENDPOINT, { rawBody: q })).status).toBe(405);
    const update = await p.request('POST', ENDPOINT, { rawBody: 'INSERT DATA { <a:b> <c:d> <e:f> }', headers: { 'content-type': 'application/sparql-update' } });
    expect(update.status).toBe(415);
  });

  it.each([
    ['application/sparql-results+xml', 'srx', /<sparql xmlns/],
    ['text/csv', 'csv', /^s\r?\nhttps:\/\/example.org\/tom/],
    ['text/tab-separated-values', 'tsv', /^\?s\r?\n<https:\/\/example.org\/tom>/],
    ['application/json', 'json', /"bindings"/],
    ['application/sparql-results+json', 'srj', /"bindings"/],
  ])('serves SELECT results as %s (Accept) and .%s (suffix)', async (type, suffix, body) => {
    const byAccept = await p.request('GET', `${ENDPOINT}?query=${encodeURIComponent(q)}`, { headers: { accept: `${type}, */*;q=0.1` } });
    expect(byAccept.headers.get('content-type')).toMatch(new RegExp(`^${type.replace('+', '\\+')}`));
    expect(byAccept.text).toMatch(body);
    const bySuffix = await p.request('GET', `${ENDPOINT}.${suffix}?query=${encodeURIComponent(q)}`, { headers: { accept: 'text/turtle' } });
    expect(bySuffix.status).toBe(200);
    expect(bySuffix.text).toMatch(body);
  });

  it('serves CONSTRUCT as RDF, and answers 406 naming the formats that suit the query form', async () => {
    const construct = 'CONSTRUCT { ?s <https://example.org/label> ?n } WHERE { ?s <https://example.org/name> ?n }';
    const ttl = await p.request('GET', `${ENDPOINT}?query=${encodeURIComponent(construct)}`);
    expect(ttl.headers.get('content-type')).toMatch(/^text\/turtle/);
    expect(ttl.text).toMatch(/"Tom"/);
    const nt = await p.request('GET', `${ENDPOINT}.nt?query=${encodeURIComponent(construct)}`);
    expect(nt.text.trim().split('\n')).toHaveLength(3);
    const csv = await p.request('GET', `${ENDPOINT}?query=${encodeURIComponent(construct)}`, { headers: { accept: 'text/csv' } });
    expect(csv.status).toBe(406);
    expect(csv.text).toMatch(/text\/turtle/);
    const suffix = await p.request('GET', `${ENDPOINT}.csv?query=${encodeURIComponent(construct)}`);
    expect(suffix.status).toBe(406);
    const ask = await p.request('GET', `${ENDPOINT}.ttl?query=${encodeURIComponent('ASK { ?s ?p ?o }')}`);
    expect(ask.status).toBe(406);
    const askJson = await p.request('GET', `${ENDPOINT}?query=${encodeURIComponent('ASK { ?s ?p ?o }')}`);
    expect(JSON.parse(askJson.text)).toEqual({ head: {}, boolean: true });
  });
});

describe('snapshots', () => {
  it('keep answering from the old data after an import, report outOfSync, and swap on sync', async () => {
    await importFiles(p, alice, 'alice/zoo', [{ name: 'more.ttl', content: '<https://example.org/nibbles> <https://example.org/name> "Nibbles" .' }], {
      defaultGraphName: 'https://example.org/g3',
    });
    const before = await p.request('GET', '/datasets/alice/zoo/services/main');
    expect(before.body.outOfSync).toBe(true);
    const names = async () => (await select(p, undefined, ENDPOINT, 'SELECT ?n WHERE { ?x <https://example.org/name> ?n }')).map((r) => r.n);
    expect(await names()).not.toContain('Nibbles');
    const sync = await p.request('POST', '/datasets/alice/zoo/services/main', { token: alice, body: { sync: true } });
    expect(sync.status).toBe(200);
    const after = await waitForService(p, alice, 'alice/zoo', 'main');
    expect(after).toMatchObject({ status: 'running', outOfSync: false, numberOfLoadedStatements: 8 });
    expect(await names()).toContain('Nibbles');
    const again = await p.request('POST', '/datasets/alice/zoo/services/main', { token: alice, body: { sync: true } });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('Cannot sync a service that is not out of sync.');
  });

  it('refuse a sync beyond the capacity of the embedded store, pointing to the external engine', async () => {
    await p.createDataset('alice', 'huge', 'private', alice);
    const lines = Array.from({ length: 1200 }, (_, i) => `<https://e/s${i}> <https://e/p> "${i}" .`).join('\n');
    await importFiles(p, alice, 'alice/huge', [{ name: 'huge.nt', content: lines }]);
    const res = await p.request('POST', '/datasets/alice/huge/services', { token: alice, body: { name: 'too-big' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/external SPARQL engine/);
  });

  it('stop, start, rename and delete', async () => {
    await startService(p, alice, 'alice/zoo', { name: 'temp' });
    expect((await p.request('POST', '/datasets/alice/zoo/services/temp', { token: alice, body: { stop: true } })).body.status).toBe('stopped');
    const stopped = await p.request('GET', '/datasets/alice/zoo/services/temp/sparql?query=ASK%7B%7D');
    expect(stopped.status).toBe(503);
    await p.request('POST', '/datasets/alice/zoo/services/temp', { token: alice, body: { start: true } });
    expect((await waitForService(p, alice, 'alice/zoo', 'temp')).status).toBe('running');
    const renamed = await p.request('PATCH', '/datasets/alice/zoo/services/temp', { token: alice, body: { name: 'renamed' } });
    expect(renamed.body.name).toBe('renamed');
    expect((await p.request('GET', '/datasets/alice/zoo/services/renamed/sparql?query=ASK%7B%7D')).status).toBe(200);
    expect((await p.request('DELETE', '/datasets/alice/zoo/services/renamed', { token: alice })).status).toBe(204);
    expect((await p.request('GET', '/datasets/alice/zoo/services/renamed')).status).toBe(404);
    const noAction = await p.request('POST', '/datasets/alice/zoo/services/main', { token: alice, body: {} });
    expect(noAction.status).toBe(400);
  });
});

describe('reasoning', () => {
  it('RDFS: subclasses, subproperties, domains and ranges', async () => {
    await p.createDataset('alice', 'onto', 'private', alice);
    const onto = `@prefix ex: <https://example.org/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:Cat rdfs:subClassOf ex:Mammal . ex:Mammal rdfs:subClassOf ex:Animal .
ex:hasMother rdfs:subPropertyOf ex:hasParent . ex:owns rdfs:domain ex:Person ; rdfs:range ex:Thing .
ex:tom a ex:Cat ; ex:hasMother ex:molly . ex:ann ex:owns ex:tom .`;
    await importFiles(p, alice, 'alice/onto', [{ name: 'onto.ttl', content: onto }]);
    await startService(p, alice, 'alice/onto', { name: 'rdfs', type: 'jena', config: { reasonerType: 'RDFS' } });
    await startService(p, alice, 'alice/onto', { name: 'plain', type: 'jena' });
    const ask = async (service: string, pattern: string) =>
      JSON.parse((await p.request('GET', `/datasets/alice/onto/services/${service}/sparql?query=${encodeURIComponent(`PREFIX ex: <https://example.org/> ASK { ${pattern} }`)}`, { token: alice })).text).boolean;
    for (const pattern of ['ex:tom a ex:Animal', 'ex:tom ex:hasParent ex:molly', 'ex:ann a ex:Person', 'ex:tom a ex:Thing']) {
      expect(await ask('rdfs', pattern), pattern).toBe(true);
      expect(await ask('plain', pattern), pattern).toBe(false);
    }
    expect((await p.request('GET', '/datasets/alice/onto/services/rdfs', { token: alice })).body.config).toEqual({ reasonerType: 'RDFS' });
  });

  it('OWL: inverse, symmetric and transitive properties, sameAs and equivalent classes', async () => {
    const owl = `@prefix ex: <https://example.org/> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:parentOf owl:inverseOf ex:childOf . ex:knows a owl:SymmetricProperty . ex:ancestorOf a owl:TransitiveProperty .
ex:Human owl:equivalentClass ex:Person .
ex:anna ex:parentOf ex:ben ; ex:knows ex:carl ; ex:ancestorOf ex:ben . ex:ben ex:ancestorOf ex:dora .
ex:anna owl:sameAs ex:annie . ex:anna a ex:Human .`;
    await p.createDataset('alice', 'owl', 'private', alice);
    await importFiles(p, alice, 'alice/owl', [{ name: 'owl.ttl', content: owl }]);
    await startService(p, alice, 'alice/owl', { name: 'owl', type: 'jena', config: { reasoner: 'OWL' } });
    const ask = async (pattern: string) =>
      JSON.parse((await p.request('GET', `/datasets/alice/owl/services/owl/sparql?query=${encodeURIComponent(`PREFIX ex: <https://example.org/> PREFIX owl: <http://www.w3.org/2002/07/owl#> ASK { ${pattern} }`)}`, { token: alice })).text).boolean;
    for (const pattern of ['ex:ben ex:childOf ex:anna', 'ex:carl ex:knows ex:anna', 'ex:anna ex:ancestorOf ex:dora', 'ex:annie ex:knows ex:carl', 'ex:annie owl:sameAs ex:anna', 'ex:anna a ex:Person']) {
      expect(await ask(pattern), pattern).toBe(true);
    }
    expect(await ask('ex:dora ex:ancestorOf ex:anna')).toBe(false);
    const bad = await p.request('POST', '/datasets/alice/owl/services', { token: alice, body: { name: 'v', type: 'virtuoso', config: { reasonerType: 'OWL' } } });
    expect(bad.status).toBe(400);
  });
});

describe('limits', () => {
  it('answer a runaway query with 504 while other queries keep flowing', async () => {
    const runaway = 'SELECT (COUNT(*) AS ?n) WHERE { ' + Array.from({ length: 12 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ') + ' }';
    const [slow, fast] = await Promise.all([
      p.request('GET', `${ENDPOINT}?query=${encodeURIComponent(runaway)}`),
      (async () => {
        await new Promise((r) => setTimeout(r, 100));
        return p.request('GET', `${ENDPOINT}?query=${encodeURIComponent('ASK { ?s ?p ?o }')}`);
      })(),
    ]);
    expect(slow.status).toBe(504);
    expect(slow.text).toMatch(/longer than/);
    expect(fast.status).toBe(200);
    // The stopped thread is replaced: the service keeps answering.
    expect((await p.request('GET', `${ENDPOINT}?query=${encodeURIComponent('ASK { ?s ?p ?o }')}`)).status).toBe(200);
  });
});

describe('access', () => {
  it('follows the dataset: 404 for those who may not see it, writes need write access', async () => {
    await p.createDataset('alice', 'secret', 'private', alice);
    await importFiles(p, alice, 'alice/secret', [{ name: 's.nt', content: '<https://e/s> <https://e/p> "secret" .' }]);
    await startService(p, alice, 'alice/secret', { name: 'sparql' });
    const url = `/datasets/alice/secret/services/sparql/sparql?query=${encodeURIComponent('SELECT * { ?s ?p ?o }')}`;
    expect((await p.request('GET', url)).status).toBe(404);
    expect((await p.request('GET', url, { token: bob })).status).toBe(404);
    expect((await p.request('GET', url, { token: alice })).status).toBe(200);
    expect((await p.request('GET', '/datasets/alice/secret/services', { token: bob })).status).toBe(404);
    expect((await p.request('POST', '/datasets/alice/zoo/services', { token: bob, body: { name: 'bobs' } })).status).toBe(403);
    expect((await p.request('POST', '/datasets/alice/zoo/services/main', { body: { sync: true } })).status).toBe(401);
    expect((await p.request('DELETE', '/datasets/alice/zoo/services/main', { token: bob })).status).toBe(403);
  });
});

describe('the dataset endpoint', () => {
  const endpoint = '/datasets/alice/zoo/sparql';

  it('queries the current graphs', async () => {
    const rows = await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }');
    expect(rows[0]!.n).toBe('8');
  });

  it('takes SPARQL Update from writers as a new dataset version', async () => {
    const update = 'INSERT DATA { GRAPH <https://example.org/g1> { <https://example.org/felix> <https://example.org/name> "Felix" } }';
    const refused = await p.request('POST', endpoint, { token: bob, rawBody: update, headers: { 'content-type': 'application/sparql-update' } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await p.request('POST', endpoint, { rawBody: update, headers: { 'content-type': 'application/sparql-update' } })).status).toBe(401);
    const done = await p.request('POST', endpoint, { token: alice, rawBody: update, headers: { 'content-type': 'application/sparql-update' } });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ statements: 9, graphCount: 3 });
    expect((await p.request('GET', '/datasets/alice/zoo/services/main')).body.outOfSync).toBe(true);
    const form = await p.request('POST', endpoint, {
      token: alice,
      rawBody: `update=${encodeURIComponent('DELETE WHERE { GRAPH ?g { <https://example.org/felix> ?p ?o } }')}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(200);
    expect(form.body.statements).toBe(8);
    const graphs = await p.request('GET', '/datasets/alice/zoo/graphs');
    expect(graphs.body.find((g: { graphName: string }) => g.graphName === 'https://example.org/g1').numberOfStatements).toBe(4);
    const bad = await p.request('POST', endpoint, { token: alice, rawBody: 'INSERT DATA { oops', headers: { 'content-type': 'application/sparql-update' } });
    expect(bad.status).toBe(400);
    const viaGet = await p.request('GET', `${endpoint}?update=${encodeURIComponent(update)}`, { token: alice });
    expect(viaGet.status).toBe(400);
  });
});
