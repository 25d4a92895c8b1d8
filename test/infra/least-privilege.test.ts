/**
 * CDK: what the stateless stack's functions may do is what their code calls, nothing more (issue
 * 13): exact DynamoDB and S3 actions, roles of their own without managed policies, the grants
 * account deletion and the flows' service action need, PUBLIC_API_URL on every function, and the
 * stage's throttling. Templates only, no bundling (the set-up is in test/support/stacks.ts).
 */
import { describe, expect, it } from 'vitest';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.js';
import { ENV } from '../../functions/env-names.js';
import { LOG_ACTIONS } from '../../lib/constructs/app-function.js';
import { DATA_KEY_PREFIX, DEFAULT_API_THROTTLE } from '../../lib/stateless-stack.js';
import {
  DECLARED,
  stateful,
  stateless,
  slResources,
  logicalId,
  asArray,
  ofType,
  statementsOf,
  actionsOn,
  render,
  synthesizeStacks,
  type Statement,
} from '../support/stacks.js';

synthesizeStacks({ bundle: false });

/** The import of a stateful resource's attribute, as `render` shows it. */
const imported = (c: Parameters<typeof logicalId>[0], attr: 'Arn' | 'Ref') =>
  new RegExp(`^\\{"Fn::ImportValue":"LinkedDataPlatform-Stateful:ExportsOutput(FnGetAtt|Ref)${logicalId(c)}${attr === 'Arn' ? 'Arn' : ''}[0-9A-F]{8}"\\}`);

describe('least privilege: every function', () => {
  it('runs as a role of its own, with no managed policy, whose only logs grant is its own log group', () => {
    const roles = new Set<string>();
    for (const d of DECLARED) {
      const fn = slResources[logicalId(d.fn())]!;
      const roleId: string = fn.Properties.Role['Fn::GetAtt'][0];
      expect(roles.has(roleId), d.label).toBe(false);
      roles.add(roleId);
      const role = slResources[roleId]!;
      expect(role.Properties.ManagedPolicyArns, d.label).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      const logs = statementsOf(logicalId(d.fn())).filter((s) => asArray(s.Action).some((a) => a.startsWith('logs:')));
      expect(logs, d.label).toHaveLength(1);
      expect(asArray(logs[0]!.Action).sort()).toEqual([...LOG_ACTIONS].sort());
      expect(logs[0]!.Resource).toEqual({ 'Fn::GetAtt': [fn.Properties.LoggingConfig.LogGroup.Ref, 'Arn'] });
    }
  });

  it('never gets Scan, stream reads, batch or transaction calls, version purges, or a wildcard action', () => {
    const never = /^(dynamodb:(Scan|GetRecords|GetShardIterator|DescribeStream|ListStreams|Batch\w+|Transact\w+|DescribeTable|ConditionCheckItem)|s3:(DeleteObjectVersion|PutObjectAcl|PutObjectTagging|GetObjectVersion|PutBucket\w*|DeleteBucket\w*))$/;
    for (const d of DECLARED) {
      for (const action of statementsOf(logicalId(d.fn())).flatMap((s) => asArray(s.Action))) {
        expect(action, d.label).not.toMatch(never);
        expect(action, d.label).not.toContain('*');
      }
    }
  });

  it('queries the table\'s indexes by name, not index/*', () => {
    const indexes = TABLE_SCHEMA.globalSecondaryIndexes.map((i) => i.indexName);
    for (const d of DECLARED.filter((x) => x.grants.table)) {
      const onTable = statementsOf(logicalId(d.fn())).filter((s) => JSON.stringify(s.Resource).includes(logicalId(stateful.table)));
      const resources = onTable.flatMap((s) => asArray(s.Resource).map(render));
      for (const r of resources) expect(r, d.label).not.toContain('*');
      const onIndexes = onTable.filter((s) => JSON.stringify(s.Resource).includes('/index/'));
      expect(onIndexes, d.label).toHaveLength(1);
      expect(onIndexes[0]!.Action, d.label).toBe('dynamodb:Query');
      expect(asArray(onIndexes[0]!.Resource).map((r) => render(r).replace(/^.*\/index\//, ''))).toEqual(indexes);
    }
  });

  it(`holds every data bucket grant to the dataset keys (${DATA_KEY_PREFIX}*) and the bucket itself`, () => {
    for (const d of DECLARED.filter((x) => x.grants.dataBucket)) {
      const onData = statementsOf(logicalId(d.fn())).filter((s) => JSON.stringify(s.Resource).includes(logicalId(stateful.dataBucket)));
      for (const s of onData) {
        for (const r of asArray(s.Resource).map(render)) {
          expect(r, d.label).toMatch(imported(stateful.dataBucket, 'Arn'));
          expect(r.replace(imported(stateful.dataBucket, 'Arn'), ''), d.label).toMatch(new RegExp(`^(/${DATA_KEY_PREFIX}\\*)?$`));
        }
      }
    }
  });

  it('sets PUBLIC_API_URL on every function to the HTTP API\'s own URL', () => {
    const apiId = logicalId(stateless.api);
    for (const d of DECLARED) {
      const vars = slResources[logicalId(d.fn())]!.Properties.Environment.Variables;
      expect(render(vars[ENV.publicApiUrl]), d.label).toBe(`https://{${apiId}}.execute-api.{AWS::Region}.{AWS::URLSuffix}`);
    }
  });
});

describe('least privilege: account deletion', () => {
  const statements = (): Statement[] => statementsOf(logicalId(stateless.functions.accounts));

  it('lets the accounts function list the data bucket, read (pinned stories) and delete dataset blobs, and nothing else there', () => {
    const onData = statements().filter((s) => JSON.stringify(s.Resource).includes(logicalId(stateful.dataBucket)));
    const byResource = Object.fromEntries(onData.map((s) => [render(s.Resource).replace(imported(stateful.dataBucket, 'Arn'), '<data>'), asArray(s.Action)]));
    expect(byResource).toEqual({ [`<data>/${DATA_KEY_PREFIX}*`]: ['s3:GetObject', 's3:DeleteObject'], '<data>': ['s3:ListBucket'] });
    const vars = slResources[logicalId(stateless.functions.accounts)]!.Properties.Environment.Variables;
    expect(render(vars[ENV.dataBucketName])).toMatch(imported(stateful.dataBucket, 'Ref'));
    // No other bucket.
    for (const bucket of [stateful.uploadsBucket, stateful.artifactsBucket]) expect(actionsOn(statements(), logicalId(bucket))).toEqual([]);
  });

  it("lets the accounts function delete the flows' state machines (and tells it their prefix)", () => {
    const onStates = statements().filter((s) => asArray(s.Action).some((a) => a.startsWith('states:')));
    expect(onStates.map((s) => [s.Action, render(s.Resource)])).toEqual([
      ['states:DeleteStateMachine', `arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:stateMachine:${stateless.flowStateMachinePrefix}-*`],
    ]);
    const vars = slResources[logicalId(stateless.functions.accounts)]!.Properties.Environment.Variables;
    expect(vars[ENV.flowStateMachinePrefix]).toBe(stateless.flowStateMachinePrefix);
  });
});

describe('the API stage', () => {
  it('throttles requests at the stage', () => {
    const stages = ofType('AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(1);
    expect(stages[0]![1].Properties.DefaultRouteSettings).toMatchObject({
      ThrottlingRateLimit: DEFAULT_API_THROTTLE.rateLimit,
      ThrottlingBurstLimit: DEFAULT_API_THROTTLE.burstLimit,
    });
  });
});
