import type { TaskQueue } from '../../ports/task-queue.js';
import type { EcsApi } from './ecs-api.js';

/**
 * Where and how the worker task runs (the stack sets it as one JSON env var, WORKER_TASK): the
 * cluster, the task definition, its Node container and that container's command up to and
 * including the role (`sh -c '…' sh worker`; the job's arguments are appended), and the
 * network (public subnets, a security group admitting nothing; the public IP only pulls images).
 */
export interface WorkerTaskSettings {
  cluster: string;
  taskDefinition: string;
  container: string;
  command: string[];
  subnets: string[];
  securityGroups: string[];
}

/**
 * Uploaded jobs of at most this many bytes run on the import worker function (it starts in about
 * a second and parses 64 MiB in well under a minute, far inside its 15 minutes); URL loads (their
 * size is known only once downloaded) and larger uploads run on the worker task (starting takes
 * tens of seconds: pulling the image, fetching the bundle; then no time limit).
 */
export const SMALL_IMPORT_BYTES = 64 * 1024 * 1024;

/**
 * Reads WORKER_TASK (see WorkerTaskSettings), failing with what is wrong. Functions that only ask
 * about tasks (the watchdog) are told the cluster and container alone; those that start the task
 * get everything.
 */
export function workerTaskSettings(raw: string): DescribeOnly | WorkerTaskSettings {
  let value: Partial<WorkerTaskSettings>;
  try {
    value = JSON.parse(raw) as Partial<WorkerTaskSettings>;
  } catch {
    throw new Error('WORKER_TASK must be JSON');
  }
  const text = (v: unknown) => typeof v === 'string' && v.length > 0;
  const list = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every(text);
  if (!text(value.cluster) || !text(value.container)) throw new Error('WORKER_TASK must hold cluster and container');
  const run = [value.taskDefinition, value.command, value.subnets, value.securityGroups];
  if (run.every((v) => v === undefined)) return { cluster: value.cluster!, container: value.container! };
  if (!text(value.taskDefinition) || !list(value.command) || !list(value.subnets) || !list(value.securityGroups)) {
    throw new Error('WORKER_TASK must hold cluster, taskDefinition, container, command, subnets and securityGroups (or only cluster and container)');
  }
  return value as WorkerTaskSettings;
}

/** WORKER_TASK of a function that only asks whether tasks still run. */
export type DescribeOnly = Pick<WorkerTaskSettings, 'cluster' | 'container'>;

interface RunTaskOutput {
  tasks?: { taskArn?: string }[];
  failures?: { arn?: string; reason?: string; detail?: string }[];
}

interface DescribeTasksOutput {
  tasks?: { taskArn?: string; lastStatus?: string; stoppedReason?: string; stopCode?: string; containers?: { name?: string; exitCode?: number; reason?: string }[] }[];
  failures?: { arn?: string; reason?: string }[];
}

/**
 * Imports, URL loads and long flow tasks on the worker task: one ECS Fargate RunTask per job or
 * task, the task running `worker import <datasetId> <jobId>` or `worker flow-task <stagedKey>` to
 * the end (functions/containers/worker.ts), without Lambda's 15 minutes. Small uploaded jobs and service loads go to `functions` (the import
 * worker function) as before. A RunTask that starts nothing throws, naming ECS's reason: the
 * caller (ImportService) ends the job in error.
 */
export class EcsTaskQueue implements TaskQueue {
  constructor(
    private readonly ecs: EcsApi,
    private readonly settings: Pick<WorkerTaskSettings, 'cluster'> & Partial<WorkerTaskSettings>,
    private readonly functions?: TaskQueue,
  ) {}

  async enqueueImport(datasetId: string, jobId: string, hint: { bytes?: number } = {}): Promise<void> {
    if (this.functions && hint.bytes !== undefined && hint.bytes <= SMALL_IMPORT_BYTES) return this.functions.enqueueImport(datasetId, jobId, hint);
    return this.runTask(`import-${jobId}`, ['import', datasetId, jobId]);
  }

  /** A long flow task: the worker task runs `worker flow-task <stagedKey>` (see TaskWorker.runStagedTask). */
  enqueueFlowTask(stagedKey: string): Promise<void> {
    return this.runTask(`flow-task-${stagedKey.split('/').pop()!.replace(/\.json$/, '')}`, ['flow-task', stagedKey]);
  }

  private async runTask(startedBy: string, args: string[]): Promise<void> {
    const { taskDefinition, container, command, subnets, securityGroups } = this.settings;
    if (!taskDefinition || !container || !command || !subnets || !securityGroups) throw new Error('this function may not start the worker task');
    let out: RunTaskOutput;
    try {
      out = await this.ecs.send<RunTaskOutput>('RunTask', {
        cluster: this.settings.cluster,
        taskDefinition,
        launchType: 'FARGATE',
        count: 1,
        // Letters, digits, - and _, at most 36: shows in the console and ListTasks.
        startedBy: startedBy.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 36),
        networkConfiguration: { awsvpcConfiguration: { subnets, securityGroups, assignPublicIp: 'ENABLED' } },
        overrides: { containerOverrides: [{ name: container, command: [...command, ...args] }] },
      });
    } catch (e) {
      throw new Error(`the worker task could not be started (${(e as Error).message})`);
    }
    if (!out.tasks?.length) {
      const reasons = (out.failures ?? []).map((f) => [f.reason, f.detail].filter(Boolean).join(': ')).filter(Boolean);
      throw new Error(`the worker task could not be started (${reasons.join('; ') || 'ECS started no task'})`);
    }
  }

  async enqueueServiceLoad(datasetId: string, serviceId: string): Promise<void> {
    if (!this.functions) throw new Error('this function cannot load services');
    return this.functions.enqueueServiceLoad(datasetId, serviceId);
  }

  /** A worker task (its ARN) that ECS reports STOPPED, or no longer knows, has stopped: why. */
  async workerStopped(taskArn: string): Promise<string | undefined> {
    const out = await this.ecs.send<DescribeTasksOutput>('DescribeTasks', { cluster: this.settings.cluster, tasks: [taskArn] });
    const task = out.tasks?.find((t) => t.taskArn === taskArn);
    if (!task) {
      const failure = out.failures?.find((f) => f.arn === taskArn);
      if (failure?.reason === 'MISSING') return 'ECS no longer knows its worker task';
      throw new Error(`ECS DescribeTasks did not describe ${taskArn}${failure?.reason ? ` (${failure.reason})` : ''}`);
    }
    if (task.lastStatus !== 'STOPPED') return undefined;
    const app = task.containers?.find((c) => c.name === this.settings.container) ?? task.containers?.find((c) => c.exitCode !== undefined);
    const exit = app?.exitCode !== undefined ? `exit code ${app.exitCode}` : app?.reason;
    return ['the worker task stopped', exit, task.stoppedReason].filter(Boolean).join(': ');
  }
}
