/**
 * CDK: the stateless stack's flow hooks, upload events and email (SES scoped to mailFrom), and its
 * HTTP API (routes, integrations, stage). Templates only, no bundling (the set-up is in
 * test/support/stacks.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { ROUTES, WORKERS, routeKey, type WorkerSpec } from '../../functions/http/route-table.js';
import { FLOW_EXECUTION_ACTIONS, FLOW_TASK_TOKEN_ACTIONS, sesIdentityArns, type AppFunction } from '../../lib/constructs/app-function.js';
import { ASSET_KEY_WILDCARD, UPLOAD_EVENT_SOURCE, UPLOAD_EVENT_TYPES } from '../../functions/adapters/aws/eventbridge-upload-events.js';
import { StatefulStack } from '../../lib/stateful-stack.js';
import { DEFAULT_MAIL_FROM, StatelessStack, type Worker } from '../../lib/stateless-stack.js';
import {
  REPO_ROOT,
  WORKER_NAMES,
  DECLARED,
  stateful,
  stateless,
  slTemplate,
  slResources,
  newApp,
  logicalId,
  asArray,
  ofType,
  statementsOf,
  actionsOn,
  render,
  synthesizeStacks,
  type Resource,
  type Statement,
} from '../support/stacks.js';

synthesizeStacks({ bundle: false });

describe('stateless stack: flow hooks, upload events and email', () => {
  const spec = (w: Worker): WorkerSpec => WORKERS[w];
  const HOOK_WORKERS = WORKER_NAMES.filter((w) => spec(w).invokedByService === 'uploadEvents');
  const fnArn = (w: Worker) => ({ 'Fn::GetAtt': [logicalId(stateless.workers[w]), 'Arn'] });
  const varsOf = (fn: AppFunction): Record<string, unknown> => slResources[logicalId(fn)]!.Properties.Environment?.Variables ?? {};
  const sorted = (xs: Iterable<string>) => [...xs].sort();
  const ruleOf = (rule: IConstruct) => slResources[logicalId(rule)]!;
  const statementsWith = (fn: AppFunction, service: string) =>
    statementsOf(logicalId(fn)).filter((st) => asArray(st.Action).some((a) => a.startsWith(`${service}:`))) as (Statement & { Condition?: unknown })[];

  it('declares one hook dispatcher: invoked by the upload event rules, starting runs like the flows family', () => {
    expect(HOOK_WORKERS).toEqual(['flowHookDispatcher']);
    expect(WORKERS.flowHookDispatcher).toMatchObject({
      handler: 'flow-hook-dispatcher',
      grants: { table: 'RW', dataBucket: 'RW', flowExecutions: ['prepare', 'start', 'release'], mail: true },
      invokedBy: [],
      invokedByService: 'uploadEvents',
    });
    // Among the bundles the bundle tests load on plain Node.
    expect(DECLARED.map((d) => d.fn().entryName)).toContain('flow-hook-dispatcher');
  });

  it('sends asset files stored in the data bucket (S3 Object Created on the asset keys) to the dispatcher, with retries', () => {
    const rule = ruleOf(stateless.assetStoredRule);
    expect(rule.Properties.State).toBe('ENABLED');
    expect(rule.Properties.EventBusName).toBeUndefined(); // the default bus, where S3 sends its events
    const pattern = rule.Properties.EventPattern;
    expect(Object.keys(pattern).sort()).toEqual(['detail', 'detail-type', 'source']);
    expect(pattern.source).toEqual(['aws.s3']);
    expect(pattern['detail-type']).toEqual(['Object Created']);
    expect(Object.keys(pattern.detail).sort()).toEqual(['bucket', 'object']);
    expect(pattern.detail.bucket.name).toHaveLength(1);
    expect(JSON.stringify(pattern.detail.bucket.name[0])).toContain(logicalId(stateful.dataBucket));
    expect(pattern.detail.object).toEqual({ key: [{ wildcard: ASSET_KEY_WILDCARD }] });
    expect(ASSET_KEY_WILDCARD).toBe('datasets/*/assets/*');
    // The key asset-service.ts writes asset files under.
    expect(readFileSync(join(REPO_ROOT, 'functions', 'domain', 'data', 'asset-service.ts'), 'utf8')).toContain('`datasets/${datasetId}/assets/${identifier}/${versionId}`');
    const targets = rule.Properties.Targets as any[];
    expect(targets.map((t) => t.Arn)).toEqual(HOOK_WORKERS.map(fnArn));
    for (const t of targets) {
      expect(t.Input ?? t.InputPath ?? t.InputTransformer).toBeUndefined(); // the whole event
      expect(t.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    }
  });

  it('sends our upload events (Import started, Import finished) to the dispatcher, with retries', () => {
    const rule = ruleOf(stateless.uploadEventsRule);
    expect(rule.Properties.State).toBe('ENABLED');
    expect(rule.Properties.EventBusName).toBeUndefined(); // the default bus, where EventBridgeUploadEvents puts them
    expect(rule.Properties.EventPattern).toEqual({ source: [UPLOAD_EVENT_SOURCE], 'detail-type': Object.values(UPLOAD_EVENT_TYPES) });
    expect(UPLOAD_EVENT_SOURCE).toBe('linked-data-platform.uploads');
    expect(sorted(Object.values(UPLOAD_EVENT_TYPES))).toEqual(sorted(['Import started', 'Import finished']));
    const targets = rule.Properties.Targets as any[];
    expect(targets.map((t) => t.Arn)).toEqual(HOOK_WORKERS.map(fnArn));
    for (const t of targets) {
      expect(t.Input ?? t.InputPath ?? t.InputTransformer).toBeUndefined();
      expect(t.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    }
  });

  it('lets exactly the two rules invoke the dispatcher', () => {
    for (const worker of HOOK_WORKERS) {
      const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => JSON.stringify(p.Properties.FunctionName).includes(logicalId(stateless.workers[worker])));
      expect(permissions.map(([, p]) => p.Properties.Principal)).toEqual(['events.amazonaws.com', 'events.amazonaws.com']);
      expect(sorted(permissions.map(([, p]) => p.Properties.SourceArn['Fn::GetAtt'][0]))).toEqual(sorted([stateless.assetStoredRule, stateless.uploadEventsRule].map(logicalId)));
      for (const [, p] of permissions) expect(p.Properties).toMatchObject({ Action: 'lambda:InvokeFunction', FunctionName: fnArn(worker) });
    }
  });

  it("gives the dispatcher the flows family's run-starting access: table RW, data bucket RW (dataset webhooks record their deliveries, issue 14), prepare and start executions, release task tokens, pass the state machine role", () => {
    const fn = stateless.workers.flowHookDispatcher;
    const statements = statementsOf(logicalId(fn));
    expect(actionsOn(statements, logicalId(stateful.table))).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query']));
    const onData = actionsOn(statements, logicalId(stateful.dataBucket));
    expect(onData).toContain('s3:GetObject');
    expect(onData).toContain('s3:PutObject');
    for (const bucket of [stateful.uploadsBucket, stateful.artifactsBucket]) expect(actionsOn(statements, logicalId(bucket))).toEqual([]);
    const states = statementsWith(fn, 'states').flatMap((st) => asArray(st.Action));
    // It ends data upload hooks' task-token waits too.
    expect(sorted(new Set(states))).toEqual(
      sorted([...FLOW_EXECUTION_ACTIONS.prepare.stateMachines, ...FLOW_EXECUTION_ACTIONS.start.stateMachines, ...FLOW_TASK_TOKEN_ACTIONS]),
    );
    const iam = statementsWith(fn, 'iam');
    expect(iam).toHaveLength(1);
    expect(iam[0]).toMatchObject({
      Action: 'iam:PassRole',
      Resource: { 'Fn::GetAtt': [logicalId(stateless.flowStateMachineRole), 'Arn'] },
      Condition: { StringEquals: { 'iam:PassedToService': 'states.amazonaws.com' } },
    });
    for (const service of ['scheduler', 'lambda', 'events']) expect(statementsWith(fn, service), service).toEqual([]);
    const vars = varsOf(fn);
    expect(vars[ENV.flowStateMachinePrefix]).toBe(stateless.flowStateMachinePrefix);
    expect(vars[ENV.flowTaskWorkerArn]).toEqual(fnArn('flowTaskWorker'));
    expect(vars[ENV.mailFrom]).toBe(DEFAULT_MAIL_FROM);
  });

  it('lets exactly the imports family and the import worker put events, only on the default bus and only with the upload source', () => {
    const putters = DECLARED.filter((d) => d.grants.uploadEvents);
    expect(sorted(putters.map((d) => d.label))).toEqual(['family imports', 'worker importWorker', 'worker watchdog']);
    for (const d of DECLARED) {
      const events = statementsWith(d.fn(), 'events');
      if (!d.grants.uploadEvents) {
        expect(events, d.label).toEqual([]);
        continue;
      }
      expect(events, d.label).toHaveLength(1);
      expect(events[0]).toMatchObject({ Effect: 'Allow', Action: 'events:PutEvents', Condition: { StringEquals: { 'events:source': UPLOAD_EVENT_SOURCE } } });
      expect(render(events[0]!.Resource)).toBe('arn:{AWS::Partition}:events:{AWS::Region}:{AWS::AccountId}:event-bus/default');
    }
  });

  it('lets the functions that settle or start runs, and the task worker, send email from MAIL_FROM only, and tells them MAIL_FROM', () => {
    const senders = DECLARED.filter((d) => d.grants.mail);
    // Settling sends failure emails: the flows family (abort), the settle worker, and the run
    // starters (a run that fails to start settles failed); the task worker has the Send email task.
    expect(sorted(senders.map((d) => d.label))).toEqual(
      sorted(['family flows', 'worker flowSettle', 'worker flowTaskWorker', 'worker flowScheduleStart', 'worker flowHookDispatcher', 'worker watchdog']),
    );
    const identity = (name: string) => `arn:{AWS::Partition}:ses:{AWS::Region}:{AWS::AccountId}:identity/${name}`;
    expect(stateless.mailFrom).toBe(DEFAULT_MAIL_FROM);
    for (const d of DECLARED) {
      const ses = statementsWith(d.fn(), 'ses');
      const vars = varsOf(d.fn());
      if (!d.grants.mail) {
        expect(ses, d.label).toEqual([]);
        expect(vars, `${d.label} must not see ${ENV.mailFrom}`).not.toHaveProperty(ENV.mailFrom);
        continue;
      }
      expect(vars[ENV.mailFrom], d.label).toBe(DEFAULT_MAIL_FROM);
      expect(ses, d.label).toHaveLength(1);
      expect(ses[0]).toMatchObject({ Effect: 'Allow', Action: 'ses:SendEmail', Condition: { StringEquals: { 'ses:FromAddress': DEFAULT_MAIL_FROM } } });
      expect(sorted(asArray(ses[0]!.Resource).map(render)), d.label).toEqual(sorted([identity('example.org'), identity(DEFAULT_MAIL_FROM)]));
    }
  });

  it("scopes SES to the stack's mailFrom, and refuses anything but a bare address", () => {
    // No bundling: only the policies and environment are looked at.
    const app = newApp({ 'aws:cdk:bundling-stacks': [] });
    const sf = new StatefulStack(app, 'MailSf');
    const sl = new StatelessStack(app, 'MailSl', { table: sf.table, dataBucket: sf.dataBucket, uploadsBucket: sf.uploadsBucket, artifactsBucket: sf.artifactsBucket, mailFrom: 'flows@mail.example.com' });
    const resources = Template.fromStack(sl).toJSON().Resources as Record<string, Resource>;
    const fn = sl.workers.flowSettle;
    expect(resources[logicalId(fn)]!.Properties.Environment.Variables[ENV.mailFrom]).toBe('flows@mail.example.com');
    const roleId = logicalId(fn.role!);
    const ses = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && asArray(r.Properties.Roles).some((x: any) => x.Ref === roleId))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as (Statement & { Condition?: unknown })[])
      .filter((st) => asArray(st.Action).includes('ses:SendEmail'));
    expect(ses).toHaveLength(1);
    expect(ses[0]!.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'flows@mail.example.com' } });
    expect(sorted(asArray(ses[0]!.Resource).map(render))).toEqual(
      sorted(['mail.example.com', 'flows@mail.example.com'].map((n) => `arn:{AWS::Partition}:ses:{AWS::Region}:{AWS::AccountId}:identity/${n}`)),
    );
    for (const bad of ['Flows <flows@mail.example.com>', 'flows', 'flows@localhost', 'a b@example.org']) {
      expect(() => sesIdentityArns(new Stack(newApp(), 'Bad'), bad), bad).toThrow(/bare email address/);
    }
  });
});

describe('stateless stack: HTTP API', () => {
  it('creates one route per ROUTES entry, each integrated with its family function (routes with a host: see upload-host.test.ts)', () => {
    const routes = ofType('AWS::ApiGatewayV2::Route');
    expect(routes).toHaveLength(ROUTES.length);
    expect(new Set(ROUTES.map(routeKey)).size, 'route keys are unique').toBe(ROUTES.length);
    expect(new Set(routes.map(([, r]) => r.Properties.RouteKey))).toEqual(new Set(ROUTES.map(routeKey)));
    const apiId = logicalId(stateless.api);
    for (const route of ROUTES) {
      const matches = routes.filter(([, r]) => r.Properties.RouteKey === routeKey(route));
      expect(matches, routeKey(route)).toHaveLength(1);
      if (route.host) continue;
      const props = matches[0]![1].Properties;
      expect(props.ApiId).toEqual({ Ref: apiId });
      // Target is `integrations/<IntegrationId>`.
      const [, [prefix, ref]] = props.Target['Fn::Join'];
      expect(prefix).toBe('integrations/');
      const integration = slResources[ref.Ref]!;
      expect(integration.Type).toBe('AWS::ApiGatewayV2::Integration');
      expect(integration.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        IntegrationUri: { 'Fn::GetAtt': [logicalId(stateless.functions[route.family]), 'Arn'] },
      });
    }
  });

  it('shares one integration per family, and one per container host', () => {
    expect(ofType('AWS::ApiGatewayV2::Integration')).toHaveLength(new Set(ROUTES.filter((r) => !r.host).map((r) => r.family)).size + new Set(ROUTES.filter((r) => r.host).map((r) => r.host)).size);
  });

  it('lets API Gateway invoke each routed function, and only from this API', () => {
    for (const family of new Set(ROUTES.map((r) => r.family))) {
      slTemplate.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [logicalId(stateless.functions[family]), 'Arn'] },
        SourceArn: Match.anyValue(),
      });
    }
    // The only other resource-policy grants: EventBridge rules invoking the flow settle worker and
    // the flow hook dispatcher (see flows and flow hooks).
    const [apiPermissions, others] = [
      ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com'),
      ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal !== 'apigateway.amazonaws.com'),
    ];
    for (const [, p] of apiPermissions) {
      expect(JSON.stringify(p.Properties.SourceArn)).toContain(logicalId(stateless.api));
    }
    for (const [, p] of others) {
      expect(p.Properties.Principal).toBe('events.amazonaws.com');
      const rules = [stateless.flowExecutionEndedRule, stateless.assetStoredRule, stateless.uploadEventsRule, ...stateless.watchdogRules];
      expect(rules.map((r) => ({ 'Fn::GetAtt': [logicalId(r), 'Arn'] }))).toContainEqual(p.Properties.SourceArn);
    }
  });

  it('has a $default stage with access logs, no CORS, and outputs the URL', () => {
    slTemplate.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.absent(),
    });
    slTemplate.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
    slTemplate.hasOutput('ApiUrl', {});
  });
});
