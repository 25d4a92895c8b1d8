/**
 * SPARQL Update on a dataset's endpoint, by the book: the default graph is fixed when the dataset
 * is made, LOAD goes through the platform's guarded fetch, graph state errors are 422 (400 is a
 * malformed request only), the protocol's using-graph-uri, concurrent updates all apply, and
 * SELECT * keeps the query's variable order. The W3C suites run in test/conformance/sparql.
 */
import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { select } from '../support/services.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let server: Server;
let docs: string;

const update = (dataset: string, text: string, token = alice, query = '') =>
  p.request('POST', `/datasets/alice/${dataset}/sparql${query}`, { token, rawBody: text, headers: { 'content-type': 'application/sparql-update' } });
const count = async (dataset: string, where = '?s ?p ?o') =>
  Number((await select(p, alice, `/datasets/alice/${dataset}/sparql`, `SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ${where} } }`))[0]!.n);

/** A request whose Host header is `host` (Node's fetch does not let a caller set it). */
function requestWithHost(host: string, method: string, path: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const target = new URL(p.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, method, path, headers: { ...headers, host, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('timed out')));
    req.end(body);
  });
}

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  server = createServer((req, res) => {
    if (req.url === '/cats.ttl') {
      res.setHeader('content-type', 'text/turtle');
      return res.end('@prefix ex: <https://example.org/> . ex:tom a ex:Cat ; ex:name "Tom" . ex:felix a ex:Cat .');
    }
    if (req.url === '/broken.ttl') {
      res.setHeader('content-type', 'text/turtle');
      return res.end('<https://example.org/a> <https://example.org/b> .');
    }
    res.statusCode = 404;
    res.end('not here');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  docs = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await p?.stop();
});

describe("the dataset's default graph", () => {
  it('is named when the dataset is made, whatever host later requests come through', async () => {
    const port = new URL(p.url).port;
    const made = await requestWithHost(`127.0.0.1:${port}`, 'POST', '/datasets/alice', JSON.stringify({ name: 'hosts' }), {
      authorization: `Bearer ${alice}`,
      'content-type': 'application/json',
    });
    expect(made.status).toBe(201);
    const defaultGraph = JSON.parse(made.text).defaultGraphName;
    expect(defaultGraph).toBe(`http://127.0.0.1:${port}/alice/hosts/graphs/default`);
    // Imported through one host (triples without a graph go to the default graph) …
    const job = await importFiles(p, alice, 'alice/hosts', [{ name: 'a.nt', content: '<https://example.org/a> <https://example.org/p> "imported" .\n' }]);
    expect(job.status).toBe('finished');
    // … updated through another: INSERT DATA lands in the same graph, DELETE WHERE sees the imported triple.
    const via = (text: string) =>
      requestWithHost(`localhost:${port}`, 'POST', '/datasets/alice/hosts/sparql', text, { authorization: `Bearer ${alice}`, 'content-type': 'application/sparql-update' });
    expect((await via('INSERT DATA { <https://example.org/b> <https://example.org/p> "inserted" }')).status).toBe(200);
    const graphs = (await p.request('GET', '/datasets/alice/hosts/graphs', { token: alice })).body;
    expect(graphs.map((g: { graphName: string }) => g.graphName)).toEqual([defaultGraph]);
    expect(graphs[0].numberOfStatements).toBe(2);
    expect((await via('DELETE WHERE { ?s <https://example.org/p> ?o }')).status).toBe(200);
    expect(await count('hosts')).toBe(0);
    // A rename keeps it: the name was fixed when the dataset was made.
    expect((await p.request('PATCH', '/datasets/alice/hosts', { token: alice, body: { name: 'hosts2' } })).body.defaultGraphName).toBe(defaultGraph);
  });
});

