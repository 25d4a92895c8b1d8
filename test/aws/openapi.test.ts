/**
 * Issue 14, area C, through the AWS harness (real bundles, env and IAM policies): GET /openapi.json
 * served by the info function's bundle (the generator and the route modules' schemas bundled in,
 * no grant beyond the family's), valid, naming the API URL; answers of other functions match it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROUTES } from '../../functions/http/route-table.js';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { OpenApiChecker, openApiProblems } from '../support/openapi.js';

let aws: AwsTestPlatform;

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

it('serves the generated document from the info function, and other functions answer as it says', async () => {
  const res = await aws.request('GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.body.servers[0].url).toBe((await aws.request('GET', '/info')).body.apiUrl);
  expect(await openApiProblems(res.body)).toEqual([]);
  expect(Object.values(res.body.paths).flatMap((m: any) => Object.keys(m))).toHaveLength(ROUTES.length);
  expect((await aws.request('GET', '/openapi.json?x=1')).status).toBe(400);

  const api = new OpenApiChecker(res.body);
  const token = await aws.createUser('opener');
  const created = await api.request(aws, 'POST', '/datasets/opener', { token, body: { name: 'doc', accessLevel: 'public' } });
  expect(created.status).toBe(201);
  await api.request(aws, 'GET', '/datasets/opener/doc');
  await api.request(aws, 'GET', '/accounts/opener', { token });
  await api.request(aws, 'GET', '/me', { token });
  await api.request(aws, 'GET', '/datasets/opener/doc/graphs');
  await api.request(aws, 'POST', '/datasets/opener', { body: { name: 'nope' } });
  // Over the simple-route limit: a 413 JSON answer as the document says.
  const big = await api.request(aws, 'POST', '/datasets/opener', { token, body: { name: 'big', description: 'd'.repeat(1024 * 1024 + 10) } });
  expect(big.status).toBe(413);
}, 120_000);
