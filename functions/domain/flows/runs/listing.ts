/**
 * Existing runs as callers see them: one run, its task instances and their artifacts, the run
 * listing with its filters, and aborting a run (the same visibility rules decide who may).
 */
import type { Readable } from 'node:stream';
import type { AccountRecord } from '../../accounts/accounts.js';
import type { Caller } from '../../shared/caller.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import type { Platform } from '../../shared/platform.js';
import type { FlowService, VisibleFlow } from '../blueprints/blueprint-service.js';
import { parseTaskInstanceId, taskInstanceId, type ArtifactRecord, type FlowRecord, type RunRecord, type StartedFromType, type TaskInstanceRecord } from '../records.js';
import type { RunCaches } from './run-caches.js';
import { isFinalRunStatus, type RunStatus } from './run-status.js';
import type { RunSettler } from './settle.js';

/**
 * How many stored runs one listing request reads at most (DynamoDB pages of 500; a few seconds
 * within the 30 s of a request). The default order (newest first, as stored) pages: a request
 * that read this many answers what it found with a cursor to go on from (`next`). Other orders
 * sort in memory, so they need every run of the listing: when that is more, the request is
 * refused with what to narrow.
 */
export const MAX_RUNS_READ = 2_000;
const READ_BATCH = 500;

/** The run listing's filters (http/ reads them from the query string). */
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
  /** Where the previous page of the default order stopped (its `next`). */
  after?: string;
}

export class RunListing {
  constructor(
    private readonly platform: Platform,
    private readonly flows: FlowService,
    private readonly caches: RunCaches,
    private readonly settler: RunSettler,
  ) {}

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
    await this.settler.settle(run.id, { kind: 'aborted' });
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
    const version = await this.caches.versionOf(run);
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

  /** A task instance's file the caller may see; its bytes are opened only by `open` (a store with links redirects to them instead). */
  async locateArtifact(caller: Caller | null, instanceId: string, artifactId: string): Promise<{ artifact: ArtifactRecord; open: () => Promise<Readable> }> {
    const who = await this.flows.requireEnabled(caller);
    const ids = parseTaskInstanceId(instanceId);
    const missing = () => new NotFoundError(`Task instance "${instanceId}" has no file "${artifactId}".`);
    if (!ids) throw missing();
    await this.visibleRun(who, ids.runId);
    const instance = await this.platform.flows.getTaskInstance(ids.runId, ids.taskId);
    const artifact = instance?.artifacts.find((a) => a.id === artifactId);
    if (!artifact) throw missing();
    const open = async () => {
      const body = await this.platform.blobs.artifacts.get(artifact.blobKey);
      if (!body) throw missing();
      return body;
    };
    return { artifact, open };
  }

  async list(caller: Caller | null, filters: RunFilters): Promise<{ runs: RunRecord[]; flows: Map<string, VisibleFlow>; next?: string }> {
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

    // Stored newest first by creation time: that order pages (a cursor per item); others sort
    // what they read, so they must read it all.
    const storedOrder = filters.sortBy === 'createdAt' && filters.sortDirection === 'desc';
    if (!storedOrder && filters.after !== undefined) {
      throw new ValidationError('after: only the default order (sortBy=createdAt, sortDirection=desc) pages; leave out after, or the sort parameters.');
    }
    const found: RunRecord[] = [];
    let read = 0;
    let after = filters.after;
    let next: string | undefined;
    let complete = false;
    reading: for (let page = 0; page < 100; page++) {
      const batch = await this.platform.flows.listRuns(source, { after, batch: Math.min(READ_BATCH, MAX_RUNS_READ - read) });
      for (const { item, cursor } of batch.items) {
        read++;
        // Older than the window: nothing further down can match.
        if (filters.createdAtFrom && item.createdAt < filters.createdAtFrom) {
          next = undefined;
          complete = true;
          break reading;
        }
        if (await matches(item)) found.push(item);
        if (storedOrder && found.length >= filters.limit) {
          next = cursor;
          break reading;
        }
        next = cursor;
      }
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) {
        next = undefined;
        complete = true;
        break;
      }
      after = last.cursor;
      if (read >= MAX_RUNS_READ) break;
    }
    if (!storedOrder && !complete) {
      throw new ValidationError(
        `Sorting by ${filters.sortBy} ${filters.sortDirection === 'asc' ? 'ascending' : 'descending'} sorts every run of the listing, and this one has more than ${MAX_RUNS_READ}. Narrow it (blueprintId, createdAtFrom) or use the default order (newest first), which pages with a Link header.`,
      );
    }
    if (!storedOrder) {
      const key = (r: RunRecord) => (filters.sortBy === 'createdAt' ? r.createdAt : (r.finishedAt ?? '')) + r.id;
      found.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
      if (filters.sortDirection === 'desc') found.reverse();
    }
    const runs = found.slice(0, filters.limit);
    const flows = new Map<string, VisibleFlow>();
    for (const [uid, v] of visible) if (v) flows.set(uid, v);
    return { runs, flows, ...(storedOrder && next !== undefined ? { next } : {}) };
  }
}
