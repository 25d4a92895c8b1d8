/**
 * The harness holds the deployment to AWS's rules: a function with one grant too few fails as it
 * would on AWS; API Gateway's and Lambda's size limits hold; answers too large for Lambda go out
 * as presigned S3 links that the harness serves only as the signing function may read.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { API_REQUEST_LIMIT } from '../support/aws-harness/api-gateway.js';
import { importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';

const DATA = Array.from({ length: 20 }, (_, i) => `<https://example.org/s${i}> <https://example.org/p> "o${i}" .`).join('\n');

describe('AWS harness: one grant too few', () => {
  let weak: AwsTestPlatform;
  beforeAll(async () => {
    // The accounts function without s3:DeleteObject on any bucket.
    weak = await AwsTestPlatform.start({ removeGrants: [{ functionOrRole: 'AccountsFunction', action: 's3:DeleteObject' }] });
  }, 300_000);
  afterAll(() => weak?.stop());

  it('makes deleting an account with data fail, as on AWS, and the refusal names the action', async () => {
    const token = await weak.createUser('dora');
    const ds = await weak.createDataset('dora', 'kept', 'private', token);
    const job = await importFiles(weak as unknown as TestPlatform, token, 'dora/kept', [{ name: 'x.nt', content: DATA }]);
    expect(job.status).toBe('finished');
    const deleted = await weak.request('DELETE', '/accounts/dora', { token: weak.adminToken });
    expect(deleted.status).toBeGreaterThanOrEqual(500);
    const refused = weak.aws.refusals().filter((r) => r.principal === weak.aws.fn('AccountsFunction').roleLogicalId);
    expect(refused.map((r) => r.request.action)).toContain('s3:DeleteObject');
    const left = await weak.aws.s3.send(new ListObjectsV2Command({ Bucket: weak.aws.bucket('data'), Prefix: `datasets/${ds.id}/` }));
    expect(left.KeyCount).toBeGreaterThan(0);
  }, 120_000);
});

describe('AWS harness: limits', () => {
  let aws: AwsTestPlatform;
  let alice: string;
  beforeAll(async () => {
    aws = await AwsTestPlatform.start();
    alice = await aws.createUser('alice');
    await aws.createDataset('alice', 'big', 'public', alice);
  }, 300_000);
  afterAll(() => aws?.stop());

  it('API Gateway: unknown routes answer 404 {"message"}, bodies over 10 MB 413, before any function runs', async () => {
    const missing = await aws.request('GET', '/no/such/route');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'Not Found' });
    const before = aws.aws.runtime.invocations.length;
    const huge = await aws.request('POST', '/datasets/alice/big/jobs', { token: alice, rawBody: Buffer.alloc(API_REQUEST_LIMIT + 1, 'a'), headers: { 'content-type': 'application/n-triples' } });
    expect(huge.status).toBe(413);
    expect(aws.aws.runtime.invocations.length).toBe(before);
  });

  it('an answer larger than a Lambda response goes out as a redirect to a presigned link the harness serves', async () => {
    const digits = '{ (0) (1) (2) (3) (4) (5) (6) (7) (8) (9) }';
    const query = `SELECT ?a ?b ?c ?d ?e (CONCAT("row-", STR(?a), STR(?b), STR(?c), STR(?d), STR(?e)) AS ?label) WHERE { VALUES (?a) ${digits} VALUES (?b) ${digits} VALUES (?c) ${digits} VALUES (?d) ${digits} VALUES (?e) ${digits} }`;
    const res = await aws.request('GET', `/datasets/alice/big/sparql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/sparql-results+json' } });
    expect(res.status, res.text.slice(0, 300)).toBe(303);
    const location = res.headers.get('location')!;
    expect(location).toMatch(/X-Amz-Signature=/);
    const download = await fetch(location);
    expect(download.status).toBe(200);
    expect(JSON.parse(await download.text()).results.bindings).toHaveLength(100_000);
    // The link is read as the function that signed it: an IAM-checked s3:GetObject.
    expect(aws.aws.iam.log.some((d) => d.principal.startsWith('DatasetSparql') && d.request.action === 's3:GetObject' && d.allowed)).toBe(true);
  }, 120_000);

  it('a SPARQL query slower than the query timeout answers 504 and the function instance lives on (issue 13: the query timeout equalled the function timeout, so Lambda killed the instance)', async () => {
    const digits = '{ (0) (1) (2) (3) (4) (5) (6) (7) (8) (9) }';
    const query = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 10 }, (_, i) => `VALUES (?v${i}) ${digits}`).join(' ')} }`;
    const ask = () => aws.request('GET', `/datasets/alice/big/sparql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/sparql-results+json' } });
    const slow = await ask();
    expect(slow.status, slow.text.slice(0, 300)).toBe(504);
    const fn = aws.aws.fn('DatasetSparql').name;
    const ofFn = () => aws.aws.runtime.invocations.filter((i) => i.functionName === fn);
    expect(ofFn().at(-1)).toMatchObject({ ok: true });
    // The next query is served by the same, warm instance: no timeout killed it.
    const quick = await aws.request('GET', `/datasets/alice/big/sparql?query=${encodeURIComponent('ASK {}')}`, { headers: { accept: 'application/sparql-results+json' } });
    expect(quick.status).toBe(200);
    expect(ofFn().at(-1)).toMatchObject({ ok: true, coldStart: false });
  }, 90_000);

  it('a 5 MiB body (about 7 MB base64-encoded in the event) is over Lambda’s 6 MB request: no function runs, API Gateway answers an error', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(5 * 1024 * 1024, 'a')]), 'big.nt');
    const before = aws.aws.runtime.invocations.length;
    const res = await fetch(`${aws.url}/datasets/alice/big/jobs`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ message: 'Internal Server Error' });
    expect(aws.aws.runtime.invocations.length).toBe(before);
    expect(aws.aws.gateway.gatewayErrors.at(-1)?.reason).toMatch(/RequestEntityTooLargeException/);
  }, 60_000);
});
