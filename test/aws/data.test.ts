/**
 * The main data scenarios through the AWS harness: every call goes over HTTP to API Gateway, to
 * the route's function (its real bundle, the template's env and IAM policy), and on to dynalite,
 * s3rver and the other stand-ins. Accounts (with deletion), the dataset lifecycle, imports (the
 * import worker invoked asynchronously), exports, assets, services and SPARQL, saved queries.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { graphsOf, importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';
import { select, startService } from '../support/services.js';

let aws: AwsTestPlatform;
/** The e2e helpers take a TestPlatform; they use only its HTTP surface, which the AWS client shares. */
let p: TestPlatform;
let alice: string;

const PEOPLE = Array.from({ length: 50 }, (_, i) => `<https://example.org/p${i}> <https://example.org/name> "Person ${i}" .`).join('\n');

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  p = aws as unknown as TestPlatform;
  alice = await aws.createUser('alice');
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

async function keysUnder(bucket: string, prefix: string): Promise<string[]> {
  const out = await aws.aws.s3.send(new ListObjectsV2Command({ Bucket: aws.aws.bucket(bucket), Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

describe('on AWS: datasets, imports and exports', () => {
  it('creates, reads, updates and deletes a dataset', async () => {
    const created = await aws.createDataset('alice', 'life', 'private', alice);
    expect(created).toMatchObject({ name: 'life', accessLevel: 'private' });
    expect((await aws.request('GET', '/datasets/alice/life')).status).toBe(404);
    const patched = await aws.request('PATCH', '/datasets/alice/life', { token: alice, body: { description: 'changed', accessLevel: 'public' } });
    expect(patched.status).toBe(200);
    expect((await aws.request('GET', '/datasets/alice/life')).body).toMatchObject({ description: 'changed', accessLevel: 'public' });
    expect((await aws.request('DELETE', '/datasets/alice/life', { token: alice })).status).toBe(204);
    expect((await aws.request('GET', '/datasets/alice/life', { token: alice })).status).toBe(404);
    expect(aws.aws.refusals()).toEqual([]);
  });

  it('imports a file through the import worker, then exports it and answers SPARQL', async () => {
    const ds = await aws.createDataset('alice', 'people', 'public', alice);
    const job = await importFiles(p, alice, 'alice/people', [{ name: 'people.nt', content: PEOPLE }], { defaultGraphName: 'https://example.org/graph' });
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
    // The worker writes `finished` before its invocation returns: wait for the invocation to end.
    await aws.aws.idle();
    expect(aws.aws.runtime.invocations.some((i) => i.functionName.startsWith('ImportWorker') && i.ok)).toBe(true);
    const graphs = await graphsOf(p, alice, 'alice/people');
    expect(graphs.map((g) => g.graphName)).toEqual(['https://example.org/graph']);
    expect(await keysUnder('data', `datasets/${ds.id}/`)).not.toEqual([]);

    const exported = await aws.request('GET', '/datasets/alice/people/download.nt');
    const body = exported.status === 303 || exported.status === 302 ? await (await fetch(exported.headers.get('location')!)).text() : exported.text;
    expect([200, 302, 303]).toContain(exported.status);
    expect(body.trim().split('\n')).toHaveLength(50);

    const rows = await select(p, undefined, '/datasets/alice/people/sparql', 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }');
    expect(rows).toEqual([{ n: '50' }]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 120_000);

  it('runs a service and answers SPARQL through it', async () => {
    const service = await startService(p, alice, 'alice/people', { name: 'main' });
    expect(service.status, JSON.stringify(service)).toBe('running');
    const rows = await select(p, undefined, '/datasets/alice/people/services/main/sparql', 'SELECT ?name WHERE { ?s <https://example.org/name> ?name } ORDER BY ?name LIMIT 2');
    expect(rows).toEqual([{ name: 'Person 0' }, { name: 'Person 1' }]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 120_000);

  it('saves a query, versions it and runs it', async () => {
    const ds = (await aws.request('GET', '/datasets/alice/people')).body;
    const created = await aws.request('POST', '/queries/alice', {
      token: alice,
      body: { name: 'names', accessLevel: 'public', dataset: ds.id, serviceConfig: { type: 'speedy' }, requestConfig: { payload: { query: 'SELECT ?name WHERE { ?s <https://example.org/name> ?name } ORDER BY ?name LIMIT 3' } }, variables: [] },
    });
    expect(created.status, created.text).toBe(201);
    const v2 = await aws.request('POST', '/queries/alice/names', { token: alice, body: { requestConfig: { payload: { query: 'SELECT ?name WHERE { ?s <https://example.org/name> ?name } ORDER BY DESC(?name) LIMIT 1' } } } });
    expect(v2.body).toMatchObject({ version: 2 });
    const run = await aws.request('GET', '/queries/alice/names/run', { headers: { accept: 'application/sparql-results+json' } });
    expect(run.status, run.text).toBe(200);
    expect(JSON.parse(run.text).results.bindings.map((b: any) => b.name.value)).toEqual(['Person 9']);
    const first = await aws.request('GET', '/queries/alice/names/1/run', { headers: { accept: 'application/sparql-results+json' } });
    expect(JSON.parse(first.text).results.bindings).toHaveLength(3);
    expect(aws.aws.refusals()).toEqual([]);
  }, 60_000);

  it('stores an asset and serves it back', async () => {
    await aws.createDataset('alice', 'docs', 'public', alice);
    const form = new FormData();
    form.append('file', new Blob(['hello assets']), 'readme.txt');
    const up = await fetch(`${aws.url}/datasets/alice/docs/assets`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
    const asset = await up.json();
    expect(up.status, JSON.stringify(asset)).toBe(201);
    const download = await aws.request('GET', `/datasets/alice/docs/assets/${asset.identifier}`);
    expect([200, 302, 303]).toContain(download.status);
    const served = download.status === 200 ? undefined : await fetch(download.headers.get('location')!);
    expect(served ? await served.text() : download.text).toBe('hello assets');
    expect((served?.headers ?? download.headers).get('content-disposition')).toMatch(/readme\.txt/);
    expect(aws.aws.refusals()).toEqual([]);
  }, 60_000);
});

describe('on AWS: SPARQL Update on the dataset endpoint', () => {
  it('writes to the default graph fixed at creation, queues concurrent updates, and answers 422 for graph state and failed LOADs', async () => {
    const created = await aws.createDataset('alice', 'updates', 'private', alice);
    // Named under the API's public URL (PUBLIC_API_URL), not whatever host a request came through.
    expect(created.defaultGraphName).toMatch(/^https:\/\/[^/]+\/alice\/updates\/graphs\/default$/);
    const update = (text: string) => aws.request('POST', '/datasets/alice/updates/sparql', { token: alice, rawBody: text, headers: { 'content-type': 'application/sparql-update' } });
    // Concurrent updates may reach different function instances: each applies (queued, or run again on the newer graphs).
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => update(`INSERT DATA { <https://example.org/s${i}> <https://example.org/p> ${i} }`)));
    expect(results.map((r) => `${r.status} ${r.status === 200 ? '' : r.text}`)).toEqual(Array(4).fill('200 '));
    const graphs = await graphsOf(p, alice, 'alice/updates');
    expect(graphs.map((g) => [g.graphName, g.numberOfStatements])).toEqual([[created.defaultGraphName, 4]]);
    expect((await update('DROP GRAPH <https://example.org/none>')).status).toBe(422);
    const load = await update('LOAD <http://169.254.169.254/latest/meta-data/>');
    expect(load.status).toBe(422);
    expect(load.text).toContain('LOAD <http://169.254.169.254/latest/meta-data/> failed');
    expect((await update('DELETE WHERE { ?s <https://example.org/p> ?o }')).status).toBe(200);
    expect(await graphsOf(p, alice, 'alice/updates')).toEqual([]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 120_000);
});

describe('on AWS: accounts', () => {
  it('makes organisations with members, and answers as the embedded platform does', async () => {
    const bob = await aws.createUser('bob');
    await aws.createOrg('acme', alice);
    await aws.addMember('acme', 'bob', 'member', alice);
    expect((await aws.request('GET', '/accounts/acme/members', { token: bob })).status).toBe(200);
    expect((await aws.request('DELETE', '/accounts/acme/members/bob', { token: bob })).status).toBe(204);
    expect(aws.aws.refusals()).toEqual([]);
  });

  it('deletes an account with its datasets: 204, and no data left behind (issue 13: deleting an account answered 500)', async () => {
    const carol = await aws.createUser('carol');
    const ds = await aws.createDataset('carol', 'stuff', 'private', carol);
    const job = await importFiles(p, carol, 'carol/stuff', [{ name: 'x.nt', content: PEOPLE }]);
    expect(job.status).toBe('finished');
    expect(await keysUnder('data', `datasets/${ds.id}/`)).not.toEqual([]);
    const deleted = await aws.request('DELETE', '/accounts/carol', { token: aws.adminToken });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await aws.request('GET', '/accounts/carol', { token: aws.adminToken })).status).toBe(404);
    expect(await keysUnder('data', `datasets/${ds.id}/`)).toEqual([]);
    expect(aws.aws.refusals()).toEqual([]);
  }, 120_000);
});
