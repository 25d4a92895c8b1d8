/**
 * Issue 14 data routes through the AWS harness (real bundles, their env and IAM policy, dynalite
 * and s3rver): statements and terms (exports family, read-only grants), copy and graph imports
 * (graphs family), assets (delete all, download by name with a Range served by S3, a version's
 * delete answering the Asset) and jobs (start 202, clearing, reset). No grant is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { graphsOf, importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';

let aws: AwsTestPlatform;
let p: TestPlatform;
let alice: string;
let bob: string;

const EX = 'https://example.org/';
const DATA = [`<${EX}alice> <${EX}name> "Alice" <${EX}people> .`, `<${EX}bob> <${EX}name> "Bob" <${EX}people> .`, `<${EX}albatross> <${EX}name> "Albatross" <${EX}birds> .`].join('\n');

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  p = aws as unknown as TestPlatform;
  alice = await aws.createUser('alice');
  bob = await aws.createUser('bob');
  await aws.createDataset('alice', 'pub', 'public', alice);
  const job = await importFiles(p, alice, 'alice/pub', [{ name: 'data.nq', content: DATA }]);
  expect(job.status, JSON.stringify(job.error)).toBe('finished');
  await aws.aws.idle();
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

describe('on AWS: statements, terms, copy and imports', () => {
  it('pages statements and finds terms', async () => {
    const page = await aws.request('GET', '/datasets/alice/pub/statements?limit=2');
    expect(page.status, page.text).toBe(200);
    expect(page.body).toHaveLength(2);
    expect(page.headers.get('link')).toMatch(/offset=2/);
    const named = await aws.request('GET', `/datasets/alice/pub/statements?object=Bob`);
    expect(named.body).toEqual([[{ termType: 'NamedNode', value: `${EX}bob` }, { termType: 'NamedNode', value: `${EX}name` }, expect.objectContaining({ value: 'Bob' }), { termType: 'NamedNode', value: `${EX}people` }]]);
    expect((await aws.request('GET', '/datasets/alice/pub/terms?q=al&pos=object')).body).toEqual(['Alice', 'Albatross']);
    expect((await aws.request('GET', '/datasets/alice/pub/terms?pos=verb')).status).toBe(400);
    expect(aws.aws.refusals()).toEqual([]);
  }, 60_000);

  it('copies a dataset to another account and imports graphs from another dataset', async () => {
    const copy = await aws.request('POST', '/datasets/alice/pub/copy', { token: bob, body: { toAccount: 'bob', name: 'copied' } });
    expect(copy.status, copy.text).toBe(201);
    expect(copy.body).toMatchObject({ name: 'copied', graphCount: 2, statements: 3 });
    expect((await aws.request('GET', '/datasets/bob/copied/statements', { token: bob })).body).toHaveLength(3);
    expect((await aws.request('POST', '/datasets/alice/pub/copy', { token: bob, body: { toAccount: 'alice' } })).status).toBe(403);

    await aws.createDataset('bob', 'target', 'private', bob);
    const body = [{ dataset: { ownerName: 'alice', datasetName: 'pub' }, graphs: [{ from: `${EX}birds`, to: `${EX}b`, overwrite: false }] }];
    const imported = await aws.request('PATCH', '/datasets/bob/target/imports', { token: bob, body });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body[0].graphs).toEqual([expect.objectContaining({ from: `${EX}birds`, to: `${EX}b`, numberOfStatements: 1 })]);
    expect((await graphsOf(p, bob, 'bob/target')).map((g) => g.graphName)).toEqual([`${EX}b`]);
    expect((await aws.request('GET', '/datasets/bob/target/imports', { token: bob })).body).toEqual(imported.body);
    expect(aws.aws.refusals()).toEqual([]);
  }, 60_000);
});

describe('on AWS: assets and jobs', () => {
  it('downloads by name with a Range (S3 answers it), deletes a version (200) and all assets', async () => {
    const upload = async (content: string, versionOf?: string) => {
      const form = new FormData();
      if (versionOf) form.append('versionOf', versionOf);
      form.append('file', new Blob([content]), 'digits.txt');
      const res = await fetch(`${aws.url}/datasets/alice/pub/assets`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
      return res.json();
    };
    const first = await upload('0123456789');
    const second = await upload('abcdefghij', first.identifier);
    const byName = await aws.request('GET', '/datasets/alice/pub/assets/download?fileName=digits.txt');
    expect([302, 303]).toContain(byName.status);
    const ranged = await fetch(byName.headers.get('location')!, { headers: { range: 'bytes=2-4' } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe('cde');
    const left = await aws.request('DELETE', `/datasets/alice/pub/assets/${first.identifier}/${second.versions[0].id}`, { token: alice });
    expect(left.status, left.text).toBe(200);
    expect(left.body.versions).toHaveLength(1);
    expect((await aws.request('DELETE', '/datasets/alice/pub/assets', { token: bob })).status).toBe(403);
    expect((await aws.request('DELETE', '/datasets/alice/pub/assets', { token: alice })).status).toBe(204);
    expect((await aws.request('GET', '/datasets/alice/pub/assets')).body).toEqual([]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 60_000);

  it('clears failed jobs and resets one', async () => {
    const failed = await importFiles(p, alice, 'alice/pub', [{ name: 'bad.nt', content: 'not rdf' }]);
    expect(failed.status).toBe('error');
    await aws.aws.idle();
    const reset = await aws.request('POST', `/datasets/alice/pub/jobs/${failed.jobId}/reset`, { token: alice });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toMatchObject({ status: 'created', files: [] });
    const created = await aws.request('POST', '/datasets/alice/pub/jobs', { token: alice, body: {} });
    const cleared = await aws.request('DELETE', '/datasets/alice/pub/jobs', { token: alice });
    expect(cleared.status, cleared.text).toBe(200);
    expect([...cleared.body.deletedJobIds].sort()).toEqual([failed.jobId, created.body.jobId].sort());
    expect(aws.aws.refusals()).toEqual([]);
  }, 60_000);
});
