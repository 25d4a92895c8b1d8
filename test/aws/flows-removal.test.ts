/**
 * Removing flows on AWS, through the harness (real bundles, the template's IAM enforced): a state
 * machine Step Functions refuses to delete is not forgotten (issue 13: "the refused delete is
 * swallowed"), the watchdog worker, fired by its scheduled rule, finishes the removal with its
 * own grants, and deleting an account removes its flows' state machines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import type { TestPlatform } from '../support/platform.js';

let aws: AwsTestPlatform;
let p: TestPlatform;

beforeAll(async () => {
  // The flows function may not delete state machines (as before its grant, or a policy gone wrong).
  aws = await AwsTestPlatform.start({ removeGrants: [{ functionOrRole: 'FlowsFunction', action: 'states:DeleteStateMachine' }] });
  p = aws as unknown as TestPlatform;
  await enableFlows(p);
}, 300_000);
afterAll(() => aws?.stop());

const machinesOf = (blueprintUid: string) => [...aws.aws.endpoint.stateMachines.entries()].filter(([, m]) => m.name.includes(blueprintUid)).map(([arn]) => arn);

async function flowWithRun(account: string, token: string, session: Record<string, string>, id: string) {
  const created = await createFlow(p, account, session, { id, name: id, accessLevel: 'Private', tasks: [{ id: 'd', label: 'D', type: 'setDescription', settings: { description: 'x' } }], connections: [] });
  const blueprintUid = created.blueprintId as string;
  const started = await startRun(p, `/flows/blueprints/${account}/${id}/run`, token);
  expect(started.status, started.text).toBe(201);
  const run = await waitForRun(p, started.body.id, token, 90_000);
  expect(run.status, JSON.stringify(run.error)).toBe('finished');
  expect(machinesOf(blueprintUid)).toHaveLength(1);
  return blueprintUid;
}

describe('removing flows on AWS', () => {
  it('a refused state machine deletion is recorded, not swallowed; the watchdog finishes it with its own grant', async () => {
    const alice = await aws.createUser('alice');
    const session = await consoleSession(p, 'alice');
    const uid = await flowWithRun('alice', alice, session, 'nightly');

    const deleted = await aws.request('DELETE', '/flows/blueprints/alice/nightly', { headers: session });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await aws.request('GET', '/flows/blueprints/alice/nightly', { token: alice })).status).toBe(404);
    const flowsRole = aws.aws.fn('FlowsFunction').roleLogicalId;
    expect(aws.aws.refusals().filter((r) => r.principal === flowsRole).map((r) => r.request.action)).toContain('states:DeleteStateMachine');
    // Still there, and still known: the removal waits for the next attempt.
    expect(machinesOf(uid)).toHaveLength(1);

    aws.aws.fireRule('Watchdog');
    await aws.aws.idle();
    expect(machinesOf(uid)).toEqual([]);
    const watchdogRole = aws.aws.fn('Watchdog').roleLogicalId;
    expect(aws.aws.refusals().filter((r) => r.principal === watchdogRole)).toEqual([]);
    // The run went with its flow.
    const runs = await aws.request('GET', '/flows/runs', { token: alice });
    expect(runs.status, runs.text).toBe(200);
    expect(runs.body).toEqual([]);
  }, 180_000);

  it("deleting an account removes its flows' state machines (the accounts function may)", async () => {
    const bob = await aws.createUser('bob');
    const session = await consoleSession(p, 'bob');
    const uid = await flowWithRun('bob', bob, session, 'weekly');
    const deleted = await aws.request('DELETE', '/accounts/bob', { token: aws.adminToken });
    expect(deleted.status, deleted.text).toBe(204);
    expect(machinesOf(uid)).toEqual([]);
    const accountsRole = aws.aws.fn('AccountsFunction').roleLogicalId;
    expect(aws.aws.refusals().filter((r) => r.principal === accountsRole)).toEqual([]);
  }, 180_000);
});
