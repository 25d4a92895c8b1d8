/**
 * GraphQL (issue 16) through the AWS harness: `…/graphql` and `…/graphql/status` are served by
 * the sparql function (its real bundle, env and IAM policy, in the VPC) over the dataset's own
 * endpoint, and, once a `virtuoso` service runs, over that service's SPARQL host (Virtuoso, as
 * Fargate runs it). Access is the dataset's: a private dataset's endpoint is 404 to outsiders.
 * The host part needs Debian's virtuoso-opensource-7: it skips loudly without it, and fails
 * instead under CI=true.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';
import { findVirtuoso, VIRTUOSO_PACKAGE } from '../support/virtuoso.js';

const found = findVirtuoso();
const onCi = process.env.CI === 'true';
if (!found) console.warn(`\n!! ${onCi ? 'FAILING (CI=true)' : 'SKIPPING'}: GraphQL over a SPARQL host needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE}\n`);

describe.runIf(!found && onCi)('GraphQL on AWS prerequisites', () => {
  it(`needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE} under CI`, () => {
    expect(found, `install ${VIRTUOSO_PACKAGE}`).not.toBeNull();
  });
});

const LIBRARY = readFileSync(new URL('../fixtures/graphql/library.trig', import.meta.url), 'utf8');
const ID = 'https://example.org/id/';
const QUERY = `{ BookConnection(first: 3, filter: { keyword: { notEq: "war" } }, orderBy: [{ field: pages, direction: DESC }]) {
  edges { node { id isbn title(language: "nl, en;q=0.5") { value language } author { name(language: "en") { value } birthPlace { name(language: "en") { value } } } } }
  pageInfo { hasNextPage } } }`;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

let aws: AwsTestPlatform;
let p: TestPlatform;
let alice: string;
let bob: string;

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  p = aws as unknown as TestPlatform;
  alice = await aws.createUser('alice');
  bob = await aws.createUser('bob');
  for (const [name, level] of [
    ['library', 'public'],
    ['secret', 'private'],
  ] as const) {
    await aws.createDataset('alice', name, level, alice);
    const job = await importFiles(p, alice, `alice/${name}`, [{ name: 'library.trig', content: LIBRARY }]);
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
  }
  await aws.aws.idle();
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

const graphql = (dataset: string, query: string, token?: string) => aws.request('POST', `/datasets/alice/${dataset}/graphql`, { token, body: { query } });

describe('on AWS: GraphQL over a dataset', () => {
  it('answers through the sparql function over the dataset endpoint, with the status route, GET and access levels', async () => {
    const res = await graphql('library', QUERY);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.BookConnection).toEqual({
      edges: [
        { node: { id: `${ID}odyssey`, isbn: '978-0140268867', title: [{ value: 'Odyssee', language: 'nl' }, { value: 'Odyssey', language: 'en' }], author: [{ name: [{ value: 'Homer' }], birthPlace: { name: { value: 'Smyrna' } } }] } },
        { node: { id: `${ID}aeneid`, isbn: '978-0140449327', title: [{ value: 'Aeneid', language: 'en' }], author: [{ name: [{ value: 'Virgil' }], birthPlace: { name: { value: 'Mantua' } } }] } },
        {
          node: {
            id: `${ID}companion`,
            isbn: '978-0000000001',
            title: [{ value: 'Homer and Virgil compared', language: 'en' }],
            author: [
              { name: [{ value: 'Homer' }], birthPlace: { name: { value: 'Smyrna' } } },
              { name: [{ value: 'Virgil' }], birthPlace: { name: { value: 'Mantua' } } },
            ],
          },
        },
      ],
      pageInfo: { hasNextPage: false },
    });
    expect(res.body.extensions).toMatchObject({ sparqlQueries: 4, service: null });
    expect(aws.aws.runtime.invocations.some((i) => i.functionName.startsWith('SparqlFunction') && i.ok)).toBe(true);

    const status = await aws.request('GET', '/datasets/alice/library/graphql/status');
    expect(status.status).toBe(200);
    expect(status.body.errors).toHaveLength(3);
    const get = await aws.request('GET', `/datasets/alice/library/graphql?${new URLSearchParams({ query: `{ node(id: "${ID}homer") { __typename id } }` })}`);
    expect(get.body.data).toEqual({ node: { __typename: 'Author', id: `${ID}homer` } });
    const bad = await graphql('library', '{ BookConnection { nope } }');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].message).toMatch(/Cannot query field "nope"/);

    for (const token of [undefined, bob]) {
      expect((await graphql('secret', QUERY, token)).status).toBe(404);
      expect((await aws.request('GET', '/datasets/alice/secret/graphql/status', { token })).status).toBe(404);
    }
    expect((await graphql('secret', QUERY, alice)).body.data.BookConnection.edges).toHaveLength(3);
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);

  it.skipIf(!found)('answers over a running virtuoso service on its SPARQL host, as over the dataset endpoint', async () => {
    const before = (await graphql('library', QUERY)).body.data;
    expect((await aws.request('POST', '/datasets/alice/library/services', { token: alice, body: { name: 'fast', type: 'virtuoso' } })).status).toBe(201);
    let service: any;
    for (let i = 0; i < 1200; i++) {
      service = (await aws.request('GET', '/datasets/alice/library/services/fast')).body;
      if (service.status === 'running' || service.status === 'error') break;
      await delay(250);
    }
    expect(service.status, JSON.stringify(service.error)).toBe('running');
    const res = await graphql('library', QUERY);
    expect(res.status, res.text).toBe(200);
    expect(res.body.extensions).toMatchObject({ service: 'fast', outOfSync: false, sparqlQueries: 4 });
    expect(res.body.data).toEqual(before);
    expect((await aws.request('POST', '/datasets/alice/library/services/fast', { token: alice, body: { stop: true } })).status).toBe(200);
    expect(aws.aws.refusals()).toEqual([]);
  }, 600_000);
});
