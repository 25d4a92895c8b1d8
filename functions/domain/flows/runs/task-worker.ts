/**
 * The task worker: what every Task state of a run calls (the task-worker Lambda on AWS, the
 * embedded executor in-process). It runs one task as the run's starter, keeps the task
 * instance's status, log (masked) and artifacts, and answers the data upload hook's wait state.
 */
import { Readable } from 'node:stream';
import { WAIT_FOR_UPLOAD_KIND, WORKER_TASK_HEARTBEAT_SECONDS, WORKER_TASK_KIND } from '../../../../statemachines/compile.js';
import type { TaskInvocation } from '../../../../statemachines/local.js';
import type { ExecutionInput, UploadWaitInvocation, WorkerTaskInvocation } from '../../../ports/flow-executor.js';
import type { FlowService } from '../blueprints/blueprint-service.js';
import { findVariableReferences, effectiveVariables } from '../blueprints/variables.js';
import { secretMask } from '../masking.js';
import { taskInstanceId, type ArtifactRecord, type FlowVersionRecord, type TaskInstanceRecord } from '../records.js';
import { runTaskOfType } from '../tasks/run-task.js';
import { TaskFailure, type TaskContext, type TaskServices } from '../tasks/task-context.js';
import type { Platform } from '../../shared/platform.js';
import type { RunCaches } from './run-caches.js';
import { starterCaller } from './run-caller.js';
import { isFinalRunStatus } from './run-status.js';
import type { UploadWaits } from './upload-wait.js';
import { requireApiUrl } from './api-url.js';
import { cutText, storedOutput, TaskLog, TASK_LOG_LIMITS } from './task-log.js';

/** A long task on the worker task tells its state it still works this often (a fifth of what the state allows). */
const HEARTBEAT_EVERY_MS = (WORKER_TASK_HEARTBEAT_SECONDS * 1000) / 5;
/** How long a task works before it is recorded as running (quicker ones are written once). */
const RUNNING_WRITE_DELAY_MS = 20;
/** Task logs stay small (they are stored with the task instance): see task-log.ts. */
export const MAX_LOG_LINES = TASK_LOG_LIMITS.lines;

export class TaskWorker {
  constructor(
    private readonly platform: Platform,
    private readonly flows: FlowService,
    private readonly caches: RunCaches,
    private readonly uploadWaits: UploadWaits,
    private readonly taskServices: TaskServices,
  ) {}

  async runTask(invocation: TaskInvocation | UploadWaitInvocation | WorkerTaskInvocation, options: { timeLeftMs?: number } = {}): Promise<unknown> {
    // The `upload.wait` state invokes the worker through the task-token integration: the token is
    // recorded and the worker returns (the executor keeps the execution waiting for its release).
    const payload = 'Payload' in invocation ? invocation.Payload : 'kind' in invocation ? invocation : undefined;
    if (payload?.kind === WAIT_FOR_UPLOAD_KIND) {
      await this.uploadWaits.tokenReceived(String(payload.runId), String(payload.taskToken));
      return {};
    }
    if (payload?.kind === WORKER_TASK_KIND) return this.handOff(payload as WorkerTaskInvocation['Payload'], options.timeLeftMs);
    return this.runFlowTask(invocation as TaskInvocation, options.timeLeftMs);
  }

  /**
   * A long task (its Timeout is longer than a function runs, see WORKER_TASK_KIND): where the task
   * queue has a worker for long tasks (AWS: the worker task), its invocation and task token are
   * staged in the artifacts store and that worker is started; the state waits for the token.
   * Elsewhere (the embedded platform) it runs here, as every task does, and its output is the
   * state's result.
   */
  private async handOff(payload: WorkerTaskInvocation['Payload'], timeLeftMs?: number): Promise<unknown> {
    const { kind: _kind, taskToken, ...task } = payload;
    const enqueue = this.platform.tasks.enqueueFlowTask?.bind(this.platform.tasks);
    if (!enqueue) return this.runFlowTask(task, timeLeftMs);
    const runId = String((task.state.run as { id?: unknown } | undefined)?.id ?? '');
    const stagedKey = `flows/runs/${runId}/worker-tasks/${task.taskId}-${this.platform.ids.newId()}.json`;
    await this.platform.blobs.artifacts.put(stagedKey, Readable.from([Buffer.from(JSON.stringify({ invocation: task, taskToken }), 'utf8')]), { contentType: 'application/json' });
    try {
      await enqueue(stagedKey);
    } catch (e) {
      await this.platform.blobs.artifacts.delete(stagedKey).catch(() => {});
      throw new TaskFailure(`The task could not be started on the worker task: ${(e as Error).message}`);
    }
    return {};
  }

