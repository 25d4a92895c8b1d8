/**
 * Issue 17 through the AWS harness (real bundles, env and IAM policies): the console's palette
 * comes from GET /flows/taskTypes, served by the flows function's bundle with the flows switches
 * read from the table under its own grants; anyone may read it, and it follows the
 * administrator's SPARQL update switch; unknown parameters are refused.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';

let aws: AwsTestPlatform;

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

it('serves the task catalogue the console builds its palette from, following the SPARQL update switch', async () => {
  const update = async () => ((await aws.request('GET', '/flows/taskTypes')).body as { type: string; enabled: boolean }[]).find((t) => t.type === 'sparqlUpdate');
  const anonymous = await aws.request('GET', '/flows/taskTypes');
  expect(anonymous.status).toBe(200);
  expect(anonymous.body.map((t: { type: string }) => t.type)).toEqual(expect.arrayContaining(['setVariables', 'decision', 'sparqlQuery', 'wait', 'stopRun']));
  expect(anonymous.body.find((t: { type: string }) => t.type === 'sparqlQuery')).toMatchObject({ title: 'SPARQL query', kind: 'data', enabled: true });
  const switched = await aws.request('PATCH', '/admin/flows', { token: aws.adminToken, body: { flowsEnabled: true, sparqlUpdateTaskEnabled: true } });
  expect(switched.status).toBe(200);
  expect((await update())?.enabled).toBe(true);
  await aws.request('PATCH', '/admin/flows', { token: aws.adminToken, body: { sparqlUpdateTaskEnabled: false } });
  expect((await update())?.enabled).toBe(false);
  const unknown = await aws.request('GET', '/flows/taskTypes?x=1');
  expect(unknown.status).toBe(400);
  expect(unknown.body.message).toMatch(/x/);
}, 120_000);
