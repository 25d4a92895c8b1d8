/**
 * Reads the synthesized templates as CloudFormation would deploy them: every intrinsic
 * (Ref, Fn::GetAtt, Fn::ImportValue, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, pseudo parameters)
 * resolved to the names and ARNs the harness gives its stand-ins.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATEFUL_STACK, STATELESS_STACK } from './synth.js';

export const ACCOUNT = '123456789012';
/** The HTTP API's id (what Ref gives): its URL is `https://<id>.execute-api.<region>.amazonaws.com`. */
export const API_ID = 'harnessapi';
export const REGION = 'eu-west-1';
const PSEUDO: Record<string, string> = {
  'AWS::AccountId': ACCOUNT,
  'AWS::Region': REGION,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::NoValue': '',
};

interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
  Metadata?: Record<string, any>;
}
interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
}

export interface DeployedFunction {
  logicalId: string;
  /** Physical name (what Ref gives, what the SDK calls it by). */
  name: string;
  arn: string;
  assetDir: string;
  handler: string;
  memoryMb: number;
  timeoutSeconds: number;
  /** The Lambda runtime identifier (nodejs24.x, ...); the harness itself runs the bundle on this Node. */
  runtime: string;
  environment: Record<string, string>;
  roleLogicalId: string;
  roleArn: string;
  /** Asynchronous invocation retries (EventInvokeConfig; Lambda's default is 2). */
  asyncRetries: number;
}

export interface DeployedRole {
  logicalId: string;
  arn: string;
  /** Name → policy document of every AWS::IAM::Policy attached to the role (and its inline policies). */
  policies: { name: string; document: { Version: string; Statement: any[] } }[];
}

export interface DeployedRoute {
  method: string;
  /** Path with `{param}` segments. */
  path: string;
  /** The Lambda function of an AWS_PROXY route ('' for a private integration). */
  functionName: string;
  payloadFormatVersion: string;
  /** An HTTP_PROXY private integration over a VPC link: the Cloud Map service's ARN it forwards to. */
  cloudMapServiceArn?: string;
}

/** One container of an ECS task definition, as the template declares it (intrinsics resolved). */
export interface DeployedContainer {
  name: string;
  image: string;
  entryPoint?: string[];
  command?: string[];
  environment: Record<string, string>;
  /** Env var name → the ARN of the Secrets Manager secret (or SSM parameter) it comes from. */
  secrets: Record<string, string>;
  essential: boolean;
  dependsOn: { containerName: string; condition: 'START' | 'COMPLETE' | 'SUCCESS' | 'HEALTHY' }[];
  portMappings: { containerPort: number }[];
  mountPoints: { sourceVolume: string; containerPath: string; readOnly: boolean }[];
  /** Hard memory limit (MiB), when the container sets one. */
  memoryMb?: number;
  /** Seconds between SIGTERM and SIGKILL when the task stops (ECS' default 30). */
  stopTimeoutSeconds: number;
}

export interface DeployedTaskDefinition {
  logicalId: string;
  /** `arn:aws:ecs:<region>:<account>:task-definition/<family>:1` (what Ref gives). */
  arn: string;
  family: string;
  cpu: number;
  memoryMb: number;
  taskRoleLogicalId?: string;
  taskRoleArn?: string;
  executionRoleLogicalId?: string;
  executionRoleArn?: string;
  networkMode: string;
  requiresCompatibilities: string[];
  volumes: string[];
  containers: DeployedContainer[];
}

export interface DeployedCluster {
  logicalId: string;
  name: string;
  arn: string;
}

export interface DeployedEcsService {
  logicalId: string;
  name: string;
  arn: string;
  clusterArn: string;
  taskDefinitionArn: string;
  desiredCount: number;
  launchType?: string;
  networkConfiguration?: unknown;
  /** Cloud Map registrations: the service's tasks register `containerName:containerPort` there. */
  registries: { cloudMapServiceArn: string; containerName?: string; containerPort?: number }[];
}