  /**
   * The worker task's side of a long task (see handOff): runs the staged task without a time
   * limit, sending a heartbeat every HEARTBEAT_EVERY_MS, then ends the state's wait with the
   * task's output or its (masked) error, as the task worker function's answer would.
   */
  async runStagedTask(stagedKey: string): Promise<boolean> {
    const body = await this.platform.blobs.artifacts.get(stagedKey);
    if (!body) throw new Error(`The staged task ${stagedKey} does not exist (it ran already, or its run was removed).`);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
    const { invocation, taskToken } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { invocation: TaskInvocation; taskToken: string };
    const executor = this.platform.flowExecutor;
    let stopped = false;
    let cancel = () => {};
    const beat = () => {
      cancel = this.platform.clock.after(HEARTBEAT_EVERY_MS, () => {
        if (stopped) return;
        executor.heartbeat?.(taskToken).catch((e: unknown) => this.platform.logger.warn('a long task\'s heartbeat failed', { taskId: invocation.taskId, error: (e as Error).message }));
        beat();
      });
    };
    if (executor.heartbeat) beat();
    try {
      const output = await this.runFlowTask(invocation);
      await executor.release(taskToken, { output: output as Record<string, unknown> });
      return true;
    } catch (e) {
      // As Step Functions reports a function's error: its type, and a Cause with its message.
      const errorMessage = (e as Error)?.message ?? String(e);
      await executor.release(taskToken, { error: 'TaskFailure', cause: JSON.stringify({ errorType: 'TaskFailure', errorMessage }) });
      return false;
    } finally {
      stopped = true;
      cancel();
      await this.platform.blobs.artifacts.delete(stagedKey).catch(() => {});
    }
  }

  private async runFlowTask(invocation: TaskInvocation, timeLeftMs?: number): Promise<unknown> {
    const doc = (invocation.state.run ?? {}) as Partial<ExecutionInput['run']>;
    const runId = String(doc.id ?? '');
    // Everything the task needs is read at once; the execution input names the flow version and
    // the starter, so no read waits for another.
    const [run, masked, version, token, starter] = await Promise.all([
      this.platform.flows.getRun(runId),
      doc.blueprintId ? this.platform.flows.getMaskedValues(doc.blueprintId) : null,
      doc.blueprintId && doc.version ? this.caches.versionOf({ blueprintUid: doc.blueprintId, version: doc.version }) : null,
      this.caches.runSecret(runId),
      doc.startedBy ? this.platform.store.getAccount(doc.startedBy) : null,
    ]);
    if (!run) throw new TaskFailure(`Run ${runId} does not exist.`);
    if (isFinalRunStatus(run.status)) throw new TaskFailure(`Run ${runId} has already ended (${run.status}).`);
    // The first task to start moves the run from pending to running (written while the task works).
    const runStarted = run.status === 'pending' || run.status === 'waiting' ? this.platform.flows.updateRun({ ...run, status: 'running', startedAt: this.platform.clock.now().toISOString() }) : undefined;
    runStarted?.catch(() => {});

    const instance: TaskInstanceRecord = {
      id: taskInstanceId(run.id, invocation.taskId),
      runId: run.id,
      taskId: invocation.taskId,
      label: invocation.label,
      type: invocation.type,
      status: 'running',
      startedAt: this.platform.clock.now().toISOString(),
      log: [],
      artifacts: [],
    };
    // Readers see the task running while it works. A task that ends within a moment is written
    // once, finished; a longer one is written as running first (the final write waits for it).
    let runningWritten: Promise<void> | undefined;
    const cancelRunningWrite = this.platform.clock.after(RUNNING_WRITE_DELAY_MS, () => {
      runningWritten = this.platform.flows.putTaskInstance({ ...instance, log: [], artifacts: [] });
      runningWritten.catch(() => {});
    });
    const finalWrite = async (record: TaskInstanceRecord) => {
      cancelRunningWrite();
      if (runningWritten) await runningWritten.catch(() => {});
      await Promise.all([this.platform.flows.putTaskInstance(record), runStarted?.catch(() => {})]);
    };
    const secrets = secretMask([...Object.values(masked?.values ?? {}), ...(token ? [token] : [])]);
    const mask = secrets.text;
    const taskLog = new TaskLog();

    try {
      if (!starter) throw new TaskFailure('The account that started the run no longer exists.');
      const values: Record<string, string> = {
        ...effectiveVariables(invocation.state.variables, invocation.state.tasks, invocation.variableSources ?? []),
        ...(masked?.values ?? {}),
        ...(token ? { system_platformToken: token } : {}),
      };
      checkMaskedValues(version, invocation, masked?.values ?? {});
      const context: TaskContext = {
        run,
        taskId: invocation.taskId,
        settings: invocation.settings,
        timeoutSeconds: invocation.timeoutSeconds,
        values,
        caller: starterCaller(starter, run.platformTokenId ?? ''),
        apiUrl: run.apiUrl || requireApiUrl(this.platform.settings),
        log: (line) => taskLog.add(mask(line)),
        secrets,
        // File names and the description are shown to every reader of the run: masked too.
        addArtifact: (fileName, contentType, body) => this.addArtifact(instance, mask(fileName), contentType, body),
        setDescription: async (description) => {
          // After the run's own move to running, so neither write undoes the other.
          await runStarted?.catch(() => {});
          await this.setDescription(run.id, mask(description));
        },
      };
      // Outputs travel in the execution history and are shown to readers: never with a secret.
      const raw = await withinTimeLeft(runTaskOfType(invocation.type, context, this.taskServices, await this.flows.getSwitches()), timeLeftMs, this.platform.clock);
      const output = raw === undefined ? {} : secrets.value(raw);
      instance.status = 'finished';
      instance.finishedAt = this.platform.clock.now().toISOString();
      instance.output = storedOutput(output);
      instance.log = taskLog.lines();
      await finalWrite(instance);
      return output;
    } catch (e) {
      const message = cutText(mask((e as Error).message || String(e)), TASK_LOG_LIMITS.errorChars);
      instance.status = 'failed';
      instance.error = message;
      delete instance.output;
      instance.log = taskLog.lines(`Error: ${message}`);
      instance.finishedAt = this.platform.clock.now().toISOString();
      await finalWrite(instance);
      // The message travels in the execution history: masked, never the raw error.
      throw new TaskFailure(message);
    }
  }

