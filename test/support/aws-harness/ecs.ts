/**
 * Amazon ECS on Fargate as it runs our tasks, behind the harness endpoint (JSON 1.1,
 * `X-Amz-Target: AmazonEC2ContainerServiceV20141113.<Action>`): RunTask, StopTask, DescribeTasks,
 * ListTasks, IAM-checked as ECS authorizes them (RunTask: `ecs:RunTask` on the task definition
 * with `ecs:cluster`, and `iam:PassRole` of the task and execution roles to
 * ecs-tasks.amazonaws.com; StopTask/DescribeTasks: the task ARN with `ecs:cluster`).
 *
 * A task starts as Fargate starts it, from the template's task definition:
 * - containers in `dependsOn` order (START, COMPLETE, SUCCESS; HEALTHY is read as START: no health
 *   checks are modelled); a container whose dependency cannot be met never starts;
 * - an essential container that exits stops the task (the others get SIGTERM, then SIGKILL after
 *   their stopTimeout); stopCode EssentialContainerExited, each container's exit code recorded;
 * - the execution role must be allowed `secretsmanager:GetSecretValue` on every secret a container
 *   references (else the task fails to start, ResourceInitializationError, as on Fargate); each
 *   secret resolves to one random value (the same in every container and task);
 * - every container gets its definition's environment, the RunTask overrides, the secrets, and
 *   credentials whose access key id is the TASK ROLE's logical id (so the endpoint applies the
 *   task role's policy), AWS_REGION, ECS_CONTAINER_METADATA_URI_V4 (a harness endpoint answering
 *   `/task` with the task ARN and `Containers[].Networks[].IPv4Addresses: ["127.0.0.1"]`);
 * - networking: awsvpc becomes loopback. Containers of a task share 127.0.0.1; each declared
 *   containerPort gets a free host port, and every environment variable of the task whose NAME
 *   contains `PORT` and whose value is that containerPort is given the host port instead (PORT of
 *   the Node hosts, VIRTUOSO_HTTP_PORT and VIRT_HTTPServer_ServerPort of Virtuoso and its loader):
 *   the one documented departure from what the task definition says;
 * - images run through image runners (registerImageRunner(prefix, runner)). Built in:
 *   aws-cli (`s3 cp s3://<asset bucket>/<key> <path>`: the CDK file asset from cdk.out, after
 *   checking the task role may s3:GetObject it), node (the `sh -c 'mkdir -p … && tar -xzf … -C … &&
 *   exec node … "$@"' sh <args>` command of the task definitions, interpreted step by step: the
 *   bundle extracted with tar, then `node <dir>/index.mjs <args>` as a child process), busybox
 *   (`sh -c <script>` on the host's sh, mount paths mapped). Paths inside a container map to the
 *   task's volumes (mount points) or to the container's own root folder.
 *
 * ECS services (AWS::ECS::Service) start DesiredCount tasks when the harness starts; a task of a
 * service registers in the service's Cloud Map services once its container port accepts
 * connections (what API Gateway's VPC-link routes forward to), and is replaced when it stops
 * (bounded). Task output is dropped unless HARNESS_VERBOSE=1 (errors are shown); each container
 * keeps the tail of its output for assertions (`task.containers[].logTail`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rename, rm, symlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import type { IamEvaluator, IamRequest } from './iam.js';
import { ACCOUNT, REGION, type DeployedApp, type DeployedContainer, type DeployedEcsService, type DeployedTaskDefinition } from './template.js';

// ---- image runners

/** What an image runner gets to start one container of a task. */
export interface ContainerStart {
  task: EcsTask;
  container: DeployedContainer;
  /** The command after RunTask overrides (undefined: the image's default). */
  command?: string[];
  entryPoint?: string[];
  /** The container's whole environment (definition, overrides, secrets, credentials, ECS's; ports remapped). */
  env: Record<string, string>;
  /** The container's mount points on the host. */
  mounts: { containerPath: string; hostPath: string; readOnly: boolean }[];
  /** Host folder standing for the container's own filesystem (paths outside its mounts). */
  rootDir: string;
  /** containerPort → host port on 127.0.0.1 (the whole task's). */
  ports: Record<number, number>;
  /** A path inside the container → the host path (a mount, else under rootDir). */
  hostPath(containerPath: string): string;
  /** Appends output to the container's log tail (and shows it when verbose, or when it is an error). */
  log(text: string): void;
}

/** A started container: its main process' exit, and how to stop it. */
export interface RunningContainer {
  /** Resolves with the exit code when the container's main process ends (128 + signal when killed). */
  exited: Promise<number>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs: number): Promise<void>;
}

/** Starts a container of an image; throws when it cannot (the task then fails to start). */
export type ImageRunner = (start: ContainerStart) => Promise<RunningContainer>;

const IMAGE_RUNNERS = new Map<string, ImageRunner>();

/**
 * Registers how containers of images starting with `imagePrefix` run (the longest matching prefix
 * wins), e.g. `registerImageRunner('openlink/virtuoso-opensource-7', runner)`.
 */
export function registerImageRunner(imagePrefix: string, runner: ImageRunner): void {
  IMAGE_RUNNERS.set(imagePrefix, runner);
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Every container process still running: killed if the test process exits without stopping the harness. */
const LIVE = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of LIVE) child.kill('SIGKILL');
});

