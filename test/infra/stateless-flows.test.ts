/**
 * CDK: the stateless stack's workers (who may invoke whom) and flows (state machines, their role,
 * execution events, task tokens, flow schedules). Templates only, no bundling (the set-up is in
 * test/support/stacks.ts).
 */
import { describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { FAMILIES, WORKERS, type Family, type FlowExecutionUse, type WorkerSpec } from '../../functions/http/route-table.js';
import { FLOW_EXECUTION_ACTIONS, FLOW_TASK_TOKEN_ACTIONS, FLOW_SCHEDULE_ACTIONS, type AppFunction } from '../../lib/constructs/app-function.js';
import { FLOW_SCHEDULE_NAME_PREFIX } from '../../functions/adapters/aws/eventbridge-scheduler.js';
import { FINAL_EXECUTION_STATUSES, FLOW_PREFIX_MAX, defaultFlowPrefix, type Worker } from '../../lib/stateless-stack.js';
import {
  FAMILY_NAMES,
  WORKER_NAMES,
  DECLARED,
  stateless,
  slTemplate,
  slResources,
  logicalId,
  asArray,
  ofType,
  statementsOf,
  actionsOn,
  render,
  synthesizeStacks,
  type DeclaredFunction,
  type Statement,
} from '../support/stacks.js';

synthesizeStacks({ bundle: false });

describe('stateless stack: workers', () => {
  const invokers = (worker: Worker): readonly Family[] => WORKERS[worker].invokedBy;
  const workerInvokers = (worker: Worker): readonly string[] => (WORKERS[worker] as WorkerSpec).invokedByWorkers ?? [];
  /** Whether the declared function is among the worker's invokers (a family in invokedBy, a worker in invokedByWorkers). */
  const invokes = (d: DeclaredFunction, worker: Worker): boolean =>
    d.family !== undefined ? invokers(worker).includes(d.family) : workerInvokers(worker).some((w) => stateless.workers[w as Worker] === d.fn());

  it('lets the task worker invoke the import worker (a service action loads the service there) and tells it its name', () => {
    expect(workerInvokers('importWorker')).toEqual(['flowTaskWorker']);
    const statements = statementsOf(logicalId(stateless.workers.flowTaskWorker));
    const invoke = statements.filter((s) => asArray(s.Action).includes('lambda:InvokeFunction'));
    expect(invoke).toHaveLength(1);
    expect(asArray(invoke[0]!.Resource)).toEqual([{ 'Fn::GetAtt': [logicalId(stateless.workers.importWorker), 'Arn'] }]);
    const vars = slResources[logicalId(stateless.workers.flowTaskWorker)]!.Properties.Environment.Variables;
    expect(vars[ENV.importWorkerFunctionName]).toEqual({ Ref: logicalId(stateless.workers.importWorker) });
  });

  it('lets only the invokedBy families and invokedByWorkers workers invoke each worker (unqualified ARN only), and nothing else invoke anything', () => {
    const workerIds = new Set(WORKER_NAMES.map((w) => logicalId(stateless.workers[w])));
    for (const d of DECLARED) {
      const { label, fn } = d;
      const statements = statementsOf(logicalId(fn()));
      const lambdaStatements = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('lambda:')));
      // Only ever lambda:InvokeFunction, and only on workers, by their unqualified ARN.
      for (const s of lambdaStatements) {
        expect(asArray(s.Action), label).toEqual(['lambda:InvokeFunction']);
        for (const r of asArray(s.Resource)) {
          const target = [...workerIds].filter((id) => JSON.stringify(r).includes(id));
          expect(target, `${label}: ${JSON.stringify(r)}`).toHaveLength(1);
          expect(r, label).toEqual({ 'Fn::GetAtt': [target[0], 'Arn'] });
        }
      }
      const expected = WORKER_NAMES.filter((w) => invokes(d, w));
      for (const worker of WORKER_NAMES) {
        const onWorker = actionsOn(statements, logicalId(stateless.workers[worker]));
        if (expected.includes(worker)) expect(onWorker, `${label} must invoke ${worker}`).toContain('lambda:InvokeFunction');
        else expect(onWorker, `${label} must not invoke ${worker}`).toEqual([]);
      }
      if (expected.length === 0) expect(lambdaStatements, `${label} must not invoke anything`).toEqual([]);
    }
  });

  it('tells the invokedBy families and invokedByWorkers workers (and only them) the worker function name', () => {
    for (const worker of WORKER_NAMES) {
      const { envName } = WORKERS[worker] as WorkerSpec;
      if (!envName) {
        // Invoked by an AWS service (invokedByService), never by a family or worker.
        expect(invokers(worker), worker).toEqual([]);
        expect(workerInvokers(worker), worker).toEqual([]);
        continue;
      }
      const workerId = logicalId(stateless.workers[worker]);
      for (const d of DECLARED) {
        const { label, fn } = d;
        const vars: Record<string, unknown> = slResources[logicalId(fn())]!.Properties.Environment?.Variables ?? {};
        if (invokes(d, worker)) expect(vars[envName], label).toEqual({ Ref: workerId });
        else expect(vars, `${label} must not see ${envName}`).not.toHaveProperty(envName);
      }
    }
  });

  it('configures asynchronous invocation: one retry, bounded event age (not for the synchronously invoked Step Functions worker)', () => {
    const configs = ofType('AWS::Lambda::EventInvokeConfig');
    const sync = (w: Worker) => (WORKERS[w] as WorkerSpec).invokedByService === 'stepFunctions';
    expect(configs).toHaveLength(WORKER_NAMES.filter((w) => !sync(w)).length);
    for (const worker of WORKER_NAMES) {
      const matches = configs.filter(([, c]) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify({ Ref: logicalId(stateless.workers[worker]) }));
      if (sync(worker)) {
        expect(matches, worker).toHaveLength(0);
        continue;
      }
      expect(matches, worker).toHaveLength(1);
      const props = matches[0]![1].Properties;
      expect(props.MaximumRetryAttempts).toBe(1);
      expect(props.MaximumEventAgeInSeconds).toBeGreaterThanOrEqual(60);
      expect(props.MaximumEventAgeInSeconds).toBeLessThanOrEqual(6 * 3600);
    }
  });

  it('gives no worker an API route, integration or API Gateway permission', () => {
    for (const worker of WORKER_NAMES) {
      const id = logicalId(stateless.workers[worker]);
      for (const [, integration] of ofType('AWS::ApiGatewayV2::Integration')) {
        expect(JSON.stringify(integration.Properties.IntegrationUri)).not.toContain(id);
      }
      for (const [, permission] of ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com')) {
        expect(JSON.stringify(permission.Properties.FunctionName)).not.toContain(id);
      }
    }
  });
});