export interface DeployedCloudMapService {
  logicalId: string;
  name: string;
  id: string;
  arn: string;
}

/** A CDK file asset (packaging `file`): where the template says it is in S3, where it is in cdk.out. */
export interface DeployedFileAsset {
  bucket: string;
  key: string;
  path: string;
}

export interface DeployedSecret {
  logicalId: string;
  arn: string;
  /** Its GenerateSecretString (PasswordLength, ExcludeNumbers, ExcludePunctuation, ...), as Secrets Manager would honour it. */
  generate: Record<string, unknown>;
}

export interface DeployedRule {
  logicalId: string;
  /** Event rules: the pattern. */
  pattern?: Record<string, unknown>;
  /** Scheduled rules: `rate(...)` or `cron(...)` (fired by tests: AwsHarness.fireRule). */
  schedule?: string;
  /** Target input, when the rule sets one (else the event). */
  targets: { arn: string; retries: number; input?: string }[];
}

export interface DeployedBucket {
  logicalId: string;
  name: string;
  arn: string;
  policy?: unknown;
  eventBridge: boolean;
}

export interface DeployedTable {
  name: string;
  arn: string;
  keySchema: { AttributeName: string; KeyType: string }[];
  attributeDefinitions: { AttributeName: string; AttributeType: string }[];
  globalSecondaryIndexes: { IndexName: string; KeySchema: { AttributeName: string; KeyType: string }[]; Projection: { ProjectionType: string } }[];
}

export interface DeployedApp {
  outdir: string;
  functions: DeployedFunction[];
  roles: Map<string, DeployedRole>;
  routes: DeployedRoute[];
  rules: DeployedRule[];
  buckets: DeployedBucket[];
  table: DeployedTable;
  scheduleGroups: string[];
  clusters: DeployedCluster[];
  taskDefinitions: DeployedTaskDefinition[];
  ecsServices: DeployedEcsService[];
  cloudMapServices: DeployedCloudMapService[];
  /** File assets (the container bundle `.tgz`), by `s3://bucket/key`. */
  fileAssets: Map<string, DeployedFileAsset>;
  secrets: DeployedSecret[];
}

/** Secrets Manager ARNs end with `-` and six random characters. */
const secretArn = (logicalId: string) => `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${logicalId}-AbCdEf`;
/** Cloud Map service ids (what Ref and Fn::GetAtt Id give): `srv-` and a stable suffix. */
const cloudMapId = (logicalId: string) => `srv-${logicalId.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 17)}`;

function physicalName(stack: string, logicalId: string, r: CfnResource): string {
  const p = r.Properties ?? {};
  switch (r.Type) {
    case 'AWS::S3::Bucket':
      return (p.BucketName as string | undefined) ?? `ldp-${logicalId.toLowerCase()}`;
    case 'AWS::Scheduler::ScheduleGroup':
      return p.Name as string;
    case 'AWS::ApiGatewayV2::Api':
      return API_ID;
    case 'AWS::DynamoDB::GlobalTable':
    case 'AWS::DynamoDB::Table':
      return (p.TableName as string | undefined) ?? `${stack}-${logicalId}`;
    case 'AWS::ECS::Cluster':
      return (p.ClusterName as string | undefined) ?? logicalId;
    case 'AWS::ECS::TaskDefinition':
      return `arn:aws:ecs:${REGION}:${ACCOUNT}:task-definition/${(p.Family as string | undefined) ?? logicalId}:1`;
    case 'AWS::ECS::Service':
      return `arn:aws:ecs:${REGION}:${ACCOUNT}:service/${logicalId}`;
    case 'AWS::SecretsManager::Secret':
      return secretArn(logicalId);
    case 'AWS::ServiceDiscovery::Service':
      return cloudMapId(logicalId);
    case 'AWS::ServiceDiscovery::PrivateDnsNamespace':
      return `ns-${logicalId.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 17)}`;
    default:
      return logicalId;
  }
}

