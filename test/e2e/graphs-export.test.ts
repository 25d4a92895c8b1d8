/** Graphs, export in every serialization, and describe, through HTTP. */
import { gunzipSync } from 'node:zlib';
import { Parser } from 'n3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';
import { graphsOf, importFiles, lines } from '../support/imports.js';

let p: TestPlatform;
let alice: string;

const G1 = 'https://example.org/graphs/one';
const G2 = 'https://example.org/graphs/two';
const TRIG = `@prefix ex: <https://example.org/> .
<${G1}> { ex:a ex:name "A" ; ex:knows ex:b . ex:a ex:address [ ex:city "Utrecht" ; ex:geo [ ex:lat "52.09" ] ] . }
<${G2}> { ex:b ex:name "B"@en ; ex:age "42"^^<http://www.w3.org/2001/XMLSchema#integer> . ex:c ex:knows ex:a . ex:a ex:name "A" . }
`;

/** Parses any N3-family text into sorted quad strings with blank nodes renamed in order of appearance. */
function canonical(text: string, format: string): string[] {
  const quads = new Parser({ format }).parse(text);
  const names = new Map<string, string>();
  const term = (t: { termType: string; value: string; id?: string }) =>
    t.termType === 'BlankNode' ? (names.get(t.value) ?? names.set(t.value, `_:b${names.size}`).get(t.value)!) : (t as { id?: string }).id ?? t.value;
  return quads.map((q) => [q.subject, q.predicate, q.object, q.graph].map((x) => term(x as never)).join(' ')).sort();
}

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  await p.createDataset('alice', 'data', 'public', alice);
  await p.request('PATCH', '/datasets/alice/data/prefixes', { token: alice, body: [{ prefixLabel: 'ex', iri: 'https://example.org/' }] });
  const job = await importFiles(p, alice, 'alice/data', [{ name: 'data.trig', content: TRIG }]);
  expect(job.status, job.error?.message).toBe('finished');
});
afterAll(async () => {
  await p?.stop();
});

describe('graphs', () => {
  it('are listed with TriplyDB fields and paginated with Link', async () => {
    const all = await graphsOf(p, undefined, 'alice/data');
    expect(all.map((g) => [g.graphName, g.numberOfStatements])).toEqual([
      [G1, 6],
      [G2, 4],
    ]);
    const first = await p.request('GET', '/datasets/alice/data/graphs?limit=1');
    expect(first.body).toHaveLength(1);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toMatch(new RegExp(`^${p.url}/datasets/alice/data/graphs\\?limit=1&after=`));
    const second = await p.request('GET', next!.slice(p.url.length));
    expect(second.body[0].graphName).toBe(G2);
    expect(second.headers.get('link')).toBeNull();
  });

  it('are read, renamed and deleted by id', async () => {
    await p.createDataset('alice', 'scratch', 'private', alice);
    await importFiles(p, alice, 'alice/scratch', [{ name: 'd.trig', content: TRIG }]);
    const [one, two] = await graphsOf(p, alice, 'alice/scratch');
    expect((await p.request('GET', `/datasets/alice/scratch/graphs/${one.id}`, { token: alice })).body).toMatchObject({ graphName: G1 });
    const clash = await p.request('PATCH', `/datasets/alice/scratch/graphs/${one.id}`, { token: alice, body: { graphName: G2 } });
    expect(clash.status).toBe(409);
    const bad = await p.request('PATCH', `/datasets/alice/scratch/graphs/${one.id}`, { token: alice, body: { graphName: 'not an iri' } });
    expect(bad.status).toBe(400);
    const renamed = await p.request('PATCH', `/datasets/alice/scratch/graphs/${one.id}`, { token: alice, body: { graphName: 'https://e/renamed' } });
    expect(renamed.body).toMatchObject({ id: one.id, graphName: 'https://e/renamed', numberOfStatements: 6 });
    expect((await p.request('DELETE', `/datasets/alice/scratch/graphs/${two.id}`, { token: alice })).status).toBe(204);
    expect((await p.request('GET', `/datasets/alice/scratch/graphs/${two.id}`, { token: alice })).status).toBe(404);
    expect((await p.request('GET', '/datasets/alice/scratch', { token: alice })).body).toMatchObject({ graphCount: 1, statements: 6 });
    expect((await p.request('DELETE', '/datasets/alice/scratch/graphs', { token: alice })).status).toBe(204);
    expect((await p.request('GET', '/datasets/alice/scratch', { token: alice })).body).toMatchObject({ graphCount: 0, statements: 0 });
  });

  it('are changed only with write access', async () => {
    const bob = await p.createUser('bob');
    const [one] = await graphsOf(p, undefined, 'alice/data');
    expect((await p.request('PATCH', `/datasets/alice/data/graphs/${one.id}`, { token: bob, body: { graphName: 'https://x/' } })).status).toBe(403);
    expect((await p.request('DELETE', `/datasets/alice/data/graphs/${one.id}`)).status).toBe(401);
  });
});

