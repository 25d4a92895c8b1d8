/**
 * Hooks: a flow's runs started by uploads to one dataset. An asset upload hook starts a run for
 * every asset or new version; a data upload hook creates a `waiting` run when an upload starts
 * and, when it ends, starts one run per graph the upload added (the waiting run takes the first)
 * or aborts the waiting run when it added none. A hook belongs to its creator: its runs act as
 * them and use its values.
 */
import type { AccessService } from '../../datasets/access-service.js';
import type { AccountRecord } from '../../accounts/accounts.js';
import type { Caller } from '../../shared/caller.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../shared/errors.js';
import type { RunStarter } from '../runs/start.js';
import { checkStartValues } from '../runs/start-values.js';
import type { UploadWaits } from '../runs/upload-wait.js';
import type { FlowService, VisibleFlow } from '../blueprints/blueprint-service.js';
import { charLength, FLOW_LIMITS } from '../limits.js';
import { HOOK_TYPES, type HookRecord, type HookType, type RunRecord } from '../records.js';
import type { Platform } from '../../shared/platform.js';
import type { AssetStoredEvent, ImportFinishedEvent, ImportStartedEvent, UploadEvents } from '../../../ports/upload-events.js';
import { requireApiUrl } from '../runs/api-url.js';

export interface HookInput {
  label?: unknown;
  enabled?: unknown;
  type?: unknown;
  dataset?: unknown;
  values?: unknown;
  preset?: unknown;
}

export interface HookView {
  hook: HookRecord;
  owner?: AccountRecord;
  dataset?: { account: string; dataset: string };
}

