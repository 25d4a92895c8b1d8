/**
 * CDK: the SPARQL hosts (issue 19, lib/constructs/sparql-hosts.ts). One Fargate task per running
 * service: Virtuoso (pinned public image, sized from the container table, its dba password a
 * generated secret, the SPARQL_UPDATE grant written by an init container) and the loader. The
 * functions the route table grants serviceHosts get exactly their use: 'manage' (RunTask of this
 * task definition, PassRole of its roles, StopTask in the cluster), 'describe' (the watchdog:
 * DescribeTasks in the cluster), 'query' (in the VPC with the one security group Virtuoso
 * admits), and every one is told SPARQL_HOSTS in the adapter's shape.
 */
import { describe, expect, it } from 'vitest';
import { sparqlHostsSettings } from '../../functions/adapters/aws/ecs-service-hosts.js';
import { CONTAINERS } from '../../functions/containers/container-table.js';
import { ENV } from '../../functions/env-names.js';
import { FAMILIES, WORKERS } from '../../functions/http/route-table.js';
import { APP_CONTAINER, BUNDLE_CONTAINER, nodeCommand } from '../../lib/constructs/container-platform.js';
import { INITDB_CONTAINER, INITDB_FILE, INITDB_SCRIPT, VIRTUOSO_CONTAINER, VIRTUOSO_IMAGE } from '../../lib/constructs/sparql-hosts.js';
import { asArray, DECLARED, logicalId, ofType, render, slResources, stateless, statementsOf, synthesizeStacks, type Statement } from '../support/stacks.js';

synthesizeStacks({ bundle: false });

const envOf = (id: string): Record<string, unknown> => slResources[id]!.Properties.Environment?.Variables ?? {};
const hostsEnv = (id: string) => {
  const raw = envOf(id)[ENV.sparqlHosts];
  expect(raw, `${id} has ${ENV.sparqlHosts}`).toBeDefined();
  return JSON.parse(render(raw)) as Record<string, unknown>;
};
const ecsStatements = (statements: Statement[]) =>
  statements.filter((s) => asArray(s.Action).some((a) => /^ecs:/.test(a as string)) || JSON.stringify(s).includes('ecs-tasks.amazonaws.com'));
