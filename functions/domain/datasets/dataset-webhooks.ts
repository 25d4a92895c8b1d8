import type { Readable } from 'node:stream';
import type { AccessService } from './access-service.js';
import type { Caller } from '../shared/caller.js';
import { NotFoundError, ValidationError } from '../shared/errors.js';
import type { Platform } from '../shared/platform.js';
import type { AssetStoredEvent, ImportFinishedEvent } from '../../ports/upload-events.js';

/** What a dataset webhook listens to (TriplyDB's `onEvents`). */
export interface HookEvents {
  graphImport?: boolean;
  linkedDataUpload?: boolean;
  fileUpload?: boolean;
}

export interface DatasetHook {
  id: string;
  url: string;
  active: boolean;
  payloadFormat: 'JSON' | 'formEncoded';
  onEvents: HookEvents;
  createdAt: string;
  updatedAt: string;
}

export interface HookDelivery {
  id: string;
  url: string;
  createdAt: string;
  updatedAt: string;
  statusCode?: number;
  responseText?: string;
  errorCode?: string;
  errorMessage?: string;
  eventName: string;
  payloadFormat: string;
  payload: Record<string, unknown>;
}

export type HookInput = Omit<DatasetHook, 'id' | 'createdAt' | 'updatedAt'>;

export const MAX_HOOKS = 20;
const MAX_RECORDS_LISTED = 500;
const DELIVERY_TIMEOUT_MS = 10_000;

const hooksKey = (datasetId: string) => `datasets/${datasetId}/hooks.json`;
const recordsPrefix = (datasetId: string, hookId: string) => `datasets/${datasetId}/hookrecords/${hookId}/`;

async function readJson<T>(body: Readable | null): Promise<T | null> {
  if (!body) return null;
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Uint8Array));
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError('url: must be an absolute http or https URL.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ValidationError('url: must be an absolute http or https URL.');
  return url;
}

/**
 * Dataset webhooks (TriplyDB's `…/hooks`): a POST to a URL when an import into the dataset ends
 * (`graphImport`, and `linkedDataUpload` for uploaded files) or an asset file is stored
 * (`fileUpload`), each delivery recorded
 * (`…/hookrecords/{hookId}`). Hooks and records are blobs under the dataset's prefix, so they go
 * with it. Delivery goes through the platform's guarded outbound fetch (platform.fetcher).
 * Managing and reading hooks needs `writeDatasets` on the owner (a hook's URL may hold a secret).
 */
