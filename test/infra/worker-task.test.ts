/**
 * CDK: the worker task (issue 19, lib/constructs/worker-task.ts). Imports and URL loads past a
 * function's 15 minutes run on it: the imports family may start exactly this task definition in
 * the platform's cluster and pass exactly its two roles to ECS, the watchdog may only describe
 * tasks of that cluster, both are told WORKER_TASK in the shape the task queue reads, and the
 * task's security group admits nothing.
 */
import { describe, expect, it } from 'vitest';
import { workerTaskSettings } from '../../functions/adapters/aws/ecs-task-queue.js';
import { CONTAINERS } from '../../functions/containers/container-table.js';
import { ENV } from '../../functions/env-names.js';
import { FAMILIES, WORKERS } from '../../functions/http/route-table.js';
import { APP_CONTAINER, nodeCommand } from '../../lib/constructs/container-platform.js';
import { asArray, DECLARED, logicalId, render, slResources, stateless, statementsOf, synthesizeStacks, type Statement } from '../support/stacks.js';

synthesizeStacks({ bundle: false });

const ECS_OR_PASS = /^(ecs:|iam:PassRole$)/;
/** ECS statements and PassRole to ECS (other roles are passed to Step Functions and the Scheduler). */
const ecsStatements = (fnId: string): Statement[] =>
  statementsOf(fnId).filter(
    (s) =>
      asArray(s.Action).some((a) => ECS_OR_PASS.test(a as string)) &&
      (!asArray(s.Action).includes('iam:PassRole') || JSON.stringify(s).includes('ecs-tasks.amazonaws.com')),
  );
/** Statements naming the worker task's definition or roles. */
const workerTaskStatements = (fnId: string): Statement[] => {
  const ids = [stateless.workerTask.taskDefinition, stateless.workerTask.taskRole, stateless.workerTask.executionRole].map((c) => logicalId(c));
  return statementsOf(fnId).filter((s) => ids.some((i) => JSON.stringify(s.Resource).includes(i)));
};
const envOf = (fnId: string): Record<string, unknown> => slResources[fnId]!.Properties.Environment?.Variables ?? {};

/** WORKER_TASK as a function gets it, its tokens rendered (`{LogicalId}` / `{LogicalId.Attr}`). */
function workerTaskEnv(fnId: string): Record<string, unknown> {
  const raw = envOf(fnId)[ENV.workerTask];
  expect(raw, `${fnId} has ${ENV.workerTask}`).toBeDefined();
  return JSON.parse(render(raw)) as Record<string, unknown>;
}

