/**
 * Runs of flows: starting (variables, presets, precedence, system variables), the task worker
 * that every Task state calls, settling an execution into run and task statuses, aborting, and
 * reading runs, task instances and artifacts.
 */
import { Readable } from 'node:stream';
import type { AslDefinition } from '../../../../statemachines/asl.js';
import { compileFlow, WAIT_FOR_UPLOAD_KIND } from '../../../../statemachines/compile.js';
import type { TaskInvocation } from '../../../../statemachines/local.js';
import { readOutcome, type ExecutionResult } from '../../../../statemachines/outcome.js';
import { IN_PROCESS_TASK_TOKEN, type ExecutionInput, type FlowRuntimeHooks, type UploadWaitInvocation } from '../../../ports/flow-executor.js';
import type { AccountRecord } from '../../accounts/accounts.js';
import type { AuthService } from '../../accounts/auth-service.js';
import type { Caller } from '../../shared/caller.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import type { FlowService, VisibleFlow } from '../blueprints/blueprint-service.js';
import { runTaskOfType, TaskFailure, type TaskContext, type TaskServices } from '../tasks/run-task.js';
import { FLOW_LIMITS } from '../limits.js';
import { secretMask } from '../masking.js';
import type { FlowDefinition } from '../blueprints/model.js';
import {
  parseTaskInstanceId,
  STARTED_FROM_TYPES,
  taskInstanceId,
  type ArtifactRecord,
  type FlowRecord,
  type FlowVersionRecord,
  type RunRecord,
  type StartedFrom,
  type StartedFromType,
  type TaskInstanceRecord,
} from '../records.js';
import { isFinalRunStatus, RUN_STATUS_SEVERITY, type RunStatus, type TaskStatus } from './run-status.js';
import { effectiveVariables, findVariableReferences } from '../blueprints/variables.js';
import type { Platform } from '../../shared/platform.js';

export const DEFAULT_RUNS_LIMIT = 100;
/** How many stored runs one listing may read before it answers with what it found. */
const MAX_RUNS_SCANNED = 200_000;
/** How long a task works before it is recorded as running (quicker ones are written once). */
const RUNNING_WRITE_DELAY_MS = 20;
/** Task logs stay small (they are stored with the task instance). */
const MAX_LOG_LINES = 200;
const MAX_LOG_LINE = 2_000;
const INTERRUPTED_MESSAGE = 'The platform stopped while the run was going; start it again.';
const IN_FLIGHT_TASK_STATUSES: readonly TaskStatus[] = ['running', 'pending', 'waiting'];

export interface StartRequest {
  /** Values given at start, as received (checked here). */
  values: Record<string, unknown>;
  preset?: string;
}

/** How a run was started when not from an HTTP request (schedules and hooks). */
export interface TriggeredStart {
  startedFrom: StartedFrom;
  /** Values of the schedule or hook (precedence level 2). */
  values: Record<string, string>;
  /** Hook system variables. */
  system?: Record<string, string>;
}

export interface RunFilters {
  blueprintId?: string;
  account?: string;
  status?: RunStatus[];
  startedFromType?: StartedFromType;
  startedBy?: string;
  scheduleId?: string;
  hookId?: string;
  assetId?: string;
  createdAtFrom?: string;
  createdAtTo?: string;
  sortBy: 'createdAt' | 'finishedAt';
  sortDirection: 'asc' | 'desc';
  limit: number;
}

/** How a data upload hook's waiting run goes on: with the graph it is for, or aborted. */
export type UploadOutcome = { graph: string } | { none: string };

/** Ends of a run the settle hook can tell others about (the failure email of a later change). */
export type RunSettledListener = (run: RunRecord, flow: FlowRecord, definition: FlowDefinition) => Promise<void>;

export class FlowRunService implements FlowRuntimeHooks {
  private readonly settledListeners: RunSettledListener[] = [];
  /** Compiled definitions by blueprint and version (compilation is pure, so safe to keep). */
  private readonly compiled = new Map<string, AslDefinition>();

  constructor(
    private readonly platform: Platform,
    private readonly flows: FlowService,
    private readonly auth: AuthService,
    private readonly taskServices: TaskServices,
  ) {}

  onSettled(listener: RunSettledListener): void {
    this.settledListeners.push(listener);
  }

  // ---- Starting ----

