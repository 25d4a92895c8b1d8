/**
 * CDK: the container base of issue 19 (lib/constructs/container-platform.ts). The network costs
 * nothing at rest (no NAT; gateway endpoints), the Node task definitions run our bundle from pinned
 * public images with the init container the design names, each task role holds exactly its
 * container table entry's grants, and the bundle is one `.tgz` that runs on plain Node 20 once
 * extracted, as the task's app container runs it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTAINERS, NODE_CONTAINER_PORT, type ContainerSpec } from '../../functions/containers/container-table.js';
import { ENV } from '../../functions/env-names.js';
import { PLATFORM_VERSION } from '../../functions/version.js';
import { BUCKET_ACTIONS, FLOW_EXECUTION_ACTIONS, INDEX_ACTIONS, TABLE_ACTIONS, type BucketGrant } from '../../lib/constructs/app-function.js';
import {
  APP_CONTAINER,
  AWS_CLI_IMAGE,
  BUNDLE_CONTAINER,
  BUNDLE_CONTAINER_MEMORY_MB,
  ContainerPlatform,
  NAMESPACE_NAME,
  NODE_IMAGE,
  NodeTaskDefinition,
  nodeCommand,
} from '../../lib/constructs/container-platform.js';
import { asArray, logicalId, ofType, render, slResources, stateful, stateless, synthesizeStacks, type Statement } from '../support/stacks.js';

const run = promisify(execFile);

synthesizeStacks({ bundle: false });

/** Every Node task definition of the stateless stack (the worker's and those the other constructs add). */
const nodeTasks = (): NodeTaskDefinition[] => stateless.node.findAll().filter((c): c is NodeTaskDefinition => c instanceof NodeTaskDefinition);
const taskDefOf = (t: NodeTaskDefinition) => slResources[logicalId(t.taskDefinition)]!;
const containerOf = (t: NodeTaskDefinition, name: string) =>
  (taskDefOf(t).Properties.ContainerDefinitions as any[]).find((c) => c.Name === name);

