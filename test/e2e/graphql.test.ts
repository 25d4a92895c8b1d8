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
    expect(place).toEqual({ id: 'ID!', name: 'RdfsLangString!', population: 'XsdInteger' });
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
