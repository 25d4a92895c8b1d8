/**
 * What a task sees when the task worker runs it (`TaskContext`, `TaskServices`), how it fails
 * (`TaskFailure`), and the run-time reading of settings several task types share: texts with
 * `?name` substituted, URLs, IRIs, dataset references, request headers, and bounded downloads.
 */
import type { SecretMask } from '../masking.js';
import type { RunRecord, ArtifactRecord } from '../records.js';
import { substituteReferences } from '../blueprints/variables.js';
import { sanitizeBlankLabel } from '../../../rdf/nt.js';
import type { FetchedFile } from '../../../ports/url-fetcher.js';
import type { AccessService } from '../../datasets/access-service.js';
import type { Caller } from '../../shared/caller.js';
import type { DatasetService } from '../../datasets/dataset-service.js';
import type { GraphCatalog } from '../../data/graph-catalog.js';
import { assertAbsoluteIri } from '../../shared/names.js';
import type { Platform } from '../../shared/platform.js';
import type { SavedQueryService } from '../../queries/saved-query-service.js';
import type { ServiceLifecycle } from '../../sparql/service-lifecycle.js';

/** A task went wrong: the run fails with this message (already free of secrets). */
export class TaskFailure extends Error {
  override name = 'TaskFailure';
}

export interface TaskContext {
  run: RunRecord;
  taskId: string;
  settings: Record<string, unknown>;
  timeoutSeconds?: number;
  /** Every value the task may use: variables, outputs so far, masked values, system variables. */
  values: Record<string, string>;
  /** The run's starter, whose permissions the task has. */
  caller: Caller;
  apiUrl: string;
  log(line: string): void;
  /** The run's secrets (masked values, platform token), for text a task cuts before returning it. */
  secrets: SecretMask;
  addArtifact(fileName: string, contentType: string, body: string | Buffer): Promise<ArtifactRecord>;
  setDescription(description: string): Promise<void>;
}

export interface TaskServices {
  platform: Platform;
  access: AccessService;
  catalog: GraphCatalog;
  sparql: ServiceLifecycle;
  savedQueries: SavedQueryService;
  datasets: DatasetService;
}


/** A setting as text with its `?name` references replaced by their values. */
export const substituted = (ctx: TaskContext, value: unknown): string => substituteReferences(String(value ?? ''), ctx.values);

/** Downloads take at most this long unless the task's Timeout is shorter. */
const DOWNLOAD_TIMEOUT_SECONDS = 30 * 60;

export function httpUrlOf(ctx: TaskContext, value: unknown, path: string): string {
  const url = substituted(ctx, value).trim();
  if (!/^https?:\/\/[^\s]+$/i.test(url)) throw new TaskFailure(`${path}: "${url}" is not an http(s) URL; check the variables it uses.`);
  return url;
}

/** An optional IRI setting: '' when not given. */
export function iriOf(ctx: TaskContext, value: unknown, path: string): string {
  if (value === undefined || value === null) return '';
  const iri = substituted(ctx, value).trim();
  if (iri === '') return '';
  try {
    return assertAbsoluteIri(iri, path);
  } catch (e) {
    throw new TaskFailure((e as Error).message);
  }
}

/** Request headers with values substituted (they may hold masked values: never log them). */
export function headersOf(ctx: TaskContext): Record<string, string> {
  return Object.fromEntries(Object.entries((ctx.settings.headers ?? {}) as Record<string, unknown>).map(([name, value]) => [name, substituted(ctx, value)]));
}

/** A blank node label prefix unique to this task of this run. */
export const blankPrefixOf = (ctx: TaskContext): string => sanitizeBlankLabel(`r${ctx.run.id.slice(0, 8)}${ctx.taskId}x`);

/** Fetches a URL through the platform's fetcher, bounded in size and time. */
export async function download(ctx: TaskContext, services: TaskServices, url: string, headers: Record<string, string>, maxBytes: number): Promise<FetchedFile> {
  const timeoutMs = Math.min(ctx.timeoutSeconds ?? DOWNLOAD_TIMEOUT_SECONDS, DOWNLOAD_TIMEOUT_SECONDS) * 1000;
  const names = Object.keys(headers);
  ctx.log(`GET ${url}${names.length ? ` (headers: ${names.join(', ')})` : ''}`);
  try {
    return await services.platform.fetcher.fetch(url, { maxBytes, timeoutMs, headers });
  } catch (e) {
    const cause = (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
    throw new TaskFailure(`Downloading ${url} failed: ${cause}`);
  }
}

/** A `{ account, dataset }` setting with values substituted; `fallback` when not set (a saved query's dataset). */
export function datasetOf(ctx: TaskContext, value: unknown, path: string, fallback?: { account: string; dataset: string }): { account: string; dataset: string } {
  if ((value === undefined || value === null) && fallback) return fallback;
  const ref = (value ?? {}) as { account?: unknown; dataset?: unknown };
  const account = substituted(ctx, ref.account);
  const dataset = substituted(ctx, ref.dataset);
  if (!account || !dataset) throw new TaskFailure(`${path}: the dataset is not set (account "${account}", dataset "${dataset}"); check the variables it uses.`);
  return { account, dataset };
}