  async start(caller: Caller | null, accountName: string, flowId: string, request: StartRequest, apiUrl: string): Promise<RunRecord> {
    const who = await this.flows.requireEnabled(caller);
    const found = await this.flows.visibleFlow(who, accountName, flowId);
    this.flows.requirePermission(who, found, 'runFlows', 'run flows');
    const version = await this.flows.version(found.flow, found.flow.latestVersion);
    const definition = version.definition;

    let presetValues: Record<string, string> = {};
    if (request.preset !== undefined) {
      const preset = definition.presets.find((p) => p.name === request.preset);
      if (!preset) {
        const names = definition.presets.map((p) => `"${p.name}"`).join(', ');
        throw new NotFoundError(`Flow "${flowId}" has no preset "${request.preset}"${names ? `; its presets are ${names}` : ''}.`);
      }
      presetValues = preset.values;
    }
    const given = checkStartValues(definition, request.values);
    const startedFrom: StartedFrom = { type: who.credential.kind === 'session' ? 'manual' : 'api' };
    return this.launch(found, version, who, startedFrom, presetValues, given, {}, apiUrl, request.preset);
  }

  /** A run started by a schedule or hook, acting as `starter` (the schedule's or hook's owner). */
  async startTriggered(flow: FlowRecord, starter: AccountRecord, trigger: TriggeredStart, apiUrl: string, wait?: { importJobId: string }): Promise<RunRecord> {
    const owner = await this.platform.store.getAccount(flow.ownerUid);
    if (!owner) throw new NotFoundError('The flow\'s account no longer exists.');
    const version = await this.flows.version(flow, flow.latestVersion);
    const caller = starterCaller(starter, '');
    return this.launch({ flow, owner, access: { isMember: true, permissions: new Set() } }, version, caller, trigger.startedFrom, trigger.values, {}, trigger.system ?? {}, apiUrl, undefined, wait);
  }

  /**
   * A data upload hook's first run, started when the upload starts. Its execution waits at the
   * compiled `upload.wait` state (a task token on AWS, an in-process wait embedded) and the run
   * shows `waiting` until `releaseWaiting` says which graph it is for, or that there is none.
   */
  createWaiting(flow: FlowRecord, starter: AccountRecord, trigger: TriggeredStart & { importJobId: string }, apiUrl: string): Promise<RunRecord> {
    return this.startTriggered(flow, starter, trigger, apiUrl, { importJobId: trigger.importJobId });
  }

  /** Ends a run's wait for its upload: on with the graph it is for, or aborted with the reason. */
  async releaseWaiting(run: RunRecord, outcome: UploadOutcome): Promise<void> {
    const current = (await this.platform.flows.getRun(run.id)) ?? run;
    if (isFinalRunStatus(current.status)) return;
    const next: RunRecord = {
      ...current,
      uploadOutcome: outcome,
      ...('graph' in outcome ? { variables: { ...current.variables, system_uploadedGraphIRI: outcome.graph } } : {}),
    };
    if (!(await this.platform.flows.updateRun(next))) return;
    await this.deliverUpload(next);
    if (!next.uploadTaskToken) {
      // The worker may have recorded the token meanwhile (its write can even have replaced ours):
      // read again and deliver with this outcome. A second delivery of a used token is ignored.
      const latest = await this.platform.flows.getRun(run.id);
      if (latest?.uploadTaskToken) await this.deliverUpload({ ...latest, uploadOutcome: outcome });
    }
  }

  /** Hands a known upload outcome to whatever waits for it (the in-process waiter or the token). */
  private async deliverUpload(run: RunRecord): Promise<void> {
    const outcome = run.uploadOutcome;
    if (!outcome) return;
    const waiter = this.uploadWaiters.get(run.id);
    if (waiter) {
      this.uploadWaiters.delete(run.id);
      if ('graph' in outcome) waiter.resolve({ system_uploadedGraphIRI: outcome.graph });
      else waiter.reject(Object.assign(new Error(outcome.none), { name: 'Flow.aborted' }));
      return;
    }
    if (run.uploadTaskToken && run.uploadTaskToken !== IN_PROCESS_TASK_TOKEN) {
      await this.platform.flowExecutor.release(
        run.uploadTaskToken,
        'graph' in outcome ? { output: { system_uploadedGraphIRI: outcome.graph } } : { error: 'Flow.aborted', cause: outcome.none },
      );
    }
  }

  /** In-process waits of the embedded executor, by run. */
  private readonly uploadWaiters = new Map<string, { resolve: (output: Record<string, string>) => void; reject: (error: Error) => void }>();

