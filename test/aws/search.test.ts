/**
 * Text search services (issue 15) through the AWS harness, on the default (no OpenSearch
 * configured): the import worker builds the embedded engine's index and saves it as a blob in the
 * data bucket (s3rver), the search family's function (its real bundle, env and IAM policy) loads
 * it once per warm function and answers; a sync builds a new index beside the old one and drops
 * the old; delete removes it. Every AWS call is checked against the function's IAM policy.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';
import { startService, waitForService } from '../support/services.js';
import { EX, F, searchDataset } from '../support/search-data.js';

let aws: AwsTestPlatform;
let p: TestPlatform;
let alice: string;
let bob: string;

async function indexKeys(datasetId: string): Promise<string[]> {
  const out = await aws.aws.s3.send(new ListObjectsV2Command({ Bucket: aws.aws.bucket('data'), Prefix: `datasets/${datasetId}/search/` }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  p = aws as unknown as TestPlatform;
  alice = await aws.createUser('alice');
  bob = await aws.createUser('bob');
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

describe('on AWS: text search services on the embedded engine, indexes in the data bucket', () => {
  it('builds the index in the import worker and answers searches from the search function', async () => {
    const ds = await aws.createDataset('alice', 'catalog', 'private', alice);
    const job = await importFiles(p, alice, 'alice/catalog', [{ name: 'catalog.nt', content: searchDataset(500) }]);
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
    const service = await startService(p, alice, 'alice/catalog', { name: 'text', type: 'textSearch' });
    expect(service, JSON.stringify(service.error)).toMatchObject({ type: 'elasticSearch', status: 'running' });
    await aws.aws.idle();
    expect(await indexKeys(ds.id)).toHaveLength(1);

    const simple = await aws.request('GET', '/datasets/alice/catalog/services/text/search?query=pikachu', { token: alice });
    expect(simple.status, simple.text).toBe(200);
    expect(simple.body.hits.hits.map((h: any) => h._id).slice(0, 2)).toEqual([`${EX}id/pikachu`, `${EX}id/pikachuu`]);
    const dsl = await aws.request('POST', '/datasets/alice/catalog/services/text/_search', {
      token: alice,
      body: { query: { bool: { filter: [{ range: { [F.price]: { gte: 495 } } }] } }, sort: [{ [F.price]: 'desc' }], size: 2, aggs: { c: { terms: { field: F.category } } } },
    });
    expect(dsl.status, dsl.text).toBe(200);
    expect(dsl.body.hits.hits.map((h: any) => h[F.price][0])).toEqual([499, 498]);
    const count = await aws.request('POST', '/datasets/alice/catalog/services/text/_count', { token: alice, body: { query: { term: { [F.category]: 'book' } } } });
    expect(count.body).toMatchObject({ count: 125 });
    const msearch = await aws.request('POST', '/datasets/alice/catalog/services/text/_msearch', {
      token: alice,
      rawBody: `{}\n${JSON.stringify({ query: { match: { [F.name]: 'pikachu' } } })}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(msearch.body.responses[0].hits.hits[0]._id).toBe(`${EX}id/pikachu`);
    expect((await aws.request('GET', '/datasets/alice/catalog/services/text/mappings', { token: alice })).body.index.mappings.properties[F.dateCreated]).toEqual({ type: 'date' });
    // Private dataset: others do not see it.
    expect((await aws.request('GET', '/datasets/alice/catalog/services/text/search?query=pikachu', { token: bob })).status).toBe(404);
    expect((await aws.request('GET', '/datasets/alice/catalog/services/text/search?query=pikachu')).status).toBe(404);
    expect((await aws.request('POST', '/datasets/alice/catalog/services/text/_search', { token: alice, body: { query: { nope: {} } } })).status).toBe(400);
    expect(aws.aws.runtime.invocations.some((i) => i.functionName.startsWith('SearchFunction') && i.ok)).toBe(true);
    expect(aws.aws.refusals()).toEqual([]);
  }, 240_000);

  it('syncs to a new index beside the old one, then deletes it', async () => {
    const ds = (await aws.request('GET', '/datasets/alice/catalog', { token: alice })).body;
    const before = await indexKeys(ds.id);
    const job = await importFiles(p, alice, 'alice/catalog', [{ name: 'more.nt', content: `<${EX}id/raichu> <https://schema.org/name> "Raichu"@en .\n` }]);
    expect(job.status).toBe('finished');
    expect((await aws.request('GET', '/datasets/alice/catalog/services/text', { token: alice })).body.outOfSync).toBe(true);
    expect((await aws.request('POST', '/datasets/alice/catalog/services/text', { token: alice, body: { sync: true } })).status).toBe(200);
    expect(await waitForService(p, alice, 'alice/catalog', 'text')).toMatchObject({ status: 'running', outOfSync: false });
    await aws.aws.idle();
    const after = await indexKeys(ds.id);
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
    const found = await aws.request('GET', '/datasets/alice/catalog/services/text/search?query=raichu', { token: alice });
    expect(found.body.hits.hits.map((h: any) => h._id)).toEqual([`${EX}id/raichu`]);
    expect((await aws.request('DELETE', '/datasets/alice/catalog/services/text', { token: alice })).status).toBe(204);
    expect(await indexKeys(ds.id)).toEqual([]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 240_000);
});
