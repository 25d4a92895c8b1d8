/**
 * Issue 14, area D, through the AWS harness (real bundles, env and IAM policies): a pipeline runs
 * inside one invocation of the queries function (bounded: 20 queries, 200 000 statements), through
 * its own grants (table, data bucket: the pipeline record and the graph blob, the manifest swap).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';

let aws: AwsTestPlatform;
let alice: string;
let bob: string;

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  alice = await aws.createUser('alice');
  bob = await aws.createUser('bob');
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

describe('on AWS: pipelines (issue 14)', () => {
  it('run saved CONSTRUCT queries and write the target graph from the queries function', async () => {
    const src = await aws.createDataset('alice', 'src', 'public', alice);
    await aws.createDataset('alice', 'dst', 'private', alice);
    const data = '<https://e.org/a> <https://e.org/name> "A" .\n<https://e.org/b> <https://e.org/name> "B" .\n';
    const job = await importFiles(aws as unknown as TestPlatform, alice, 'alice/src', [{ name: 'a.nt', content: data }], { defaultGraphName: 'https://e.org/in' });
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
    const q = await aws.request('POST', '/queries/alice', {
      token: alice,
      body: { name: 'labels', accessLevel: 'public', dataset: src.id, serviceConfig: { type: 'speedy' }, requestConfig: { payload: { query: 'CONSTRUCT { ?s <https://e.org/label> ?n } WHERE { ?s <https://e.org/name> ?n }' } } },
    });
    expect(q.status, q.text).toBe(201);
    const body = { version: 0.2, queries: [{ name: 'alice/labels', version: 1 }], sourceDataset: 'alice/src', targetDataset: 'alice/dst', targetGraphName: 'https://e.org/out' };
    const run = await aws.request('POST', '/pipelines/alice', { token: alice, body });
    expect(run.status, run.text).toBe(201);
    expect(run.body).toMatchObject({ status: 'finished', progress: 1, numberOfStatements: 2 });
    const polled = await aws.request('GET', `/pipelines/alice/${run.body.id}`, { token: alice });
    expect(polled.status, polled.text).toBe(200);
    expect(polled.body.status).toBe('finished');
    const graphs = await aws.request('GET', '/datasets/alice/dst/graphs', { token: alice });
    expect(graphs.body.map((g: any) => [g.graphName, g.numberOfStatements])).toEqual([['https://e.org/out', 2]]);
    expect((await aws.request('POST', '/pipelines/bob', { token: bob, body })).status).toBe(404);
    expect((await aws.request('GET', `/pipelines/alice/${run.body.id}`, { token: bob })).status).toBe(404);
    expect(aws.aws.refusals()).toEqual([]);
  }, 120_000);
});