  /**
   * The `upload.wait` state. On AWS it records the task token and returns at once (Step Functions
   * waits for the token); embedded it waits in-process. If the upload already ended, the outcome
   * is delivered right away.
   */
  private async waitForUpload(runId: string, taskToken: string): Promise<unknown> {
    if (taskToken === IN_PROCESS_TASK_TOKEN) {
      // The waiter is registered before the run is read, so an outcome recorded at any moment is
      // seen either here or by releaseWaiting.
      const waited = new Promise<Record<string, string>>((resolve, reject) => this.uploadWaiters.set(runId, { resolve, reject }));
      const run = await this.platform.flows.getRun(runId);
      if (!run) {
        this.uploadWaiters.delete(runId);
        throw new TaskFailure(`Run ${runId} does not exist.`);
      }
      await this.deliverUpload(run);
      return waited;
    }
    const run = await this.platform.flows.getRun(runId);
    if (!run) throw new TaskFailure(`Run ${runId} does not exist.`);
    const recorded: RunRecord = { ...run, uploadTaskToken: taskToken };
    if (await this.platform.flows.updateRun(recorded)) {
      // An outcome that arrived before the token was recorded is delivered now.
      const latest = await this.platform.flows.getRun(runId);
      if (latest?.uploadOutcome) await this.deliverUpload({ ...latest, uploadTaskToken: taskToken });
    }
    return {};
  }

  private async launch(
    found: VisibleFlow,
    version: FlowVersionRecord,
    starter: Caller,
    startedFrom: StartedFrom,
    level2: Record<string, string>,
    given: Record<string, string>,
    system: Record<string, string>,
    apiUrl: string,
    preset?: string,
    wait?: { importJobId: string },
  ): Promise<RunRecord> {
    const definition = version.definition;
    // Precedence (later wins): system, then preset / schedule / hook values, then given values;
    // an empty value unsets. System variables cannot be overridden, so they are applied last.
    const values: Record<string, string> = {};
    for (const layer of [level2, given]) {
      for (const [name, value] of Object.entries(layer)) {
        if (value === '') delete values[name];
        else values[name] = value;
      }
    }
    const missing = definition.variables.filter((v) => v.required && !values[v.name]).map((v) => `"${v.name}"`);
    if (missing.length > 0) {
      throw new ValidationError(`The run cannot start: the required variable${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ha${missing.length > 1 ? 've' : 's'} no value. Give ${missing.length > 1 ? 'them' : 'it'} in the query string or JSON body.`);
    }
    Object.assign(values, system, { system_triggererAccountName: starter.accountName });

    const starterAccount = await this.platform.store.getAccount(starter.uid);
    if (!starterAccount) throw new NotFoundError('The starting account no longer exists.');
    const runId = this.platform.ids.newId();
    const asl = this.definitionOf(version);
    let executable = version.executable;
    const [{ record, token }] = await Promise.all([
      this.auth.mintToken(starterAccount, { description: `Flow run ${runId} (valid while the run lasts)`, readOnly: false }, apiUrl),
      (async () => {
        if (executable) return;
        executable = await this.platform.flowExecutor.prepare({ blueprintUid: version.blueprintUid, version: version.version, definition: asl });
        await this.platform.flows.setFlowVersionExecutable(version.blueprintUid, version.version, executable);
        const cached = this.versionCache.get(`${version.blueprintUid}#${version.version}`);
        if (cached) cached.executable = executable;
      })(),
    ]);
    const now = this.platform.clock.now().toISOString();
    // The run is pending until its first task starts; a failed start settles it.
    const run: RunRecord = {
      id: runId,
      blueprintUid: found.flow.uid,
      flowId: found.flow.flowId,
      ownerUid: found.flow.ownerUid,
      version: version.version,
      status: wait ? 'waiting' : 'pending',
      startedFrom,
      startedByUid: starter.uid,
      ...(preset !== undefined ? { preset } : {}),
      variables: values,
      createdAt: now,
      apiUrl,
      executionRef: runId,
      platformTokenId: record.tokenId,
      ...(wait ? { importJobId: wait.importJobId } : {}),
    };
    await Promise.all([this.platform.flows.createRun(run), this.platform.flows.putRunSecret(run.id, token), this.platform.store.putToken(record)]);
    try {
      const input: ExecutionInput = {
        run: { id: run.id, blueprintId: run.blueprintUid, flowId: run.flowId, version: run.version, startedBy: run.startedByUid, ...(wait ? { waitForUpload: true } : {}) },
        variables: values,
      };
      const ref = await this.platform.flowExecutor.start(executable!, asl, run.id, input);
      if (ref !== run.executionRef) {
        run.executionRef = ref;
        const current = await this.platform.flows.getRun(run.id);
        if (current) await this.platform.flows.updateRun({ ...current, executionRef: ref });
      }
    } catch (e) {
      await this.settle(run.id, { kind: 'failed', error: 'Flow.start', cause: (e as Error).message });
      throw e;
    }
    return run;
  }