describe('the worker task', () => {
  it('the table says who starts it (imports, the flow task worker) and who asks about it (the watchdog); no other function may start it or is told it', () => {
    expect(FAMILIES.imports.grants.workerTask).toBe('run');
    expect(WORKERS.flowTaskWorker.grants.workerTask).toBe('run');
    expect(WORKERS.watchdog.grants.workerTask).toBe('describe');
    for (const d of DECLARED) {
      const id = logicalId(d.fn());
      if (d.grants.workerTask) continue;
      expect(workerTaskStatements(id), d.label).toEqual([]);
      expect(envOf(id)[ENV.workerTask], d.label).toBeUndefined();
    }
  });

  it.each(['imports', 'flowTaskWorker'])('%s may RunTask exactly the worker task definition in the cluster and pass exactly its two roles to ECS', (name) => {
    const id = logicalId(name === 'imports' ? stateless.functions.imports : stateless.workers.flowTaskWorker);
    const taskDefId = logicalId(stateless.workerTask.taskDefinition);
    const clusterId = logicalId(stateless.containers.cluster);
    // Only the statements about the worker task (the flow task worker also manages SPARQL hosts).
    const statements = workerTaskStatements(id);
    expect(statements.map((s) => asArray(s.Action)).sort()).toEqual([['ecs:RunTask'], ['iam:PassRole']]);
    const runTask = statements.find((s) => asArray(s.Action).includes('ecs:RunTask'))! as Statement & { Condition: any };
    expect(asArray(runTask.Resource).map(render)).toEqual([`{${taskDefId}}`]);
    expect(render(runTask.Condition.ArnEquals['ecs:cluster'])).toBe(`{${clusterId}.Arn}`);
    const pass = statements.find((s) => asArray(s.Action).includes('iam:PassRole'))! as Statement & { Condition: any };
    expect(asArray(pass.Resource).map(render).sort()).toEqual(
      [`{${logicalId(stateless.workerTask.taskRole)}.Arn}`, `{${logicalId(stateless.workerTask.executionRole)}.Arn}`].sort(),
    );
    expect(pass.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } });
  });

  it('imports is told WORKER_TASK: the cluster, task definition, app container, its command up to the role, the public subnets and the task\'s security group', () => {
    const id = logicalId(stateless.functions.imports);
    const env = workerTaskEnv(id);
    expect(env).toEqual({
      cluster: `{${logicalId(stateless.containers.cluster)}.Arn}`,
      taskDefinition: `{${logicalId(stateless.workerTask.taskDefinition)}}`,
      container: APP_CONTAINER,
      command: nodeCommand('worker'),
      subnets: stateless.containers.vpc.publicSubnets.map((s) => `{${logicalId(s as never)}}`),
      securityGroups: [`{${logicalId(stateless.worker.securityGroup)}.GroupId}`],
    });
    // The shape the task queue reads (functions/adapters/aws/ecs-task-queue.ts).
    expect(() => workerTaskSettings(JSON.stringify(env))).not.toThrow();
    // The import worker function is still told too: small uploads and service loads stay there.
    expect(envOf(id)[ENV.importWorkerFunctionName]).toBeDefined();
  });

  it('long flow tasks: the worker task may end and heartbeat task-token waits (SendTaskSuccess/Failure/Heartbeat) and read and write artifacts', () => {
    expect(CONTAINERS.worker.grants).toMatchObject({ artifactsBucket: 'RW', flowExecutions: ['release', 'heartbeat'] });
    const roleId = logicalId(stateless.workerTask.taskRole);
    const actions = Object.values(slResources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && asArray(r.Properties.Roles).some((x: any) => x.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[])
      .flatMap((s) => asArray(s.Action) as string[])
      .filter((a) => a.startsWith('states:'));
    expect(actions.sort()).toEqual(['states:SendTaskFailure', 'states:SendTaskHeartbeat', 'states:SendTaskSuccess']);
  });

  it('the task definition runs the worker role with the container table\'s size and grants nothing ECS', () => {
    const td = slResources[logicalId(stateless.workerTask.taskDefinition)]!;
    expect(td.Properties.Cpu).toBe(String(CONTAINERS.worker.cpu));
    expect(td.Properties.Memory).toBe(String(CONTAINERS.worker.memoryMb));
    const app = (td.Properties.ContainerDefinitions as any[]).find((c) => c.Name === APP_CONTAINER);
    expect(app.Command).toEqual(nodeCommand('worker'));
    expect(CONTAINERS.worker.grants).not.toHaveProperty('workerTask');
  });

  it('the watchdog may only DescribeTasks of the cluster\'s tasks, and is told the cluster', () => {
    const id = logicalId(stateless.workers.watchdog);
    const clusterId = logicalId(stateless.containers.cluster);
    const statements = ecsStatements(id) as (Statement & { Condition: any })[];
    expect(statements.map((s) => asArray(s.Action))).toEqual([['ecs:DescribeTasks']]);
    expect(asArray(statements[0]!.Resource).map(render)).toEqual([
      `arn:{AWS::Partition}:ecs:{AWS::Region}:{AWS::AccountId}:task/{${clusterId}}/*`,
    ]);
    expect(render(statements[0]!.Condition.ArnEquals['ecs:cluster'])).toBe(`{${clusterId}.Arn}`);
    expect(workerTaskEnv(id)).toEqual({ cluster: `{${clusterId}.Arn}`, container: APP_CONTAINER });
  });

  it('its security group admits nothing and lets it download from any host and port', () => {
    const sg = slResources[logicalId(stateless.worker.securityGroup)]!;
    expect(sg.Properties.SecurityGroupIngress).toBeUndefined();
    expect(
      Object.values(slResources).filter((r) => r.Type === 'AWS::EC2::SecurityGroupIngress' && JSON.stringify(r.Properties.GroupId).includes(logicalId(stateless.worker.securityGroup))),
    ).toEqual([]);
    expect((sg.Properties.SecurityGroupEgress as any[]).map((e) => [e.CidrIp ?? e.CidrIpv6, e.IpProtocol, e.FromPort, e.ToPort])).toEqual([
      ['0.0.0.0/0', 'tcp', 0, 65535],
      ['::/0', 'tcp', 0, 65535],
    ]);
  });
});