/** Allow statements of the IAM policies attached to a role (by logical id). */
const statementsOfRole = (roleId: string): Statement[] =>
  ofType('AWS::IAM::Policy')
    .filter(([, p]) => asArray(p.Properties.Roles).some((r: any) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);

const BUCKETS: Record<BucketGrant, () => Bucket> = {
  dataBucket: () => stateful.dataBucket,
  uploadsBucket: () => stateful.uploadsBucket,
  artifactsBucket: () => stateful.artifactsBucket,
};

/** `<action> on <what>` for one statement's resources, naming what they are, not their ARNs. */
function describeStatement(s: Statement): string[] {
  return asArray(s.Resource).flatMap((resource) => {
    const r = render(resource);
    const json = JSON.stringify(resource);
    let what: string;
    if (json.includes(logicalId(stateful.table))) what = r.includes('/index/') ? 'table index' : 'table';
    else {
      const bucket = (Object.keys(BUCKETS) as BucketGrant[]).find((b) => json.includes(logicalId(BUCKETS[b]())));
      if (bucket) what = `${bucket}${r.endsWith('*') ? ' objects' : ''}`;
      else if (r.includes('event-bus/default')) what = 'default event bus';
      else if (r.includes(':ses:')) what = 'ses identity';
      else if (r.includes(':states:')) what = r.includes(':execution:') ? 'flow executions' : 'flow state machines';
      else if (r === '*') what = '*';
      else if (r.includes('cdk-') && r.includes('-assets-')) what = 'the bundle object';
      else what = `unknown ${r}`;
    }
    return asArray(s.Action).map((a) => `${a} on ${what}`);
  });
}

/** What the task role must hold for a container table entry: its grants and the bundle object. */
function expectedGrants(spec: ContainerSpec): string[] {
  const out = ['s3:GetObject on the bundle object'];
  const g = spec.grants;
  if (g.table) out.push(...TABLE_ACTIONS[g.table].map((a) => `${a} on table`), ...INDEX_ACTIONS.map((a) => `${a} on table index`));
  for (const b of Object.keys(BUCKETS) as BucketGrant[]) {
    const access = g[b];
    if (!access) continue;
    out.push(...BUCKET_ACTIONS[access].objects.map((a) => `${a} on ${b} objects`), ...BUCKET_ACTIONS[access].bucket.map((a) => `${a} on ${b}`));
  }
  if (g.uploadEvents) out.push('events:PutEvents on default event bus');
  // tus over S3 (the upload host): reads an upload's parts (bindTusUploads).
  if ((g as Record<string, unknown>).tusUploads) out.push('s3:ListMultipartUploadParts on uploadsBucket objects');
  if (g.mail) out.push('ses:SendEmail on ses identity', 'ses:SendEmail on ses identity');
  // The SPARQL host's loader stops the host a sync replaced (lib/constructs/sparql-hosts.ts).
  if (g.serviceHosts === 'stop') out.push(`ecs:StopTask on unknown arn:{AWS::Partition}:ecs:{AWS::Region}:{AWS::AccountId}:task/{${logicalId(stateless.containers.cluster)}}/*`);
  for (const use of g.flowExecutions ?? []) {
    const actions = FLOW_EXECUTION_ACTIONS[use] as { stateMachines?: readonly string[]; executions?: readonly string[]; any?: readonly string[] };
    out.push(...(actions.stateMachines ?? []).map((a) => `${a} on flow state machines`));
    out.push(...(actions.executions ?? []).map((a) => `${a} on flow executions`));
    out.push(...(actions.any ?? []).map((a) => `${a} on *`));
  }
  return [...new Set(out)].sort();
}

describe('container platform: network', () => {
  it('has two public subnets and no NAT gateway (nothing costs at rest)', () => {
    expect(ofType('AWS::EC2::NatGateway')).toEqual([]);
    expect(ofType('AWS::EC2::VPC')).toHaveLength(1);
    const subnets = ofType('AWS::EC2::Subnet');
    expect(subnets).toHaveLength(2);
    for (const [, s] of subnets) expect(s.Properties.MapPublicIpOnLaunch).toBe(true);
    expect(ofType('AWS::EC2::InternetGateway')).toHaveLength(1);
    // No custom resource (Lambda) to lock the default security group: nothing else runs in the VPC's default.
    expect(ofType('Custom::VpcRestrictDefaultSG')).toEqual([]);
  });

  it('reaches S3 and DynamoDB through gateway endpoints on every route table', () => {
    const endpoints = ofType('AWS::EC2::VPCEndpoint').map(([, e]) => e.Properties);
    const services = endpoints.map((e) => render(e.ServiceName).replace(/^.*\{AWS::Region\}\./, '')).sort();
    expect(services).toEqual(['dynamodb', 's3']);
    const routeTables = ofType('AWS::EC2::RouteTable').map(([id]) => id).sort();
    for (const e of endpoints) {
      expect(e.VpcEndpointType).toBe('Gateway');
      expect(asArray(e.RouteTableIds).map((r: any) => r.Ref).sort()).toEqual(routeTables);
    }
  });

  it('logs all of the VPC\'s traffic to a log group that expires', () => {
    const flowLogs = ofType('AWS::EC2::FlowLog').map(([, f]) => f.Properties);
    expect(flowLogs).toHaveLength(1);
    expect(flowLogs[0]!.ResourceType).toBe('VPC');
    expect(flowLogs[0]!.TrafficType).toBe('ALL');
    const group = slResources[flowLogs[0]!.LogGroupName.Ref]!;
    expect(group.Type).toBe('AWS::Logs::LogGroup');
    expect(group.Properties.RetentionInDays).toBe(30);
  });

  it('has an ECS cluster and a private DNS namespace in the VPC', () => {
    expect(ofType('AWS::ECS::Cluster')).toHaveLength(1);
    const namespaces = ofType('AWS::ServiceDiscovery::PrivateDnsNamespace');
    expect(namespaces).toHaveLength(1);
    expect(namespaces[0]![1].Properties.Name).toBe(NAMESPACE_NAME);
    expect(namespaces[0]![1].Properties.Vpc).toEqual({ Ref: logicalId(stateless.containers.vpc) });
  });
});

describe('container platform: Node task definitions', () => {
  it('includes the worker\'s, sized from the container table', () => {
    const worker = taskDefOf(stateless.workerTask).Properties;
    expect(worker.Cpu).toBe(String(CONTAINERS.worker.cpu));
    expect(worker.Memory).toBe(String(CONTAINERS.worker.memoryMb));
    expect(containerOf(stateless.workerTask, APP_CONTAINER).Command).toEqual(nodeCommand('worker'));
  });

  it('runs on Fargate, ARM64, with the bundle init container and the node app container', () => {
    const tasks = nodeTasks();
    expect(tasks.length).toBeGreaterThan(0);
    for (const t of tasks) {
      const p = taskDefOf(t).Properties;
      const label = t.node.path;
      expect(p.RequiresCompatibilities, label).toEqual(['FARGATE']);
      expect(p.NetworkMode, label).toBe('awsvpc');
      // The SPARQL host runs Virtuoso's x86-64 image beside Node (lib/constructs/sparql-hosts.ts).
      const arch = t === stateless.sparqlHosts.task ? 'X86_64' : 'ARM64';
      expect(p.RuntimePlatform, label).toEqual({ CpuArchitecture: arch, OperatingSystemFamily: 'LINUX' });
      expect(p.Volumes, label).toContainEqual({ Name: BUNDLE_CONTAINER });

      const bundle = containerOf(t, BUNDLE_CONTAINER);
      expect(bundle.Image).toBe(AWS_CLI_IMAGE);
      expect(bundle.Essential).toBe(false);
      expect(bundle.Memory).toBe(BUNDLE_CONTAINER_MEMORY_MB);
      expect(bundle.MountPoints).toEqual([{ ContainerPath: '/bundle', ReadOnly: false, SourceVolume: BUNDLE_CONTAINER }]);
      // `aws s3 cp s3://<asset bucket>/<asset key> /bundle/bundle.tgz` (the key is `<hash>.tgz`
      // once bundled, see 'container bundle'; this synth skips bundling).
      expect(bundle.Command.slice(0, 2)).toEqual(['s3', 'cp']);
      expect(render(bundle.Command.at(-2))).toMatch(/^\{"Fn::Sub":"s3:\/\/cdk-\w+-assets-\$\{AWS::AccountId\}-\$\{AWS::Region\}\/[0-9a-f]{64}\.\w+"\}$/);
      expect(bundle.Command.at(-1)).toBe('/bundle/bundle.tgz');

      const app = containerOf(t, APP_CONTAINER);
      expect(app.Image).toBe(NODE_IMAGE);
      expect(app.Essential).toBe(true);
      // Other containers of the task may come first too (the SPARQL host's loader waits for Virtuoso to start).
      expect(app.DependsOn).toContainEqual({ ContainerName: BUNDLE_CONTAINER, Condition: 'SUCCESS' });
      expect(app.MountPoints).toEqual([{ ContainerPath: '/bundle', ReadOnly: true, SourceVolume: BUNDLE_CONTAINER }]);
      expect(app.Command).toEqual(nodeCommand(t.spec.role, app.Command.slice(5)));
      const env = Object.fromEntries((app.Environment as { Name: string; Value: unknown }[]).map((e) => [e.Name, e.Value]));
      expect(env.NODE_OPTIONS).toMatch(/--max-old-space-size=\d+/);
      expect(env[ENV.publicApiUrl]).toBeDefined();
      if (t.spec.port !== undefined) {
        expect(env.PORT).toBe(String(t.spec.port));
        expect(app.PortMappings).toEqual([{ ContainerPort: t.spec.port, Protocol: 'tcp' }]);
      }
    }
  });

  it('pins every image of every task definition (never latest, never untagged)', () => {
    const images = ofType('AWS::ECS::TaskDefinition').flatMap(([, td]) => (td.Properties.ContainerDefinitions as any[]).map((c) => render(c.Image)));
    expect(images).toContain(NODE_IMAGE);
    expect(images).toContain(AWS_CLI_IMAGE);
    for (const image of images) {
      expect(image).toMatch(/^[\w.\-/]+:[\w.-]+$/);
      expect(image).not.toMatch(/:latest$/);
    }
    expect(NODE_IMAGE).toMatch(/node:20\.\d+\.\d+-bookworm-slim$/);
    expect(AWS_CLI_IMAGE).toMatch(/aws-cli:2\.\d+\.\d+$/);
    expect(NODE_CONTAINER_PORT).toBe(8080);
  });

  it('logs both containers to the task\'s log group, which expires', () => {
    for (const t of nodeTasks()) {
      for (const name of [BUNDLE_CONTAINER, APP_CONTAINER]) {
        const log = containerOf(t, name).LogConfiguration;
        expect(log.LogDriver).toBe('awslogs');
        expect(log.Options['awslogs-group']).toEqual({ Ref: logicalId(t.logGroup) });
      }
      expect(slResources[logicalId(t.logGroup)]!.Properties.RetentionInDays).toBe(30);
    }
  });

  it('grants each task role exactly its container table entry\'s grants and the bundle object, and tells the app their names', () => {
    for (const t of nodeTasks()) {
      const roleId = logicalId(t.taskRole);
      expect(taskDefOf(t).Properties.TaskRoleArn).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
      const role = slResources[roleId]!;
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        expect.objectContaining({ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'ecs-tasks.amazonaws.com' } }),
      ]);
      const granted = [...new Set(statementsOfRole(roleId).flatMap(describeStatement))].sort();
      expect(granted, t.node.path).toEqual(expectedGrants(t.spec));
      // The bundle grant names the one object, no wildcard.
      const bundle = statementsOfRole(roleId).find((s) => describeStatement(s).includes('s3:GetObject on the bundle object'))!;
      expect(render(asArray(bundle.Resource)[0])).toMatch(/\/[0-9a-f]{64}\.\w+$/);

      const env = (containerOf(t, APP_CONTAINER).Environment as { Name: string }[]).map((e) => e.Name);
      if (t.spec.grants.table) expect(env).toContain(ENV.tableName);
      if (t.spec.grants.dataBucket) expect(env).toContain(ENV.dataBucketName);
      if (t.spec.grants.uploadsBucket) expect(env).toContain(ENV.uploadsBucketName);
      if (t.spec.grants.artifactsBucket) expect(env).toContain(ENV.artifactsBucketName);
    }
  });

  it('gives the execution role only the task\'s log group', () => {
    for (const t of nodeTasks()) {
      const statements = statementsOfRole(logicalId(t.executionRole));
      // Only the logs, unless a container references secrets (Secrets Manager reads, by ARN).
      for (const s of statements) {
        for (const a of asArray(s.Action)) expect(a).toMatch(/^(logs:(CreateLogStream|PutLogEvents)|secretsmanager:(GetSecretValue|DescribeSecret))$/);
      }
      expect(statements.some((s) => asArray(s.Action).includes('logs:PutLogEvents'))).toBe(true);
    }
  });
});

