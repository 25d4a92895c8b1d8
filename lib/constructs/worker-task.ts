import { ArnFormat, Stack } from 'aws-cdk-lib';
import { Peer, Port, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { ENV } from '../../functions/env-names.js';
import type { WorkerTaskSettings } from '../../functions/adapters/aws/ecs-task-queue.js';
import { acknowledgeWildcardResource } from '../nag.js';
import type { GrantTarget } from './app-function.js';
import { APP_CONTAINER, nodeCommand, type ContainerPlatform, type NodeTaskDefinition } from './container-platform.js';

/**
 * What functions may do with the worker task (FamilySpec['grants'].workerTask):
 * - `run`: start it (ecs:RunTask of this task definition in this cluster, iam:PassRole of its
 *   task and execution roles to ECS), the imports family, whose jobs it runs;
 * - `describe`: ask whether a task still runs (ecs:DescribeTasks in this cluster), the watchdog.
 * Both are told WORKER_TASK (the settings of adapters/aws/ecs-task-queue.ts).
 */
export type WorkerTaskUse = 'run' | 'describe';

export interface WorkerTaskProps {
  platform: ContainerPlatform;
  /** The `worker` task definition (CONTAINERS.worker), made by the stack with `platform.nodeTaskDefinition`. */
  task: NodeTaskDefinition;
}

/**
 * The worker task (issue 19): imports and URL loads past Lambda's 15 minutes, one Fargate task per
 * job (`node index.mjs worker import <datasetId> <jobId>`, functions/containers/worker.ts),
 * started by RunTask from the imports family. Its security group admits nothing; outbound it
 * reaches S3 and DynamoDB (gateway endpoints), the URLs it downloads and the image registries
 * (its public IP: the VPC has no NAT). Grants to functions are exactly `WorkerTaskUse`'s.
 */
export class WorkerTask extends Construct {
  readonly task: NodeTaskDefinition;
  readonly securityGroup: SecurityGroup;
  private readonly platform: ContainerPlatform;

  constructor(scope: Construct, id: string, props: WorkerTaskProps) {
    super(scope, id);
    this.platform = props.platform;
    this.task = props.task;
    this.securityGroup = new SecurityGroup(this, 'SecurityGroup', {
      vpc: props.platform.vpc,
      description: 'Worker task: no inbound; outbound HTTPS/HTTP (downloads, images, AWS APIs) and S3/DynamoDB through the gateway endpoints',
      allowAllOutbound: false,
    });
    // URL imports may name any port (http://host:8080/...); outbound is what a download needs.
    this.securityGroup.addEgressRule(Peer.anyIpv4(), Port.allTcp(), 'Downloads of URL imports (any port), image pulls, AWS APIs');
    this.securityGroup.addEgressRule(Peer.anyIpv6(), Port.allTcp(), 'Downloads of URL imports over IPv6');
  }

  /** WORKER_TASK: where and how RunTask starts the task (see WorkerTaskSettings). */
  settings(use: WorkerTaskUse): string {
    const stack = Stack.of(this);
    const value: Partial<WorkerTaskSettings> & Pick<WorkerTaskSettings, 'cluster'> =
      use === 'describe'
        ? { cluster: this.platform.cluster.clusterArn, container: APP_CONTAINER }
        : {
            cluster: this.platform.cluster.clusterArn,
            taskDefinition: this.task.taskDefinition.taskDefinitionArn,
            container: APP_CONTAINER,
            command: nodeCommand('worker'),
            subnets: this.platform.vpc.publicSubnets.map((s) => s.subnetId),
            securityGroups: [this.securityGroup.securityGroupId],
          };
    return stack.toJsonString(value);
  }

  /** Grants `use` to a function (or any role) and tells it WORKER_TASK. */
  grant(target: GrantTarget, use: WorkerTaskUse): void {
    const role = target.role;
    if (!role) throw new Error(`${target.node.path} has no role`);
    const cluster = this.platform.cluster.clusterArn;
    if (use === 'run') {
      role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['ecs:RunTask'],
          resources: [this.task.taskDefinition.taskDefinitionArn],
          conditions: { ArnEquals: { 'ecs:cluster': cluster } },
        }),
      );
      role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['iam:PassRole'],
          resources: [this.task.taskRole.roleArn, this.task.executionRole.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
        }),
      );
    } else {
      const tasks = Stack.of(this).formatArn({
        service: 'ecs',
        resource: 'task',
        resourceName: `${this.platform.cluster.clusterName}/*`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      });
      role.addToPrincipalPolicy(new PolicyStatement({ actions: ['ecs:DescribeTasks'], resources: [tasks], conditions: { ArnEquals: { 'ecs:cluster': cluster } } }));
      acknowledgeWildcardResource(
        role,
        tasks,
        'Task ARNs are made by ECS at RunTask; the watchdog describes the worker tasks its jobs name, only in the platform\'s cluster (and DescribeTasks only reads).',
      );
    }
    target.addEnvironment(ENV.workerTask, this.settings(use));
  }
}
