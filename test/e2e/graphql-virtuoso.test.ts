/**
 * GraphQL over a `virtuoso` service on its own virtuoso-t (embedded SPARQL hosts, as on AWS): the
 * SPARQL the GraphQL layer writes (level reads, filters with EXISTS / OR / NOT, orderBy, paging)
 * must mean the same on Virtuoso as on the embedded engine. Every query below is asked of a
 * dataset served by Virtuoso and of the same data on the dataset's own (embedded) endpoint, and
 * the answers must be equal. Needs Debian's virtuoso-opensource-7: skips loudly without it, and
 * fails under CI=true.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { startService } from '../support/services.js';
import { findVirtuoso, VIRTUOSO_PACKAGE } from '../support/virtuoso.js';

const found = findVirtuoso();
const onCi = process.env.CI === 'true';
if (!found) console.warn(`\n!! ${onCi ? 'FAILING (CI=true)' : 'SKIPPING'}: GraphQL on Virtuoso needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE}\n`);

describe.runIf(!found && onCi)('GraphQL on Virtuoso prerequisites', () => {
  it(`needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE} under CI`, () => {
    expect(found, `install ${VIRTUOSO_PACKAGE}`).not.toBeNull();
  });
});

const LIBRARY = readFileSync(new URL('../fixtures/graphql/library.trig', import.meta.url), 'utf8');
const ID = 'https://example.org/id/';

const QUERIES = [
  `{ BookConnection { edges { cursor node { id isbn published pages subTitle votes keyword genre { id } title { value language }
     summary { value language } author { id born name { value language } birthPlace { id population name(language: "en") { value } bornHere { id } } } } } pageInfo { hasNextPage endCursor } } }`,
  `{ BookConnection(first: 2, after: "${Buffer.from('o:0').toString('base64url')}") { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } }`,
  `{ BookConnection(filter: { pages: { in: [541, 683] }, keyword: { notEq: "war" } }) { edges { node { id } } } }`,
  `{ BookConnection(filter: { published: { eq: "1990-01-01" } }) { edges { node { id } } } }`,
  `{ BookConnection(filter: { isbn: { notIn: ["978-0140449327"] }, votes: { eq: 12 } }) { edges { node { id } } } }`,
  `{ BookConnection(filter: { title: { eq: { value: "Odyssey", language: "en" } } }) { edges { node { id } } } }`,
  `{ BookConnection(filter: { title: { in: [{ value: "Ilias" }, { value: "Aeneid", language: "en" }] } }) { edges { node { id } } } }`,
  `{ BookConnection(filter: { author: { birthPlace: { population: { eq: 49000 } } } }) { edges { node { id } } } }`,
  `{ BookConnection(filter: { OR: [{ pages: { eq: 442 } }, { genre: { id: "https://example.org/def/none" } }], NOT: { author: { id: "${ID}homer" } } }) { edges { node { id } } } }`,
  `{ BookConnection(filter: { NOT: { OR: [{ pages: { eq: 442 } }, { published: { eq: "1990-01-01" } }] } }) { edges { node { id } } } }`,
  `{ BookConnection(orderBy: [{ field: pages, direction: DESC }]) { edges { node { id } } } }`,
  `{ BookConnection(orderBy: [{ field: published }, { field: id, direction: DESC }], first: 3) { edges { node { id } } pageInfo { hasNextPage } } }`,
  `{ AuthorConnection(filter: { birthPlace: { id: "${ID}mantua" } }) { edges { node { id name(language: "la, en;q=0.5") { value language } } } } }`,
  `{ BookConnection { edges { node { title(language: "nl, grc;q=0.2") { value language } author { name(language: "en-GB, en;q=0.5") { value } } } } } node(id: "${ID}odyssey") { ... on Book { title { value } } } }`,
  `{ homer: node(id: "${ID}homer") { __typename ... on Author { birthPlace { name(language: "tr") { value } } } } none: node(id: "${ID}nobody") { id } }`,
];

describe.skipIf(!found)('GraphQL on a virtuoso service (embedded SPARQL hosts)', () => {
  let p: TestPlatform;
  let alice: string;

  beforeAll(async () => {
    p = await TestPlatform.start({
      env: { VIRTUOSO_HOSTS: found!.server },
      settings: { sparql: { queryTimeoutMs: 5000, maxStatements: 1_000_000, replicas: 1 } },
    });
    alice = await p.createUser('alice');
    for (const name of ['hosted', 'plain']) {
      await p.createDataset('alice', name, 'public', alice);
      expect((await importFiles(p, alice, `alice/${name}`, [{ name: 'library.trig', content: LIBRARY }])).status).toBe('finished');
    }
    expect((await startService(p, alice, 'alice/hosted', { name: 'fast', type: 'virtuoso' })).status).toBe('running');
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
  });

  const ask = async (dataset: string, query: string) => {
    const res = await p.request('POST', `/datasets/alice/${dataset}/graphql`, { body: { query } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.errors, res.text).toBeUndefined();
    return res.body;
  };

  it('answers every query as the embedded engine does, with the same schema and status', async () => {
    for (const query of QUERIES) {
      const hosted = await ask('hosted', query);
      const plain = await ask('plain', query);
      expect(hosted.extensions).toMatchObject({ service: 'fast' });
      expect(plain.extensions).toMatchObject({ service: null });
      expect(hosted.data, query).toEqual(plain.data);
    }
    const schema = '{ __schema { types { name fields { name } } } }';
    expect((await ask('hosted', schema)).data).toEqual((await ask('plain', schema)).data);
    const status = async (dataset: string) => (await p.request('GET', `/datasets/alice/${dataset}/graphql/status`)).body;
    expect(await status('hosted')).toEqual(await status('plain'));
  });
});