/** Statements of the policies attached to a role (by the role's logical id). */
const roleStatements = (roleId: string): Statement[] =>
  ofType('AWS::IAM::Policy')
    .filter(([, p]) => asArray(p.Properties.Roles).some((r: any) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
const containers = () => slResources[logicalId(stateless.sparqlHosts.task.taskDefinition)]!.Properties.ContainerDefinitions as any[];
const container = (name: string) => containers().find((c) => c.Name === name);

describe('the SPARQL hosts', () => {
  it('the table grants manage to who starts/stops services and query to who queries them; nobody else is told', () => {
    expect(FAMILIES.services.grants.serviceHosts).toBe('manage');
    expect(WORKERS.importWorker.grants.serviceHosts).toBe('manage');
    expect(WORKERS.flowTaskWorker.grants.serviceHosts).toBe('manage');
    expect(FAMILIES.sparql.grants.serviceHosts).toBe('query');
    expect(FAMILIES.queries.grants.serviceHosts).toBe('query');
    expect(WORKERS.watchdog.grants.serviceHosts).toBe('describe');
    for (const d of DECLARED) {
      const id = logicalId(d.fn());
      if (d.grants.serviceHosts) {
        expect(hostsEnv(id).use, d.label).toBe(d.grants.serviceHosts);
        expect(() => sparqlHostsSettings(render(envOf(id)[ENV.sparqlHosts])), d.label).not.toThrow();
        continue;
      }
      expect(envOf(id)[ENV.sparqlHosts], d.label).toBeUndefined();
      expect(JSON.stringify(statementsOf(id)), d.label).not.toContain(logicalId(stateless.sparqlHosts.task.taskDefinition));
      expect(slResources[id]!.Properties.VpcConfig, d.label).toBeUndefined();
    }
  });

  it('manage: RunTask of exactly the host task definition in the cluster, PassRole of its two roles to ECS, StopTask of the cluster\'s tasks', () => {
    const id = logicalId(stateless.functions.services);
    const clusterId = logicalId(stateless.containers.cluster);
    const hosts = stateless.sparqlHosts;
    const statements = ecsStatements(statementsOf(id)) as (Statement & { Condition: any })[];
    // The services family starts no worker task: these are all its ECS statements.
    expect(statements.map((s) => asArray(s.Action)).sort()).toEqual([['ecs:RunTask'], ['ecs:StopTask'], ['iam:PassRole']]);
    const run = statements.find((s) => asArray(s.Action).includes('ecs:RunTask'))!;
    expect(asArray(run.Resource).map(render)).toEqual([`{${logicalId(hosts.task.taskDefinition)}}`]);
    expect(render(run.Condition.ArnEquals['ecs:cluster'])).toBe(`{${clusterId}.Arn}`);
    const stop = statements.find((s) => asArray(s.Action).includes('ecs:StopTask'))!;
    expect(asArray(stop.Resource).map(render)).toEqual([`arn:{AWS::Partition}:ecs:{AWS::Region}:{AWS::AccountId}:task/{${clusterId}}/*`]);
    const pass = statements.find((s) => asArray(s.Action).includes('iam:PassRole'))!;
    expect(asArray(pass.Resource).map(render).sort()).toEqual([`{${logicalId(hosts.task.taskRole)}.Arn}`, `{${logicalId(hosts.task.executionRole)}.Arn}`].sort());
    expect(pass.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } });
    expect(hostsEnv(id)).toEqual({
      use: 'manage',
      cluster: `{${clusterId}.Arn}`,
      taskDefinition: `{${logicalId(hosts.task.taskDefinition)}}`,
      container: APP_CONTAINER,
      subnets: stateless.containers.vpc.publicSubnets.map((s) => `{${logicalId(s as never)}}`),
      securityGroups: [`{${logicalId(hosts.securityGroup)}.GroupId}`],
    });
  });

  it('describe: the watchdog may only DescribeTasks of the cluster\'s tasks (is a service\'s host task still there?), is told the cluster, stays out of the VPC', () => {
    const id = logicalId(stateless.workers.watchdog);
    const clusterId = logicalId(stateless.containers.cluster);
    const statements = ecsStatements(statementsOf(id)) as (Statement & { Condition: any })[];
    // The same statement as its workerTask 'describe' (one statement: CDK merges identical ones).
    expect(statements.map((s) => asArray(s.Action))).toEqual([['ecs:DescribeTasks']]);
    expect(asArray(statements[0]!.Resource).map(render)).toEqual([`arn:{AWS::Partition}:ecs:{AWS::Region}:{AWS::AccountId}:task/{${clusterId}}/*`]);
    expect(render(statements[0]!.Condition.ArnEquals['ecs:cluster'])).toBe(`{${clusterId}.Arn}`);
    expect(hostsEnv(id)).toEqual({ use: 'describe', cluster: `{${clusterId}.Arn}` });
    expect(slResources[id]!.Properties.VpcConfig).toBeUndefined();
  });

  it('query: in the VPC\'s public subnets with the client security group, no ECS action, told only that hosts exist', () => {
    for (const fn of [stateless.functions.sparql, stateless.functions.queries]) {
      const id = logicalId(fn);
      const vpc = slResources[id]!.Properties.VpcConfig;
      expect(vpc.SecurityGroupIds.map(render)).toEqual([`{${logicalId(stateless.sparqlHosts.clientSecurityGroup)}.GroupId}`]);
      expect(vpc.SubnetIds.map(render)).toEqual(stateless.containers.vpc.publicSubnets.map((s) => `{${logicalId(s as never)}}`));
      expect(ecsStatements(statementsOf(id))).toEqual([]);
      expect(statementsOf(id).some((s) => asArray(s.Action).includes('ec2:CreateNetworkInterface'))).toBe(true);
      expect(hostsEnv(id)).toEqual({ use: 'query' });
    }
  });

  it('Virtuoso admits its port only from the client security group; the client reaches only Virtuoso and HTTPS (the gateway endpoints)', () => {
    const hostSg = logicalId(stateless.sparqlHosts.securityGroup);
    const clientSg = logicalId(stateless.sparqlHosts.clientSecurityGroup);
    const port = CONTAINERS.sparqlHost.virtuoso.httpPort;
    const inline = slResources[hostSg]!.Properties.SecurityGroupIngress ?? [];
    expect(inline).toEqual([]);
    const ingress = ofType('AWS::EC2::SecurityGroupIngress').filter(([, r]) => render(r.Properties.GroupId).includes(hostSg));
    expect(ingress.map(([, r]) => [render(r.Properties.SourceSecurityGroupId), r.Properties.IpProtocol, r.Properties.FromPort, r.Properties.ToPort])).toEqual([
      [`{${clientSg}.GroupId}`, 'tcp', port, port],
    ]);
    const client = slResources[clientSg]!.Properties;
    const egressOut = ofType('AWS::EC2::SecurityGroupEgress').filter(([, r]) => render(r.Properties.GroupId).includes(clientSg));
    expect(egressOut.map(([, r]) => [render(r.Properties.DestinationSecurityGroupId), r.Properties.FromPort])).toEqual([[`{${hostSg}.GroupId}`, port]]);
    expect((client.SecurityGroupEgress as any[]).map((e) => [e.CidrIp, e.IpProtocol, e.FromPort, e.ToPort])).toEqual([['0.0.0.0/0', 'tcp', 443, 443]]);
  });

  it('the task: X86_64, the table\'s size, containers in order (initdb → virtuoso → loader; bundle → loader), memory within the task\'s', () => {
    const td = slResources[logicalId(stateless.sparqlHosts.task.taskDefinition)]!.Properties;
    const spec = CONTAINERS.sparqlHost;
    expect(td.RuntimePlatform.CpuArchitecture).toBe('X86_64');
    expect(td.Cpu).toBe(String(spec.cpu));
    expect(td.Memory).toBe(String(spec.memoryMb));
    expect(containers().map((c) => c.Name).sort()).toEqual([APP_CONTAINER, BUNDLE_CONTAINER, INITDB_CONTAINER, VIRTUOSO_CONTAINER].sort());
    expect(containers().reduce((sum, c) => sum + c.Memory, 0)).toBeLessThanOrEqual(spec.memoryMb);

    const initdb = container(INITDB_CONTAINER);
    expect(initdb.Essential).toBe(false);
    expect(initdb.Command.join(' ')).toContain(INITDB_SCRIPT);
    expect(initdb.Command.join(' ')).toContain(INITDB_FILE);
    expect(initdb.Image).toMatch(/:[0-9.]+$/);

    const virtuoso = container(VIRTUOSO_CONTAINER);
    expect(virtuoso.Image).toBe(VIRTUOSO_IMAGE);
    expect(virtuoso.Image).not.toMatch(/latest/);
    expect(virtuoso.Essential).toBe(true);
    expect(virtuoso.Memory).toBe(spec.virtuoso.memoryMb);
    expect(virtuoso.DependsOn).toEqual([{ ContainerName: INITDB_CONTAINER, Condition: 'SUCCESS' }]);
    expect(virtuoso.MountPoints).toEqual([expect.objectContaining({ ContainerPath: '/initdb.d', ReadOnly: true })]);
    expect(virtuoso.PortMappings).toEqual([expect.objectContaining({ ContainerPort: spec.virtuoso.httpPort })]);
    const env = Object.fromEntries((virtuoso.Environment as { Name: string; Value: string }[]).map((e) => [e.Name, e.Value]));
    expect(env).toMatchObject({
      [ENV.virtuosoHttpPort]: String(spec.virtuoso.httpPort),
      VIRT_HTTPServer_ServerPort: String(spec.virtuoso.httpPort),
      VIRT_Parameters_NumberOfBuffers: String(spec.virtuoso.numberOfBuffers),
      VIRT_Parameters_MaxDirtyBuffers: String(spec.virtuoso.maxDirtyBuffers),
    });
    expect(Number(env.VIRT_SPARQL_ResultSetMaxRows)).toBeGreaterThanOrEqual(1_000_000);
    expect(Number(env.VIRT_SPARQL_MaxQueryExecutionTime)).toBeGreaterThan(0);
    // The dba password: a generated secret, never an environment value.
    expect(Object.keys(env).some((k) => /PASSWORD/i.test(k))).toBe(false);
    expect(virtuoso.Secrets.map((s: any) => [s.Name, render(s.ValueFrom)])).toEqual([['DBA_PASSWORD', `{${logicalId(stateless.sparqlHosts.dbaPassword)}}`]]);
    expect(slResources[logicalId(stateless.sparqlHosts.dbaPassword)]!.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 32, ExcludePunctuation: true, ExcludeNumbers: true });

    const app = container(APP_CONTAINER);
    expect(app.Command).toEqual(nodeCommand('sparql-loader'));
    expect(app.DependsOn).toEqual(
      expect.arrayContaining([
        { ContainerName: BUNDLE_CONTAINER, Condition: 'SUCCESS' },
        { ContainerName: VIRTUOSO_CONTAINER, Condition: 'START' },
      ]),
    );
    const appEnv = Object.fromEntries((app.Environment as { Name: string; Value: unknown }[]).map((e) => [e.Name, e.Value]));
    expect(appEnv[ENV.virtuosoHttpPort]).toBe(String(spec.virtuoso.httpPort));
  });

  it('the loader\'s task role: the table\'s grants and StopTask in the cluster (the host a sync replaced), no RunTask', () => {
    const hosts = stateless.sparqlHosts;
    const statements = roleStatements(logicalId(hosts.task.taskRole));
    const ecs = ecsStatements(statements);
    expect(ecs.map((s) => asArray(s.Action))).toEqual([['ecs:StopTask']]);
    const app = container(APP_CONTAINER);
    const appEnv = Object.fromEntries((app.Environment as { Name: string; Value: unknown }[]).map((e) => [e.Name, e.Value]));
    expect(JSON.parse(render(appEnv[ENV.sparqlHosts]))).toEqual({ use: 'stop', cluster: `{${logicalId(stateless.containers.cluster)}.Arn}` });
    expect(appEnv[ENV.tableName]).toBeDefined();
    expect(appEnv[ENV.dataBucketName]).toBeDefined();
  });
});