describe('stateless stack: flows', () => {
  const spec = (w: Worker): WorkerSpec => WORKERS[w];
  const TASK_WORKER = WORKER_NAMES.filter((w) => spec(w).invokedByService === 'stepFunctions');
  const SETTLE_WORKERS = WORKER_NAMES.filter((w) => spec(w).invokedByService === 'flowExecutionEvents');
  const usesOf = (d: DeclaredFunction): readonly FlowExecutionUse[] => d.grants.flowExecutions ?? [];
  const ARN = (resource: string, name: string) => `arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:${resource}:${name}`;
  const stateMachines = () => ARN('stateMachine', `${stateless.flowStateMachinePrefix}-*`);
  const executions = () => ARN('execution', `${stateless.flowStateMachinePrefix}-*:*`);
  const roleArn = () => ({ 'Fn::GetAtt': [logicalId(stateless.flowStateMachineRole), 'Arn'] });
  const scheduleRoleArn = () => ({ 'Fn::GetAtt': [logicalId(stateless.flowScheduleRole), 'Arn'] });
  const fnArn = (w: Worker) => ({ 'Fn::GetAtt': [logicalId(stateless.workers[w]), 'Arn'] });
  const varsOf = (fn: AppFunction): Record<string, unknown> => slResources[logicalId(fn)]!.Properties.Environment?.Variables ?? {};
  /** Actions of `states:` statements by resource (rendered), and the `iam:` statements. */
  const flowStatements = (fn: AppFunction) => {
    const statements = statementsOf(logicalId(fn));
    const states = new Map<string, Set<string>>();
    for (const st of statements.filter((x) => asArray(x.Action).some((a) => a.startsWith('states:')))) {
      expect(asArray(st.Action).every((a) => a.startsWith('states:')), 'states actions are not mixed with others').toBe(true);
      for (const r of asArray(st.Resource)) {
        const key = render(r);
        states.set(key, new Set([...(states.get(key) ?? []), ...asArray(st.Action)]));
      }
    }
    // Passing the container tasks' roles to ECS is the worker task's and SPARQL hosts' business (their infra tests).
    const toEcs = (x: Statement) => JSON.stringify(x).includes('ecs-tasks.amazonaws.com');
    return { states, iam: statements.filter((x) => asArray(x.Action).some((a) => a.startsWith('iam:')) && !toEcs(x)) as (Statement & { Condition?: unknown })[] };
  };
  const sorted = (xs: Iterable<string>) => [...xs].sort();

  it('declares the flow task worker (Step Functions) and the flow settle worker (execution events)', () => {
    expect(TASK_WORKER).toEqual(['flowTaskWorker']);
    expect(SETTLE_WORKERS).toEqual(['flowSettle']);
    expect(WORKERS.flowTaskWorker).toMatchObject({
      handler: 'flow-task-worker',
      grants: { table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', artifactsBucket: 'RW' },
      memoryMb: 3008,
      timeoutSeconds: 900,
      invokedBy: [],
    });
    expect(WORKERS.flowSettle).toMatchObject({ handler: 'flow-settle', grants: { table: 'RW', artifactsBucket: 'RW' }, invokedBy: [] });
    expect(WORKERS.flowSettle.grants).not.toHaveProperty('dataBucket');
    // The import worker is still invoked by families only.
    expect(spec('importWorker').invokedByService).toBeUndefined();
    // Both flow handlers are among the bundles every test above loads on plain Node.
    expect(DECLARED.map((d) => d.fn().entryName)).toEqual(expect.arrayContaining(['flow-task-worker', 'flow-settle']));
  });

  it('names state machines under a short prefix derived from the stack name', () => {
    expect(stateless.flowStateMachinePrefix).toBe(defaultFlowPrefix('LinkedDataPlatform-Stateless'));
    expect(stateless.flowStateMachinePrefix).toBe('LinkedDataPlatform-Stateless-flow');
    const long = defaultFlowPrefix('A-very-long-stack-name-for-a-test-deployment-of-the-platform');
    // Room for `-<24-character uid>-v<version>` within Step Functions' 80 characters.
    expect(FLOW_PREFIX_MAX + 1 + 24 + 2 + 6).toBeLessThanOrEqual(80);
    expect(long.length).toBeLessThanOrEqual(FLOW_PREFIX_MAX);
    expect(long).toMatch(/^A-very-long-[A-Za-z0-9_-]*-[0-9a-f]{8}-flow$/);
    expect(defaultFlowPrefix('A-very-long-stack-name-for-a-test-deployment-of-the-platform-2')).not.toBe(long);
  });

  it('has a state machine role only Step Functions (for our state machines) assumes, allowed only to invoke the task worker', () => {
    const role = slResources[logicalId(stateless.flowStateMachineRole)]!;
    expect(role.Type).toBe('AWS::IAM::Role');
    const trust = role.Properties.AssumeRolePolicyDocument.Statement as any[];
    expect(trust).toHaveLength(1);
    expect(trust[0]).toMatchObject({ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'states.amazonaws.com' } });
    // Only the task worker's unqualified ARN (no `:*` versions or aliases).
    expect(trust[0].Condition.StringEquals).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    expect(render(trust[0].Condition.ArnLike['aws:SourceArn'])).toBe(stateMachines());
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.Policies).toBeUndefined();

    const roleId = logicalId(stateless.flowStateMachineRole);
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => asArray(p.Properties.Roles).some((r: any) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
    expect(statements.length).toBeGreaterThan(0);
    const taskWorkerId = logicalId(stateless.workers.flowTaskWorker);
    for (const st of statements) {
      expect(st.Effect).toBe('Allow');
      expect(asArray(st.Action)).toEqual(['lambda:InvokeFunction']);
      expect(asArray(st.Resource)).toEqual([fnArn('flowTaskWorker')]);
      for (const r of asArray(st.Resource)) expect(JSON.stringify(r)).toContain(taskWorkerId);
    }
  });

  it('declares which FlowExecutor methods each function calls', () => {
    const declared = Object.fromEntries(DECLARED.filter((d) => d.grants.flowExecutions).map((d) => [d.label, sorted(usesOf(d))]));
    expect(declared).toEqual({
      'family accounts': ['discard'],
      'family flows': sorted(['prepare', 'start', 'abort', 'discard']),
      'worker flowTaskWorker': ['release'],
      'worker flowSettle': ['result'],
      'worker flowScheduleStart': sorted(['prepare', 'start']),
      'worker flowHookDispatcher': sorted(['prepare', 'release', 'start']),
      'worker watchdog': sorted(['discard', 'status']),
    });
  });

  it('grants each function exactly the Step Functions actions of the methods it calls, on the prefixed state machines and executions only', () => {
    for (const d of DECLARED) {
      const uses = usesOf(d);
      const { states, iam } = flowStatements(d.fn());
      const expected = new Map<string, string[]>();
      for (const use of uses) {
        const actions = FLOW_EXECUTION_ACTIONS[use] as { stateMachines?: readonly string[]; executions?: readonly string[]; any?: readonly string[] };
        for (const [key, resource] of [['stateMachines', stateMachines()], ['executions', executions()], ['any', '*']] as const) {
          if (actions[key]) expected.set(resource, [...(expected.get(resource) ?? []), ...actions[key]!]);
        }
      }
      expect(sorted(states.keys()), d.label).toEqual(sorted(expected.keys()));
      for (const [resource, actions] of expected) expect(sorted(states.get(resource)!), `${d.label} on ${resource}`).toEqual(sorted(new Set(actions)));
      // Passing the state machine role goes with 'prepare' only (the schedule role is asserted with the flow schedules).
      const statesIam = iam.filter((st) => JSON.stringify(st.Resource) !== JSON.stringify(scheduleRoleArn()));
      if (!uses.includes('prepare')) {
        expect(statesIam, d.label).toEqual([]);
        continue;
      }
      expect(statesIam, d.label).toHaveLength(1);
      expect(statesIam[0]).toMatchObject({
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: roleArn(),
        Condition: { StringEquals: { 'iam:PassedToService': 'states.amazonaws.com' } },
      });
    }
    // What the methods send (step-functions-executor.ts).
    expect(sorted(FLOW_EXECUTION_ACTIONS.prepare.stateMachines)).toEqual(sorted(['states:CreateStateMachine', 'states:TagResource', 'states:DescribeStateMachine']));
    expect(FLOW_EXECUTION_ACTIONS.discard.stateMachines).toEqual(['states:DeleteStateMachine']);
    expect(FLOW_EXECUTION_ACTIONS.release.any).toEqual(FLOW_TASK_TOKEN_ACTIONS);
  });

  it('lets the accounts family delete state machines (deleting an account removes its flows), and nothing else of Step Functions', () => {
    const { states, iam } = flowStatements(stateless.functions.accounts);
    expect([...states.keys()]).toEqual([stateMachines()]);
    expect([...states.get(stateMachines())!]).toEqual(['states:DeleteStateMachine']);
    expect(iam.filter((st) => JSON.stringify(st.Resource) === JSON.stringify(roleArn()))).toEqual([]);
    expect(varsOf(stateless.functions.accounts)[ENV.flowStateMachinePrefix]).toBe(stateless.flowStateMachinePrefix);
  });

  it('gives task-token actions only to the functions that release waits (the task worker and the hook dispatcher)', () => {
    const holders = DECLARED.filter((d) => statementsOf(logicalId(d.fn())).some((st) => asArray(st.Action).some((a) => (FLOW_TASK_TOKEN_ACTIONS as readonly string[]).includes(a))));
    expect(sorted(holders.map((d) => d.label))).toEqual(['worker flowHookDispatcher', 'worker flowTaskWorker']);
  });

  it('gives no other function any Step Functions or IAM permission', () => {
    for (const d of DECLARED) {
      if (usesOf(d).length > 0) continue;
      // Passing the container tasks' roles to ECS is not Step Functions' (see worker-task.test.ts).
      const actions = statementsOf(logicalId(d.fn()))
        .filter((st) => !JSON.stringify(st).includes('ecs-tasks.amazonaws.com'))
        .flatMap((st) => asArray(st.Action));
      const scheduleManager = d.grants.flowSchedules === 'manage';
      expect(actions.filter((a) => a.startsWith('states:') || (a.startsWith('iam:') && !scheduleManager)), d.label).toEqual([]);
    }
  });

  it('sets the flows env exactly on the functions that use executions; role and task worker only where they prepare (never on the task worker)', () => {
    for (const d of DECLARED) {
      const vars = varsOf(d.fn());
      const uses = usesOf(d);
      if (uses.length === 0) {
        for (const name of [ENV.flowStateMachinePrefix, ENV.flowStateMachineRoleArn, ENV.flowTaskWorkerArn]) {
          expect(vars, `${d.label} must not see ${name}`).not.toHaveProperty(name);
        }
        continue;
      }
      expect(vars[ENV.flowStateMachinePrefix], d.label).toBe(stateless.flowStateMachinePrefix);
      if (uses.includes('prepare')) {
        expect(vars[ENV.flowStateMachineRoleArn], d.label).toEqual(roleArn());
        expect(vars[ENV.flowTaskWorkerArn], d.label).toEqual(fnArn('flowTaskWorker'));
      } else {
        expect(vars, d.label).not.toHaveProperty(ENV.flowStateMachineRoleArn);
        expect(vars, d.label).not.toHaveProperty(ENV.flowTaskWorkerArn);
      }
    }
    expect(varsOf(stateless.workers.flowTaskWorker)).not.toHaveProperty(ENV.flowTaskWorkerArn);
  });

  it("sends our state machines' final execution statuses, and only those, to the settle worker", () => {
    // The flow rule, the two flow hook rules (see flow hooks), the watchdog's schedule, nothing else.
    const rules = ofType('AWS::Events::Rule');
    expect(stateless.watchdogRules).toHaveLength(1);
    // The watchdog's: every 5 minutes, to the watchdog worker only.
    const watchdogRule = rules.find(([id]) => id === logicalId(stateless.watchdogRules[0]!))![1];
    expect(watchdogRule.Properties.ScheduleExpression).toBe('rate(5 minutes)');
    expect(watchdogRule.Properties.Targets.map((t: { Arn: unknown }) => t.Arn)).toEqual([fnArn('watchdog')]);
    expect(sorted(rules.map(([id]) => id))).toEqual(
      sorted([stateless.flowExecutionEndedRule, stateless.assetStoredRule, stateless.uploadEventsRule, ...stateless.watchdogRules].map(logicalId)),
    );
    const [ruleId, rule] = rules.find(([id]) => id === logicalId(stateless.flowExecutionEndedRule))!;
    expect(rule.Properties.State).toBe('ENABLED');
    expect(rule.Properties.EventBusName).toBeUndefined(); // the default bus, where Step Functions sends them
    const pattern = rule.Properties.EventPattern;
    expect(Object.keys(pattern).sort()).toEqual(['detail', 'detail-type', 'source']);
    expect(pattern.source).toEqual(['aws.states']);
    expect(pattern['detail-type']).toEqual(['Step Functions Execution Status Change']);
    expect(Object.keys(pattern.detail).sort()).toEqual(['stateMachineArn', 'status']);
    expect(sorted(pattern.detail.status)).toEqual(sorted(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']));
    expect(sorted(FINAL_EXECUTION_STATUSES)).toEqual(sorted(pattern.detail.status));
    expect(pattern.detail.stateMachineArn).toHaveLength(1);
    expect(Object.keys(pattern.detail.stateMachineArn[0])).toEqual(['prefix']);
    expect(render(pattern.detail.stateMachineArn[0].prefix)).toBe(ARN('stateMachine', `${stateless.flowStateMachinePrefix}-`));

    const targets = rule.Properties.Targets as any[];
    expect(targets.map((t) => t.Arn)).toEqual(SETTLE_WORKERS.map(fnArn));
    for (const t of targets) {
      expect(t.Input ?? t.InputPath ?? t.InputTransformer).toBeUndefined(); // the whole event
      expect(t.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    }
    for (const worker of SETTLE_WORKERS) {
      slTemplate.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: fnArn(worker),
        SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
      });
    }
    // Nothing but the rule may invoke the settle worker, and no resource policy lets anyone invoke the task worker.
    const permissionsOn = (w: Worker) =>
      ofType('AWS::Lambda::Permission').filter(([, p]) => JSON.stringify(p.Properties.FunctionName).includes(logicalId(stateless.workers[w])));
    for (const worker of SETTLE_WORKERS) expect(permissionsOn(worker)).toHaveLength(1);
    for (const worker of TASK_WORKER) expect(permissionsOn(worker)).toEqual([]);
  });

  describe('flow schedules', () => {
    const SCHEDULE_START = WORKER_NAMES.filter((w) => spec(w).invokedByService === 'flowSchedules');
    const group = () => `${stateless.flowStateMachinePrefix}-schedules`;
    const SCHEDULER_ARN = (resource: string, name: string) => `arn:{AWS::Partition}:scheduler:{AWS::Region}:{AWS::AccountId}:${resource}/${name}`;
    const schedules = () => SCHEDULER_ARN('schedule', `${group()}/${FLOW_SCHEDULE_NAME_PREFIX}-*`);
    /** `scheduler:` actions by resource (rendered), and the iam:PassRole statements of the schedule role. */
    const scheduleStatements = (fn: AppFunction) => {
      const statements = statementsOf(logicalId(fn));
      const actions = new Map<string, Set<string>>();
      for (const st of statements.filter((x) => asArray(x.Action).some((a) => a.startsWith('scheduler:')))) {
        expect(asArray(st.Action).every((a) => a.startsWith('scheduler:')), 'scheduler actions are not mixed with others').toBe(true);
        for (const r of asArray(st.Resource)) actions.set(render(r), new Set([...(actions.get(render(r)) ?? []), ...asArray(st.Action)]));
      }
      const passRole = statements.filter((x) => asArray(x.Action).includes('iam:PassRole') && JSON.stringify(x.Resource) === JSON.stringify(scheduleRoleArn()));
      return { actions, passRole: passRole as (Statement & { Condition?: unknown })[] };
    };
    const scheduleGrant = (d: DeclaredFunction) => d.grants.flowSchedules;

    it('declares one schedule-start worker, invoked by EventBridge Scheduler, that starts runs and only removes schedules', () => {
      expect(SCHEDULE_START).toEqual(['flowScheduleStart']);
      expect(WORKERS.flowScheduleStart).toMatchObject({
        handler: 'flow-schedule-start',
        grants: { table: 'RW', flowExecutions: ['prepare', 'start'], flowSchedules: 'remove' },
        invokedBy: [],
        invokedByService: 'flowSchedules',
      });
      expect(FAMILIES.flows.grants.flowSchedules).toBe('manage');
      // Removing a user removes their schedules.
      expect(FAMILIES.accounts.grants.flowSchedules).toBe('remove');
    });

    it('has one schedule group, named after the flow prefix', () => {
      const groups = ofType('AWS::Scheduler::ScheduleGroup');
      expect(groups).toHaveLength(1);
      expect(groups[0]![0]).toBe(logicalId(stateless.flowScheduleGroup));
      expect(groups[0]![1].Properties.Name).toBe(group());
      expect(group().length).toBeLessThanOrEqual(64);
      // Schedule names (`<prefix>-<24-character id>`) fit EventBridge Scheduler's 64 characters.
      expect(`${FLOW_SCHEDULE_NAME_PREFIX}-${'0'.repeat(24)}`.length).toBeLessThanOrEqual(64);
      // The schedules themselves are made at run time, not by the stack.
      expect(ofType('AWS::Scheduler::Schedule')).toEqual([]);
    });

    it('has a schedule role only EventBridge Scheduler (for our group) assumes, allowed only to invoke the schedule-start worker', () => {
      const role = slResources[logicalId(stateless.flowScheduleRole)]!;
      expect(role.Type).toBe('AWS::IAM::Role');
      const trust = role.Properties.AssumeRolePolicyDocument.Statement as any[];
      expect(trust).toHaveLength(1);
      expect(trust[0]).toMatchObject({ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'scheduler.amazonaws.com' } });
      expect(trust[0].Condition.StringEquals).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
      expect(render(trust[0].Condition.ArnLike['aws:SourceArn'])).toBe(SCHEDULER_ARN('schedule-group', group()));
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.Policies).toBeUndefined();
      const roleId = logicalId(stateless.flowScheduleRole);
      const statements = ofType('AWS::IAM::Policy')
        .filter(([, p]) => asArray(p.Properties.Roles).some((r: any) => r.Ref === roleId))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
      expect(statements.length).toBeGreaterThan(0);
      const targetId = logicalId(stateless.workers.flowScheduleStart);
      for (const st of statements) {
        expect(st.Effect).toBe('Allow');
        expect(asArray(st.Action)).toEqual(['lambda:InvokeFunction']);
        expect(asArray(st.Resource)).toEqual([fnArn('flowScheduleStart')]);
        for (const r of asArray(st.Resource)) expect(JSON.stringify(r)).toContain(targetId);
      }
      // No resource policy: the role's own permission is what lets EventBridge Scheduler invoke it.
      const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => JSON.stringify(p.Properties.FunctionName).includes(targetId));
      expect(permissions).toEqual([]);
    });

    it("lets 'manage' functions create, change and delete only the group's flow schedules and pass only the schedule role to EventBridge Scheduler", () => {
      const managers = DECLARED.filter((d) => scheduleGrant(d) === 'manage');
      expect(managers.map((d) => d.label)).toEqual(['family flows']);
      for (const d of managers) {
        const { actions, passRole } = scheduleStatements(d.fn());
        expect([...actions.keys()], d.label).toEqual([schedules()]);
        expect(sorted(actions.get(schedules())!), d.label).toEqual(
          sorted(['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule']),
        );
        expect(sorted(actions.get(schedules())!)).toEqual(sorted(FLOW_SCHEDULE_ACTIONS.manage));
        expect(passRole, d.label).toHaveLength(1);
        expect(passRole[0]).toMatchObject({ Effect: 'Allow', Action: 'iam:PassRole', Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } } });
        const vars = varsOf(d.fn());
        expect(vars[ENV.flowScheduleGroup], d.label).toBe(group());
        expect(vars[ENV.flowScheduleRoleArn], d.label).toEqual(scheduleRoleArn());
        expect(vars[ENV.flowScheduleStartArn], d.label).toEqual(fnArn('flowScheduleStart'));
      }
    });

    it("lets 'remove' functions only delete (and read) the group's flow schedules: no role to pass, no target", () => {
      const removers = DECLARED.filter((d) => scheduleGrant(d) === 'remove');
      expect(sorted(removers.map((d) => d.label))).toEqual(['family accounts', 'worker flowScheduleStart']);
      for (const d of removers) {
        const { actions, passRole } = scheduleStatements(d.fn());
        expect([...actions.keys()], d.label).toEqual([schedules()]);
        expect(sorted(actions.get(schedules())!), d.label).toEqual(sorted(['scheduler:DeleteSchedule', 'scheduler:GetSchedule']));
        expect(passRole, d.label).toEqual([]);
        const vars = varsOf(d.fn());
        expect(vars[ENV.flowScheduleGroup], d.label).toBe(group());
        expect(vars, d.label).not.toHaveProperty(ENV.flowScheduleRoleArn);
        expect(vars, d.label).not.toHaveProperty(ENV.flowScheduleStartArn);
      }
    });

    it('gives no other function any scheduler permission or schedule env', () => {
      for (const d of DECLARED.filter((x) => !scheduleGrant(x))) {
        const { actions, passRole } = scheduleStatements(d.fn());
        expect(actions.size, d.label).toBe(0);
        expect(passRole, d.label).toEqual([]);
        for (const name of [ENV.flowScheduleGroup, ENV.flowScheduleRoleArn, ENV.flowScheduleStartArn]) expect(varsOf(d.fn()), `${d.label} must not see ${name}`).not.toHaveProperty(name);
      }
    });

    it('lets the schedule-start worker start runs as the flows family does: prepare and start the prefixed state machines, pass only their role to Step Functions', () => {
      for (const worker of SCHEDULE_START) {
        const { states, iam } = flowStatements(stateless.workers[worker]);
        expect(sorted(states.keys()), worker).toEqual([stateMachines()]);
        expect(sorted(states.get(stateMachines())!), worker).toEqual(sorted([...FLOW_EXECUTION_ACTIONS.prepare.stateMachines, ...FLOW_EXECUTION_ACTIONS.start.stateMachines]));
        expect(iam, worker).toHaveLength(1);
        expect(iam[0]).toMatchObject({ Action: 'iam:PassRole', Resource: roleArn(), Condition: { StringEquals: { 'iam:PassedToService': 'states.amazonaws.com' } } });
        const vars = varsOf(stateless.workers[worker]);
        expect(vars[ENV.flowTaskWorkerArn], worker).toEqual(fnArn('flowTaskWorker'));
      }
    });
  });
});