export class DatasetWebhooks {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
  ) {}

  private async load(datasetId: string): Promise<DatasetHook[]> {
    return (await readJson<DatasetHook[]>(await this.platform.blobs.data.get(hooksKey(datasetId)))) ?? [];
  }

  private async save(datasetId: string, hooks: DatasetHook[]): Promise<void> {
    await this.platform.blobs.data.put(hooksKey(datasetId), JSON.stringify(hooks), { contentType: 'application/json' });
  }

  private async dataset(caller: Caller | null, account: string, name: string) {
    return (await this.access.writableDataset(caller, account, name, 'manage webhooks')).dataset;
  }

  async list(caller: Caller | null, account: string, name: string): Promise<DatasetHook[]> {
    return this.load((await this.dataset(caller, account, name)).id);
  }

  async get(caller: Caller | null, account: string, name: string, hookId: string): Promise<DatasetHook> {
    const hook = (await this.list(caller, account, name)).find((h) => h.id === hookId);
    if (!hook) throw new NotFoundError(`Webhook "${hookId}" does not exist.`);
    return hook;
  }

  async create(caller: Caller | null, account: string, name: string, input: HookInput): Promise<DatasetHook> {
    const dataset = await this.dataset(caller, account, name);
    const hooks = await this.load(dataset.id);
    if (hooks.length >= MAX_HOOKS) throw new ValidationError(`A dataset has at most ${MAX_HOOKS} webhooks.`);
    const now = this.platform.clock.now().toISOString();
    const hook: DatasetHook = { ...input, url: checkUrl(input.url), id: this.platform.ids.newId(), createdAt: now, updatedAt: now };
    await this.save(dataset.id, [...hooks, hook]);
    return hook;
  }

  async update(caller: Caller | null, account: string, name: string, hookId: string, patch: Partial<HookInput>): Promise<DatasetHook> {
    const dataset = await this.dataset(caller, account, name);
    const hooks = await this.load(dataset.id);
    const i = hooks.findIndex((h) => h.id === hookId);
    if (i < 0) throw new NotFoundError(`Webhook "${hookId}" does not exist.`);
    const next: DatasetHook = { ...hooks[i]!, ...patch, updatedAt: this.platform.clock.now().toISOString() };
    if (patch.url !== undefined) checkUrl(patch.url);
    hooks[i] = next;
    await this.save(dataset.id, hooks);
    return next;
  }

  async delete(caller: Caller | null, account: string, name: string, hookId: string): Promise<void> {
    const dataset = await this.dataset(caller, account, name);
    const hooks = await this.load(dataset.id);
    if (!hooks.some((h) => h.id === hookId)) throw new NotFoundError(`Webhook "${hookId}" does not exist.`);
    await this.save(dataset.id, hooks.filter((h) => h.id !== hookId));
  }

  /** The deliveries of one hook, newest first. */
  async records(caller: Caller | null, account: string, name: string, hookId: string, limit: number, offset: number): Promise<HookDelivery[]> {
    const dataset = await this.dataset(caller, account, name);
    const keys: string[] = [];
    for await (const blob of this.platform.blobs.data.list(recordsPrefix(dataset.id, hookId))) {
      if (keys.length >= MAX_RECORDS_LISTED) break;
      keys.push(blob.key);
    }
    keys.sort().reverse();
    const out: HookDelivery[] = [];
    for (const key of keys.slice(offset, offset + limit)) {
      const record = await readJson<HookDelivery>(await this.platform.blobs.data.get(key));
      if (record) out.push(record);
    }
    return out;
  }

  /** Sends an ended import to the dataset's active hooks that listen to it; every delivery is recorded. Never throws for a failed delivery. */
  async importFinished(event: ImportFinishedEvent): Promise<void> {
    const hooks = (await this.load(event.datasetId)).filter((h) => h.active && (h.onEvents.graphImport || h.onEvents.linkedDataUpload));
    if (hooks.length === 0) return;
    const dataset = await this.platform.store.getDatasetById(event.datasetId);
    const owner = dataset && (await this.platform.store.getAccount(dataset.ownerUid));
    const payload = {
      event: 'graphImport',
      dataset: dataset && owner ? { id: dataset.id, name: dataset.name, owner: owner.accountName } : { id: event.datasetId },
      jobId: event.jobId,
      status: event.ok ? 'finished' : 'error',
      graphs: event.graphs,
    };
    // A hook that only listens to linkedDataUpload hears the same end of an import under that name.
    for (const hook of hooks) {
      const eventName = hook.onEvents.graphImport ? 'graphImport' : 'linkedDataUpload';
      await this.deliver(event.datasetId, hook, eventName, { ...payload, event: eventName });
    }
  }

  /** Sends a stored asset file (`fileUpload`) to the dataset's active hooks that listen to it. Never throws for a failed delivery. */
  async assetStored(event: AssetStoredEvent): Promise<void> {
    const hooks = (await this.load(event.datasetId)).filter((h) => h.active && h.onEvents.fileUpload);
    if (hooks.length === 0) return;
    const [dataset, asset] = await Promise.all([this.platform.store.getDatasetById(event.datasetId), this.platform.store.getAsset(event.datasetId, event.identifier)]);
    const owner = dataset && (await this.platform.store.getAccount(dataset.ownerUid));
    const payload = {
      event: 'fileUpload',
      dataset: dataset && owner ? { id: dataset.id, name: dataset.name, owner: owner.accountName } : { id: event.datasetId },
      asset: { identifier: event.identifier, assetName: asset?.assetName, versionId: event.versionId },
    };
    for (const hook of hooks) await this.deliver(event.datasetId, hook, 'fileUpload', payload);
  }

  private async deliver(datasetId: string, hook: DatasetHook, eventName: string, payload: Record<string, unknown>): Promise<void> {
    const now = this.platform.clock.now().toISOString();
    const record: HookDelivery = { id: this.platform.ids.newId(), url: hook.url, createdAt: now, updatedAt: now, eventName, payloadFormat: hook.payloadFormat, payload };
    const json = hook.payloadFormat === 'JSON';
    const body = json
      ? JSON.stringify(payload)
      : new URLSearchParams(Object.entries(payload).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
    try {
      const response = await this.platform.fetcher.request(hook.url, {
        method: 'POST',
        headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
        body,
        timeoutMs: DELIVERY_TIMEOUT_MS,
      });
      record.statusCode = response.status;
      record.responseText = (await response.text()).slice(0, 1000);
    } catch (e) {
      record.errorCode = (e as { code?: string }).code ?? 'DELIVERY_FAILED';
      record.errorMessage = (e as Error).message.slice(0, 500);
    }
    record.updatedAt = this.platform.clock.now().toISOString();
    await this.platform.blobs.data.put(`${recordsPrefix(datasetId, hook.id)}${now}-${record.id}.json`, JSON.stringify(record), { contentType: 'application/json' });
  }
}