describe('container bundle', () => {
  // A stack of its own holding only the platform, synthesized with bundling: the bundle is what
  // this proves, without bundling every Lambda function too.
  let outdir: string;
  let assetFile: string;
  let extracted: string;
  let manifest: { files: Record<string, { source: { path: string; packaging: string }; destinations: Record<string, { objectKey: string }> }> };
  let template: { Resources: Record<string, { Type: string; Properties: Record<string, any> }> };
  beforeAll(async () => {
    process.env.CDK_DOCKER = '/bin/false'; // any Docker bundling attempt fails: it must be local
    const app = new App({ context: { 'aws:cdk:bundling-stacks': ['**'] } });
    outdir = app.outdir;
    const stack = new Stack(app, 'ContainerBundle');
    const bucket = (id: string) => new Bucket(stack, id, { removalPolicy: RemovalPolicy.DESTROY });
    const platform = new ContainerPlatform(stack, 'Containers', {
      grantResources: {
        table: new TableV2(stack, 'Table', { partitionKey: { name: 'pk', type: AttributeType.STRING } }),
        buckets: {
          dataBucket: { bucket: bucket('Data'), env: ENV.dataBucketName, keyPrefix: 'datasets/' },
          uploadsBucket: { bucket: bucket('Uploads'), env: ENV.uploadsBucketName, keyPrefix: '' },
          artifactsBucket: { bucket: bucket('Artifacts'), env: ENV.artifactsBucketName, keyPrefix: '' },
        },
        mailFrom: 'no-reply@example.org',
      },
      // The worker task ends long flow tasks' task-token waits (flowExecutions).
      flows: { prefix: 'test-flow', role: new Role(stack, 'FlowRole', { assumedBy: new ServicePrincipal('states.amazonaws.com') }) },
      environment: {},
    });
    platform.nodeTaskDefinition(stack, 'WorkerTask', 'worker');
    app.synth();
    manifest = JSON.parse(readFileSync(join(outdir, 'ContainerBundle.assets.json'), 'utf8'));
    template = JSON.parse(readFileSync(join(outdir, 'ContainerBundle.template.json'), 'utf8'));
    assetFile = join(outdir, platform.bundle.assetPath);
    extracted = mkdtempSync(join(tmpdir(), 'container-bundle-test-'));
    // As the app container does: `tar -xzf /bundle/bundle.tgz -C /app`.
    await run('tar', ['-xzf', assetFile, '-C', extracted]);
  }, 300_000);
  afterAll(() => {
    if (outdir) rmSync(outdir, { recursive: true, force: true });
    if (extracted) rmSync(extracted, { recursive: true, force: true });
  });

  it('is one .tgz file asset (not a zipped folder)', () => {
    const bundles = Object.values(manifest.files).filter((f) => f.source.path.endsWith('.tgz'));
    expect(bundles).toHaveLength(1);
    expect(bundles[0]!.source.packaging).toBe('file');
    expect(assetFile.endsWith('.tgz')).toBe(true);
    // The init container copies that object, and the task role may read exactly it.
    const key = Object.values(bundles[0]!.destinations)[0]!.objectKey;
    expect(key).toMatch(/^[0-9a-f]{64}\.tgz$/);
    const [taskDef] = Object.values(template.Resources).filter((r) => r.Type === 'AWS::ECS::TaskDefinition');
    const init = (taskDef!.Properties.ContainerDefinitions as any[]).find((c) => c.Name === BUNDLE_CONTAINER);
    expect(render(init.Command.at(-2))).toContain(`/${key}`);
    const policies = Object.values(template.Resources).filter((r) => r.Type === 'AWS::IAM::Policy');
    const reads = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]).filter((st) => asArray(st.Action).includes('s3:GetObject') && render(asArray(st.Resource)[0]).endsWith(`/${key}`));
    expect(reads).toHaveLength(1);
  });

  it('holds index.mjs, the worker-thread modules and the installed packages', () => {
    for (const f of ['index.mjs', 'index.mjs.map', 'worker.mjs', 'sparql-parse-worker.mjs', 'rdf-parse-worker.mjs', 'node_modules/oxigraph/package.json', 'node_modules/sparqljs/package.json']) {
      expect(existsSync(join(extracted, f)), f).toBe(true);
    }
    expect(existsSync(join(extracted, 'node_modules/oxigraph/web_bg.wasm'))).toBe(false);
    expect(existsSync(join(extracted, 'package-lock.json'))).toBe(false);
  });

  it('runs on plain Node 20 as the app container starts it (`node index.mjs version`)', async () => {
    const { stdout } = await run(process.execPath, [join(extracted, 'index.mjs'), 'version'], { cwd: extracted, timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({ version: PLATFORM_VERSION, node: process.version });
  });

  it('loads its installed oxigraph the way the engine worker does', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', "import { Store } from 'oxigraph'; const s = new Store(); s.load('<a:s> <a:p> <a:o> .', { format: 'text/turtle' }); console.log(s.size)"],
      { cwd: extracted, timeout: 30_000 },
    );
    expect(stdout.trim()).toBe('1');
  });

  it('answers an unknown role with exit code 2 and the usage', async () => {
    const error = await run(process.execPath, [join(extracted, 'index.mjs'), 'no-such-role'], { cwd: extracted, timeout: 30_000 }).catch((e: unknown) => e as { code: number; stderr: string });
    expect((error as { code: number }).code).toBe(2);
    expect((error as { stderr: string }).stderr).toContain('roles: upload-host, worker, sparql-loader, version');
  });
});
