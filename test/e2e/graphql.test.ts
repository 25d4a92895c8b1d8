/**
 * GraphQL over a dataset (issue 16), through HTTP against the embedded platform: the schema made
 * from the SHACL shapes of test/fixtures/graphql/library.trig (books, authors, places), its naming,
 * cardinality, filter, paging and language rules, introspection, the status route, limits,
 * batching (one SPARQL query per level) and access levels.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { startService, waitForService } from '../support/services.js';

const LIBRARY = readFileSync(new URL('../fixtures/graphql/library.trig', import.meta.url), 'utf8');
const ID = 'https://example.org/id/';
const EP = '/datasets/alice/library/graphql';

let p: TestPlatform;
let alice: string;
let bob: string;

interface GqlAnswer {
  status: number;
  contentType: string;
  body: any;
}

async function gql(query: string, options: { variables?: Record<string, unknown>; token?: string; endpoint?: string; accept?: string; operationName?: string } = {}): Promise<GqlAnswer> {
  const headers: Record<string, string> = {};
  if (options.accept) headers.accept = options.accept;
  const res = await p.request('POST', options.endpoint ?? EP, {
    token: options.token,
    headers,
    body: { query, variables: options.variables, operationName: options.operationName },
  });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: JSON.parse(res.text) };
}

/** data of a query that must succeed. */
async function data(query: string, variables?: Record<string, unknown>): Promise<any> {
  const res = await gql(query, { variables });
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  expect(res.status).toBe(200);
  return res.body.data;
}

const ids = (connection: { edges: { node: { id: string } }[] }) => connection.edges.map((e) => e.node.id.replace(ID, ''));

beforeAll(async () => {
  p = await TestPlatform.start({ settings: { sparql: { queryTimeoutMs: 5000, maxStatements: 100_000, replicas: 1 } } });
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  await p.createDataset('alice', 'library', 'public', alice);
  const job = await importFiles(p, alice, 'alice/library', [{ name: 'library.trig', content: LIBRARY }]);
  expect(job.status).toBe('finished');
});
afterAll(async () => {
  await p?.stop();
});