/** A child process as a RunningContainer: output goes to `start.log`, the exit code as Docker reports it. */
export function processContainer(child: ChildProcess, start: Pick<ContainerStart, 'log'>): RunningContainer {
  LIVE.add(child);
  child.on('exit', () => LIVE.delete(child));
  child.stdout?.on('data', (d: Buffer) => start.log(d.toString()));
  child.stderr?.on('data', (d: Buffer) => start.log(d.toString()));
  const exited = new Promise<number>((resolve) => {
    child.on('error', (e) => {
      start.log(`harness: ${e.message}\n`);
      resolve(127);
    });
    child.on('exit', (code, signal) => resolve(code ?? 128 + (SIGNALS[signal ?? ''] ?? 9)));
  });
  return {
    exited,
    async stop(graceMs: number) {
      if (child.exitCode !== null || child.signalCode !== null) return void (await exited);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---- the task records

export type TaskStatus = 'PROVISIONING' | 'PENDING' | 'RUNNING' | 'DEPROVISIONING' | 'STOPPED';

export interface EcsContainerState {
  name: string;
  image: string;
  lastStatus: 'PENDING' | 'RUNNING' | 'STOPPED';
  exitCode?: number;
  reason?: string;
  /** The last 32 KiB of its output. */
  logTail: string;
}

export interface EcsTask {
  taskArn: string;
  taskId: string;
  clusterArn: string;
  definition: DeployedTaskDefinition;
  lastStatus: TaskStatus;
  desiredStatus: 'RUNNING' | 'STOPPED';
  startedBy?: string;
  group?: string;
  /** The RunTask overrides as given. */
  overrides: { containerOverrides?: { name: string; command?: string[]; environment?: { name: string; value: string }[] }[]; taskRoleArn?: string; executionRoleArn?: string };
  containers: EcsContainerState[];
  /** containerPort → host port on 127.0.0.1. */
  ports: Record<number, number>;
  createdAt: number;
  startedAt?: number;
  stoppingAt?: number;
  stoppedAt?: number;
  stopCode?: 'TaskFailedToStart' | 'EssentialContainerExited' | 'UserInitiated' | 'ServiceSchedulerInitiated';
  stoppedReason?: string;
  /** Who started it: the caller's role logical id, or the ECS service. */
  startedByPrincipal: string;
  /** Resolves when the task is STOPPED. */
  stopped: Promise<void>;
}

interface TaskRuntime {
  task: EcsTask;
  dir: string;
  running: Map<string, RunningContainer>;
  markStopped: () => void;
  taskRoleLogicalId?: string;
}

interface EcsReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const reply = (status: number, body: unknown): EcsReply => ({ status, headers: { 'content-type': 'application/x-amz-json-1.1' }, body: JSON.stringify(body) });
const ecsError = (type: string, message: string, status = 400): EcsReply => ({
  status,
  headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': type },
  body: JSON.stringify({ __type: type, message }),
});

const LOG_TAIL = 32 * 1024;
const AWS_CLI = 'public.ecr.aws/aws-cli/aws-cli';
const NODE_IMAGES = ['public.ecr.aws/docker/library/node:', 'node:'];
const BUSYBOX_IMAGES = ['public.ecr.aws/docker/library/busybox:', 'busybox:'];
/** Replacements of a service's stopped tasks before the harness gives up on it. */
const MAX_SERVICE_REPLACEMENTS = 5;

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

export interface FakeEcsOptions {
  app: DeployedApp;
  iam: IamEvaluator;
  /** The harness endpoint (AWS_ENDPOINT_URL of the containers), known once it listens. */
  endpointUrl: () => string;
  verbose: boolean;
}

/** A value as Secrets Manager generates it from the template's GenerateSecretString (its exclusions honoured). */
function generatedSecret(g: Record<string, unknown>): string {
  const length = Number(g.PasswordLength ?? 32);
  let alphabet = '';
  if (!g.ExcludeUppercase) alphabet += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  if (!g.ExcludeLowercase) alphabet += 'abcdefghijklmnopqrstuvwxyz';
  if (!g.ExcludeNumbers) alphabet += '0123456789';
  if (!g.ExcludePunctuation) alphabet += '!#$%&()*+,-./:;<=>?@[]^_{|}~';
  const bytes = randomBytes(length);
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
}

export class FakeEcs {
  /** Every task started, in order (stopped ones stay, as ECS shows them for a while). */
  readonly tasks: EcsTask[] = [];
  private readonly runtimes = new Map<string, TaskRuntime>();
  private readonly secretValues = new Map<string, string>();
  /** Cloud Map service ARN → registered instances (task, host port). */
  private readonly registered = new Map<string, { taskArn: string; port: number }[]>();
  private readonly replacements = new Map<string, number>();
  private metadata!: Server;
  private metadataUrl = '';
  private workDir = '';
  private stopping = false;
  private roundRobin = 0;
  private readonly bundleCache = new Map<string, Promise<string>>();

  constructor(private readonly o: FakeEcsOptions) {}

  async start(): Promise<void> {
    this.workDir = await mkdtemp(join(tmpdir(), 'ldp-aws-harness-ecs-'));
    this.metadata = createServer((req, res) => {
      const m = /^\/v[34]\/([0-9a-f]+)\/([^/]+)(\/task)?(\/stats)?$/.exec(req.url ?? '');
      const rt = m ? this.runtimes.get(m[1]!) : undefined;
      if (!m || !rt) {
        res.writeHead(404).end();
        return;
      }
      const body = m[4] ? {} : m[3] ? this.taskMetadata(rt.task) : this.containerMetadata(rt.task, decodeURIComponent(m[2]!));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((r) => this.metadata.listen(0, '127.0.0.1', () => r()));
    this.metadataUrl = `http://127.0.0.1:${(this.metadata.address() as AddressInfo).port}`;
  }

  /** Starts every ECS service's DesiredCount tasks and waits until each has registered in its Cloud Map services. */
  async startServices(timeoutMs = 90_000): Promise<void> {
    await Promise.all(this.o.app.ecsServices.flatMap((s) => Array.from({ length: s.desiredCount }, () => this.startServiceTask(s, timeoutMs))));
  }

  /** Stops every task (SIGTERM, SIGKILL after 2 s) and the metadata endpoint. */
  async stop(): Promise<void> {
    this.stopping = true;
    // Tasks already stopping (a StopTask's 30 s grace) are hurried along too.
    await Promise.all([...this.runtimes.values()].flatMap((rt) => [this.stopTask(rt, 'UserInitiated', 'Harness stopped', 2000), ...[...rt.running.values()].map((c) => c.stop(2000))]));
    this.metadata?.closeAllConnections();
    if (this.metadata) await new Promise((r) => this.metadata.close(r));
    if (this.workDir) await rm(this.workDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }).catch(() => {});
  }

  /** The instances registered in a Cloud Map service (by ARN): where a VPC-link route forwards. */
  instances(cloudMapServiceArn: string): { taskArn: string; port: number }[] {
    return this.registered.get(cloudMapServiceArn) ?? [];
  }

  /** One registered instance of a Cloud Map service, round robin (API Gateway spreads requests). */
  pickInstance(cloudMapServiceArn: string): { taskArn: string; port: number } | undefined {
    const list = this.instances(cloudMapServiceArn);
    return list.length ? list[this.roundRobin++ % list.length] : undefined;
  }

  /** ECS_CONTAINER_METADATA_URI_V4 of a task's container (what the container sees). */
  metadataUri(taskArnOrId: string, container: string): string {
    const task = this.task(taskArnOrId);
    if (!task) throw new Error(`harness: no task ${taskArnOrId}`);
    return `${this.metadataUrl}/v4/${task.taskId}/${encodeURIComponent(container)}`;
  }

  task(arnOrId: string): EcsTask | undefined {
    return this.tasks.find((t) => t.taskArn === arnOrId || t.taskId === arnOrId);
  }

  /** Waits (bounded) until a task is STOPPED; returns it. */
  async waitStopped(arnOrId: string, timeoutMs = 60_000): Promise<EcsTask> {
    const task = this.task(arnOrId);
    if (!task) throw new Error(`harness: no task ${arnOrId}`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    const r = await Promise.race([task.stopped, timeout]);
    clearTimeout(timer);
    if (r === 'timeout') throw new Error(`harness: task ${task.taskId} still ${task.lastStatus} after ${timeoutMs} ms`);
    return task;
  }

  // ---- the API

  /** One ECS API call (`op` from X-Amz-Target) by a role (undefined: the operator, not IAM-checked). */
  async handle(roleLogicalId: string | undefined, session: string, op: string, input: any): Promise<EcsReply> {
    const deny = async (requests: IamRequest[]): Promise<EcsReply | undefined> => {
      if (!roleLogicalId) return undefined;
      for (const r of requests) {
        const d = await this.o.iam.decide(roleLogicalId, session, r);
        if (!d.allowed) return ecsError('AccessDeniedException', d.message);
      }
      return undefined;
    };
    const cluster = this.cluster(input.cluster);
    if (!cluster) return ecsError('ClusterNotFoundException', 'Cluster not found.');
    switch (op) {
      case 'RunTask':
        return this.runTaskCall(roleLogicalId, cluster.arn, input, deny);
      case 'StopTask': {
        const arn = this.taskArn(cluster, String(input.task ?? ''));
        const denied = await deny([{ action: 'ecs:StopTask', resource: arn, context: { 'ecs:cluster': cluster.arn } }]);
        if (denied) return denied;
        const rt = this.runtimes.get(arn.split('/').pop()!);
        const task = this.task(arn);
        if (!task || task.clusterArn !== cluster.arn) return ecsError('InvalidParameterException', 'The referenced task was not found.');
        if (rt) void this.stopTask(rt, 'UserInitiated', String(input.reason ?? 'Task stopped by user'));
        return reply(200, { task: this.describe(task) });
      }
      case 'DescribeTasks': {
        const arns = ((input.tasks as string[]) ?? []).map((t) => this.taskArn(cluster, t));
        if (arns.length === 0 || arns.length > 100) return ecsError('InvalidParameterException', 'Tasks cannot be empty.');
        const denied = await deny(arns.map((arn) => ({ action: 'ecs:DescribeTasks', resource: arn, context: { 'ecs:cluster': cluster.arn } })));
        if (denied) return denied;
        const tasks = arns.map((arn) => this.task(arn)).filter((t): t is EcsTask => t !== undefined && t.clusterArn === cluster.arn);
        const failures = arns.filter((arn) => !tasks.some((t) => t.taskArn === arn)).map((arn) => ({ arn, reason: 'MISSING' }));
        return reply(200, { tasks: tasks.map((t) => this.describe(t)), failures });
      }
      case 'ListTasks': {
        const denied = await deny([{ action: 'ecs:ListTasks', resource: `arn:aws:ecs:${REGION}:${ACCOUNT}:container-instance/${cluster.name}/*`, context: { 'ecs:cluster': cluster.arn } }]);
        if (denied) return denied;
        const desired = input.desiredStatus ?? 'RUNNING';
        const family = input.family as string | undefined;
        const arns = this.tasks
          .filter((t) => t.clusterArn === cluster.arn && t.desiredStatus === desired)
          .filter((t) => !input.startedBy || t.startedBy === input.startedBy)
          .filter((t) => !family || t.definition.family === family)
          .filter((t) => !input.serviceName || t.group === `service:${input.serviceName}`)
          .map((t) => t.taskArn);
        return reply(200, { taskArns: arns });
      }
      default:
        return ecsError('UnknownOperationException', `harness: ECS ${op} not modelled`);
    }
  }

  private cluster(nameOrArn: string | undefined) {
    const want = nameOrArn ?? 'default';
    return this.o.app.clusters.find((c) => c.name === want || c.arn === want);
  }

  private taskArn(cluster: { name: string }, arnOrId: string): string {
    return arnOrId.startsWith('arn:') ? arnOrId : `arn:aws:ecs:${REGION}:${ACCOUNT}:task/${cluster.name}/${arnOrId}`;
  }

  private taskDefinition(ref: string): DeployedTaskDefinition | undefined {
    return this.o.app.taskDefinitions.find((d) => d.arn === ref || d.family === ref || `${d.family}:1` === ref);
  }

  private async runTaskCall(roleLogicalId: string | undefined, clusterArn: string, input: any, deny: (r: IamRequest[]) => Promise<EcsReply | undefined>): Promise<EcsReply> {
    const def = this.taskDefinition(String(input.taskDefinition ?? ''));
    const defArn = def?.arn ?? String(input.taskDefinition ?? '');
    const overrides = input.overrides ?? {};
    const taskRoleArn = overrides.taskRoleArn ?? def?.taskRoleArn;
    const executionRoleArn = overrides.executionRoleArn ?? def?.executionRoleArn;
    const pass = (arn: string) => ({ action: 'iam:PassRole', resource: arn, context: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } });
    const denied = await deny([
      { action: 'ecs:RunTask', resource: defArn, context: { 'ecs:cluster': clusterArn } },
      ...(taskRoleArn ? [pass(taskRoleArn)] : []),
      ...(executionRoleArn ? [pass(executionRoleArn)] : []),
      ...(input.tags?.length ? [{ action: 'ecs:TagResource', resource: `arn:aws:ecs:${REGION}:${ACCOUNT}:task/*`, context: { 'ecs:CreateAction': 'RunTask' } }] : []),
    ]);
    if (denied) return denied;
    if (!def) return ecsError('ClientException', 'Unable to find task definition.');
    if (input.launchType && input.launchType !== 'FARGATE') return ecsError('InvalidParameterException', `harness: launch type ${input.launchType} is not modelled (the task definitions are FARGATE)`);
    if (!input.launchType && !input.capacityProviderStrategy) {
      return ecsError('InvalidParameterException', 'harness: the cluster has no default capacity provider strategy; RunTask needs launchType FARGATE (or a capacity provider strategy)');
    }
    if (def.networkMode === 'awsvpc') {
      const vpc = input.networkConfiguration?.awsvpcConfiguration;
      if (!vpc) return ecsError('InvalidParameterException', "Network Configuration must be provided when networkMode 'awsvpc' is specified.");
      if (!vpc.subnets?.length) return ecsError('InvalidParameterException', 'subnets can not be empty.');
    }
    for (const c of overrides.containerOverrides ?? []) {
      if (!def.containers.some((d) => d.name === c.name)) return ecsError('InvalidParameterException', `Override for container named ${c.name} is not a container in the TaskDefinition.`);
    }
    const count = Number(input.count ?? 1);
    if (!(count >= 1 && count <= 10)) return ecsError('InvalidParameterException', 'count must be between 1 and 10.');
    const tasks: EcsTask[] = [];
    for (let i = 0; i < count; i++) tasks.push(this.runTask({ definition: def, clusterArn, overrides, startedBy: input.startedBy, group: input.group ?? `family:${def.family}`, principal: roleLogicalId ?? 'operator' }));
    return reply(200, { tasks: tasks.map((t) => this.describe(t)), failures: [] });
  }

  /**
   * Starts one task (no IAM check: callers check, as RunTask does, or are ECS itself). The task
   * is PROVISIONING when this returns; its containers start in the background.
   */
  runTask(o: { definition: DeployedTaskDefinition; clusterArn: string; overrides?: EcsTask['overrides']; startedBy?: string; group?: string; principal: string }): EcsTask {
    const taskId = randomBytes(16).toString('hex');
    const clusterName = o.clusterArn.split('/').pop()!;
    let markStopped!: () => void;
    const task: EcsTask = {
      taskArn: `arn:aws:ecs:${REGION}:${ACCOUNT}:task/${clusterName}/${taskId}`,
      taskId,
      clusterArn: o.clusterArn,
      definition: o.definition,
      lastStatus: 'PROVISIONING',
      desiredStatus: 'RUNNING',
      startedBy: o.startedBy,
      group: o.group,
      overrides: o.overrides ?? {},
      containers: o.definition.containers.map((c) => ({ name: c.name, image: c.image, lastStatus: 'PENDING', logTail: '' })),
      ports: {},
      createdAt: Date.now(),
      startedByPrincipal: o.principal,
      stopped: new Promise<void>((r) => (markStopped = r)),
    };
    const taskRoleArn = task.overrides.taskRoleArn ?? o.definition.taskRoleArn;
    const rt: TaskRuntime = { task, dir: join(this.workDir, taskId), running: new Map(), markStopped, taskRoleLogicalId: taskRoleArn?.split('/').pop() };
    this.tasks.push(task);
    this.runtimes.set(taskId, rt);
    void this.launch(rt).catch((e) => this.stopTask(rt, 'TaskFailedToStart', `harness: ${(e as Error).message}`));
    return task;
  }

  private async launch(rt: TaskRuntime): Promise<void> {
    const { task } = rt;
    const def = task.definition;
    await mkdir(rt.dir, { recursive: true });
    for (const v of def.volumes) await mkdir(join(rt.dir, 'volumes', v), { recursive: true });
    for (const c of def.containers) for (const p of c.portMappings) if (!(p.containerPort in task.ports)) task.ports[p.containerPort] = await freePort();
    // Fargate fetches the secrets with the execution role before any container starts.
    const secretNames = [...new Set(def.containers.flatMap((c) => Object.values(c.secrets)))];
    for (const arn of secretNames) {
      const role = (task.overrides.executionRoleArn ?? def.executionRoleArn)?.split('/').pop();
      const d = role ? await this.o.iam.decide(role, 'ecs-tasks', { action: 'secretsmanager:GetSecretValue', resource: arn }) : { allowed: false, message: 'the task definition has no execution role' };
      if (!d.allowed) return this.stopTask(rt, 'TaskFailedToStart', `ResourceInitializationError: unable to pull secrets or registry auth: retrieving secret from asm: AccessDeniedException: ${d.message}`);
      if (!this.secretValues.has(arn)) this.secretValues.set(arn, generatedSecret(this.o.app.secrets.find((x) => x.arn === arn)?.generate ?? {}));
    }
    task.lastStatus = 'PENDING';
    const started = new Map<string, Promise<boolean>>();
    const exited = new Map<string, Promise<number | undefined>>();
    const deferred = new Map<string, { started: (ok: boolean) => void; exited: (code: number | undefined) => void }>();
    for (const c of def.containers) {
      let s!: (ok: boolean) => void;
      let e!: (code: number | undefined) => void;
      started.set(c.name, new Promise((r) => (s = r)));
      exited.set(c.name, new Promise((r) => (e = r)));
      deferred.set(c.name, { started: s, exited: e });
    }
    const essentials = def.containers.filter((c) => c.essential);
    void Promise.all(essentials.map((c) => started.get(c.name))).then((oks) => {
      if (oks.every(Boolean) && task.desiredStatus === 'RUNNING') {
        task.lastStatus = 'RUNNING';
        task.startedAt = Date.now();
      }
    });
    await Promise.all(
      def.containers.map(async (c) => {
        const state = task.containers.find((s) => s.name === c.name)!;
        const d = deferred.get(c.name)!;
        for (const dep of c.dependsOn) {
          const ok =
            dep.condition === 'START' || dep.condition === 'HEALTHY'
              ? await started.get(dep.containerName)
              : dep.condition === 'COMPLETE'
                ? (await exited.get(dep.containerName)) !== undefined
                : (await exited.get(dep.containerName)) === 0;
          if (!ok || task.desiredStatus !== 'RUNNING') {
            state.lastStatus = 'STOPPED';
            state.reason = `DependencyConditionFailed: ${dep.containerName} did not meet ${dep.condition}`;
            d.started(false);
            d.exited(undefined);
            if (task.desiredStatus === 'RUNNING') {
              const exit = await exited.get(dep.containerName);
              void this.stopTask(rt, 'TaskFailedToStart', `CannotStartContainerError: container ${c.name} depends on ${dep.containerName} (${dep.condition}), which ${exit === undefined ? 'never ran' : `exited with ${exit}`}`);
            }
            return;
          }
        }
        let running: RunningContainer;
        try {
          running = await this.startContainer(rt, c);
        } catch (e) {
          state.lastStatus = 'STOPPED';
          state.reason = (e as Error).message;
          d.started(false);
          d.exited(undefined);
          void this.stopTask(rt, 'TaskFailedToStart', (e as Error).message);
          return;
        }
        if (task.desiredStatus !== 'RUNNING') {
          // The task was stopped while this container started: it goes too.
          await running.stop(0);
        }
        rt.running.set(c.name, running);
        state.lastStatus = 'RUNNING';
        d.started(true);
        const code = await running.exited;
        rt.running.delete(c.name);
        state.lastStatus = 'STOPPED';
        state.exitCode = code;
        d.exited(code);
        if (c.essential && task.desiredStatus === 'RUNNING') void this.stopTask(rt, 'EssentialContainerExited', `Essential container in task exited`);
      }),
    );
    // Every container has run (or never will): the task is over.
    if (task.desiredStatus === 'RUNNING') await this.stopTask(rt, 'EssentialContainerExited', 'Essential container in task exited');
  }

  private async stopTask(rt: TaskRuntime, code: NonNullable<EcsTask['stopCode']>, reason: string, graceMs?: number): Promise<void> {
    const { task } = rt;
    if (task.desiredStatus === 'STOPPED') return task.stopped;
    task.desiredStatus = 'STOPPED';
    task.stopCode = code;
    task.stoppedReason = reason;
    task.stoppingAt = Date.now();
    task.lastStatus = 'DEPROVISIONING';
    for (const list of this.registered.values()) {
      const i = list.findIndex((x) => x.taskArn === task.taskArn);
      if (i >= 0) list.splice(i, 1);
    }
    await Promise.all(
      [...rt.running.entries()].map(([name, c]) => c.stop(graceMs ?? task.definition.containers.find((d) => d.name === name)!.stopTimeoutSeconds * 1000)),
    );
    // The containers' exit handlers record their codes before the task is STOPPED.
    await new Promise((r) => setImmediate(r));
    for (const s of task.containers) if (s.lastStatus !== 'STOPPED') s.lastStatus = 'STOPPED';
    task.lastStatus = 'STOPPED';
    task.stoppedAt = Date.now();
    this.runtimes.delete(task.taskId);
    // A process the kill has not reaped yet may still write there (virtuoso-t): retry, never fail the stop over a temp dir.
    await rm(rt.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }).catch(() => {});
    rt.markStopped();
    const service = task.group?.startsWith('service:') ? this.o.app.ecsServices.find((s) => `service:${s.name}` === task.group) : undefined;
    if (service && !this.stopping) {
      const n = (this.replacements.get(service.name) ?? 0) + 1;
      this.replacements.set(service.name, n);
      if (n <= MAX_SERVICE_REPLACEMENTS) void this.startServiceTask(service, 90_000).catch((e) => process.stderr.write(`[ecs ${service.name}] ${(e as Error).message}\n`));
      else process.stderr.write(`[ecs ${service.name}] harness: ${MAX_SERVICE_REPLACEMENTS} replacement tasks stopped; not replacing again\n`);
    }
  }

  private async startServiceTask(service: DeployedEcsService, timeoutMs: number): Promise<void> {
    const definition = this.o.app.taskDefinitions.find((d) => d.arn === service.taskDefinitionArn);
    if (!definition) throw new Error(`harness: service ${service.name}: no task definition ${service.taskDefinitionArn}`);
    const task = this.runTask({ definition, clusterArn: service.clusterArn, startedBy: `ecs-svc/${service.logicalId}`, group: `service:${service.name}`, principal: 'ecs.amazonaws.com' });
    const until = Date.now() + timeoutMs;
    for (const reg of service.registries) {
      const port = task.ports[reg.containerPort ?? -1];
      if (port === undefined) {
        // Ports are assigned as the task launches.
        for (let i = 0; i < 100 && task.ports[reg.containerPort ?? -1] === undefined && task.desiredStatus === 'RUNNING'; i++) await new Promise((r) => setTimeout(r, 20));
      }
      const hostPort = task.ports[reg.containerPort ?? -1];
      if (hostPort === undefined) throw new Error(`harness: service ${service.name}: container port ${reg.containerPort} is not mapped${this.why(task)}`);
      for (let i = 0; ; i++) {
        if (task.desiredStatus !== 'RUNNING') throw new Error(`harness: service ${service.name}: its task stopped before it listened on ${reg.containerPort}${this.why(task)}`);
        if (task.lastStatus === 'RUNNING' && (await accepts(hostPort))) break;
        if (Date.now() > until || i > 100_000) throw new Error(`harness: service ${service.name}: its task did not listen on ${reg.containerPort} within ${timeoutMs} ms${this.why(task)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const list = this.registered.get(reg.cloudMapServiceArn) ?? [];
      list.push({ taskArn: task.taskArn, port: hostPort });
      this.registered.set(reg.cloudMapServiceArn, list);
    }
  }

  private why(task: EcsTask): string {
    const tails = task.containers.filter((c) => c.logTail || c.reason).map((c) => `\n--- ${c.name} (${c.lastStatus}${c.exitCode !== undefined ? `, exit ${c.exitCode}` : ''}${c.reason ? `, ${c.reason}` : ''})\n${c.logTail.slice(-3000)}`);
    return `${task.stoppedReason ? ` (${task.stoppedReason})` : ''}${tails.join('')}`;
  }

  // ---- containers

  private async startContainer(rt: TaskRuntime, c: DeployedContainer): Promise<RunningContainer> {
    const { task } = rt;
    const state = task.containers.find((s) => s.name === c.name)!;
    const override = task.overrides.containerOverrides?.find((o) => o.name === c.name);
    const rootDir = join(rt.dir, 'containers', c.name);
    await mkdir(rootDir, { recursive: true });
    const mounts = c.mountPoints.map((m) => ({ containerPath: m.containerPath, hostPath: join(rt.dir, 'volumes', m.sourceVolume), readOnly: m.readOnly }));
    const hostPath = (p: string) => {
      const abs = posix.resolve('/', p);
      const m = mounts.filter((x) => abs === x.containerPath || abs.startsWith(`${x.containerPath.replace(/\/$/, '')}/`)).sort((a, b) => b.containerPath.length - a.containerPath.length)[0];
      return m ? join(m.hostPath, posix.relative(m.containerPath, abs)) : join(rootDir, abs);
    };
    const environment: Record<string, string> = { ...c.environment };
    for (const e of override?.environment ?? []) environment[e.name] = e.value;
    for (const [name, arn] of Object.entries(c.secrets)) environment[name] = this.secretValues.get(arn)!;
    // awsvpc on loopback: variables naming a mapped container port get its host port.
    for (const [name, value] of Object.entries(environment)) {
      const hostPort = task.ports[Number(value)];
      if (/port/i.test(name) && /^\d+$/.test(value) && hostPort !== undefined) environment[name] = String(hostPort);
    }
    const metadataUri = this.metadataUri(task.taskId, c.name);
    const role = rt.taskRoleLogicalId;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: rootDir,
      HOSTNAME: `ip-127-0-0-1.${REGION}.compute.internal`,
      TZ: 'UTC',
      AWS_EXECUTION_ENV: 'AWS_ECS_FARGATE',
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      ECS_CONTAINER_METADATA_URI: metadataUri.replace('/v4/', '/v3/'),
      ECS_CONTAINER_METADATA_URI_V4: metadataUri,
      ...environment,
      // The task role's credentials (the endpoint knows the caller by this key id).
      ...(role ? { AWS_ACCESS_KEY_ID: role, AWS_SECRET_ACCESS_KEY: 'harness-secret', AWS_SESSION_TOKEN: `harness-session-${role}` } : {}),
      AWS_ENDPOINT_URL: this.o.endpointUrl(),
      AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
      AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const log = (text: string) => {
      state.logTail = (state.logTail + text).slice(-LOG_TAIL);
      if (this.o.verbose) process.stdout.write(`[ecs ${task.taskId.slice(0, 6)} ${c.name}] ${text}`);
      else if (/"level":"ERROR"|Error|error/.test(text) && process.env.HARNESS_VERBOSE !== '0') process.stderr.write(`[ecs ${task.taskId.slice(0, 6)} ${c.name}] ${text.slice(0, 2000)}`);
    };
    const start: ContainerStart = { task, container: c, command: override?.command ?? c.command, entryPoint: c.entryPoint, env, mounts, rootDir, ports: task.ports, hostPath, log };
    if (c.image.startsWith(AWS_CLI)) return this.awsCli(rt, start);
    if (NODE_IMAGES.some((p) => c.image.startsWith(p))) return this.node(start);
    if (BUSYBOX_IMAGES.some((p) => c.image.startsWith(p))) return this.shell(start);
    const prefix = [...IMAGE_RUNNERS.keys()].filter((p) => c.image.startsWith(p)).sort((a, b) => b.length - a.length)[0];
    if (!prefix) throw new Error(`CannotPullContainerError: harness: no image runner for ${c.image} (registerImageRunner)`);
    return IMAGE_RUNNERS.get(prefix)!(start);
  }

  /** aws-cli: `s3 cp s3://<bucket>/<key> <path>` of a CDK file asset, as the task role. */
  private async awsCli(rt: TaskRuntime, start: ContainerStart): Promise<RunningContainer> {
    const args = [...(start.entryPoint ?? []).filter((a) => a !== 'aws' && a !== '/usr/local/bin/aws'), ...(start.command ?? [])];
    const positional = args.filter((a, i) => !a.startsWith('--') && !(args[i - 1] === '--region' || args[i - 1] === '--profile'));
    const [service, verb, source, dest] = positional;
    if (service !== 's3' || verb !== 'cp' || !source?.startsWith('s3://') || !dest || positional.length !== 4) throw new Error(`CannotStartContainerError: harness: aws-cli ${args.join(' ')} is not modelled (only s3 cp s3://… <path>)`);
    const exited = (async () => {
      const asset = this.o.app.fileAssets.get(source);
      const [, , bucket, ...key] = source.split('/');
      const role = rt.taskRoleLogicalId;
      const d = role ? await this.o.iam.decide(role, rt.task.taskId, { action: 's3:GetObject', resource: `arn:aws:s3:::${bucket}/${key.join('/')}` }) : { allowed: false };
      if (!d.allowed) {
        start.log(`fatal error: An error occurred (403) when calling the HeadObject operation: Forbidden\n`);
        return 1;
      }
      if (!asset) {
        start.log(`fatal error: An error occurred (404) when calling the HeadObject operation: Key "${key.join('/')}" does not exist (harness: only CDK file assets are modelled)\n`);
        return 1;
      }
      const target = start.hostPath(dest.endsWith('/') ? posix.join(dest, posix.basename(source)) : dest);
      await mkdir(dirname(target), { recursive: true });
      await copyFile(asset.path, target);
      return 0;
    })();
    return { exited, stop: async () => void (await exited) };
  }

  /** node: the task definitions' `sh -c '<steps>' sh <args>`, step by step (mkdir -p, tar -xzf … -C …, exec node … "$@"). */
  private async node(start: ContainerStart): Promise<RunningContainer> {
    const command = [...(start.entryPoint ?? []), ...(start.command ?? [])];
    let steps: string[];
    let args: string[];
    if (command[0] === 'sh' && command[1] === '-c' && command[2]) {
      steps = command[2].split(/\s*&&\s*/);
      args = command.slice(4);
    } else if (command[0] === 'node') {
      steps = ['exec node "$@"'];
      args = command.slice(1);
    } else throw new Error(`CannotStartContainerError: harness: node image command ${JSON.stringify(command)} is not modelled`);
    for (const step of steps) {
      const words = step.trim().split(/\s+/);
      if (words[0] === 'mkdir' && words[1] === '-p' && words.length === 3) {
        await mkdir(start.hostPath(words[2]!), { recursive: true });
      } else if (words[0] === 'tar' && words[1] === '-xzf' && words[3] === '-C' && words.length === 5) {
        const extracted = await this.extract(start.hostPath(words[2]!));
        const target = start.hostPath(words[4]!);
        await rm(target, { recursive: true, force: true });
        await mkdir(dirname(target), { recursive: true });
        await symlink(extracted, target, 'dir');
      } else if (words[0] === 'exec' && words[1] === 'node') {
        const rest = words.slice(2).map((w) => (w === '"$@"' ? args : [w.replace(/^(\/[^\s]*)$/, (p) => start.hostPath(p))])).flat();
        const script = rest.find((w) => !w.startsWith('-'));
        if (!script || !existsSync(script)) throw new Error(`CannotStartContainerError: harness: node entry ${script} does not exist`);
        const env = { ...start.env };
        // As the Lambda runtime does: what the stand-ins need (s3rver's listing signatures use MD5 under OpenSSL 3).
        env.NODE_OPTIONS = [env.NODE_OPTIONS ?? '', '--openssl-legacy-provider'].join(' ').trim();
        const memory = start.container.memoryMb ?? start.task.definition.memoryMb;
        const execArgv = /--max-old-space-size/.test(env.NODE_OPTIONS) ? [] : [`--max-old-space-size=${memory}`];
        const child = spawn(process.execPath, [...execArgv, ...rest], { cwd: start.rootDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
        return processContainer(child, start);
      } else throw new Error(`CannotStartContainerError: harness: step "${step}" of the node container's command is not modelled`);
    }
    throw new Error('CannotStartContainerError: harness: the node container\'s command never runs node');
  }

  /** busybox: `sh -c <script>` on the host's sh, every mount path in the script replaced by its host folder. */
  private async shell(start: ContainerStart): Promise<RunningContainer> {
    const command = [...(start.entryPoint ?? []), ...(start.command ?? [])];
    if (command[0] !== 'sh' || command[1] !== '-c' || command[2] === undefined) throw new Error(`CannotStartContainerError: harness: busybox command ${JSON.stringify(command)} is not modelled (only sh -c)`);
    let script = command[2];
    for (const m of [...start.mounts].sort((a, b) => b.containerPath.length - a.containerPath.length)) script = script.split(m.containerPath).join(m.hostPath);
    const child = spawn('/bin/sh', ['-c', script, ...command.slice(3)], { cwd: start.rootDir, env: start.env, stdio: ['ignore', 'pipe', 'pipe'] });
    return processContainer(child, start);
  }

  /** Extracts a bundle `.tgz` once per content (tasks share the read-only copy). */
  private extract(file: string): Promise<string> {
    return (async () => {
      const hash = createHash('sha256');
      for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
      const digest = hash.digest('hex').slice(0, 16);
      let p = this.bundleCache.get(digest);
      if (!p) {
        p = (async () => {
          const dir = join(this.workDir, 'bundles', digest);
          const staging = `${dir}.tmp`;
          await mkdir(staging, { recursive: true });
          await new Promise<void>((resolve, reject) => {
            const tar = spawn('tar', ['-xzf', file, '-C', staging], { stdio: ['ignore', 'ignore', 'pipe'] });
            let err = '';
            tar.stderr.on('data', (d: Buffer) => (err += d.toString()));
            tar.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`CannotStartContainerError: tar -xzf failed: ${err.trim()}`))));
          });
          await rename(staging, dir);
          return dir;
        })();
        this.bundleCache.set(digest, p);
      }
      return p;
    })();
  }

  // ---- shapes

  private taskMetadata(task: EcsTask) {
    return {
      Cluster: task.clusterArn,
      TaskARN: task.taskArn,
      Family: task.definition.family,
      Revision: '1',
      DesiredStatus: task.desiredStatus,
      KnownStatus: task.lastStatus,
      Limits: { CPU: task.definition.cpu / 1024, Memory: task.definition.memoryMb },
      AvailabilityZone: `${REGION}a`,
      LaunchType: 'FARGATE',
      Containers: task.definition.containers.map((c) => this.containerMetadata(task, c.name)),
    };
  }

  private containerMetadata(task: EcsTask, name: string) {
    const c = task.definition.containers.find((x) => x.name === name);
    const s = task.containers.find((x) => x.name === name);
    return {
      DockerId: `${task.taskId}-${name}`,
      Name: name,
      Image: c?.image,
      KnownStatus: s?.lastStatus,
      ExitCode: s?.exitCode,
      Limits: { Memory: c?.memoryMb },
      Networks: [{ NetworkMode: 'awsvpc', IPv4Addresses: ['127.0.0.1'], PrivateDNSName: `ip-127-0-0-1.${REGION}.compute.internal` }],
    };
  }

  /** The DescribeTasks shape of a task. */
  describe(task: EcsTask) {
    const s = (ms?: number) => (ms === undefined ? undefined : ms / 1000);
    return {
      taskArn: task.taskArn,
      clusterArn: task.clusterArn,
      taskDefinitionArn: task.definition.arn,
      lastStatus: task.lastStatus,
      desiredStatus: task.desiredStatus,
      launchType: 'FARGATE',
      platformVersion: '1.4.0',
      cpu: String(task.definition.cpu),
      memory: String(task.definition.memoryMb),
      availabilityZone: `${REGION}a`,
      startedBy: task.startedBy,
      group: task.group,
      overrides: { containerOverrides: [], inferenceAcceleratorOverrides: [], ...task.overrides },
      createdAt: s(task.createdAt),
      startedAt: s(task.startedAt),
      stoppingAt: s(task.stoppingAt),
      stoppedAt: s(task.stoppedAt),
      stopCode: task.stopCode,
      stoppedReason: task.stoppedReason,
      attachments: [{ id: `eni-attachment-${task.taskId.slice(0, 8)}`, type: 'ElasticNetworkInterface', status: task.lastStatus === 'STOPPED' ? 'DELETED' : 'ATTACHED', details: [{ name: 'privateIPv4Address', value: '127.0.0.1' }] }],
      containers: task.containers.map((c) => ({
        containerArn: `arn:aws:ecs:${REGION}:${ACCOUNT}:container/${task.clusterArn.split('/').pop()}/${task.taskId}/${c.name}`,
        taskArn: task.taskArn,
        name: c.name,
        image: c.image,
        lastStatus: c.lastStatus,
        exitCode: c.exitCode,
        reason: c.reason,
        networkInterfaces: [{ attachmentId: `eni-attachment-${task.taskId.slice(0, 8)}`, privateIpv4Address: '127.0.0.1' }],
      })),
    };
  }
}