  private definitionOf(version: FlowVersionRecord): AslDefinition {
    const key = `${version.blueprintUid}#${version.version}`;
    let asl = this.compiled.get(key);
    if (!asl) {
      asl = compileFlow(version.definition);
      if (this.compiled.size >= 200) this.compiled.clear();
      this.compiled.set(key, asl);
    }
    return asl;
  }

  // ---- The task worker (every Task state) ----

  async runTask(invocation: TaskInvocation | UploadWaitInvocation): Promise<unknown> {
    // The `upload.wait` state invokes the worker through the task-token integration.
    const payload = 'Payload' in invocation ? invocation.Payload : 'kind' in invocation ? invocation : undefined;
    if (payload?.kind === WAIT_FOR_UPLOAD_KIND) return this.waitForUpload(String(payload.runId), String(payload.taskToken));
    return this.runFlowTask(invocation as TaskInvocation);
  }

  private async runFlowTask(invocation: TaskInvocation): Promise<unknown> {
    const doc = (invocation.state.run ?? {}) as Partial<ExecutionInput['run']>;
    const runId = String(doc.id ?? '');
    // Everything the task needs is read at once; the execution input names the flow version and
    // the starter, so no read waits for another.
    const [run, masked, version, token, starter] = await Promise.all([
      this.platform.flows.getRun(runId),
      doc.blueprintId ? this.platform.flows.getMaskedValues(doc.blueprintId) : null,
      doc.blueprintId && doc.version ? this.versionOf({ blueprintUid: doc.blueprintId, version: doc.version }) : null,
      this.runSecret(runId),
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
    const runningTimer = setTimeout(() => {
      runningWritten = this.platform.flows.putTaskInstance({ ...instance, log: [], artifacts: [] });
      runningWritten.catch(() => {});
    }, RUNNING_WRITE_DELAY_MS);
    const finalWrite = async (record: TaskInstanceRecord) => {
      clearTimeout(runningTimer);
      if (runningWritten) await runningWritten.catch(() => {});
      await Promise.all([this.platform.flows.putTaskInstance(record), runStarted?.catch(() => {})]);
    };
    const secrets = secretMask([...Object.values(masked?.values ?? {}), ...(token ? [token] : [])]);
    const mask = secrets.text;

    try {
      if (!starter) throw new TaskFailure('The account that started the run no longer exists.');
      const values: Record<string, string> = {
        ...effectiveVariables(invocation.state.variables, invocation.state.tasks, invocation.variableSources ?? []),
        ...(masked?.values ?? {}),
        ...(token ? { system_platformToken: token } : {}),
      };
      this.checkMaskedValues(version, invocation, masked?.values ?? {});
      const context: TaskContext = {
        run,
        taskId: invocation.taskId,
        settings: invocation.settings,
        timeoutSeconds: invocation.timeoutSeconds,
        values,
        caller: starterCaller(starter, run.platformTokenId ?? ''),
        apiUrl: run.apiUrl ?? this.platform.settings.publicApiUrl ?? '',
        log: (line) => {
          if (instance.log.length < MAX_LOG_LINES) instance.log.push(mask(line).slice(0, MAX_LOG_LINE));
        },
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
      const raw = await runTaskOfType(invocation.type, context, this.taskServices, await this.flows.getSwitches());
      const output = raw === undefined ? {} : secrets.value(raw);
      instance.status = 'finished';
      instance.finishedAt = this.platform.clock.now().toISOString();
      instance.output = output;
      await finalWrite(instance);
      return output;
    } catch (e) {
      const message = mask((e as Error).message || String(e));
      instance.status = 'failed';
      instance.error = message;
      instance.log.push(mask(`Error: ${message}`));
      instance.finishedAt = this.platform.clock.now().toISOString();
      await finalWrite(instance);
      // The message travels in the execution history: masked, never the raw error.
      throw new TaskFailure(message);
    }
  }

  /** The spec: a run fails when it uses a masked value with no value set. */
  private checkMaskedValues(version: FlowVersionRecord | null, invocation: TaskInvocation, stored: Record<string, string>): void {
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

  /** A run's platform token, read once per run by this process (it never changes during the run). */
  private readonly secrets = new Map<string, Promise<string | null>>();
  private runSecret(runId: string): Promise<string | null> {
    let secret = this.secrets.get(runId);
    if (!secret) {
      secret = this.platform.flows.getRunSecret(runId);
      if (this.secrets.size >= 1_000) this.secrets.clear();
      this.secrets.set(runId, secret);
      secret.catch(() => this.secrets.delete(runId));
    }
    return secret;
  }

  /** Versions never change once saved, so every function may keep the ones it read. */
  private readonly versionCache = new Map<string, FlowVersionRecord>();
  private async versionOf(run: Pick<RunRecord, 'blueprintUid' | 'version'>): Promise<FlowVersionRecord | null> {
    const key = `${run.blueprintUid}#${run.version}`;
    const cached = this.versionCache.get(key);
    if (cached) return cached;
    const version = await this.platform.flows.getFlowVersion(run.blueprintUid, run.version);
    if (version) {
      if (this.versionCache.size >= 200) this.versionCache.clear();
      this.versionCache.set(key, version);
    }
    return version;
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

  // ---- Settling ----

  async settle(runId: string, result: ExecutionResult): Promise<void> {
    const [run, instances] = await Promise.all([this.platform.flows.getRun(runId), this.platform.flows.listTaskInstances(runId)]);
    this.uploadWaiters.delete(runId);
    if (!run || isFinalRunStatus(run.status)) return;
    const version = await this.versionOf(run);
    const known: Record<string, TaskStatus> = {};
    for (const i of instances) known[i.taskId] = i.status;
    const tasks = version?.definition.tasks ?? [];
    const outcome = readOutcome({ tasks }, result, known);
    if (version) markUnchosenSkipped(version.definition, outcome.tasks, instances);
    const finishedAt = this.platform.clock.now().toISOString();
    // A Wait task's worker returns before the wait itself: one the run's end cut short was aborted.
    if (result.kind !== 'succeeded') {
      for (const i of instances) {
        const seconds = (i.output as { seconds?: unknown } | undefined)?.seconds;
        if (i.type === 'wait' && outcome.tasks[i.taskId] === 'finished' && typeof seconds === 'number' && i.finishedAt && Date.parse(i.finishedAt) + seconds * 1000 > Date.parse(finishedAt)) {
          outcome.tasks[i.taskId] = 'aborted';
        }
      }
    }

    const settled: RunRecord = {
      ...run,
      status: outcome.status,
      finishedAt,
      taskStatuses: outcome.tasks,
    };
    if (outcome.endedBy) {
      const record = outcome.endedBy.record as { error?: { Cause?: unknown; Error?: unknown }; reason?: unknown; cause?: unknown };
      const instance = instances.find((i) => i.taskId === outcome.endedBy!.taskId);
      let message = instance?.error ?? '';
      if (outcome.endedBy.status === 'timeout') message = `Task "${outcome.endedBy.taskId}" ran longer than its Timeout.`;
      if (outcome.endedBy.status === 'aborted') {
        const reason = (instance?.output as { reason?: unknown } | undefined)?.reason;
        message = `Stopped by task "${outcome.endedBy.taskId}"${typeof reason === 'string' && reason ? `: ${reason}` : '.'}`;
      }
      if (!message) message = typeof record.error?.Cause === 'string' ? causeMessage(record.error.Cause) : `Task "${outcome.endedBy.taskId}" ${outcome.endedBy.status}.`;
      settled.error = { taskId: outcome.endedBy.taskId, message };
    } else if (outcome.error) {
      settled.error = { message: outcome.error.cause ? causeMessage(outcome.error.cause) : outcome.error.error };
    } else if (result.kind === 'aborted' && !run.error) {
      settled.error = { message: 'The run was aborted.' };
    }
    if (!(await this.platform.flows.updateRun(settled))) return;

    // Task instances show what happened to them (timeout, aborted while running).
    const corrections = instances
      .filter((i) => outcome.tasks[i.taskId] && outcome.tasks[i.taskId] !== i.status)
      .map((i) => this.platform.flows.putTaskInstance({ ...i, status: outcome.tasks[i.taskId]!, finishedAt: i.finishedAt ?? settled.finishedAt }));
    await Promise.all([...corrections, this.endPlatformToken(settled)]);
    if (version && this.settledListeners.length > 0) {
      const flow = await this.platform.flows.getFlowByUid(run.blueprintUid);
      if (flow) {
        for (const listener of this.settledListeners) {
          await listener(settled, flow, version.definition).catch((e: Error) => console.error(`after run ${settled.id} ended: ${e.message}`));
        }
      }
    }
  }

  /** `?system_platformToken` works only while the run lasts. */
  private async endPlatformToken(run: RunRecord): Promise<void> {
    this.secrets.delete(run.id);
    await Promise.all([
      this.platform.flows.deleteRunSecret(run.id),
      run.platformTokenId ? this.platform.store.deleteToken(run.startedByUid, run.platformTokenId) : undefined,
    ]);
  }

  // ---- Aborting and reading ----

  private async visibleRun(caller: Caller, runId: string): Promise<{ run: RunRecord; found: VisibleFlow }> {
    const missing = () => new NotFoundError(`Run "${runId}" does not exist.`);
    const run = await this.platform.flows.getRun(runId);
    if (!run) throw missing();
    const found = await this.flows.visibleFlowByUid(caller, run.blueprintUid);
    if (!found) throw missing();
    return { run, found };
  }

  async abort(caller: Caller | null, runId: string): Promise<RunRecord> {
    const who = await this.flows.requireEnabled(caller);
    const { run, found } = await this.visibleRun(who, runId);
    this.flows.requirePermission(who, found, 'runFlows', 'abort runs');
    if (isFinalRunStatus(run.status)) throw new ConflictError(`Run "${runId}" has already ended (${run.status}).`);
    await this.platform.flows.updateRun({ ...run, error: { message: `Aborted by ${who.accountName}.` } });
    if (run.executionRef) await this.platform.flowExecutor.abort(run.executionRef).catch(() => {});
    await this.settle(run.id, { kind: 'aborted' });
    return (await this.platform.flows.getRun(run.id)) ?? run;
  }

  async get(caller: Caller | null, runId: string): Promise<{ run: RunRecord; flow: FlowRecord; owner: AccountRecord }> {
    const who = await this.flows.requireEnabled(caller);
    const { run, found } = await this.visibleRun(who, runId);
    return { run, flow: found.flow, owner: found.owner };
  }

  async taskInstances(caller: Caller | null, runId: string): Promise<TaskInstanceRecord[]> {
    const who = await this.flows.requireEnabled(caller);
    const { run } = await this.visibleRun(who, runId);
    const version = await this.versionOf(run);
    const stored = new Map((await this.platform.flows.listTaskInstances(run.id)).map((i) => [i.taskId, i]));
    const final = isFinalRunStatus(run.status);
    return (version?.definition.tasks ?? []).map((task) => {
      const instance = stored.get(task.id);
      const settledStatus = run.taskStatuses?.[task.id];
      if (instance) return settledStatus && final ? { ...instance, status: settledStatus } : instance;
      return {
        id: taskInstanceId(run.id, task.id),
        runId: run.id,
        taskId: task.id,
        label: task.label,
        type: task.type,
        status: settledStatus ?? (final ? 'neverStarted' : 'pending'),
        log: [],
        artifacts: [],
      };
    });
  }

  async artifact(caller: Caller | null, instanceId: string, artifactId: string): Promise<{ artifact: ArtifactRecord; body: Readable }> {
    const who = await this.flows.requireEnabled(caller);
    const ids = parseTaskInstanceId(instanceId);
    const missing = () => new NotFoundError(`Task instance "${instanceId}" has no file "${artifactId}".`);
    if (!ids) throw missing();
    await this.visibleRun(who, ids.runId);
    const instance = await this.platform.flows.getTaskInstance(ids.runId, ids.taskId);
    const artifact = instance?.artifacts.find((a) => a.id === artifactId);
    if (!artifact) throw missing();
    const body = await this.platform.blobs.artifacts.get(artifact.blobKey);
    if (!body) throw missing();
    return { artifact, body };
  }

  async list(caller: Caller | null, filters: RunFilters): Promise<{ runs: RunRecord[]; flows: Map<string, VisibleFlow> }> {
    const who = await this.flows.requireEnabled(caller);
    const visible = new Map<string, VisibleFlow | null>();
    const see = async (uid: string) => {
      if (!visible.has(uid)) visible.set(uid, await this.flows.visibleFlowByUid(who, uid));
      return visible.get(uid)!;
    };

    // One stored listing is read: a flow's runs, or all runs (filtered by flow ID when a flow ID
    // was named without its account, since several accounts may have one of that ID).
    let source: string | null = null;
    let flowIdFilter: string | undefined;
    if (filters.blueprintId !== undefined) {
      const byUid = await see(filters.blueprintId);
      if (byUid) source = byUid.flow.uid;
      else if (filters.account) {
        const owner = await this.platform.store.getAccountByName(filters.account);
        const flow = owner ? await this.platform.flows.getFlow(owner.uid, filters.blueprintId) : null;
        if (!flow || !(await see(flow.uid))) return { runs: [], flows: new Map() };
        source = flow.uid;
      } else flowIdFilter = filters.blueprintId.toLowerCase();
    }
    let startedByUid: string | undefined;
    if (filters.startedBy !== undefined) {
      startedByUid = (await this.platform.store.getAccountByName(filters.startedBy))?.uid ?? '-';
    }

    const matches = async (r: RunRecord): Promise<boolean> => {
      if (flowIdFilter !== undefined && r.flowId.toLowerCase() !== flowIdFilter) return false;
      if (filters.status && !filters.status.includes(r.status)) return false;
      if (filters.startedFromType && r.startedFrom.type !== filters.startedFromType) return false;
      if (startedByUid && r.startedByUid !== startedByUid) return false;
      if (filters.scheduleId && r.startedFrom.scheduleId !== filters.scheduleId) return false;
      if (filters.hookId && r.startedFrom.hookId !== filters.hookId) return false;
      if (filters.assetId && r.startedFrom.assetId !== filters.assetId) return false;
      if (filters.createdAtFrom && r.createdAt < filters.createdAtFrom) return false;
      if (filters.createdAtTo && r.createdAt > filters.createdAtTo) return false;
      return (await see(r.blueprintUid)) !== null;
    };

    // Stored newest first: a newest-first listing by creation time stops at the limit.
    const earlyStop = filters.sortBy === 'createdAt' && filters.sortDirection === 'desc';
    const found: RunRecord[] = [];
    let scanned = 0;
    let after: string | undefined;
    while (scanned < MAX_RUNS_SCANNED) {
      const batch = await this.platform.flows.listRuns(source, { after, batch: 500 });
      scanned += batch.items.length;
      for (const { item } of batch.items) if (await matches(item)) found.push(item);
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last || (earlyStop && found.length >= filters.limit)) break;
      after = last.cursor;
    }
    const key = (r: RunRecord) => (filters.sortBy === 'createdAt' ? r.createdAt : (r.finishedAt ?? '')) + r.id;
    found.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    if (filters.sortDirection === 'desc') found.reverse();
    const runs = found.slice(0, filters.limit);
    const flows = new Map<string, VisibleFlow>();
    for (const [uid, v] of visible) if (v) flows.set(uid, v);
    return { runs, flows };
  }

  /** After a restart of the embedded platform: runs that were going cannot continue. */
  async recoverInterrupted(): Promise<void> {
    let after: string | undefined;
    for (let i = 0; i < 1_000; i++) {
      const batch = await this.platform.flows.listRuns(null, { after, batch: 500 });
      for (const { item } of batch.items) {
        if (!isFinalRunStatus(item.status)) {
          // Tasks that were going end with their run: failed, saying why; tasks it never reached
          // have no record and read as never started.
          const finishedAt = this.platform.clock.now().toISOString();
          const inFlight = (await this.platform.flows.listTaskInstances(item.id)).filter((i) => IN_FLIGHT_TASK_STATUSES.includes(i.status));
          await Promise.all(
            inFlight.map((i) =>
              this.platform.flows.putTaskInstance({
                ...i,
                status: 'failed',
                error: INTERRUPTED_MESSAGE,
                log: [...i.log.slice(0, MAX_LOG_LINES - 1), `Error: ${INTERRUPTED_MESSAGE}`],
                finishedAt,
              }),
            ),
          );
          await this.platform.flows.updateRun({ ...item, error: { message: INTERRUPTED_MESSAGE } });
          await this.settle(item.id, { kind: 'failed', error: 'Flow.interrupted', cause: INTERRUPTED_MESSAGE });
        }
      }
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) break;
      after = last.cursor;
    }
  }

}

/** The run acts as its starter: a token caller for the run's own platform token. */
function starterCaller(account: AccountRecord, tokenId: string): Caller {
  return {
    uid: account.uid,
    accountName: account.accountName,
    isAdmin: account.isAdmin === true,
    credential: { kind: 'token', tokenId, readOnly: false },
  };
}

/**
 * A run that ended early (a Stop run task, a failure) loses the records of the branches it
 * cancelled, so a task a decision did not choose would read as never started. The spec shows it
 * as skipped: so is every task the run did not reach whose every connection in is dead (from a
 * skipped task, or from a decision that chose another branch).
 */
function markUnchosenSkipped(definition: FlowDefinition, statuses: Record<string, TaskStatus>, instances: TaskInstanceRecord[]): void {
  const chosen = new Map<string, string>();
  for (const i of instances) {
    if (i.type === 'decision' && statuses[i.taskId] === 'finished') chosen.set(i.taskId, String((i.output as { branch?: unknown } | undefined)?.branch ?? ''));
  }
  if (chosen.size === 0) return;
  const incoming = new Map<string, string[]>();
  for (const c of definition.connections) incoming.set(c.to, [...(incoming.get(c.to) ?? []), c.from]);
  const dead = (from: string, to: string) => statuses[from] === 'skipped' || (chosen.has(from) && chosen.get(from) !== to);
  for (let changed = true; changed; ) {
    changed = false;
    for (const task of definition.tasks) {
      const from = incoming.get(task.id) ?? [];
      if (statuses[task.id] === 'neverStarted' && from.length > 0 && from.every((f) => dead(f, task.id))) {
        statuses[task.id] = 'skipped';
        changed = true;
      }
    }
  }
}

function causeMessage(cause: string): string {
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown; message?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // plain text
  }
  return cause;
}

/** Checks the values given at start: known variables only, one text each, within allowed options. */
export function checkStartValues(definition: FlowDefinition, raw: Record<string, unknown>): Record<string, string> {
  const byName = new Map(definition.variables.map((v) => [v.name, v]));
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    const variable = byName.get(name);
    if (!variable) {
      const known = definition.variables.map((v) => `"${v.name}"`).join(', ');
      if (name.startsWith('system_')) throw new ValidationError(`"${name}" is a system variable; the platform sets it and a run cannot give it.`);
      if (definition.outputVariables.some((v) => v.name === name)) throw new ValidationError(`"${name}" is an output variable: a Set variables task sets it during the run, so it cannot be given at start.`);
      if (definition.maskedValues.some((v) => v.name === name)) throw new ValidationError(`"${name}" is a masked value: it is set on the flow, not given at start.`);
      throw new ValidationError(`The flow has no variable "${name}"${known ? `; its variables are ${known}` : ''}.`);
    }
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
    else throw new ValidationError(`Variable "${name}": give one text value (${Array.isArray(value) ? 'a list was given' : 'not an object'}).`);
    if (text !== '' && variable.allowedOptions.length > 0 && !variable.allowedOptions.includes(text)) {
      throw new ValidationError(`Variable "${name}": "${text}" is not one of its allowed options ${variable.allowedOptions.map((o) => `"${o}"`).join(', ')}.`);
    }
    values[name] = text;
  }
  return values;
}

/** Parses the run listing's query parameters. */
export function parseRunFilters(query: URLSearchParams): RunFilters {
  const one = (name: string): string | undefined => {
    const all = query.getAll(name);
    if (all.length > 1) throw new ValidationError(`${name}: give it once.`);
    return all[0] === '' ? undefined : all[0];
  };
  const filters: RunFilters = { sortBy: 'createdAt', sortDirection: 'desc', limit: DEFAULT_RUNS_LIMIT };
  const blueprintId = one('blueprintId');
  if (blueprintId) filters.blueprintId = blueprintId;
  const account = one('account');
  if (account) filters.account = account;
  const status = one('status');
  if (status) {
    const statuses = status.split(',').map((s) => s.trim());
    for (const s of statuses) {
      if (!(RUN_STATUS_SEVERITY as readonly string[]).includes(s)) throw new ValidationError(`status: "${s}" is not a run status; use ${RUN_STATUS_SEVERITY.join(', ')} (several separated by commas).`);
    }
    filters.status = statuses as RunStatus[];
  }
  const type = one('startedFromType');
  if (type) {
    if (!(STARTED_FROM_TYPES as readonly string[]).includes(type)) throw new ValidationError(`startedFromType: use one of ${STARTED_FROM_TYPES.join(', ')}.`);
    filters.startedFromType = type as StartedFromType;
  }
  for (const name of ['startedBy', 'scheduleId', 'hookId', 'assetId'] as const) {
    const v = one(name);
    if (v) filters[name] = v;
  }
  for (const name of ['createdAtFrom', 'createdAtTo'] as const) {
    const v = one(name);
    if (v) {
      const t = Date.parse(v);
      if (Number.isNaN(t)) throw new ValidationError(`${name}: give a date or date-time such as 2026-11-22 or 2026-11-22T10:00:00Z.`);
      filters[name] = new Date(t).toISOString();
    }
  }
  const sortBy = one('sortBy');
  if (sortBy) {
    if (sortBy !== 'createdAt' && sortBy !== 'finishedAt') throw new ValidationError('sortBy: use createdAt or finishedAt.');
    filters.sortBy = sortBy;
  }
  const direction = one('sortDirection');
  if (direction) {
    const d = direction.toLowerCase();
    if (d !== 'asc' && d !== 'desc') throw new ValidationError('sortDirection: use asc or desc.');
    filters.sortDirection = d;
  }
  const limit = one('limit');
  if (limit !== undefined) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > FLOW_LIMITS.runsListing) throw new ValidationError(`limit: a whole number from 1 to ${FLOW_LIMITS.runsListing}.`);
    filters.limit = n;
  }
  return filters;
}
