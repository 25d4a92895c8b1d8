import { execFileSync, execSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AssetHashType, BundlingOutput, DockerImage, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { FlowLogDestination, FlowLogTrafficType, GatewayVpcEndpointAwsService, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import {
  Cluster,
  ContainerDependencyCondition,
  ContainerImage,
  CpuArchitecture,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
  type ContainerDefinition,
} from 'aws-cdk-lib/aws-ecs';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { PrivateDnsNamespace } from 'aws-cdk-lib/aws-servicediscovery';
import { Construct } from 'constructs';
import { CONTAINERS, type ContainerName, type ContainerRole, type ContainerSpec } from '../../functions/containers/container-table.js';
import { ENV } from '../../functions/env-names.js';
import { acknowledge } from '../nag.js';
import {
  afterBundlingCommands,
  bindFlowExecutions,
  bindGrants,
  ESM_REQUIRE_BANNER,
  INSTALL_ENVIRONMENT,
  INSTALLED_MODULES,
  REPO_ROOT,
  type FlowExecutionsBinding,
  type GrantResources,
  type GrantTarget,
} from './app-function.js';

/**
 * Pinned images (never `latest`: a deploy must run what was tested). Both are public, pulled
 * without credentials: the tasks have public IPs and no NAT (see ContainerPlatform). Raise them
 * deliberately, on a Node 20 patch release (the bundle's target) and an aws-cli v2 release.
 */
export const NODE_IMAGE = 'public.ecr.aws/docker/library/node:20.20.2-bookworm-slim';
export const AWS_CLI_IMAGE = 'public.ecr.aws/aws-cli/aws-cli:2.27.0';

/** The container bundle's entry module (see functions/containers/README.md). */
export const CONTAINER_ENTRY = join(REPO_ROOT, 'functions', 'containers', 'main.ts');
/** esbuild's target: the Node of NODE_IMAGE. */
const CONTAINER_BUNDLE_TARGET = 'node20';

/** Name of the init container that fetches the bundle, and of the volume it shares with the app. */
export const BUNDLE_CONTAINER = 'bundle';
/** Name of the Node container that runs the bundle. */
export const APP_CONTAINER = 'app';
/** Memory (MiB) of the `bundle` init container: aws-cli copying one object. */
export const BUNDLE_CONTAINER_MEMORY_MB = 256;
/** Where the bundle `.tgz` lands (shared volume), and where the app extracts it. */
const BUNDLE_DIR = '/bundle';
const BUNDLE_FILE = `${BUNDLE_DIR}/bundle.tgz`;
const APP_DIR = '/app';

/**
 * The app container's command: extract the bundle, then run its entry with the role and its
 * arguments (as `"$@"`, never spliced into the script). RunTask overrides pass the whole command,
 * so they build it here too.
 */
export function nodeCommand(role: ContainerRole, args: readonly string[] = []): string[] {
  return ['sh', '-c', `mkdir -p ${APP_DIR} && tar -xzf ${BUNDLE_FILE} -C ${APP_DIR} && exec node ${APP_DIR}/index.mjs "$@"`, 'sh', role, ...args];
}

/** The Cloud Map private DNS namespace's name (`<service>.ldp.internal` inside the VPC). */
export const NAMESPACE_NAME = 'ldp.internal';

/** Share of a Node container's memory given to V8's heap (the rest: buffers, workers, native code). */
const HEAP_SHARE = 0.75;

const run = (command: string, cwd: string, env: Record<string, string> = {}): void => {
  execSync(command, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
};

/**
 * Builds the container bundle into `outputDir` as one `bundle.tgz`: `main.ts` bundled by esbuild to
 * `index.mjs` (ESM, Node 20, source maps), INSTALLED_MODULES installed by `npm ci` against our
 * lockfile, and the same worker modules as the Lambda bundles (afterBundlingCommands). Local only,
 * never Docker. With GNU tar the archive is reproducible (sorted, fixed times and owners, gzip
 * without a timestamp), so the asset hash changes only when the contents do.
 */
function bundleContainers(outputDir: string): void {
  const work = mkdtempSync(join(tmpdir(), 'container-bundle-'));
  try {
    // The project's own esbuild (a devDependency), as NodejsFunction runs it for the Lambda bundles.
    execFileSync(join(REPO_ROOT, 'node_modules', '.bin', 'esbuild'), [
      CONTAINER_ENTRY,
      '--bundle',
      '--platform=node',
      '--format=esm',
      `--target=${CONTAINER_BUNDLE_TARGET}`,
      '--minify',
      '--sourcemap',
      '--main-fields=module,main',
      `--banner:js=${ESM_REQUIRE_BANNER}`,
      // Installed next to the bundle by `npm ci` (as AppFunction's nodeModules), never bundled:
      // oxigraph finds its .wasm next to its own module.
      ...INSTALLED_MODULES.map((m) => `--external:${m}`),
      '--log-level=warning',
      `--outfile=${join(work, 'index.mjs')}`,
    ], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const dependencies = Object.fromEntries(INSTALLED_MODULES.map((m) => {
      const version = pkg.dependencies[m];
      if (!version) throw new Error(`${m} is not a dependency in package.json`);
      return [m, version];
    }));
    writeFileSync(join(work, 'package.json'), `${JSON.stringify({ dependencies }, null, 2)}\n`);
    copyFileSync(join(REPO_ROOT, 'package-lock.json'), join(work, 'package-lock.json'));
    run('npm ci', work, INSTALL_ENVIRONMENT);
    for (const command of afterBundlingCommands(REPO_ROOT, work)) run(command, work);
    const gnuTar = execSync('tar --version', { encoding: 'utf8' }).includes('GNU tar');
    const reproducible = gnuTar ? '--sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner ' : '';
    run(`tar ${reproducible}-cf - -C '${work}' . | gzip -n -9 > '${join(outputDir, 'bundle.tgz')}'`, work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface ContainerPlatformProps {
  /** What the container table's grants refer to (the same as the functions'). */
  grantResources: GrantResources;
  /** The flows' state machines, for containers granted `flowExecutions` (long flow tasks). */
  flows?: FlowExecutionsBinding;
  /** Environment of every Node container (as every function gets it): PUBLIC_API_URL. */
  environment: Record<string, string>;
}

/**
 * Where our containers run (issue 19): a VPC, an ECS cluster, a Cloud Map namespace, and the one
 * Node bundle every Node task runs. The constructs of the upload host, the SPARQL hosts and the
 * worker task take it as a prop and make their task definitions with `nodeTaskDefinition`.
 *
 * - VPC: 2 AZs, public subnets only and **no NAT gateway** (nothing costs at rest). Tasks get a
 *   public IP only to pull the public images; their security groups admit nothing from the
 *   internet. Gateway endpoints for S3 and DynamoDB (free) keep that traffic, and in-VPC Lambda
 *   functions' traffic, off the internet. Flow logs (rejected and accepted) to a log group.
 * - ECS cluster (Fargate), Cloud Map private DNS namespace (the upload host's VPC link target).
 * - The bundle: `functions/containers/main.ts` and what it needs, one `.tgz` file asset.
 */
export class ContainerPlatform extends Construct {
  readonly vpc: Vpc;
  readonly cluster: Cluster;
  readonly namespace: PrivateDnsNamespace;
  /** The container bundle (`bundle.tgz`) in the CDK asset bucket. */
  readonly bundle: Asset;
  readonly flowLogs: LogGroup;
  private readonly props: ContainerPlatformProps;

  constructor(scope: Construct, id: string, props: ContainerPlatformProps) {
    super(scope, id);
    this.props = props;
    this.flowLogs = new LogGroup(this, 'FlowLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 20 }],
      gatewayEndpoints: {
        S3: { service: GatewayVpcEndpointAwsService.S3 },
        DynamoDB: { service: GatewayVpcEndpointAwsService.DYNAMODB },
      },
      flowLogs: { All: { destination: FlowLogDestination.toCloudWatchLogs(this.flowLogs), trafficType: FlowLogTrafficType.ALL } },
      // No custom resource (a Lambda function) to empty the default security group: nothing uses it.
      restrictDefaultSecurityGroup: false,
    });
    this.cluster = new Cluster(this, 'Cluster', { vpc: this.vpc });
    acknowledge(
      this.cluster,
      'ECS4',
      'Container Insights is billed per metric and task; the tasks log to CloudWatch Logs and ECS reports service CPU and memory without it. Enable it on the cluster when needed.',
    );
    this.namespace = new PrivateDnsNamespace(this, 'Namespace', {
      // Private to this VPC: the same name in another deployment's VPC does not clash.
      name: NAMESPACE_NAME,
      vpc: this.vpc,
      description: 'Private names of the platform\'s container services (the upload host behind the API\'s VPC link)',
    });
    this.bundle = new Asset(this, 'Bundle', {
      path: REPO_ROOT,
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        // Never used: local bundling always answers (or fails the synth), so synth needs no Docker.
        image: DockerImage.fromRegistry('local-bundling-only'),
        outputType: BundlingOutput.SINGLE_FILE,
        local: {
          tryBundle: (outputDir: string) => {
            bundleContainers(outputDir);
            return true;
          },
        },
      },
    });
  }

  /**
   * A Fargate task definition running the bundle as the table entry `name` says (see
   * NodeTaskDefinition).
   */
  nodeTaskDefinition(scope: Construct, id: string, name: ContainerName, options: NodeTaskOptions = {}): NodeTaskDefinition {
    return new NodeTaskDefinition(scope, id, { platform: this, spec: CONTAINERS[name], ...options });
  }

  /** @internal what NodeTaskDefinition binds grants with. */
  get grantBinding(): Pick<ContainerPlatformProps, 'grantResources' | 'flows' | 'environment'> {
    return this.props;
  }
}

export interface NodeTaskOptions {
  /** Memory (MiB) of the app container; default the task's memory less the init container's. */
  appMemoryMb?: number;
  /** Arguments after the role. */
  args?: string[];
  /** Extra environment of the app container. */
  environment?: Record<string, string>;
  /** Default ARM64; X86_64 for a task with a single-architecture image beside the Node one (the SPARQL host's Virtuoso). */
  cpuArchitecture?: CpuArchitecture;
}

export interface NodeTaskDefinitionProps extends NodeTaskOptions {
  platform: ContainerPlatform;
  spec: ContainerSpec;
}

/**
 * A Fargate task definition (Linux, ARM64, cpu and memory from the container table) running our
 * bundle without a Docker build:
 *
 * - `bundle` (init, essential=false): aws-cli copies the bundle `.tgz` from the asset bucket to
 *   the shared volume; the task role may read exactly that object.
 * - `app` (essential, `dependsOn bundle: SUCCESS`): node:20 extracts it and runs
 *   `node /app/index.mjs <role> [args]` (see `nodeCommand`); env PORT when the role serves.
 *
 * Both log to one log group (one month). The task role is granted exactly the table entry's
 * grants (the functions' bind helpers, settings as environment of `app`); the execution role only
 * writes the logs (and reads the secrets a container references, added by CDK when it does).
 * Other containers (Virtuoso) are added to `taskDefinition` by the construct that owns them.
 */
export class NodeTaskDefinition extends Construct implements GrantTarget {
  readonly taskDefinition: FargateTaskDefinition;
  readonly taskRole: Role;
  readonly executionRole: Role;
  readonly logGroup: LogGroup;
  readonly bundleContainer: ContainerDefinition;
  readonly app: ContainerDefinition;
  readonly spec: ContainerSpec;

  constructor(scope: Construct, id: string, props: NodeTaskDefinitionProps) {
    super(scope, id);
    const { platform, spec } = props;
    this.spec = spec;
    const stack = Stack.of(this);
    this.logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.taskRole = new Role(this, 'TaskRole', {
      assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      description: `Runs the ${spec.role} container`,
    });
    this.executionRole = new Role(this, 'ExecutionRole', {
      assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      description: `Starts the ${spec.role} task (logs, secrets)`,
    });
    this.taskDefinition = new FargateTaskDefinition(this, 'TaskDefinition', {
      cpu: spec.cpu,
      memoryLimitMiB: spec.memoryMb,
      runtimePlatform: { cpuArchitecture: props.cpuArchitecture ?? CpuArchitecture.ARM64, operatingSystemFamily: OperatingSystemFamily.LINUX },
      taskRole: this.taskRole,
      executionRole: this.executionRole,
      volumes: [{ name: BUNDLE_CONTAINER }],
    });
    const logging = (prefix: string) => LogDrivers.awsLogs({ logGroup: this.logGroup, streamPrefix: prefix });

    this.bundleContainer = this.taskDefinition.addContainer(BUNDLE_CONTAINER, {
      containerName: BUNDLE_CONTAINER,
      image: ContainerImage.fromRegistry(AWS_CLI_IMAGE),
      essential: false,
      memoryLimitMiB: BUNDLE_CONTAINER_MEMORY_MB,
      command: ['s3', 'cp', '--only-show-errors', '--region', stack.region, platform.bundle.s3ObjectUrl, BUNDLE_FILE],
      logging: logging(spec.role),
    });
    this.bundleContainer.addMountPoints({ sourceVolume: BUNDLE_CONTAINER, containerPath: BUNDLE_DIR, readOnly: false });
    this.taskRole.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['s3:GetObject'], resources: [platform.bundle.bucket.arnForObjects(platform.bundle.s3ObjectKey)] }),
    );

    const appMemoryMb = props.appMemoryMb ?? spec.memoryMb - BUNDLE_CONTAINER_MEMORY_MB;
    const binding = platform.grantBinding;
    this.app = this.taskDefinition.addContainer(APP_CONTAINER, {
      containerName: APP_CONTAINER,
      image: ContainerImage.fromRegistry(NODE_IMAGE),
      essential: true,
      memoryLimitMiB: appMemoryMb,
      command: nodeCommand(spec.role, props.args),
      environment: {
        NODE_OPTIONS: `--enable-source-maps --max-old-space-size=${Math.floor(appMemoryMb * HEAP_SHARE)}`,
        AWS_REGION: stack.region,
        [ENV.logLevel]: 'INFO',
        ...binding.environment,
        ...(spec.port !== undefined ? { PORT: String(spec.port) } : {}),
        ...props.environment,
      },
      portMappings: spec.port !== undefined ? [{ containerPort: spec.port }] : undefined,
      logging: logging(spec.role),
    });
    this.app.addMountPoints({ sourceVolume: BUNDLE_CONTAINER, containerPath: BUNDLE_DIR, readOnly: true });
    this.app.addContainerDependencies({ container: this.bundleContainer, condition: ContainerDependencyCondition.SUCCESS });

    bindGrants(this, spec.grants, binding.grantResources);
    if (spec.grants.flowExecutions) {
      if (!binding.flows) throw new Error(`container ${spec.role} is granted flowExecutions, but the platform was given no flows`);
      bindFlowExecutions(this, binding.flows, spec.grants.flowExecutions);
    }
    if (spec.grants.flowSchedules) throw new Error(`container ${spec.role}: flowSchedules grants are not supported on containers`);
    acknowledge(
      this.taskDefinition,
      'ECS2',
      'The environment holds resource names and settings only (table, buckets, URLs, sizes); secrets come from Secrets Manager through `secrets`, never as environment values.',
    );
  }

  /** The task role (GrantTarget: the bind helpers grant to it). */
  get role(): Role {
    return this.taskRole;
  }

  /** Sets an environment variable of the app container (GrantTarget: how bind helpers tell settings). */
  addEnvironment(name: string, value: string): void {
    this.app.addEnvironment(name, value);
  }
}
