/**
 * Starting runs: by hand or over the API (checked start values and presets), by a schedule or a
 * hook (their stored values), and a data upload hook's waiting run. Applies the variables'
 * precedence, mints the run's platform token and starts the compiled flow on the FlowExecutor.
 */
import type { AslDefinition } from '../../../../statemachines/asl.js';
import { compileFlow } from '../../../../statemachines/compile.js';
import type { ExecutionInput } from '../../../ports/flow-executor.js';
import type { AccountRecord } from '../../accounts/accounts.js';
import type { AuthService } from '../../accounts/auth-service.js';
import type { Caller } from '../../shared/caller.js';
import { NotFoundError, ValidationError } from '../../shared/errors.js';
import type { Platform } from '../../shared/platform.js';
import type { FlowService, VisibleFlow } from '../blueprints/blueprint-service.js';
import type { FlowRecord, FlowVersionRecord, RunRecord, StartedFrom } from '../records.js';
import type { RunCaches } from './run-caches.js';
import { starterCaller } from './run-caller.js';
import type { RunSettler } from './settle.js';
import { checkStartValues } from './start-values.js';

const MAX_COMPILED = 200;

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

export class RunStarter {
  /** Compiled definitions by blueprint and version (compilation is pure, so safe to keep). */
  private readonly compiled = new Map<string, AslDefinition>();

  constructor(
    private readonly platform: Platform,
    private readonly flows: FlowService,
    private readonly auth: AuthService,
    private readonly caches: RunCaches,
    private readonly settler: RunSettler,
  ) {}

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
   * compiled `upload.wait` state and the run shows `waiting` until `UploadWaits.release` says
   * which graph it is for, or that there is none.
   */
  createWaiting(flow: FlowRecord, starter: AccountRecord, trigger: TriggeredStart & { importJobId: string }, apiUrl: string): Promise<RunRecord> {
    return this.startTriggered(flow, starter, trigger, apiUrl, { importJobId: trigger.importJobId });
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
        this.caches.rememberExecutable(version.blueprintUid, version.version, executable);
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
        // Only this field: the execution may already have recorded its upload wait's token.
        await this.platform.flows.patchRun(run.id, { executionRef: ref });
      }
    } catch (e) {
      await this.settler.settle(run.id, { kind: 'failed', error: 'Flow.start', cause: (e as Error).message });
      throw e;
    }
    return run;
  }

  private definitionOf(version: FlowVersionRecord): AslDefinition {
    const key = `${version.blueprintUid}#${version.version}`;
    let asl = this.compiled.get(key);
    if (!asl) {
      asl = compileFlow(version.definition);
      if (this.compiled.size >= MAX_COMPILED) this.compiled.clear();
      this.compiled.set(key, asl);
    }
    return asl;
  }
}