export class FlowHookService implements UploadEvents {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
    private readonly flows: FlowService,
    private readonly runs: RunStarter,
    private readonly uploadWaits: UploadWaits,
  ) {}

  // ---- Managing hooks ----

  async view(hook: HookRecord): Promise<HookView> {
    const [owner, dataset] = await Promise.all([this.platform.store.getAccount(hook.ownerUid), this.platform.store.getDatasetById(hook.datasetId)]);
    const datasetOwner = dataset ? await this.platform.store.getAccount(dataset.ownerUid) : null;
    return {
      hook,
      ...(owner ? { owner } : {}),
      ...(dataset && datasetOwner ? { dataset: { account: datasetOwner.accountName, dataset: dataset.name } } : {}),
    };
  }

  async list(caller: Caller | null, account: string, flowId: string): Promise<HookView[]> {
    const who = await this.flows.requireEnabled(caller);
    const { flow } = await this.flows.visibleFlow(who, account, flowId);
    return Promise.all((await this.platform.flows.listHooks(flow.uid)).map((h) => this.view(h)));
  }

  async get(caller: Caller | null, account: string, flowId: string, hookId: string): Promise<HookView> {
    const who = await this.flows.requireEnabled(caller);
    const { flow } = await this.flows.visibleFlow(who, account, flowId);
    const hook = await this.platform.flows.getHook(flow.uid, hookId);
    if (!hook) throw new NotFoundError(`Flow "${flowId}" has no hook "${hookId}".`);
    return this.view(hook);
  }

  async create(caller: Caller | null, account: string, flowId: string, input: HookInput): Promise<HookView> {
    const { who, found } = await this.flows.manageableFlow(caller, account, flowId, 'add hooks');
    const now = this.platform.clock.now().toISOString();
    const checked = await this.checked(who, found, input, undefined);
    const hook: HookRecord = { id: this.platform.ids.newId(), blueprintUid: found.flow.uid, ownerUid: who.uid, createdAt: now, updatedAt: now, ...checked };
    await this.platform.flows.putHook(hook);
    return this.view(hook);
  }

  async update(caller: Caller | null, account: string, flowId: string, hookId: string, input: HookInput): Promise<HookView> {
    const { who, found } = await this.flows.manageableFlow(caller, account, flowId, 'change hooks');
    const hook = await this.platform.flows.getHook(found.flow.uid, hookId);
    if (!hook) throw new NotFoundError(`Flow "${flowId}" has no hook "${hookId}".`);
    // Its runs act as its creator: nobody else may change what they run with.
    if (hook.ownerUid !== who.uid && !who.isAdmin) {
      throw new ForbiddenError('Forbidden. A hook belongs to its creator, whose account its runs act as; only they (or an administrator) change it. Delete it and add your own instead.');
    }
    const checked = await this.checked(who, found, input, hook);
    const next: HookRecord = { ...hook, ...checked, updatedAt: this.platform.clock.now().toISOString() };
    if (input.preset === undefined && input.values === undefined) {
      next.values = hook.values;
      if (hook.preset !== undefined) next.preset = hook.preset;
    }
    await this.platform.flows.putHook(next);
    return this.view(next);
  }

  async delete(caller: Caller | null, account: string, flowId: string, hookId: string): Promise<void> {
    const { found } = await this.flows.manageableFlow(caller, account, flowId, 'delete hooks');
    if (!(await this.platform.flows.getHook(found.flow.uid, hookId))) throw new NotFoundError(`Flow "${flowId}" has no hook "${hookId}".`);
    await this.platform.flows.deleteHook(found.flow.uid, hookId);
  }

  /** Removes the hooks of a deleted account (their creator): their runs would act as it. */
  async removeOfOwner(ownerUid: string): Promise<void> {
    for (const h of await this.platform.flows.listHooksOfOwner(ownerUid)) await this.platform.flows.deleteHook(h.blueprintUid, h.id);
  }

  private async checked(
    who: Caller,
    found: VisibleFlow,
    input: HookInput,
    current: HookRecord | undefined,
  ): Promise<Pick<HookRecord, 'label' | 'enabled' | 'type' | 'datasetId' | 'values'> & { preset?: string }> {
    const label = input.label ?? current?.label;
    if (typeof label !== 'string' || charLength(label) < FLOW_LIMITS.hookLabelMin || charLength(label) > FLOW_LIMITS.hookLabelMax) {
      throw new ValidationError(`label: a hook label has ${FLOW_LIMITS.hookLabelMin} to ${FLOW_LIMITS.hookLabelMax} characters.`);
    }
    const enabled = input.enabled ?? current?.enabled ?? true;
    if (typeof enabled !== 'boolean') throw new ValidationError('enabled: true or false.');
    const type = input.type ?? current?.type;
    if (!HOOK_TYPES.includes(type as HookType)) throw new ValidationError(`type: "assetUpload" (every asset or new version uploaded to the dataset) or "dataUpload" (every graph an upload adds).`);

    let datasetId = current?.datasetId;
    if (input.dataset !== undefined || !current) {
      const ref = input.dataset as { account?: unknown; dataset?: unknown } | undefined;
      if (!ref || typeof ref.account !== 'string' || typeof ref.dataset !== 'string' || /^\?/.test(ref.account) || /^\?/.test(ref.dataset)) {
        throw new ValidationError('dataset: give {"account": ..., "dataset": ...} of one specific dataset (not a variable).');
      }
      // The creator must be able to see the dataset its runs will react to.
      datasetId = (await this.access.readableDataset(who, ref.account, ref.dataset)).dataset.id;
    }

    const definition = (await this.flows.version(found.flow, found.flow.latestVersion)).definition;
    let values: Record<string, string> = current?.values ?? {};
    let preset: string | undefined = current?.preset;
    if (input.preset !== undefined) {
      if (typeof input.preset !== 'string') throw new ValidationError('preset: the name of one of the flow\'s presets.');
      const chosen = definition.presets.find((p) => p.name === input.preset);
      if (!chosen) throw new NotFoundError(`Flow "${found.flow.flowId}" has no preset "${input.preset}".`);
      values = { ...chosen.values };
      preset = chosen.name;
    }
    if (input.values !== undefined) {
      if (!input.values || typeof input.values !== 'object' || Array.isArray(input.values)) throw new ValidationError('values: an object { "variable": "value" }.');
      values = { ...values, ...checkStartValues(definition, input.values as Record<string, unknown>) };
      if (input.preset === undefined) preset = undefined;
    }
    return { label, enabled, type: type as HookType, datasetId: datasetId!, values, ...(preset !== undefined ? { preset } : {}) };
  }

  // ---- Reacting to uploads ----

  /** The enabled hooks of one type on a dataset, with their flows and creators. */
  private async hooksOn(datasetId: string, type: HookType) {
    if (!(await this.flows.getSwitches()).flowsEnabled) return [];
    const hooks = (await this.platform.flows.listHooksOfDataset(datasetId)).filter((h) => h.enabled && h.type === type);
    const found = await Promise.all(
      hooks.map(async (hook) => {
        const [flow, owner] = await Promise.all([this.platform.flows.getFlowByUid(hook.blueprintUid), this.platform.store.getAccount(hook.ownerUid)]);
        return flow && owner ? { hook, flow, owner } : null;
      }),
    );
    return found.filter((f) => f !== null);
  }

  private async uploadedTo(datasetId: string) {
    const dataset = await this.platform.store.getDatasetById(datasetId);
    const owner = dataset ? await this.platform.store.getAccount(dataset.ownerUid) : null;
    return dataset && owner ? { dataset, owner } : null;
  }

  private apiUrl(given?: string): string {
    return requireApiUrl(this.platform.settings, given);
  }

  async assetStored(event: AssetStoredEvent): Promise<void> {
    const hooks = await this.hooksOn(event.datasetId, 'assetUpload');
    if (hooks.length === 0) return;
    const [target, asset] = await Promise.all([this.uploadedTo(event.datasetId), this.platform.store.getAsset(event.datasetId, event.identifier)]);
    if (!target || !asset) return;
    const apiUrl = this.apiUrl(event.apiUrl);
    const base = this.platform.settings.consoleUrl ?? apiUrl;
    const system = {
      system_uploadedToAccountName: target.owner.accountName,
      system_uploadedToDatasetName: target.dataset.name,
      system_uploadedAssetName: asset.assetName,
      system_uploadedAssetURL: `${base}/${encodeURIComponent(target.owner.accountName)}/${encodeURIComponent(target.dataset.name)}/assets/${event.identifier}`,
    };
    await Promise.all(
      hooks.map(({ hook, flow, owner }) =>
        this.runs
          .startTriggered(flow, owner, { startedFrom: { type: 'hook-asset', hookId: hook.id, assetId: event.identifier }, values: hook.values, system }, apiUrl)
          .catch((e: Error) => this.platform.logger.error('hook could not start a run', { hookId: hook.id, error: e.message })),
      ),
    );
  }

  async importStarted(event: ImportStartedEvent): Promise<void> {
    const hooks = await this.hooksOn(event.datasetId, 'dataUpload');
    if (hooks.length === 0) return;
    const target = await this.uploadedTo(event.datasetId);
    if (!target) return;
    const system = { system_uploadedToAccountName: target.owner.accountName, system_uploadedToDatasetName: target.dataset.name };
    await Promise.all(
      hooks.map(({ hook, flow, owner }) =>
        this.runs
          .createWaiting(flow, owner, { startedFrom: { type: 'hook-index-job', hookId: hook.id }, values: hook.values, system, importJobId: event.jobId }, this.apiUrl(event.apiUrl))
          .catch((e: Error) => this.platform.logger.error('hook could not create its waiting run', { hookId: hook.id, error: e.message })),
      ),
    );
  }

  async importFinished(event: ImportFinishedEvent): Promise<void> {
    const hooks = (await this.platform.flows.listHooksOfDataset(event.datasetId)).filter((h) => h.type === 'dataUpload');
    if (hooks.length === 0) return;
    const target = await this.uploadedTo(event.datasetId);
    for (const hook of hooks) {
      const waiting = await this.waitingRun(hook, event.jobId);
      if (!waiting) continue;
      const [flow, owner] = await Promise.all([this.platform.flows.getFlowByUid(hook.blueprintUid), this.platform.store.getAccount(hook.ownerUid)]);
      if (!event.ok || event.graphs.length === 0 || !flow || !owner || !target) {
        await this.uploadWaits.release(waiting, { none: event.ok ? 'The upload added no graph.' : 'The upload failed or was canceled; it added no graph.' });
        continue;
      }
      // The waiting run goes on with the first graph; every further graph gets a run of its own.
      const [first, ...others] = event.graphs as [string, ...string[]];
      await this.uploadWaits.release(waiting, { graph: first });
      const system = { system_uploadedToAccountName: target.owner.accountName, system_uploadedToDatasetName: target.dataset.name };
      const values = Object.fromEntries(Object.entries(waiting.variables).filter(([name]) => !name.startsWith('system_')));
      for (const graph of others) {
        const trigger = { startedFrom: { type: 'hook-index-job' as const, hookId: hook.id }, values, system: { ...system, system_uploadedGraphIRI: graph } };
        await this.runs
          .startTriggered(flow, owner, trigger, waiting.apiUrl || this.apiUrl())
          .catch((e: Error) => this.platform.logger.error('hook could not start a run for an uploaded graph', { hookId: hook.id, graph, error: e.message }));
      }
    }
  }

  /** The waiting run a hook created for an import (among the flow's newest runs). */
  private async waitingRun(hook: HookRecord, jobId: string): Promise<RunRecord | null> {
    let after: string | undefined;
    for (let i = 0; i < 10; i++) {
      const batch = await this.platform.flows.listRuns(hook.blueprintUid, { after, batch: 100 });
      const found = batch.items.find(({ item }) => item.status === 'waiting' && item.importJobId === jobId && item.startedFrom.hookId === hook.id);
      if (found) return found.item;
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) break;
      after = last.cursor;
    }
    return null;
  }
}
