/**
 * Container role `worker` (see main.ts): one import job (an upload or a URL load), or one long
 * flow task, run to the end on an ECS Fargate task, started by RunTask from the imports family or
 * the flow task worker (adapters/aws/ecs-task-queue.ts):
 *
 *   node index.mjs worker import <datasetId> <jobId>
 *   node index.mjs worker flow-task <stagedKey>
 *
 * A long flow task (a task whose Timeout is longer than a function runs, see WORKER_TASK_KIND in
 * statemachines/compile.ts) was staged by the task worker function with its task token; it runs
 * here without a time limit (TaskWorker.runStagedTask), sending its state heartbeats, and ends the
 * state's wait with its output or error (exit 1 when it failed).
 *
 * The same domain code as the import worker function (ImportService.run), with the worker task's
 * limits (WORKER_TASK_IMPORT_LIMITS: the spec's 30 minutes and 20 GiB for downloads) instead of a
 * function's. The job records this task's ARN (from the ECS task metadata endpoint), so the
 * watchdog ends the job when the task stops before the job does; while it runs, the job's
 * progress (bytes downloaded, bytes read, statements indexed) is written every few seconds.
 * Resolves (exit 0) when the job finished or was not this worker's to run; rejects (exit 1) when
 * it ended in error.
 */
import { WORKER_TASK_IMPORT_LIMITS } from '../config.js';
import { awsLogger, awsServices } from '../composition/aws.js';

const USAGE = 'usage: worker import <datasetId> <jobId> | worker flow-task <stagedKey>';

/** ECS sets this in every container of a task (Fargate platform 1.4+): task metadata, no credentials needed. */
const METADATA_ENV = 'ECS_CONTAINER_METADATA_URI_V4';

/** This task's ARN, or undefined outside ECS (or when the metadata endpoint does not answer). */
export async function ownTaskArn(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const base = env[METADATA_ENV];
  if (!base) return undefined;
  try {
    const res = await fetch(`${base.replace(/\/+$/, '')}/task`, { signal: AbortSignal.timeout(5_000) });
    if (!res.ok) throw new Error(`answered ${res.status}`);
    const task = (await res.json()) as { TaskARN?: unknown };
    return typeof task.TaskARN === 'string' && task.TaskARN ? task.TaskARN : undefined;
  } catch (e) {
    awsLogger.warn('worker: the task metadata endpoint did not tell the task ARN; the job will not name its worker', { error: (e as Error).message });
    return undefined;
  }
}

export async function run(args: string[]): Promise<void> {
  if (args[0] === 'flow-task' && args.length === 2 && args[1]) return runFlowTask(args[1]);
  const [kind, datasetId, jobId, ...rest] = args;
  if (kind !== 'import' || !datasetId || !jobId || rest.length > 0) throw new Error(USAGE);
  const worker = await ownTaskArn();
  const services = await awsServices({ imports: WORKER_TASK_IMPORT_LIMITS });
  awsLogger.info('worker: import started', { datasetId, jobId, worker });
  const status = await services.imports.run(datasetId, jobId, worker ? { worker } : {});
  awsLogger.info('worker: import ended', { datasetId, jobId, status: status ?? 'not runnable (already taken or ended)' });
  if (status === 'error') throw new Error(`import job ${jobId} of dataset ${datasetId} ended in error (the job's record says why)`);
}

async function runFlowTask(stagedKey: string): Promise<void> {
  const services = await awsServices({ imports: WORKER_TASK_IMPORT_LIMITS });
  const { runStagedTask } = services.flowRuntime;
  if (!runStagedTask) throw new Error('this platform cannot run staged flow tasks');
  awsLogger.info('worker: flow task started', { stagedKey });
  const finished = await runStagedTask(stagedKey);
  awsLogger.info('worker: flow task ended', { stagedKey, finished });
  if (!finished) throw new Error('the flow task failed (its task instance says why)');
}
