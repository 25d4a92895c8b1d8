/**
 * Flow blueprints: who sees them, who edits them, and their versions, presets and masked values.
 * Flows are created and changed only from a console session; API tokens read them and run them.
 */
import { analyzeSparqlAhead } from '../../../rdf/sparql-analysis.js';
import type { AccessService } from '../../datasets/access-service.js';
import type { AccountRecord } from '../../accounts/accounts.js';
import type { Caller } from '../../shared/caller.js';
import { ConflictError, ForbiddenError, NotFoundError, UnauthenticatedError, ValidationError } from '../../shared/errors.js';
import { FlowValidationError } from './problems.js';
import { validateFlow } from './validate.js';
import type { FlowDefinition, Preset } from './model.js';
import type { FlowRecord, FlowSwitches, FlowVersionRecord, MaskedValuesRecord } from '../records.js';
import type { FlowProblem } from './problems.js';
import { charLength, FLOW_LIMITS } from '../limits.js';
import type { AccountAccess, Permission } from '../../accounts/permissions.js';
import type { Platform } from '../../shared/platform.js';
import { FlowRemoval } from './blueprint-removal.js';

/** How long a function trusts the switches it read (other functions may change them on AWS). */
const SWITCHES_TTL_MS = 5_000;
const MAX_FLOWS_LISTED = 1_000;

export interface VisibleFlow {
  flow: FlowRecord;
  owner: AccountRecord;
  access: AccountAccess;
}

export class FlowsDisabledError extends NotFoundError {
  constructor() {
    super('Flows are not enabled on this instance. An administrator can switch them on with PATCH /admin/flows {"flowsEnabled": true}.');
  }
}

export class FlowService {
  private switches?: { value: FlowSwitches; readAt: number };