describe('download', () => {
  const expected = canonical(TRIG, 'TriG');
  const triples = [...new Set(expected.map((q) => q.split(' ').slice(0, 3).join(' ')))];

  it.each([
    ['download.trig', 'application/trig', 'TriG', true],
    ['download.nq', 'application/n-quads', 'N-Quads', true],
    ['download.ttl', 'text/turtle', 'Turtle', false],
    ['download.nt', 'application/n-triples', 'N-Triples', false],
  ])('%s gives %s with every statement', async (file, type, format, quads) => {
    const res = await p.request('GET', `/datasets/alice/data/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(new RegExp(`^${type}`));
    const got = canonical(res.text, format as string);
    // Triple formats merge the graphs (the same triple in two graphs may appear twice).
    if (quads) expect(got).toEqual(expected);
    else expect([...new Set(got.map((q) => q.split(' ').slice(0, 3).join(' ')))].sort()).toEqual(triples.sort());
  });

  it('uses the Accept header when the path has no extension, with q-values', async () => {
    const res = await p.request('GET', '/datasets/alice/data/download', { headers: { accept: 'text/turtle;q=0.5, application/n-quads' } });
    expect(res.headers.get('content-type')).toMatch(/^application\/n-quads/);
    const turtle = await p.request('GET', '/datasets/alice/data/download', { headers: { accept: 'text/turtle' } });
    expect(turtle.text).toMatch(/@prefix ex: <https:\/\/example\.org\/>/);
  });

  it('answers 406 listing the offered formats for an unsupported Accept', async () => {
    const res = await p.request('GET', '/datasets/alice/data/download', { headers: { accept: 'application/pdf' } });
    expect(res.status).toBe(406);
    expect(res.body.message).toMatch(/application\/trig.*application\/n-triples.*text\/turtle/);
  });

  it('writes JSON-LD that parses back to the same quads', async () => {
    const res = await p.request('GET', '/datasets/alice/data/download.jsonld');
    expect(res.headers.get('content-type')).toMatch(/^application\/ld\+json/);
    const doc = JSON.parse(res.text);
    const { parse } = (await import('oxigraph')) as unknown as { parse: (s: string, o: { format: string }) => { toString(): string }[] };
    const nq = parse(JSON.stringify(doc), { format: 'application/ld+json' }).map((q) => `${q.toString()} .`).join('\n');
    expect(canonical(nq, 'N-Quads')).toEqual(expected);
  });

  it('sends .gz as raw gzip bytes without Content-Encoding', async () => {
    const res = await fetch(`${p.url}/datasets/alice/data/download.nt.gz`);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(res.headers.get('content-type')).toBe('application/gzip');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(lines(gunzipSync(bytes).toString())).toHaveLength(10);
  });

  it('exports one graph with ?graph=, 404 for an unknown graph', async () => {
    const one = await p.request('GET', `/datasets/alice/data/download.nq?graph=${encodeURIComponent(G2)}`);
    expect(lines(one.text)).toHaveLength(4);
    expect(one.text).not.toContain(G1);
    expect((await p.request('GET', `/datasets/alice/data/download.nq?graph=${encodeURIComponent('https://nope/')}`)).status).toBe(404);
  });

  it('follows dataset access', async () => {
    await p.createDataset('alice', 'hidden', 'private', alice);
    expect((await p.request('GET', '/datasets/alice/hidden/download.nt')).status).toBe(404);
    expect((await p.request('GET', '/datasets/alice/hidden/download.nt', { token: alice })).status).toBe(200);
  });
});

describe('describe.nt', () => {
  it('gives outgoing statements, blank nodes to their end, and incoming statements', async () => {
    const res = await p.request('GET', `/datasets/alice/data/describe.nt?resource=${encodeURIComponent('https://example.org/a')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/n-triples/);
    const got = lines(res.text);
    expect(got.filter((l) => l.startsWith('<https://example.org/a>'))).toHaveLength(3); // name (the same in both graphs), knows, address
    expect(got.some((l) => l.includes('"Utrecht"'))).toBe(true);
    expect(got.some((l) => l.includes('"52.09"'))).toBe(true);
    expect(got).toContain('<https://example.org/c> <https://example.org/knows> <https://example.org/a> .');
    expect(got.some((l) => l.includes('"B"@en'))).toBe(false);
  });

  it('needs a resource IRI', async () => {
    expect((await p.request('GET', '/datasets/alice/data/describe.nt?resource=')).status).toBe(400);
    expect((await p.request('GET', '/datasets/alice/data/describe.nt?resource=relative')).status).toBe(400);
  });
});
