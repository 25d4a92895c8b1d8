import { ArnFormat, Stack } from 'aws-cdk-lib';
import { Peer, Port, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { ContainerDependencyCondition, ContainerImage, CpuArchitecture, LogDrivers, Secret as EcsSecret, type ContainerDefinition } from 'aws-cdk-lib/aws-ecs';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { SparqlHostsSettings } from '../../functions/adapters/aws/ecs-service-hosts.js';
import { CONTAINERS } from '../../functions/containers/container-table.js';
import { ENV } from '../../functions/env-names.js';
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';
import type { GrantTarget } from './app-function.js';
import { APP_CONTAINER, BUNDLE_CONTAINER_MEMORY_MB, type ContainerPlatform, type NodeTaskDefinition } from './container-platform.js';

/**
 * Virtuoso's public image, pinned (never `latest`). It is published for x86-64 only as far as
 * this stack relies on, so the host task runs on X86_64 (the Node image is multi-arch).
 */
export const VIRTUOSO_IMAGE = 'openlink/virtuoso-opensource-7:7.2.14';
/** The small image of the `initdb` init container that writes Virtuoso's start-up script. */
export const INITDB_IMAGE = 'public.ecr.aws/docker/library/busybox:1.37.0';
export const VIRTUOSO_CONTAINER = 'virtuoso';
export const INITDB_CONTAINER = 'initdb';
const INITDB_VOLUME = 'initdb';
const INITDB_DIR = '/initdb.d';
const INITDB_MEMORY_MB = 64;
/** The script the openlink image runs with isql on its first start: the anonymous SPARQL user may load. */
export const INITDB_SCRIPT = 'GRANT SPARQL_UPDATE TO "SPARQL";';
export const INITDB_FILE = `${INITDB_DIR}/10-grant-sparql-update.sql`;
/** Rows a SELECT may return (above the platform's own limits, so Virtuoso never cuts silently first). */
const RESULT_SET_MAX_ROWS = 1_000_000;
/** Virtuoso stops a query after this many seconds; the platform's own timeout (a `timeout` parameter per query) comes first. */
const MAX_QUERY_EXECUTION_SECONDS = 300;

/** What a function may do with the hosts (FamilySpec['grants'].serviceHosts). */
export type SparqlHostsUse = SparqlHostsSettings['use'];

export interface SparqlHostsProps {
  platform: ContainerPlatform;
}

/**
 * SPARQL hosts (issue 19): one Fargate task per running service (two while a sync swaps), started
 * by RunTask from the functions granted 'manage', never a standing service: nothing runs at rest.
 *
 * Task (CONTAINERS.sparqlHost; X86_64): `initdb` (busybox, init) writes the start-up script
 * granting SPARQL_UPDATE to Virtuoso's SPARQL user into a shared volume; `virtuoso` (the openlink
 * image, essential) serves SPARQL on VIRTUOSO_HTTP_PORT (8890), sized by `VIRT_*` variables from
 * the container table, its dba password a generated Secrets Manager secret; `bundle` + `app`
 * (NodeTaskDefinition) run the `sparql-loader` role: load the snapshot, record the host, watch.
 *
 * Network: the hosts' security group admits only 8890, only from `clientSecurityGroup`, the group
 * of the functions granted 'query', which run in the VPC's public subnets (no NAT: besides the
 * hosts they reach S3 and DynamoDB through the gateway endpoints, which is all they call).
 */
export class SparqlHosts extends Construct {
  readonly task: NodeTaskDefinition;
  readonly virtuoso: ContainerDefinition;
  readonly initdb: ContainerDefinition;
  readonly securityGroup: SecurityGroup;
  readonly clientSecurityGroup: SecurityGroup;
  readonly dbaPassword: Secret;
  private readonly platform: ContainerPlatform;

  constructor(scope: Construct, id: string, props: SparqlHostsProps) {
    super(scope, id);
    const { platform } = props;
    this.platform = platform;
    const spec = CONTAINERS.sparqlHost;
    const port = spec.virtuoso.httpPort;

    this.clientSecurityGroup = new SecurityGroup(this, 'ClientSecurityGroup', {
      vpc: platform.vpc,
      description: 'Functions that query SPARQL hosts: Virtuoso on the hosts, S3 and DynamoDB through the gateway endpoints',
      allowAllOutbound: false,
    });
    this.securityGroup = new SecurityGroup(this, 'SecurityGroup', {
      vpc: platform.vpc,
      description: 'SPARQL hosts: Virtuoso only from the functions that query services; outbound for images, S3, DynamoDB, ECS',
      allowAllOutbound: true,
    });
    this.securityGroup.addIngressRule(this.clientSecurityGroup, Port.tcp(port), 'Virtuoso SPARQL from the functions that query services');
    this.clientSecurityGroup.addEgressRule(this.securityGroup, Port.tcp(port), 'Virtuoso SPARQL on the hosts');
    this.clientSecurityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'S3 and DynamoDB through the gateway endpoints (no NAT: nothing else is reachable)');

    this.dbaPassword = new Secret(this, 'DbaPassword', {
      description: 'Virtuoso dba password of the SPARQL hosts (each host database is new; nothing outside the task uses it)',
      // Letters only: the image sets it with `SET PASSWORD dba <new>`, where a password is an SQL
      // identifier (one starting with a digit is a syntax error, and the host never becomes ready).
      // 32 letters are still about 180 bits.
      generateSecretString: { passwordLength: 32, excludePunctuation: true, excludeNumbers: true },
    });
    acknowledge(
      this.dbaPassword,
      'SMG4',
      'Each SPARQL host creates a new database with this password when it starts and is replaced on every sync or restart; SQL (1111) is not reachable from outside the task, so rotation protects nothing.',
    );

    const loaderMemory = spec.memoryMb - spec.virtuoso.memoryMb - BUNDLE_CONTAINER_MEMORY_MB - INITDB_MEMORY_MB;
    this.task = platform.nodeTaskDefinition(this, 'Task', 'sparqlHost', {
      appMemoryMb: loaderMemory,
      cpuArchitecture: CpuArchitecture.X86_64,
      environment: { [ENV.virtuosoHttpPort]: String(port) },
    });
    const taskDefinition = this.task.taskDefinition;
    taskDefinition.addVolume({ name: INITDB_VOLUME });
    const logging = LogDrivers.awsLogs({ logGroup: this.task.logGroup, streamPrefix: 'sparql-host' });

    this.initdb = taskDefinition.addContainer(INITDB_CONTAINER, {
      containerName: INITDB_CONTAINER,
      image: ContainerImage.fromRegistry(INITDB_IMAGE),
      essential: false,
      memoryLimitMiB: INITDB_MEMORY_MB,
      command: ['sh', '-c', `printf '%s\\n' '${INITDB_SCRIPT}' > ${INITDB_FILE}`],
      logging,
    });
    this.initdb.addMountPoints({ sourceVolume: INITDB_VOLUME, containerPath: INITDB_DIR, readOnly: false });

    this.virtuoso = taskDefinition.addContainer(VIRTUOSO_CONTAINER, {
      containerName: VIRTUOSO_CONTAINER,
      image: ContainerImage.fromRegistry(VIRTUOSO_IMAGE),
      essential: true,
      memoryLimitMiB: spec.virtuoso.memoryMb,
      environment: {
        [ENV.virtuosoHttpPort]: String(port),
        VIRT_HTTPServer_ServerPort: String(port),
        VIRT_Parameters_NumberOfBuffers: String(spec.virtuoso.numberOfBuffers),
        VIRT_Parameters_MaxDirtyBuffers: String(spec.virtuoso.maxDirtyBuffers),
        VIRT_SPARQL_ResultSetMaxRows: String(RESULT_SET_MAX_ROWS),
        VIRT_SPARQL_MaxQueryExecutionTime: String(MAX_QUERY_EXECUTION_SECONDS),
        VIRT_SPARQL_MaxQueryCostEstimationTime: '0',
      },
      secrets: { DBA_PASSWORD: EcsSecret.fromSecretsManager(this.dbaPassword) },
      portMappings: [{ containerPort: port }],
      logging,
    });
    this.virtuoso.addMountPoints({ sourceVolume: INITDB_VOLUME, containerPath: INITDB_DIR, readOnly: true });
    this.virtuoso.addContainerDependencies({ container: this.initdb, condition: ContainerDependencyCondition.SUCCESS });
    // The loader starts once Virtuoso's container has (it then waits until Virtuoso answers).
    this.task.app.addContainerDependencies({ container: this.virtuoso, condition: ContainerDependencyCondition.START });

    // The loader stops the host it replaced (a sync) and is told where the hosts run.
    this.grant(this.task, 'stop');
  }

  /** SPARQL_HOSTS for a use (see SparqlHostsSettings). */
  settings(use: SparqlHostsUse): string {
    const cluster = this.platform.cluster.clusterArn;
    const value: SparqlHostsSettings =
      use === 'query'
        ? { use }
        : use === 'stop' || use === 'describe'
          ? { use, cluster }
          : {
              use,
              cluster,
              taskDefinition: this.task.taskDefinition.taskDefinitionArn,
              container: APP_CONTAINER,
              subnets: this.platform.vpc.publicSubnets.map((s) => s.subnetId),
              securityGroups: [this.securityGroup.securityGroupId],
            };
    return Stack.of(this).toJsonString(value);
  }

  /**
   * Grants `use` to a function or task and tells it SPARQL_HOSTS. 'query' places a Lambda
   * function in the VPC's public subnets with the client security group (and lets it manage its
   * network interfaces, as Lambda requires).
   */
  grant(target: GrantTarget, use: SparqlHostsUse): void {
    const role = target.role;
    if (!role) throw new Error(`${target.node.path} has no role`);
    const stack = Stack.of(this);
    const cluster = this.platform.cluster.clusterArn;
    if (use === 'query') {
      const fn = target.node.defaultChild as CfnFunction | undefined;
      if (!fn || fn.cfnResourceType !== 'AWS::Lambda::Function') throw new Error(`${target.node.path}: serviceHosts 'query' places a Lambda function in the VPC; this is not one`);
      fn.vpcConfig = {
        subnetIds: this.platform.vpc.publicSubnets.map((s) => s.subnetId),
        securityGroupIds: [this.clientSecurityGroup.securityGroupId],
      };
      // What AWSLambdaVPCAccessExecutionRole grants: Lambda's network interfaces in the VPC.
      role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['ec2:CreateNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'],
          resources: ['*'],
        }),
      );
    } else if (use === 'describe') {
      const tasks = stack.formatArn({ service: 'ecs', resource: 'task', resourceName: `${this.platform.cluster.clusterName}/*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
      role.addToPrincipalPolicy(new PolicyStatement({ actions: ['ecs:DescribeTasks'], resources: [tasks], conditions: { ArnEquals: { 'ecs:cluster': cluster } } }));
      acknowledgeWildcardResource(role, tasks, 'Task ARNs are made by ECS at RunTask; the watchdog describes the host tasks services record, only in the platform\'s cluster (and DescribeTasks only reads).');
    } else {
      const tasks = stack.formatArn({ service: 'ecs', resource: 'task', resourceName: `${this.platform.cluster.clusterName}/*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
      role.addToPrincipalPolicy(new PolicyStatement({ actions: ['ecs:StopTask'], resources: [tasks], conditions: { ArnEquals: { 'ecs:cluster': cluster } } }));
      acknowledgeWildcardResource(role, tasks, 'Task ARNs are made by ECS at RunTask; services stop the host tasks they recorded, only in the platform\'s cluster.');
      if (use === 'manage') {
        role.addToPrincipalPolicy(
          new PolicyStatement({ actions: ['ecs:RunTask'], resources: [this.task.taskDefinition.taskDefinitionArn], conditions: { ArnEquals: { 'ecs:cluster': cluster } } }),
        );
        role.addToPrincipalPolicy(
          new PolicyStatement({
            actions: ['iam:PassRole'],
            resources: [this.task.taskRole.roleArn, this.task.executionRole.roleArn],
            conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
          }),
        );
      }
    }
    target.addEnvironment(ENV.sparqlHosts, this.settings(use));
  }
}