describe('the schema from SHACL', () => {
  it('introspection shows a type per node shape, renamed and camelCased names, and the incumbent cardinality rules', async () => {
    const d = await data(`{
      __schema { queryType { fields { name } } types { name kind } }
      book: __type(name: "Book") { interfaces { name } fields { name args { name } type { kind name ofType { kind name ofType { kind name } } } } }
      author: __type(name: "Author") { fields { name type { kind name ofType { kind name ofType { kind name } } } } }
      place: __type(name: "Place") { fields { name type { kind name ofType { kind name ofType { kind name } } } } }
    }`);
    const typeNames = d.__schema.types.map((t: { name: string }) => t.name);
    expect(typeNames).toEqual(expect.arrayContaining(['Book', 'Author', 'Place', 'Node', 'ExternalIri', 'RdfsLangString', 'XsdString', 'XsdDate', 'XsdInteger', 'BookConnection', 'PageInfo']));
    // A renamed type keeps only its new name; colliding types are left out.
    expect(typeNames).not.toContain('Person');
    expect(typeNames).not.toContain('Series');
    expect(d.__schema.queryType.fields.map((f: { name: string }) => f.name).sort()).toEqual(['AuthorConnection', 'BookConnection', 'PlaceConnection', 'node']);
    expect(d.book.interfaces).toEqual([{ name: 'Node' }]);
    const shape = (t: any): string => (t.kind === 'NON_NULL' ? `${shape(t.ofType)}!` : t.kind === 'LIST' ? `[${shape(t.ofType)}]` : t.name);
    const fields = Object.fromEntries(d.book.fields.map((f: any) => [f.name, shape(f.type)]));
    expect(fields).toEqual({
      id: 'ID!',
      title: '[RdfsLangString]!', // a list by default: non-null list, nullable items
      isbn: 'XsdString!', // sh:minCount 1 and sh:maxCount 1
      published: 'XsdDate', // sh:maxCount 1: one value, nullable
      pages: 'XsdInteger',
      subTitle: 'XsdString', // ex:sub-title, kebab-case to camelCase
      summary: 'RdfsLangString', // sh:uniqueLang true: one value
      keyword: '[XsdString]!',
      author: '[Author]!', // sh:class of a shape's target class: its type
      genre: '[ExternalIri]!', // sh:class without a shape
      votes: 'XsdInteger', // renamed by graphqlName on the property shape
    });
    expect(d.book.fields.find((f: any) => f.name === 'title').args.map((a: any) => a.name)).toEqual(['language']);
    const author = Object.fromEntries(d.author.fields.map((f: any) => [f.name, shape(f.type)]));
    expect(author).toEqual({ id: 'ID!', name: '[RdfsLangString]!', born: 'XsdDate', birthPlace: 'Place' });
    const place = Object.fromEntries(d.place.fields.map((f: any) => [f.name, shape(f.type)]));
    expect(place).toEqual({ id: 'ID!', name: 'RdfsLangString!', population: 'XsdInteger', bornHere: '[Author]!' });
  });

  it('a dataset without shapes (or without graphs) has a schema with node(id:) only, and no errors', async () => {
    await p.createDataset('alice', 'shapeless', 'public', alice);
    const empty = await gql('{ __schema { queryType { fields { name } } } }', { endpoint: '/datasets/alice/shapeless/graphql' });
    expect(empty.body.data.__schema.queryType.fields).toEqual([{ name: 'node' }]);
    expect((await p.request('GET', '/datasets/alice/shapeless/graphql/status')).body).toEqual({ errors: null });
    const data = '<https://example.org/graphs/x> { <https://example.org/id/x> a <https://example.org/def/Thing> . }';
    expect((await importFiles(p, alice, 'alice/shapeless', [{ name: 'x.trig', content: data }])).status).toBe('finished');
    const res = await gql('{ node(id: "https://example.org/id/x") { id } }', { endpoint: '/datasets/alice/shapeless/graphql' });
    expect(res.body).toMatchObject({ data: { node: null }, extensions: { sparqlQueries: 1 } });
  });

  it('reports every skipped shape and name, and why, on /graphql/status', async () => {
    const res = await p.request('GET', `${EP}/status`);
    expect(res.status).toBe(200);
    const errors: string[] = res.body.errors;
    expect(errors).toHaveLength(3);
    expect(errors.find((e) => e.includes('"Series"'))).toMatch(/<https:\/\/example\.org\/def\/Series>.*<https:\/\/other\.example\/vocab#Series>/);
    expect(errors.find((e) => e.includes('"code"'))).toMatch(/<https:\/\/example\.org\/def\/code>.*<https:\/\/other\.example\/vocab#code>.*"Book"/);
    expect(errors.find((e) => e.includes('2ndEdition'))).toMatch(/not a legal GraphQL name/);
  });
});

describe('queries', () => {
  it('reads nested levels with one SPARQL query per level, never one per node', async () => {
    const res = await gql(`{
      BookConnection {
        edges { cursor node { id isbn published pages subTitle votes keyword genre { id }
          title { value language }
          author { id born name(language: "en") { value } birthPlace { id population name(language: "en") { value } } } } }
      }
    }`);
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/json/);
    const books = res.body.data.BookConnection.edges.map((e: any) => e.node);
    expect(books.map((b: any) => b.id.replace(ID, ''))).toEqual(['aeneid', 'companion', 'iliad', 'odyssey']);
    const odyssey = books[3];
    expect(odyssey).toMatchObject({
      isbn: '978-0140268867',
      published: '1996-11-01',
      pages: '541',
      subTitle: 'The journey home',
      votes: '12',
      keyword: ['epic', 'sea'],
      genre: [{ id: 'https://example.org/def/epic' }],
      author: [{ id: `${ID}homer`, born: null, name: [{ value: 'Homer' }], birthPlace: { id: `${ID}smyrna`, population: null, name: { value: 'Smyrna' } } }],
    });
    expect(odyssey.title).toEqual([
      { value: 'Odyssey', language: 'en' },
      { value: 'Ὀδύσσεια', language: 'grc' },
      { value: 'Odyssee', language: 'nl' },
    ]);
    // Optional fields without a value are null; lists without values are empty.
    expect(books[0]).toMatchObject({ published: null, subTitle: null, keyword: [], votes: null });
    expect(books[1].author.map((a: any) => a.name[0].value)).toEqual(['Homer', 'Virgil']);
    expect(books[1].author[1]).toMatchObject({ born: '0019-09-21', birthPlace: { population: '49000', name: { value: 'Mantua' } } });
    // The page, the books' fields, the authors' fields, the places' fields.
    expect(res.body.extensions).toMatchObject({ sparqlQueries: 4, service: null, outOfSync: false });
  });
});

describe('paging (Relay cursor connections)', () => {
  it('pages with first and after, and says whether more pages follow', async () => {
    const q = `query Page($after: String) { BookConnection(first: 3, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const one = (await data(q)).BookConnection;
    expect(ids(one)).toEqual(['aeneid', 'companion', 'iliad']);
    expect(one.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, startCursor: one.edges[0].cursor, endCursor: one.edges[2].cursor });
    const two = (await data(q, { after: one.pageInfo.endCursor })).BookConnection;
    expect(ids(two)).toEqual(['odyssey']);
    expect(two.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const after = (await data(q, { after: two.pageInfo.endCursor })).BookConnection;
    expect(after.edges).toEqual([]);
    expect(after.pageInfo).toMatchObject({ hasNextPage: false, startCursor: null, endCursor: null });
  });

  it('refuses a cursor it did not make and a page size out of range', async () => {
    const bad = await gql(`{ BookConnection(after: "bm9wZQ") { edges { node { id } } } }`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/after: .* is not a cursor/);
    expect(bad.body.errors[0].message).toBe(bad.body.message);
    for (const first of [-1, 1001]) {
      const res = await gql(`{ BookConnection(first: ${first}) { edges { node { id } } } }`);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/first: give a number of nodes from 0 to 1000/);
    }
  });
});

describe('filters', () => {
  const filtered = async (filter: string, type = 'Book') => ids((await data(`{ ${type}Connection(filter: ${filter}) { edges { node { id } } } }`))[`${type}Connection`]);

  it('by id, and by scalar fields with eq, in, notEq and notIn', async () => {
    expect(await filtered(`{ id: "${ID}iliad" }`)).toEqual(['iliad']);
    expect(await filtered(`{ isbn: { eq: "978-0140449327" } }`)).toEqual(['aeneid']);
    expect(await filtered(`{ pages: { in: [541, 683] } }`)).toEqual(['iliad', 'odyssey']);
    expect(await filtered(`{ published: { eq: "1990-01-01" } }`)).toEqual(['iliad']);
    expect(await filtered(`{ keyword: { eq: "epic" } }`)).toEqual(['iliad', 'odyssey']);
    expect(await filtered(`{ keyword: { notEq: "war" } }`)).toEqual(['aeneid', 'companion', 'odyssey']);
    expect(await filtered(`{ keyword: { notIn: ["war", "sea"] } }`)).toEqual(['aeneid', 'companion']);
    expect(await filtered(`{ pages: { in: [] } }`)).toEqual([]);
  });

  it('language strings by value and language, or by value in any language', async () => {
    expect(await filtered(`{ title: { eq: { value: "Odyssey", language: "en" } } }`)).toEqual(['odyssey']);
    expect(await filtered(`{ title: { eq: { value: "Odyssey", language: "nl" } } }`)).toEqual([]);
    expect(await filtered(`{ title: { eq: { value: "Ilias" } } }`)).toEqual(['iliad']);
    expect(await filtered(`{ title: { in: [{ value: "Ilias", language: "nl" }, { value: "Aeneid", language: "en" }] } }`)).toEqual(['aeneid', 'iliad']);
  });

  it('nested through object fields, and several keys with AND', async () => {
    expect(await filtered(`{ author: { name: { eq: { value: "Virgil", language: "en" } } } }`)).toEqual(['aeneid', 'companion']);
    expect(await filtered(`{ author: { birthPlace: { id: "${ID}smyrna" } } }`)).toEqual(['companion', 'iliad', 'odyssey']);
    expect(await filtered(`{ author: { birthPlace: { population: { eq: 49000 } } } }`)).toEqual(['aeneid', 'companion']);
    expect(await filtered(`{ genre: { id: "https://example.org/def/epic" } }`)).toEqual(['aeneid', 'iliad', 'odyssey']);
    expect(await filtered(`{ genre: { id: "https://example.org/def/epic" }, author: { id: "${ID}homer" } }`)).toEqual(['iliad', 'odyssey']);
    expect(await filtered(`{ birthPlace: { id: "${ID}mantua" } }`, 'Author')).toEqual(['virgil']);
  });

  it('OR and NOT (beyond the incumbent)', async () => {
    expect(await filtered(`{ OR: [{ pages: { eq: 442 } }, { votes: { eq: 12 } }] }`)).toEqual(['aeneid', 'odyssey']);
    expect(await filtered(`{ NOT: { author: { id: "${ID}homer" } } }`)).toEqual(['aeneid']);
    expect(await filtered(`{ NOT: { OR: [{ pages: { eq: 442 } }, { published: { eq: "1990-01-01" } }] }, keyword: { eq: "epic" } }`)).toEqual(['odyssey']);
  });

  it('refuses a filter on a field the type does not have, a bad IRI and a bad language tag', async () => {
    const unknown = await gql(`{ BookConnection(filter: { colour: { eq: "red" } }) { edges { node { id } } } }`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].message).toMatch(/colour/);
    const iri = await gql(`{ BookConnection(filter: { id: "not an iri" }) { edges { node { id } } } }`);
    expect(iri.status).toBe(400);
    expect(iri.body.message).toMatch(/is not an absolute IRI/);
    const injection = await gql(`{ BookConnection(filter: { isbn: { eq: "x\\" } } UNION { ?s ?p ?o" } }) { edges { node { id } } } }`);
    expect(injection.status).toBe(200);
    expect(injection.body.data.BookConnection.edges).toEqual([]);
    const lang = await gql(`{ BookConnection(filter: { title: { eq: { value: "x", language: "e n" } } }) { edges { node { id } } } }`);
    expect(lang.status).toBe(400);
    expect(lang.body.message).toMatch(/not a language tag/);
  });
});

describe('orderBy (beyond the incumbent)', () => {
  it('orders by scalar fields, either direction, nodes without a value first, then by IRI', async () => {
    const order = async (orderBy: string) => ids((await data(`{ BookConnection(orderBy: ${orderBy}) { edges { node { id } } } }`)).BookConnection);
    expect(await order(`[{ field: pages, direction: DESC }]`)).toEqual(['iliad', 'odyssey', 'aeneid', 'companion']);
    expect(await order(`[{ field: published }]`)).toEqual(['aeneid', 'iliad', 'odyssey', 'companion']);
    expect(await order(`[{ field: id, direction: DESC }]`)).toEqual(['odyssey', 'iliad', 'companion', 'aeneid']);
    const paged = await data(`{ BookConnection(first: 2, orderBy: [{ field: pages, direction: DESC }]) { edges { node { id } } pageInfo { endCursor } } }`);
    const next = await data(`query($a: String) { BookConnection(first: 2, after: $a, orderBy: [{ field: pages, direction: DESC }]) { edges { node { id } } } }`, { a: paged.BookConnection.pageInfo.endCursor });
    expect([...ids(paged.BookConnection), ...ids(next.BookConnection)]).toEqual(['iliad', 'odyssey', 'aeneid', 'companion']);
    const bad = await gql(`{ BookConnection(orderBy: [{ field: title }]) { edges { node { id } } } }`);
    expect(bad.status).toBe(400);
  });
});

describe('languages', () => {
  it('takes Accept-Language syntax, best first, and gives one value for sh:uniqueLang', async () => {
    const d = await data(`{
      BookConnection(filter: { id: "${ID}odyssey" }) { edges { node {
        nlEn: title(language: "nl, en;q=.5") { value language }
        enOnly: title(language: "en") { value }
        any: title(language: "*") { value }
        regional: title(language: "en-GB") { value }
        summary { value language }
        enSummary: summary(language: "fr, en;q=0.8") { value language }
        noSummary: summary(language: "fr") { value }
      } } }
      PlaceConnection(filter: { id: "${ID}mantua" }) { edges { node { it: name(language: "it, en;q=0.1") { value } en: name(language: "de, en") { value } } } }
    }`);
    const odyssey = d.BookConnection.edges[0].node;
    expect(odyssey.nlEn).toEqual([
      { value: 'Odyssee', language: 'nl' },
      { value: 'Odyssey', language: 'en' },
    ]);
    expect(odyssey.enOnly).toEqual([{ value: 'Odyssey' }]);
    expect(odyssey.any).toHaveLength(3);
    expect(odyssey.regional).toEqual([]);
    expect(odyssey.summary).toEqual({ value: 'A long journey home', language: 'en' });
    expect(odyssey.enSummary).toEqual({ value: 'A long journey home', language: 'en' });
    expect(odyssey.noSummary).toBeNull();
    expect(d.PlaceConnection.edges[0].node).toEqual({ it: { value: 'Mantova' }, en: { value: 'Mantua' } });
    // A level that asks for some languages reads only those; another read of the same values in
    // the same request (here through node(id:)) still gets every language.
    const mixed = await data(`{
      BookConnection(filter: { id: "${ID}odyssey" }) { edges { node { title(language: "nl, grc;q=0.2") { value } } } }
      node(id: "${ID}odyssey") { ... on Book { title { value } en: title(language: "en") { value } } }
    }`);
    expect(mixed.BookConnection.edges[0].node.title).toEqual([{ value: 'Odyssee' }, { value: 'Ὀδύσσεια' }]);
    expect(mixed.node.title).toHaveLength(3);
    expect(mixed.node.en).toEqual([{ value: 'Odyssey' }]);
    const bad = await gql(`{ BookConnection { edges { node { title(language: "en;q=2") { value } } } } }`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/language: "q=2" is not a weight/);
  });
});

describe('node(id:) (Relay object identification)', () => {
  it('finds a resource by IRI with its type, and null for one of no type', async () => {
    const d = await data(`{
      homer: node(id: "${ID}homer") { __typename id ... on Author { name(language: "nl") { value } } }
      place: node(id: "${ID}smyrna") { __typename ... on Place { name(language: "tr") { value } } }
      nothing: node(id: "${ID}nobody") { id }
    }`);
    expect(d.homer).toEqual({ __typename: 'Author', id: `${ID}homer`, name: [{ value: 'Homerus' }] });
    expect(d.place).toEqual({ __typename: 'Place', name: { value: 'Izmir' } });
    expect(d.nothing).toBeNull();
  });
});

describe('GraphQL over HTTP', () => {
  it('takes GET with query, variables and operationName, queries only', async () => {
    const query = 'query A($id: ID!) { node(id: $id) { id } } query B { BookConnection(first: 1) { edges { node { id } } } }';
    const params = new URLSearchParams({ query, variables: JSON.stringify({ id: `${ID}iliad` }), operationName: 'A' });
    const res = await p.request('GET', `${EP}?${params}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ node: { id: `${ID}iliad` } });
    const noOp = await p.request('GET', `${EP}?${new URLSearchParams({ query })}`);
    expect(noOp.status).toBe(400);
    expect(noOp.body.errors[0].message).toMatch(/operationName/);
    const badVars = await p.request('GET', `${EP}?${new URLSearchParams({ query, variables: '{nope' })}`);
    expect(badVars.status).toBe(400);
    expect(badVars.body.message).toMatch(/variables: give the variables as a JSON object/);
    const mutation = await p.request('GET', `${EP}?${new URLSearchParams({ query: 'mutation { x }' })}`);
    expect(mutation.status).toBe(400);
    const none = await p.request('GET', EP);
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/query: give the GraphQL document/);
  });

  it('answers application/graphql-response+json to clients that ask for it', async () => {
    const res = await gql('{ BookConnection(first: 1) { edges { node { id } } } }', { accept: 'application/graphql-response+json, application/json;q=0.9' });
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/graphql-response\+json/);
    const bad = await gql('{ BookConnection { nope } }', { accept: 'application/graphql-response+json' });
    expect(bad.status).toBe(400);
    expect(bad.contentType).toMatch(/^application\/graphql-response\+json/);
    expect(bad.body.errors[0].message).toMatch(/Cannot query field "nope" on type "BookConnection"/);
    expect(bad.body.data).toBeUndefined();
  });

  it('refuses a body that is not JSON, one without a query, and a syntax error, saying what to fix', async () => {
    const form = await p.request('POST', EP, { rawBody: 'query={x}', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    expect(form.body.message).toMatch(/Content-Type: application\/json/);
    const noQuery = await p.request('POST', EP, { body: { variables: {} } });
    expect(noQuery.status).toBe(400);
    expect(noQuery.body.message).toMatch(/query: is required/);
    const syntax = await gql('{ BookConnection { edges { node { id } }');
    expect(syntax.status).toBe(400);
    expect(syntax.body.errors[0].message).toMatch(/^Syntax Error/);
    expect(syntax.body.errors[0].locations).toBeDefined();
    const variable = await gql('query($n: Int) { BookConnection(first: $n) { edges { node { id } } } }', { variables: { n: 'many' } });
    expect(variable.status).toBe(400);
    expect(variable.body.errors[0].message).toMatch(/\$n/);
  });

  it('bounds depth and cost before running anything', async () => {
    // 10 fields deep is allowed, 11 is not (through fragments too); introspection does not count.
    const ok = await gql(`{ BookConnection { edges { node { author { birthPlace { bornHere { birthPlace { bornHere { id } } } } } } } } }`);
    expect(ok.status).toBe(200);
    expect(ok.body.data.BookConnection.edges[3].node.author[0].birthPlace.bornHere[0].birthPlace.bornHere).toEqual([{ id: `${ID}homer` }]);
    const tooDeep = await gql(`{ BookConnection { edges { node { author { ...A } } } } } fragment A on Author { birthPlace { bornHere { birthPlace { bornHere { birthPlace { bornHere { id } } } } } } }`);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.message).toMatch(/The query is 11 fields deep, more than the 10 allowed/);
    const introspection = await gql(`{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } }`);
    expect(introspection.status).toBe(200);
    // 1,000 books with nested lists of nodes three levels down.
    const costly = await gql(`query($n: Int) { BookConnection(first: $n) { edges { node { author { birthPlace { bornHere { birthPlace { bornHere { id } } } } } } } } }`, { variables: { n: 1000 } });
    expect(costly.status).toBe(400);
    expect(costly.body.message).toMatch(/may produce about \d+ values, more than the 100000 allowed/);
    const cheap = await gql(`query($n: Int) { BookConnection(first: $n) { edges { node { author { birthPlace { bornHere { birthPlace { bornHere { id } } } } } } } } }`, { variables: { n: 10 } });
    expect(cheap.status).toBe(200);
  });
});

describe('access levels', () => {
  beforeAll(async () => {
    for (const [name, level] of [
      ['secret', 'private'],
      ['inside', 'internal'],
    ] as const) {
      await p.createDataset('alice', name, level, alice);
      expect((await importFiles(p, alice, `alice/${name}`, [{ name: 'library.trig', content: LIBRARY }])).status).toBe('finished');
    }
  });
  const q = '{ BookConnection(first: 1) { edges { node { id } } } }';

  it('a private dataset is 404 to everyone but its members, on both routes', async () => {
    for (const token of [undefined, bob]) {
      const res = await gql(q, { token, endpoint: '/datasets/alice/secret/graphql' });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Dataset "alice/secret" does not exist.');
      expect((await p.request('GET', '/datasets/alice/secret/graphql/status', { token })).status).toBe(404);
    }
    const own = await gql(q, { token: alice, endpoint: '/datasets/alice/secret/graphql' });
    expect(own.status).toBe(200);
    expect(own.body.data.BookConnection.edges).toHaveLength(1);
    expect((await p.request('GET', '/datasets/alice/secret/graphql/status', { token: alice })).status).toBe(200);
  });

  it("an organisation's private dataset answers its members, and is 404 to other users", async () => {
    await p.createOrg('press', alice);
    await p.addMember('press', 'bob', 'member', alice);
    const carol = await p.createUser('carol');
    await p.createDataset('press', 'archive', 'private', alice);
    expect((await importFiles(p, alice, 'press/archive', [{ name: 'library.trig', content: LIBRARY }])).status).toBe('finished');
    const member = await gql(q, { token: bob, endpoint: '/datasets/press/archive/graphql' });
    expect(member.status).toBe(200);
    expect(member.body.data.BookConnection.edges).toHaveLength(1);
    expect((await gql(q, { token: carol, endpoint: '/datasets/press/archive/graphql' })).status).toBe(404);
    expect((await p.request('GET', '/datasets/press/archive/graphql/status', { token: carol })).status).toBe(404);
    expect((await p.request('GET', '/datasets/press/archive/graphql/status', { token: bob })).status).toBe(200);
  });

  it('an internal dataset answers signed-in users only', async () => {
    expect((await gql(q, { endpoint: '/datasets/alice/inside/graphql' })).status).toBe(404);
    const signedIn = await gql(q, { token: bob, endpoint: '/datasets/alice/inside/graphql' });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.BookConnection.edges).toHaveLength(1);
  });

  it('a bad token is 401, not an anonymous answer', async () => {
    const res = await gql(q, { token: 'not-a-token' });
    expect(res.status).toBe(401);
  });
});

describe('the endpoint behind it', () => {
  const MAGAZINES = `@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix ex: <https://example.org/def/> .
<https://example.org/graphs/magazines> {
  ex:MagazineShape a sh:NodeShape ; sh:targetClass ex:Magazine ; sh:property [ sh:path ex:issue ; sh:datatype xsd:integer ; sh:maxCount 1 ] .
  <https://example.org/id/wired> a ex:Magazine ; ex:issue 7 .
}`;
  const rootFields = async (endpoint: string) => {
    const res = await gql('{ __schema { queryType { fields { name } } } }', { endpoint });
    return res.body.data.__schema.queryType.fields.map((f: { name: string }) => f.name).sort();
  };

  it('without a service: the dataset own endpoint, and a new schema when the shapes change', async () => {
    await p.createDataset('alice', 'growing', 'public', alice);
    expect((await importFiles(p, alice, 'alice/growing', [{ name: 'library.trig', content: LIBRARY }])).status).toBe('finished');
    const endpoint = '/datasets/alice/growing/graphql';
    expect(await rootFields(endpoint)).not.toContain('MagazineConnection');
    expect((await importFiles(p, alice, 'alice/growing', [{ name: 'magazines.trig', content: MAGAZINES }])).status).toBe('finished');
    expect(await rootFields(endpoint)).toContain('MagazineConnection');
    const res = await gql('{ MagazineConnection { edges { node { id issue } } } }', { endpoint });
    expect(res.body.data.MagazineConnection.edges).toEqual([{ node: { id: `${ID}wired`, issue: '7' } }]);
  });

  it('with a running SPARQL service: its snapshot (outOfSync as for SPARQL) until synced', async () => {
    await p.createDataset('alice', 'served', 'public', alice);
    expect((await importFiles(p, alice, 'alice/served', [{ name: 'library.trig', content: LIBRARY }])).status).toBe('finished');
    const endpoint = '/datasets/alice/served/graphql';
    expect((await startService(p, alice, 'alice/served', { name: 'main' })).status).toBe('running');
    const first = await gql('{ BookConnection(first: 1) { edges { node { id } } } }', { endpoint });
    expect(first.body.extensions).toMatchObject({ service: 'main', outOfSync: false, sparqlQueries: 1 });
    expect((await importFiles(p, alice, 'alice/served', [{ name: 'magazines.trig', content: MAGAZINES }])).status).toBe('finished');
    const stale = await gql('{ BookConnection(first: 1) { edges { node { id } } } }', { endpoint });
    expect(stale.body.extensions).toMatchObject({ service: 'main', outOfSync: true });
    expect(await rootFields(endpoint)).not.toContain('MagazineConnection');
    expect((await p.request('POST', '/datasets/alice/served/services/main', { token: alice, body: { sync: true } })).status).toBe(200);
    expect((await waitForService(p, alice, 'alice/served', 'main')).status).toBe('running');
    expect(await rootFields(endpoint)).toContain('MagazineConnection');
    const synced = await gql('{ MagazineConnection { edges { node { issue } } } }', { endpoint });
    expect(synced.body).toMatchObject({ data: { MagazineConnection: { edges: [{ node: { issue: '7' } }] } }, extensions: { service: 'main', outOfSync: false } });
    // A stopped service no longer answers: the dataset's own endpoint does.
    expect((await p.request('POST', '/datasets/alice/served/services/main', { token: alice, body: { stop: true } })).status).toBe(200);
    const own = await gql('{ MagazineConnection { edges { node { issue } } } }', { endpoint });
    expect(own.body.extensions).toMatchObject({ service: null, outOfSync: false });
  });
});

describe('the query timeout', () => {
  let slow: TestPlatform;
  let token: string;
  beforeAll(async () => {
    slow = await TestPlatform.start({ settings: { sparql: { queryTimeoutMs: 1000, maxStatements: 100_000, replicas: 1 } } });
    token = await slow.createUser('carol');
    await slow.createDataset('carol', 'many', 'public', token);
    const books = Array.from({ length: 3000 }, (_, i) => `<${ID}b${i}> a <https://example.org/def/Book> ; <https://example.org/def/isbn> "${i}" .`).join('\n');
    const shapes = `<https://example.org/def/BookShape> a <http://www.w3.org/ns/shacl#NodeShape> ; <http://www.w3.org/ns/shacl#targetClass> <https://example.org/def/Book> ;
      <http://www.w3.org/ns/shacl#property> [ <http://www.w3.org/ns/shacl#path> <https://example.org/def/isbn> ; <http://www.w3.org/ns/shacl#datatype> <http://www.w3.org/2001/XMLSchema#string> ] .`;
    expect((await importFiles(slow, token, 'carol/many', [{ name: 'many.ttl', content: `${shapes}\n${books}\n` }])).status).toBe('finished');
  }, 60_000);
  afterAll(async () => {
    await slow?.stop();
  });

  it('a query past the SPARQL query timeout answers 504, as SPARQL does', async () => {
    // 3,000 books, each tested against 4,000 values: far past a second.
    const notIn = Array.from({ length: 4000 }, (_, i) => `x${i}`);
    const res = await slow.request('POST', '/datasets/carol/many/graphql', {
      body: { query: 'query($f: BookFilter) { BookConnection(filter: $f) { edges { node { id } } } }', variables: { f: { isbn: { notIn } } } },
    });
    expect(res.status, res.text.slice(0, 300)).toBe(504);
    expect(res.body.message).toMatch(/longer than 1 s/);
    expect(res.body.errors).toEqual([{ message: res.body.message }]);
    const after = await slow.request('POST', '/datasets/carol/many/graphql', { body: { query: '{ BookConnection(first: 1) { edges { node { isbn } } } }' } });
    expect(after.status).toBe(200);
  });
});