describe('SPARQL Update', () => {
  beforeAll(async () => {
    await p.createDataset('alice', 'upd', 'public', alice);
  });

  it('takes an update of only comments and prologue as the empty update it is', async () => {
    for (const text of ['# nothing to do', 'BASE <http://example/>\n# otherwise empty', 'PREFIX : <http://example/>']) {
      const res = await update('upd', text);
      expect(res.status, res.text).toBe(200);
    }
  });

  it('answers 422 for DROP / CLEAR of a graph that does not exist, 200 with SILENT, and 400 only for what does not parse', async () => {
    for (const text of ['DROP GRAPH <https://example.org/none>', 'CLEAR GRAPH <https://example.org/none>']) {
      const res = await update('upd', text);
      expect(res.status).toBe(422);
      expect(res.text).toMatch(/graph <https:\/\/example\.org\/none> does not exist/);
    }
    expect((await update('upd', 'DROP SILENT GRAPH <https://example.org/none>')).status).toBe(200);
    expect((await update('upd', 'CLEAR SILENT GRAPH <https://example.org/none>')).status).toBe(200);
    const malformed = await update('upd', 'DROP GRAPH');
    expect(malformed.status).toBe(400);
  });

  it('LOADs a document through the platform fetch, into a graph or the default graph', async () => {
    await p.createDataset('alice', 'loads', 'private', alice);
    const res = await update('loads', `LOAD <${docs}/cats.ttl> INTO GRAPH <https://example.org/cats> ; LOAD <${docs}/cats.ttl>`);
    expect(res.status, res.text).toBe(200);
    const graphs = (await p.request('GET', '/datasets/alice/loads/graphs', { token: alice })).body;
    expect(Object.fromEntries(graphs.map((g: { graphName: string; numberOfStatements: number }) => [g.graphName.replace(/^.*\//, ''), g.numberOfStatements]))).toEqual({
      cats: 3,
      default: 3,
    });
    const names = await select(p, alice, '/datasets/alice/loads/sparql', 'SELECT ?n WHERE { GRAPH <https://example.org/cats> { ?c <https://example.org/name> ?n } }');
    expect(names).toEqual([{ n: 'Tom' }]);
  });

  it('answers 422 naming the source when a LOAD fails, writes nothing, and ignores the failure with SILENT', async () => {
    await p.createDataset('alice', 'loadfail', 'private', alice);
    const before = await p.request('GET', '/datasets/alice/loadfail', { token: alice });
    for (const [source, why] of [
      [`${docs}/missing.ttl`, /404/],
      [`${docs}/broken.ttl`, /.+/],
      // The guard: the same destinations as URL imports (never cloud metadata).
      ['http://169.254.169.254/latest/meta-data/', /.+/],
    ] as const) {
      const res = await update('loadfail', `INSERT DATA { <https://example.org/x> <https://example.org/y> 1 } ; LOAD <${source}>`);
      expect(res.status, res.text).toBe(422);
      expect(res.text).toContain(`LOAD <${source}> failed`);
      expect(res.text).toMatch(why);
    }
    const after = await p.request('GET', '/datasets/alice/loadfail', { token: alice });
    expect(after.body.statements).toBe(before.body.statements);
    expect(after.body.graphCount).toBe(0);
    expect((await update('loadfail', `LOAD SILENT <${docs}/missing.ttl> ; INSERT DATA { <https://example.org/x> <https://example.org/y> 1 }`)).status).toBe(200);
    expect(after.body.statements + 1).toBe((await p.request('GET', '/datasets/alice/loadfail', { token: alice })).body.statements);
  });

  it("applies the protocol's using-graph-uri / using-named-graph-uri, and refuses them beside USING or WITH", async () => {
    await p.createDataset('alice', 'using', 'private', alice);
    const seed = await update('using', 'INSERT DATA { GRAPH <https://example.org/g1> { <https://example.org/a> <https://example.org/p> 1 } GRAPH <https://example.org/g2> { <https://example.org/b> <https://example.org/p> 2 } }');
    expect(seed.status).toBe(200);
    const copy = 'INSERT { GRAPH <https://example.org/out> { ?s <https://example.org/q> ?o } } WHERE { ?s <https://example.org/p> ?o }';
    const onlyG1 = await update('using', copy, alice, `?using-graph-uri=${encodeURIComponent('https://example.org/g1')}`);
    expect(onlyG1.status, onlyG1.text).toBe(200);
    const out = async () => (await select(p, alice, '/datasets/alice/using/sparql', 'SELECT ?s WHERE { GRAPH <https://example.org/out> { ?s ?p ?o } } ORDER BY ?s')).map((r) => r.s);
    expect(await out()).toEqual(['https://example.org/a']);
    const named = await update(
      'using',
      'INSERT { GRAPH <https://example.org/out> { ?s <https://example.org/q> ?o } } WHERE { GRAPH ?g { ?s <https://example.org/p> ?o } }',
      alice,
      `?using-named-graph-uri=${encodeURIComponent('https://example.org/g2')}`,
    );
    expect(named.status).toBe(200);
    expect(await out()).toEqual(['https://example.org/a', 'https://example.org/b']);
    const both = await update('using', `WITH <https://example.org/g1> ${copy.replace('INSERT', 'INSERT')}`, alice, `?using-graph-uri=${encodeURIComponent('https://example.org/g2')}`);
    expect(both.status).toBe(400);
    expect(both.text).toMatch(/USING or WITH/);
    const notIri = await update('using', copy, alice, '?using-graph-uri=not%20an%20iri');
    expect(notIri.status).toBe(400);
  });

  it('queues concurrent updates of one dataset: all of them apply', async () => {
    await p.createDataset('alice', 'busy', 'private', alice);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => update('busy', `INSERT DATA { <https://example.org/s${i}> <https://example.org/p> ${i} }`)),
    );
    expect(results.map((r) => `${r.status} ${r.status === 200 ? '' : r.text}`)).toEqual(Array(6).fill('200 '));
    expect(await count('busy')).toBe(6);
  });

  it('needs write access: 401 without a token, 403 for a reader, 404 for a dataset one may not see', async () => {
    const text = 'INSERT DATA { <https://example.org/x> <https://example.org/y> 1 }';
    expect((await update('upd', text, '')).status).toBe(401);
    expect((await update('upd', text, bob)).status).toBe(403);
    expect((await update('loads', text, bob)).status).toBe(404);
    expect((await update('loads', `LOAD <${docs}/cats.ttl>`, bob)).status).toBe(404);
  });
});

describe('SELECT *', () => {
  it("keeps the query's variable order (first appearance), also for VALUES and BIND", async () => {
    const res = await p.request('GET', `/datasets/alice/upd/sparql?query=${encodeURIComponent('SELECT * WHERE { BIND(1 AS ?zebra) BIND(2 AS ?apple) VALUES ?mango { 3 } }')}`, {
      token: alice,
      headers: { accept: 'application/sparql-results+json' },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).head.vars).toEqual(['zebra', 'apple', 'mango']);
    const csv = await p.request('GET', `/datasets/alice/upd/sparql?query=${encodeURIComponent('SELECT DISTINCT * { VALUES (?b ?a) { (1 2) } }')}`, { token: alice, headers: { accept: 'text/csv' } });
    expect(csv.text.split(/\r?\n/)[0]).toBe('b,a');
  });

  it('keeps that order in saved queries too', async () => {
    const dataset = (await p.request('GET', '/datasets/alice/upd', { token: alice })).body.id;
    const created = await p.request('POST', '/queries/alice', {
      token: alice,
      body: { name: 'star', accessLevel: 'private', dataset, serviceConfig: { type: 'speedy' }, requestConfig: { payload: { query: 'SELECT * WHERE { BIND(1 AS ?zebra) BIND(2 AS ?apple) }' } } },
    });
    expect(created.status, created.text).toBe(201);
    const run = await p.request('GET', '/queries/alice/star/run', { token: alice, headers: { accept: 'application/sparql-results+json' } });
    expect(run.status, run.text).toBe(200);
    expect(JSON.parse(run.text).head.vars).toEqual(['zebra', 'apple']);
  });
});

describe('extension functions the engine does not know', () => {
  it('are evaluation errors: FILTER drops the row, BIND leaves the variable unbound; XSD casts still work', async () => {
    const ask = async (query: string) => {
      const res = await p.request('GET', `/datasets/alice/upd/sparql?query=${encodeURIComponent(query)}`, { token: alice, headers: { accept: 'application/sparql-results+json' } });
      expect(res.status, res.text).toBe(200);
      return JSON.parse(res.text).results.bindings as Record<string, { value: string }>[];
    };
    const filtered = await ask('SELECT ?x WHERE { VALUES ?x { 1 2 } FILTER(<http://example.org/fn#odd>(?x) || ?x = 2) }');
    expect(filtered.map((b) => b.x!.value)).toEqual(['2']);
    const bound = await ask('SELECT ?x ?y WHERE { VALUES ?x { 1 } BIND(<http://example.org/fn#double>(?x) AS ?y) }');
    expect(bound).toEqual([{ x: expect.objectContaining({ value: '1' }) }]);
    const cast = await ask('SELECT ?y WHERE { BIND(<http://www.w3.org/2001/XMLSchema#integer>("7") AS ?y) }');
    expect(cast[0]!.y!.value).toBe('7');
  });
});