  private readonly removal: FlowRemoval;

  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
  ) {
    this.removal = new FlowRemoval(platform);
  }

  // ---- Instance switches ----

  async getSwitches(): Promise<FlowSwitches> {
    const now = this.platform.clock.now().getTime();
    if (this.switches && now - this.switches.readAt < SWITCHES_TTL_MS) return this.switches.value;
    const stored = await this.platform.flows.getSwitches();
    const value = stored ?? { flowsEnabled: this.platform.settings.featureToggles.flows === true, sparqlUpdateTaskEnabled: false };
    this.switches = { value, readAt: now };
    return value;
  }

  async setSwitches(caller: Caller | null, patch: Partial<FlowSwitches>): Promise<FlowSwitches> {
    if (!caller) throw new UnauthenticatedError('Unauthorized. Sign in as an administrator to change the flows switches.');
    if (!caller.isAdmin) throw new ForbiddenError('Forbidden. Only instance administrators change the flows switches.');
    const next = { ...(await this.getSwitches()), ...patch };
    await this.platform.flows.putSwitches(next);
    this.switches = { value: next, readAt: this.platform.clock.now().getTime() };
    return next;
  }

  /** Every flows route starts here: 404 while flows are off, 401 without credentials. */
  async requireEnabled(caller: Caller | null): Promise<Caller> {
    if (!(await this.getSwitches()).flowsEnabled) throw new FlowsDisabledError();
    if (!caller) throw new UnauthenticatedError('Unauthorized. Flows need a signed-in console session or an API token ("Authorization: Bearer <token>").');
    return caller;
  }

  // ---- Visibility and permissions ----

  /** Private: members of the owner and administrators; Internal: anyone signed in. */
  canSee(flow: Pick<FlowRecord, 'accessLevel'>, access: AccountAccess): boolean {
    return flow.accessLevel === 'Internal' || access.isMember;
  }

  async visibleFlow(caller: Caller, accountName: string, flowId: string): Promise<VisibleFlow> {
    const missing = () => new NotFoundError(`Flow "${accountName}/${flowId}" does not exist.`);
    const owner = await this.platform.store.getAccountByName(accountName);
    if (!owner) throw missing();
    const flow = await this.platform.flows.getFlow(owner.uid, flowId);
    if (!flow) throw missing();
    const access = await this.access.accountAccess(caller, owner);
    if (!this.canSee(flow, access)) throw missing();
    return { flow, owner, access };
  }

  async visibleFlowByUid(caller: Caller, blueprintUid: string): Promise<VisibleFlow | null> {
    const flow = await this.platform.flows.getFlowByUid(blueprintUid);
    if (!flow) return null;
    const owner = await this.platform.store.getAccount(flow.ownerUid);
    if (!owner) return null;
    const access = await this.access.accountAccess(caller, owner);
    return this.canSee(flow, access) ? { flow, owner, access } : null;
  }

  /** Changing flows needs the console: API tokens answer 403. */
  requireConsole(caller: Caller, what: string): void {
    if (caller.credential.kind !== 'session') {
      throw new ForbiddenError(
        `Forbidden. Flows are edited in the console: sign in (POST /login) to ${what}. API tokens can read flows and start, read and abort runs.`,
      );
    }
  }

  /** A flow whose configuration (schedules, hooks) the caller may change: console + Manage flow blueprints. */
  async manageableFlow(caller: Caller | null, accountName: string, flowId: string, what: string): Promise<{ who: Caller; found: VisibleFlow }> {
    const who = await this.requireEnabled(caller);
    const found = await this.visibleFlow(who, accountName, flowId);
    this.requireConsole(who, what);
    this.requirePermission(who, found, 'manageFlowBlueprints', what);
    return { who, found };
  }

  requirePermission(caller: Caller, found: { access: AccountAccess; owner: AccountRecord }, permission: Permission, what: string): void {
    if (found.access.permissions.has(permission)) return;
    throw new ForbiddenError(`Forbidden. Account "${caller.accountName}" may not ${what} of "${found.owner.accountName}".`);
  }

  // ---- Blueprints ----

  async list(caller: Caller | null, accountName: string): Promise<VisibleFlow[]> {
    const who = await this.requireEnabled(caller);
    const owner = await this.access.account(accountName);
    const access = await this.access.accountAccess(who, owner);
    const flows: FlowRecord[] = [];
    let after: string | undefined;
    for (let i = 0; i < 100 && flows.length < MAX_FLOWS_LISTED; i++) {
      const batch = await this.platform.flows.listFlows(owner.uid, { after, batch: 100 });
      flows.push(...batch.items.map((e) => e.item));
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) break;
      after = last.cursor;
    }
    return flows.filter((f) => this.canSee(f, access)).map((flow) => ({ flow, owner, access }));
  }

  async get(caller: Caller | null, accountName: string, flowId: string, version?: number): Promise<VisibleFlow & { version: FlowVersionRecord }> {
    const who = await this.requireEnabled(caller);
    const found = await this.visibleFlow(who, accountName, flowId);
    return { ...found, version: await this.version(found.flow, version ?? found.flow.latestVersion) };
  }

  async version(flow: FlowRecord, version: number): Promise<FlowVersionRecord> {
    const record = await this.platform.flows.getFlowVersion(flow.uid, version);
    if (!record) throw new NotFoundError(`Flow "${flow.flowId}" has no version ${version}; it has versions 1 to ${flow.latestVersion}.`);
    return record;
  }

  async versions(caller: Caller | null, accountName: string, flowId: string): Promise<FlowVersionRecord[]> {
    const who = await this.requireEnabled(caller);
    const { flow } = await this.visibleFlow(who, accountName, flowId);
    return this.platform.flows.listFlowVersions(flow.uid);
  }

  /** Validates on save: the definition's own rules plus the instance's switches. */
  private async checked(input: unknown): Promise<FlowDefinition> {
    await analyzeSparqlAhead(inlineSparqlTexts(input), FLOW_LIMITS.inlineSparql);
    const result = validateFlow(input);
    const problems: FlowProblem[] = result.ok ? [] : [...result.problems];
    const tasks = result.ok ? result.flow.tasks : [];
    if (!(await this.getSwitches()).sparqlUpdateTaskEnabled) {
      const rawTasks = (input as { tasks?: unknown })?.tasks;
      const list = result.ok ? tasks : Array.isArray(rawTasks) ? (rawTasks as { type?: unknown }[]) : [];
      list.forEach((t, i) => {
        if (t?.type === 'sparqlUpdate') {
          problems.push({
            code: 'unknown-task-type',
            path: `tasks[${i}].type`,
            message: 'The SPARQL update task is switched off on this instance; an administrator can switch it on (PATCH /admin/flows {"sparqlUpdateTaskEnabled": true}).',
          });
        }
      });
    }
    if (result.ok) {
      // A version is stored as one item (DynamoDB holds at most 400 KB) and compiles to one state
      // machine: refuse a larger definition here rather than fail in storage.
      const bytes = new TextEncoder().encode(JSON.stringify(result.flow)).length;
      if (bytes > FLOW_LIMITS.definitionBytes) {
        problems.push({
          code: 'too-long',
          path: '',
          message: `The flow definition is ${bytes} bytes; at most ${FLOW_LIMITS.definitionBytes} are stored. Move long queries into saved queries and refer to them.`,
        });
      }
    }
    if (problems.length > 0) throw new FlowValidationError(problems);
    return (result as { ok: true; flow: FlowDefinition }).flow;
  }

  async create(caller: Caller | null, accountName: string, input: unknown): Promise<VisibleFlow & { version: FlowVersionRecord }> {
    const who = await this.requireEnabled(caller);
    const owner = await this.access.account(accountName);
    const access = await this.access.accountAccess(who, owner);
    this.requireConsole(who, 'create flows');
    this.requirePermission(who, { access, owner }, 'createFlows', 'create flows in the account');
    const definition = await this.checked(input);
    return { ...(await this.insert(who, owner, definition)), access };
  }

  private async insert(caller: Caller, owner: AccountRecord, definition: FlowDefinition, uid = this.platform.ids.newId()) {
    const now = this.platform.clock.now().toISOString();
    const flow: FlowRecord = {
      uid,
      ownerUid: owner.uid,
      flowId: definition.id,
      name: definition.name,
      accessLevel: definition.accessLevel,
      latestVersion: 1,
      createdAt: now,
      updatedAt: now,
      createdByUid: caller.uid,
    };
    const version: FlowVersionRecord = { blueprintUid: uid, version: 1, definition, createdAt: now, createdByUid: caller.uid };
    if (await this.platform.flows.getFlow(owner.uid, definition.id)) {
      throw new ConflictError(`Account "${owner.accountName}" already has a flow with ID "${definition.id}"; choose another "id".`);
    }
    await this.platform.flows.putFlowVersion(version);
    try {
      await this.platform.flows.createFlow(flow);
    } catch (e) {
      await this.platform.flows.deleteFlowVersion(uid, 1);
      if (e instanceof ConflictError) {
        throw new ConflictError(`Account "${owner.accountName}" already has a flow with ID "${definition.id}"; choose another "id".`);
      }
      throw e;
    }
    return { flow, owner, version };
  }

  /** Every save is a new version; the flow ID stays. */
  async save(caller: Caller | null, accountName: string, flowId: string, input: unknown, restoredFrom?: number) {
    const who = await this.requireEnabled(caller);
    const found = await this.visibleFlow(who, accountName, flowId);
    this.requireConsole(who, 'change flows');
    this.requirePermission(who, found, 'manageFlowBlueprints', 'change flows');
    const body = input && typeof input === 'object' && !Array.isArray(input) ? { ...(input as Record<string, unknown>) } : input;
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      const given = (body as Record<string, unknown>).id;
      if (given === undefined) (body as Record<string, unknown>).id = found.flow.flowId;
      else if (typeof given === 'string' && given.toLowerCase() !== found.flow.flowId.toLowerCase()) {
        throw new ValidationError(`id: a saved flow keeps its ID "${found.flow.flowId}"; copy the flow (POST .../copy) to give it another.`);
      }
    }
    const definition = await this.checked(body);
    return this.appendVersion(who, found, { ...definition, id: found.flow.flowId }, restoredFrom);
  }

  private async appendVersion(caller: Caller, found: VisibleFlow, definition: FlowDefinition, restoredFrom?: number) {
    const { flow } = found;
    const now = this.platform.clock.now().toISOString();
    const next = flow.latestVersion + 1;
    const version: FlowVersionRecord = {
      blueprintUid: flow.uid,
      version: next,
      definition,
      createdAt: now,
      createdByUid: caller.uid,
      ...(restoredFrom !== undefined ? { restoredFrom } : {}),
    };
    const saved = () => new ConflictError('The flow was saved meanwhile; reload it and save again.');
    try {
      await this.platform.flows.putFlowVersion(version);
    } catch (e) {
      if (e instanceof ConflictError) throw saved();
      throw e;
    }
    const updated: FlowRecord = { ...flow, name: definition.name, accessLevel: definition.accessLevel, latestVersion: next, updatedAt: now };
    try {
      await this.platform.flows.replaceFlow(updated, flow.latestVersion);
    } catch (e) {
      await this.platform.flows.deleteFlowVersion(flow.uid, next);
      throw e instanceof ConflictError ? saved() : e;
    }
    return { ...found, flow: updated, version };
  }

  async restore(caller: Caller | null, accountName: string, flowId: string, versionNumber: number) {
    const who = await this.requireEnabled(caller);
    const found = await this.visibleFlow(who, accountName, flowId);
    const old = await this.version(found.flow, versionNumber);
    return this.save(who, accountName, flowId, old.definition, versionNumber);
  }

  async delete(caller: Caller | null, accountName: string, flowId: string): Promise<void> {
    const who = await this.requireEnabled(caller);
    const found = await this.visibleFlow(who, accountName, flowId);
    this.requireConsole(who, 'delete flows');
    this.requirePermission(who, found, 'manageFlowBlueprints', 'delete flows');
    await this.remove(found.flow);
  }

  /** Removes a flow with everything it holds: see FlowRemoval.remove. */
  remove(flow: FlowRecord): Promise<boolean> {
    return this.removal.remove(flow);
  }

  /** Finishes recorded removals (the watchdog, the embedded sweep): see FlowRemoval. */
  continueRemovals(ownerUid: string | null, budgetMs?: number, strict = false): Promise<{ finished: number; left: number }> {
    return this.removal.continueRemovals(ownerUid, budgetMs, strict);
  }

  /** Removes every flow of an account being deleted: see FlowRemoval. */
  removeAllOf(ownerUid: string): Promise<void> {
    return this.removal.removeAllOf(ownerUid);
  }

  /** A copy of the newest version in `target` (Create flows there); masked values stay behind. */
  async copy(caller: Caller | null, accountName: string, flowId: string, input: { account?: unknown; id?: unknown; name?: unknown }) {
    const who = await this.requireEnabled(caller);
    const found = await this.visibleFlow(who, accountName, flowId);
    this.requireConsole(who, 'copy flows');
    const target = await this.access.account(this.accountField(input.account, found.owner.accountName));
    const targetAccess = await this.access.accountAccess(who, target);
    this.requirePermission(who, { access: targetAccess, owner: target }, 'createFlows', 'copy flows into the account');
    const latest = await this.version(found.flow, found.flow.latestVersion);
    const definition = await this.checked({
      ...latest.definition,
      id: input.id ?? latest.definition.id,
      name: input.name ?? latest.definition.name,
    });
    return { ...(await this.insert(who, target, definition)), access: targetAccess };
  }

  /** Moves the flow (with its versions and runs) to another account. */
  async move(caller: Caller | null, accountName: string, flowId: string, input: { account?: unknown }) {
    const who = await this.requireEnabled(caller);
    const found = await this.visibleFlow(who, accountName, flowId);
    this.requireConsole(who, 'move flows');
    this.requirePermission(who, found, 'manageFlowBlueprints', 'move flows');
    const target = await this.access.account(this.accountField(input.account));
    const targetAccess = await this.access.accountAccess(who, target);
    this.requirePermission(who, { access: targetAccess, owner: target }, 'createFlows', 'move flows into the account');
    if (target.uid === found.owner.uid) return { ...found };
    if (await this.platform.flows.getFlow(target.uid, found.flow.flowId)) {
      throw new ConflictError(`Account "${target.accountName}" already has a flow with ID "${found.flow.flowId}"; copy it with another "id" instead.`);
    }
    const moved: FlowRecord = { ...found.flow, ownerUid: target.uid, updatedAt: this.platform.clock.now().toISOString() };
    await this.platform.flows.createFlow(moved);
    await this.platform.flows.deleteFlow(found.flow);
    return { flow: moved, owner: target, access: targetAccess };
  }

  private accountField(value: unknown, fallback?: string): string {
    if (value === undefined && fallback) return fallback;
    if (typeof value !== 'string' || value === '') throw new ValidationError('account: give the name of the account the flow goes to.');
    return value;
  }

  // ---- Presets (part of the definition: changing one saves a new version) ----

  async presets(caller: Caller | null, accountName: string, flowId: string): Promise<Preset[]> {
    return (await this.get(caller, accountName, flowId)).version.definition.presets;
  }

  async putPreset(caller: Caller | null, accountName: string, flowId: string, name: string, input: { values?: unknown; default?: unknown }) {
    const { version } = await this.get(caller, accountName, flowId);
    if (charLength(name) > FLOW_LIMITS.presetName) throw new ValidationError(`Preset names have at most ${FLOW_LIMITS.presetName} characters.`);
    const preset = { name, values: input.values ?? {}, default: input.default ?? false };
    let presets: unknown[] = version.definition.presets.filter((p) => p.name !== name);
    if (preset.default === true) presets = presets.map((p) => ({ ...(p as Preset), default: false }));
    const at = version.definition.presets.findIndex((p) => p.name === name);
    presets.splice(at < 0 ? presets.length : at, 0, preset);
    const saved = await this.save(caller, accountName, flowId, { ...version.definition, presets });
    return { ...saved, preset: saved.version.definition.presets.find((p) => p.name === name)! };
  }

  async deletePreset(caller: Caller | null, accountName: string, flowId: string, name: string) {
    const { version } = await this.get(caller, accountName, flowId);
    if (!version.definition.presets.some((p) => p.name === name)) throw new NotFoundError(`Flow "${flowId}" has no preset "${name}".`);
    await this.save(caller, accountName, flowId, { ...version.definition, presets: version.definition.presets.filter((p) => p.name !== name) });
  }

  // ---- Masked values (kept apart from the definition; never echoed without the permission) ----

  async maskedValues(caller: Caller | null, accountName: string, flowId: string) {
    const { flow, version } = await this.get(caller, accountName, flowId);
    const stored = (await this.platform.flows.getMaskedValues(flow.uid))?.values ?? {};
    return version.definition.maskedValues.map((m) => ({ name: m.name, description: m.description, isSet: stored[m.name] !== undefined }));
  }

  private async maskedValueAccess(caller: Caller | null, accountName: string, flowId: string, name: string, what: string) {
    const who = await this.requireEnabled(caller);
    const found = await this.visibleFlow(who, accountName, flowId);
    this.requireConsole(who, what);
    this.requirePermission(who, found, 'manageFlowMaskedValues', what);
    const latest = await this.version(found.flow, found.flow.latestVersion);
    if (!latest.definition.maskedValues.some((m) => m.name === name)) {
      throw new NotFoundError(`Flow "${flowId}" declares no masked value "${name}"; add it to the flow's "maskedValues" first.`);
    }
    return found;
  }

  async maskedValue(caller: Caller | null, accountName: string, flowId: string, name: string): Promise<string | null> {
    const found = await this.maskedValueAccess(caller, accountName, flowId, name, 'see masked values');
    return (await this.platform.flows.getMaskedValues(found.flow.uid))?.values[name] ?? null;
  }

  async setMaskedValue(caller: Caller | null, accountName: string, flowId: string, name: string, value: string | null): Promise<void> {
    const found = await this.maskedValueAccess(caller, accountName, flowId, name, 'change masked values');
    const current = await this.platform.flows.getMaskedValues(found.flow.uid);
    const values = { ...(current?.values ?? {}) };
    if (value === null) delete values[name];
    else values[name] = value;
    const record: MaskedValuesRecord = { blueprintUid: found.flow.uid, values, updatedAt: this.platform.clock.now().toISOString() };
    await this.platform.flows.putMaskedValues(record);
  }
}

/**
 * The inline SPARQL texts of a submitted definition (`settings.query.text`, `settings.update.text`),
 * read without trusting its shape; bounded by the task limit the validator enforces.
 */
function inlineSparqlTexts(input: unknown): string[] {
  const tasks = (input as { tasks?: unknown } | null)?.tasks;
  if (!Array.isArray(tasks) || tasks.length > FLOW_LIMITS.tasks) return [];
  const texts: string[] = [];
  for (const task of tasks) {
    const settings = (task as { settings?: Record<string, unknown> } | null)?.settings;
    for (const field of ['query', 'update']) {
      const text = (settings?.[field] as { text?: unknown } | undefined)?.text;
      if (typeof text === 'string') texts.push(text);
    }
  }
  return texts;
}