  private async addArtifact(instance: TaskInstanceRecord, fileName: string, contentType: string, body: string | Buffer): Promise<ArtifactRecord> {
    const id = this.platform.ids.newId();
    const blobKey = `flows/runs/${instance.runId}/${instance.taskId}/${id}`;
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    await this.platform.blobs.artifacts.put(blobKey, Readable.from([bytes]), { contentType });
    const artifact: ArtifactRecord = { id, fileName, contentType, size: bytes.length, blobKey, createdAt: this.platform.clock.now().toISOString() };
    instance.artifacts.push(artifact);
    return artifact;
  }

  private async setDescription(runId: string, description: string): Promise<void> {
    const run = await this.platform.flows.getRun(runId);
    if (!run) return;
    await this.platform.flows.updateRun({ ...run, description });
  }
}

/** Time kept back from the worker's limit to record a task cut short (two writes). */
export const RECORD_MARGIN_MS = 20_000;

/**
 * The task's work, unless the worker's own time runs out first: then it fails with what happened
 * (on AWS the task worker Lambda has at most 15 minutes; the Timeout of a task may be longer, but
 * no single task can outrun its worker). A Wait task is not affected: its waiting is a state of
 * the run, not work of the worker.
 */
async function withinTimeLeft<T>(work: Promise<T>, timeLeftMs: number | undefined, clock: { after(ms: number, action: () => void): () => void }): Promise<T> {
  if (timeLeftMs === undefined) return work;
  const budget = Math.max(0, timeLeftMs - RECORD_MARGIN_MS);
  let cancel = () => {};
  const cut = new Promise<never>((_, reject) => {
    cancel = clock.after(budget, () =>
      reject(new TaskFailure(`The task was still working after ${Math.round(budget / 1000)} s, the most one task may run on this deployment (the task worker's time limit); split the work into smaller tasks or files.`)),
    );
  });
  try {
    return await Promise.race([work, cut]);
  } finally {
    cancel();
    work.catch(() => {});
  }
}

/** The spec: a run fails when it uses a masked value with no value set. */
function checkMaskedValues(version: FlowVersionRecord | null, invocation: TaskInvocation, stored: Record<string, string>): void {
  const definition = invocation.settings;
  const declared = new Set(Object.keys(stored));
  const used = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') findVariableReferences(v).forEach((n) => used.add(n));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(definition);
  // A decision condition names its variable without `?`.
  if (invocation.type === 'decision') {
    for (const branch of (definition.branches ?? []) as { conditions?: { variable?: unknown }[] }[]) {
      for (const c of branch.conditions ?? []) if (typeof c.variable === 'string') used.add(c.variable);
    }
  }
  const maskedNames = new Set((version?.definition.maskedValues ?? []).map((m) => m.name));
  const unset = [...used].filter((n) => maskedNames.has(n) && !declared.has(n));
  if (unset.length > 0) {
    throw new TaskFailure(`The masked value${unset.length > 1 ? 's' : ''} ${unset.map((n) => `?${n}`).join(', ')} ha${unset.length > 1 ? 've' : 's'} no value set; someone with Manage flow masked variables must set ${unset.length > 1 ? 'them' : 'it'} before the flow runs.`);
  }
}