function arnOf(type: string, name: string): string {
  switch (type) {
    case 'AWS::S3::Bucket':
      return `arn:aws:s3:::${name}`;
    case 'AWS::DynamoDB::GlobalTable':
    case 'AWS::DynamoDB::Table':
      return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
    case 'AWS::Lambda::Function':
      return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
    case 'AWS::IAM::Role':
      return `arn:aws:iam::${ACCOUNT}:role/${name}`;
    case 'AWS::Scheduler::ScheduleGroup':
      return `arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule-group/${name}`;
    case 'AWS::Events::Rule':
      return `arn:aws:events:${REGION}:${ACCOUNT}:rule/${name}`;
    case 'AWS::Logs::LogGroup':
      return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}:*`;
    case 'AWS::ECS::Cluster':
      return `arn:aws:ecs:${REGION}:${ACCOUNT}:cluster/${name}`;
    case 'AWS::ECS::TaskDefinition':
    case 'AWS::ECS::Service':
    case 'AWS::SecretsManager::Secret':
      return name;
    case 'AWS::ServiceDiscovery::Service':
      return `arn:aws:servicediscovery:${REGION}:${ACCOUNT}:service/${name}`;
    case 'AWS::ServiceDiscovery::PrivateDnsNamespace':
      return `arn:aws:servicediscovery:${REGION}:${ACCOUNT}:namespace/${name}`;
    default:
      return `arn:aws:cloudformation:${REGION}:${ACCOUNT}:${type}/${name}`;
  }
}

class Resolver {
  readonly templates: Record<string, CfnTemplate> = {};
  private readonly exports = new Map<string, { stack: string; value: unknown }>();

  constructor(outdir: string) {
    for (const stack of [STATEFUL_STACK, STATELESS_STACK]) {
      const t = JSON.parse(readFileSync(join(outdir, `${stack}.template.json`), 'utf8')) as CfnTemplate;
      this.templates[stack] = t;
      for (const out of Object.values(t.Outputs ?? {})) {
        if (out.Export) this.exports.set(String(this.resolve(stack, out.Export.Name)), { stack, value: out.Value });
      }
    }
  }

  resolve(stack: string, v: unknown): any {
    if (Array.isArray(v)) return v.map((x) => this.resolve(stack, x));
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, any>;
    const keys = Object.keys(o);
    if (keys.length === 1) {
      const [k] = keys as [string];
      const a = o[k];
      if (k === 'Ref') return PSEUDO[a] ?? this.ref(stack, a);
      if (k === 'Fn::GetAtt') return this.getAtt(stack, a[0], a[1]);
      if (k === 'Fn::ImportValue') {
        const name = String(this.resolve(stack, a));
        const exp = this.exports.get(name);
        if (!exp) throw new Error(`harness: no export ${name}`);
        return this.resolve(exp.stack, exp.value);
      }
      if (k === 'Fn::Join') return (this.resolve(stack, a[1]) as unknown[]).join(a[0]);
      if (k === 'Fn::Select') return (this.resolve(stack, a[1]) as unknown[])[Number(this.resolve(stack, a[0]))];
      if (k === 'Fn::Split') return String(this.resolve(stack, a[1])).split(a[0]);
      if (k === 'Fn::Sub') {
        const [text, vars] = typeof a === 'string' ? [a, {}] : [a[0], this.resolve(stack, a[1])];
        return (text as string).replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
          if (name in vars) return vars[name];
          if (PSEUDO[name] !== undefined) return PSEUDO[name]!;
          const [id, attr] = name.split('.');
          return attr ? this.getAtt(stack, id!, attr) : this.ref(stack, id!);
        });
      }
    }
    return Object.fromEntries(keys.map((k) => [k, this.resolve(stack, o[k])]));
  }

  resource(stack: string, id: string): CfnResource {
    const r = this.templates[stack]!.Resources[id];
    if (!r) throw new Error(`harness: no resource ${id} in ${stack}`);
    return r;
  }

  ref(stack: string, id: string): string {
    return physicalName(stack, id, this.resource(stack, id));
  }

  getAtt(stack: string, id: string, attr: string): string {
    const r = this.resource(stack, id);
    const name = physicalName(stack, id, r);
    if (attr === 'Arn' || attr === 'StreamArn') return arnOf(r.Type, name);
    if (attr === 'RoleId') return `AROA${id.toUpperCase().slice(0, 16)}`;
    // ECS, Cloud Map, EC2 attributes the container constructs refer to.
    if (attr === 'TaskDefinitionArn') return name;
    if (attr === 'Name' && r.Type === 'AWS::ECS::Service') return id;
    if (attr === 'Name') return (r.Properties?.Name as string | undefined) ?? name;
    if (attr === 'Id') return name;
    if (attr === 'GroupId') return `sg-${id.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 17)}`;
    if (attr === 'VpcId' || attr === 'DefaultSecurityGroup') return `${attr.toLowerCase()}-${id.toLowerCase().slice(0, 17)}`;
    throw new Error(`harness: Fn::GetAtt ${id}.${attr} not modelled`);
  }
}

/** Every deployed thing the harness needs, from the cloud assembly in `outdir`. */
export function readDeployedApp(outdir: string): DeployedApp {
  const res = new Resolver(outdir);
  const sf = STATEFUL_STACK;
  const sl = STATELESS_STACK;
  const entries = (stack: string, type: string) => Object.entries(res.templates[stack]!.Resources).filter(([, r]) => r.Type === type);

  const roles = new Map<string, DeployedRole>();
  for (const [id, r] of entries(sl, 'AWS::IAM::Role')) {
    const inline = ((r.Properties?.Policies as any[]) ?? []).map((p) => ({ name: p.PolicyName, document: res.resolve(sl, p.PolicyDocument) }));
    roles.set(id, { logicalId: id, arn: res.getAtt(sl, id, 'Arn'), policies: inline });
  }
  for (const [id, p] of entries(sl, 'AWS::IAM::Policy')) {
    for (const role of p.Properties!.Roles as { Ref: string }[]) {
      roles.get(role.Ref)?.policies.push({ name: id, document: res.resolve(sl, p.Properties!.PolicyDocument) });
    }
  }

  const retries = new Map<string, number>();
  for (const [, c] of entries(sl, 'AWS::Lambda::EventInvokeConfig')) {
    retries.set(res.resolve(sl, c.Properties!.FunctionName), c.Properties!.MaximumRetryAttempts ?? 2);
  }
  const functions = entries(sl, 'AWS::Lambda::Function').map(([id, r]): DeployedFunction => {
    const p = r.Properties!;
    const name = res.ref(sl, id);
    const roleLogicalId = p.Role['Fn::GetAtt'][0] as string;
    return {
      logicalId: id,
      name,
      arn: res.getAtt(sl, id, 'Arn'),
      assetDir: join(outdir, r.Metadata!['aws:asset:path']),
      handler: p.Handler,
      memoryMb: p.MemorySize ?? 128,
      timeoutSeconds: p.Timeout ?? 3,
      runtime: p.Runtime,
      environment: res.resolve(sl, p.Environment?.Variables ?? {}),
      roleLogicalId,
      roleArn: res.getAtt(sl, roleLogicalId, 'Arn'),
      asyncRetries: retries.get(name) ?? 2,
    };
  });

  const integrations = new Map(entries(sl, 'AWS::ApiGatewayV2::Integration').map(([id, r]) => [id, r.Properties!]));
  const routes = entries(sl, 'AWS::ApiGatewayV2::Route').map(([, r]): DeployedRoute => {
    const [method, path] = (r.Properties!.RouteKey as string).split(' ') as [string, string];
    const target = res.resolve(sl, r.Properties!.Target) as string;
    const integration = integrations.get(target.replace(/^integrations\//, ''))!;
    const arn = res.resolve(sl, integration.IntegrationUri) as string;
    if (integration.ConnectionType === 'VPC_LINK') {
      if (integration.IntegrationType !== 'HTTP_PROXY' || !arn.startsWith('arn:aws:servicediscovery:')) throw new Error(`harness: ${r.Properties!.RouteKey}: only HTTP_PROXY private integrations to Cloud Map services are modelled`);
      return { method, path, functionName: '', payloadFormatVersion: integration.PayloadFormatVersion, cloudMapServiceArn: arn };
    }
    return { method, path, functionName: arn.split(':').pop()!, payloadFormatVersion: integration.PayloadFormatVersion };
  });

  const rules = entries(sl, 'AWS::Events::Rule').map(([id, r]): DeployedRule => ({
    logicalId: id,
    pattern: r.Properties!.EventPattern ? res.resolve(sl, r.Properties!.EventPattern) : undefined,
    schedule: r.Properties!.ScheduleExpression,
    targets: (r.Properties!.Targets as any[]).map((t) => ({ arn: res.resolve(sl, t.Arn), retries: t.RetryPolicy?.MaximumRetryAttempts ?? 185, input: t.Input ? res.resolve(sl, t.Input) : undefined })),
  }));

  const policies = new Map(entries(sf, 'AWS::S3::BucketPolicy').map(([, r]) => [r.Properties!.Bucket.Ref as string, res.resolve(sf, r.Properties!.PolicyDocument)]));
  const buckets = entries(sf, 'AWS::S3::Bucket').map(([id, r]): DeployedBucket => ({
    logicalId: id,
    name: res.ref(sf, id),
    arn: res.getAtt(sf, id, 'Arn'),
    policy: policies.get(id),
    eventBridge: r.Properties?.NotificationConfiguration?.EventBridgeConfiguration?.EventBridgeEnabled === true,
  }));

  const clusters = entries(sl, 'AWS::ECS::Cluster').map(([id, r]): DeployedCluster => ({ logicalId: id, name: res.ref(sl, id), arn: arnOf(r.Type, res.ref(sl, id)) }));
  const roleId = (v: unknown) => (v && typeof v === 'object' && 'Fn::GetAtt' in v ? ((v as any)['Fn::GetAtt'][0] as string) : undefined);
  const taskDefinitions = entries(sl, 'AWS::ECS::TaskDefinition').map(([id, r]): DeployedTaskDefinition => {
    const p = r.Properties!;
    const taskRoleLogicalId = roleId(p.TaskRoleArn);
    const executionRoleLogicalId = roleId(p.ExecutionRoleArn);
    return {
      logicalId: id,
      arn: res.ref(sl, id),
      family: p.Family ?? id,
      cpu: Number(p.Cpu),
      memoryMb: Number(p.Memory),
      taskRoleLogicalId,
      taskRoleArn: p.TaskRoleArn ? res.resolve(sl, p.TaskRoleArn) : undefined,
      executionRoleLogicalId,
      executionRoleArn: p.ExecutionRoleArn ? res.resolve(sl, p.ExecutionRoleArn) : undefined,
      networkMode: p.NetworkMode ?? 'bridge',
      requiresCompatibilities: p.RequiresCompatibilities ?? [],
      volumes: ((p.Volumes as any[]) ?? []).map((v) => v.Name),
      containers: ((p.ContainerDefinitions as any[]) ?? []).map((c): DeployedContainer => ({
        name: c.Name,
        image: res.resolve(sl, c.Image),
        entryPoint: c.EntryPoint ? res.resolve(sl, c.EntryPoint) : undefined,
        command: c.Command ? res.resolve(sl, c.Command) : undefined,
        environment: Object.fromEntries(((c.Environment as any[]) ?? []).map((e) => [e.Name, String(res.resolve(sl, e.Value))])),
        secrets: Object.fromEntries(((c.Secrets as any[]) ?? []).map((e) => [e.Name, String(res.resolve(sl, e.ValueFrom))])),
        essential: c.Essential !== false,
        dependsOn: ((c.DependsOn as any[]) ?? []).map((d) => ({ containerName: d.ContainerName, condition: d.Condition })),
        portMappings: ((c.PortMappings as any[]) ?? []).map((m) => ({ containerPort: Number(m.ContainerPort) })),
        mountPoints: ((c.MountPoints as any[]) ?? []).map((m) => ({ sourceVolume: m.SourceVolume, containerPath: m.ContainerPath, readOnly: m.ReadOnly === true })),
        memoryMb: c.Memory !== undefined ? Number(c.Memory) : undefined,
        stopTimeoutSeconds: c.StopTimeout ?? 30,
      })),
    };
  });
  const cloudMapServices = entries(sl, 'AWS::ServiceDiscovery::Service').map(([id, r]): DeployedCloudMapService => ({
    logicalId: id,
    name: r.Properties?.Name ?? id,
    id: res.ref(sl, id),
    arn: res.getAtt(sl, id, 'Arn'),
  }));
  const ecsServices = entries(sl, 'AWS::ECS::Service').map(([id, r]): DeployedEcsService => {
    const p = r.Properties!;
    const cluster = res.resolve(sl, p.Cluster) as string;
    return {
      logicalId: id,
      name: p.ServiceName ?? id,
      arn: res.ref(sl, id),
      clusterArn: clusters.find((c) => c.name === cluster || c.arn === cluster)?.arn ?? cluster,
      taskDefinitionArn: res.resolve(sl, p.TaskDefinition),
      desiredCount: p.DesiredCount ?? 1,
      launchType: p.LaunchType,
      networkConfiguration: p.NetworkConfiguration ? res.resolve(sl, p.NetworkConfiguration) : undefined,
      registries: ((p.ServiceRegistries as any[]) ?? []).map((g) => ({ cloudMapServiceArn: res.resolve(sl, g.RegistryArn), containerName: g.ContainerName, containerPort: g.ContainerPort })),
    };
  });
  // File assets: the asset manifest names each one's bucket and key (with pseudo parameters) and its file in cdk.out.
  const fileAssets = new Map<string, DeployedFileAsset>();
  for (const stack of [sf, sl]) {
    const manifest = JSON.parse(readFileSync(join(outdir, `${stack}.assets.json`), 'utf8')) as { files: Record<string, { source: { path: string; packaging: string }; destinations: Record<string, { bucketName: string; objectKey: string }> }> };
    for (const file of Object.values(manifest.files)) {
      if (file.source.packaging !== 'file') continue;
      for (const d of Object.values(file.destinations)) {
        const bucket = res.resolve(stack, { 'Fn::Sub': d.bucketName }) as string;
        fileAssets.set(`s3://${bucket}/${d.objectKey}`, { bucket, key: d.objectKey, path: join(outdir, file.source.path) });
      }
    }
  }
  const secrets = entries(sl, 'AWS::SecretsManager::Secret').map(([id, r]): DeployedSecret => ({
    logicalId: id,
    arn: secretArn(id),
    generate: ((r.Properties as Record<string, unknown> | undefined)?.GenerateSecretString as Record<string, unknown>) ?? {},
  }));

  const [tableId, table] = [...entries(sf, 'AWS::DynamoDB::GlobalTable'), ...entries(sf, 'AWS::DynamoDB::Table')][0]!;
  const tp = table.Properties!;
  return {
    outdir,
    functions,
    roles,
    routes,
    rules,
    buckets,
    table: {
      name: res.ref(sf, tableId),
      arn: res.getAtt(sf, tableId, 'Arn'),
      keySchema: tp.KeySchema,
      attributeDefinitions: tp.AttributeDefinitions,
      globalSecondaryIndexes: (tp.GlobalSecondaryIndexes ?? []).map((g: any) => ({ IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection ?? { ProjectionType: 'ALL' } })),
    },
    scheduleGroups: entries(sl, 'AWS::Scheduler::ScheduleGroup').map(([id, r]) => physicalName(sl, id, r)),
    clusters,
    taskDefinitions,
    ecsServices,
    cloudMapServices,
    fileAssets,
    secrets,
  };
}
