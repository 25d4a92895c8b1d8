import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ActiveRunMarker, FlowRecord, FlowRemovalRecord, FlowSwitches, FlowVersionRecord, HookRecord, MaskedValuesRecord, RunRecord, ScheduleRecord, TaskInstanceRecord } from '../../domain/flows/records.js';
import { FINAL_RUN_STATUSES } from '../../domain/flows/runs/run-status.js';
import { ConflictError, NotFoundError } from '../../domain/shared/errors.js';
import { nameKey } from '../../domain/shared/names.js';
import type { FlowStore, RunPatch } from '../../ports/flow-store.js';
import type { Batch, ListRequest } from '../../ports/metadata-store.js';
import { DynamoDbTable, isConditionFailure, strip, type Item } from './dynamodb-table.js';

const versionKey = (version: number): string => `V#${String(version).padStart(8, '0')}`;

const K = {
  switches: { pk: 'INSTANCE', sk: 'FLOWSWITCHES' },
  flow: (ownerUid: string, flowId: string) => ({ pk: `ACC#${ownerUid}`, sk: `FLOW#${nameKey(flowId)}` }),
  version: (blueprintUid: string, version: number) => ({ pk: `FLOWV#${blueprintUid}`, sk: versionKey(version) }),
  maskedValues: (blueprintUid: string) => ({ pk: `FLOWSECRET#${blueprintUid}`, sk: 'VALUES' }),
  run: (runId: string) => ({ pk: `RUN#${runId}`, sk: 'RUN' }),
  task: (runId: string, taskId: string) => ({ pk: `RUN#${runId}`, sk: `TASK#${taskId}` }),
  runSecret: (runId: string) => ({ pk: `RUN#${runId}`, sk: 'SECRET' }),
  activeRun: (runId: string) => ({ pk: 'ACTIVERUNS', sk: runId }),
  removal: (ownerUid: string, blueprintUid: string) => ({ pk: 'FLOWREMOVALS', sk: `${ownerUid}#${blueprintUid}` }),
  schedule: (blueprintUid: string, id: string) => ({ pk: `FLOWDATA#${blueprintUid}`, sk: `SCHEDULE#${id}` }),
  hook: (blueprintUid: string, id: string) => ({ pk: `FLOWDATA#${blueprintUid}`, sk: `HOOK#${id}` }),
};

/**
 * The FlowStore on DynamoDB's single table (same table as the metadata store); also runs
 * unchanged against dynalite. Every write is one single-item write; deleteRun is a sequence of
 * them.
 *
 * Size limit: a DynamoDB item holds at most 400 KB. Task instances keep their log lines and
 * output inline, so a very chatty task (or a large output) could exceed it; the put then fails
 * with a ValidationException from DynamoDB. Callers should keep logs bounded.
 */
export class DynamoDbFlowStore extends DynamoDbTable implements FlowStore {

  // Switches

  getSwitches(): Promise<FlowSwitches | null> {
    return this.get<FlowSwitches>(K.switches);
  }

  async putSwitches(switches: FlowSwitches): Promise<void> {
    await this.put({ ...switches, ...K.switches });
  }

  // Flows

  private flowItem(flow: FlowRecord): Item {
    return { ...flow, ...K.flow(flow.ownerUid, flow.flowId), gsi2pk: `FLOWUID#${flow.uid}`, gsi2sk: 'FLOW' };
  }

  async createFlow(flow: FlowRecord): Promise<void> {
    await this.putNew(this.flowItem(flow), `A flow with the ID "${flow.flowId}" already exists in this account.`);
  }

  getFlow(ownerUid: string, flowId: string): Promise<FlowRecord | null> {
    return this.get<FlowRecord>(K.flow(ownerUid, flowId));
  }

  async getFlowByUid(uid: string): Promise<FlowRecord | null> {
    const found = await this.queryAll<FlowRecord>({
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :p',
      ExpressionAttributeValues: { ':p': `FLOWUID#${uid}` },
    });
    return found[0] ?? null;
  }

  /**
   * The key derives from owner and flow ID, so this cannot move a flow to another owner or flow ID
   * (other than a change of case): such a write finds no stored flow and fails as a conflict.
   */
  async replaceFlow(flow: FlowRecord, expectedVersion: number): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.flowItem(flow),
          ConditionExpression: 'attribute_exists(pk) AND latestVersion = :expected',
          ExpressionAttributeValues: { ':expected': expectedVersion },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError('The flow was saved meanwhile; reload it and save again.');
      throw e;
    }
  }

  async deleteFlow(flow: FlowRecord): Promise<void> {
    await this.delete(K.flow(flow.ownerUid, flow.flowId));
  }

  listFlows(ownerUid: string, request: ListRequest): Promise<Batch<FlowRecord>> {
    return this.queryBatch<FlowRecord>(
      {
        KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
        ExpressionAttributeValues: { ':p': `ACC#${ownerUid}`, ':s': 'FLOW#' },
      },
      (i) => ({ pk: i.pk, sk: i.sk }),
      request,
    );
  }

  // Versions

  async putFlowVersion(version: FlowVersionRecord): Promise<void> {
    await this.putNew(
      { ...version, ...K.version(version.blueprintUid, version.version) },
      `Version ${version.version} of the flow was saved meanwhile; reload it and save again.`,
    );
  }

  getFlowVersion(blueprintUid: string, version: number): Promise<FlowVersionRecord | null> {
    return this.get<FlowVersionRecord>(K.version(blueprintUid, version));
  }

  async setFlowVersionExecutable(blueprintUid: string, version: number, executable: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: K.version(blueprintUid, version),
          UpdateExpression: 'SET executable = :e',
          // Without it, an update of a missing version would create a bare item.
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':e': executable },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new NotFoundError(`Version ${version} of the flow does not exist.`);
      throw e;
    }
  }

  listFlowVersions(blueprintUid: string): Promise<FlowVersionRecord[]> {
    return this.queryAll<FlowVersionRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `FLOWV#${blueprintUid}`, ':s': 'V#' },
      ScanIndexForward: false,
    });
  }

  async deleteFlowVersion(blueprintUid: string, version: number): Promise<void> {
    await this.delete(K.version(blueprintUid, version));
  }

  // Masked values

  getMaskedValues(blueprintUid: string): Promise<MaskedValuesRecord | null> {
    return this.get<MaskedValuesRecord>(K.maskedValues(blueprintUid));
  }

  async putMaskedValues(record: MaskedValuesRecord): Promise<void> {
    await this.put({ ...record, ...K.maskedValues(record.blueprintUid) });
  }

  async deleteMaskedValues(blueprintUid: string): Promise<void> {
    await this.delete(K.maskedValues(blueprintUid));
  }

  // Runs

  private runItem(run: RunRecord): Item {
    const order = `${run.createdAt}#${run.id}`;
    return {
      ...run,
      ...K.run(run.id),
      gsi1pk: `FLOWRUNS#${run.blueprintUid}`,
      gsi1sk: order,
      gsi2pk: 'RUNS',
      gsi2sk: order,
    };
  }

  // Flow removals: FLOWREMOVALS / <owner>#<flow>, one partition (removals are few and short-lived).

  async putFlowRemoval(removal: FlowRemovalRecord): Promise<void> {
    await this.put({ ...removal, ...K.removal(removal.ownerUid, removal.blueprintUid) });
  }

  async deleteFlowRemoval(ownerUid: string, blueprintUid: string): Promise<void> {
    await this.delete(K.removal(ownerUid, blueprintUid));
  }

  listFlowRemovals(ownerUid: string | null, request: ListRequest): Promise<Batch<FlowRemovalRecord>> {
    return this.queryBatch<FlowRemovalRecord>(
      {
        KeyConditionExpression: ownerUid === null ? 'pk = :p' : 'pk = :p AND begins_with(sk, :s)',
        ExpressionAttributeValues: { ':p': 'FLOWREMOVALS', ...(ownerUid === null ? {} : { ':s': `${ownerUid}#` }) },
        ConsistentRead: true,
      },
      (i) => ({ pk: i.pk, sk: i.sk }),
      request,
    );
  }

  /**
   * The run and its active marker (ACTIVERUNS / <run id>), which the watchdog reads to find runs
   * that stopped reporting; a final status or the run's deletion removes it.
   */
  async createRun(run: RunRecord): Promise<void> {
    await this.putNew(this.runItem(run), 'run id collision');
    if ((FINAL_RUN_STATUSES as readonly string[]).includes(run.status)) return;
    const marker: ActiveRunMarker = { runId: run.id, createdAt: run.createdAt, checkAfter: run.createdAt };
    await this.put({ ...marker, ...K.activeRun(run.id) });
  }

  getRun(runId: string): Promise<RunRecord | null> {
    return this.get<RunRecord>(K.run(runId));
  }

  async updateRun(run: RunRecord): Promise<boolean> {
    const values: Record<string, unknown> = {};
    FINAL_RUN_STATUSES.forEach((status, i) => (values[`:f${i}`] = status));
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.runItem(run),
          // attribute_exists: a deleted run stays deleted rather than reappearing half-written.
          ConditionExpression: `attribute_exists(pk) AND NOT (#status IN (${FINAL_RUN_STATUSES.map((_, i) => `:f${i}`).join(', ')}))`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        }),
      );
      if ((FINAL_RUN_STATUSES as readonly string[]).includes(run.status)) await this.delete(K.activeRun(run.id));
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  async patchRun(runId: string, patch: RunPatch): Promise<RunRecord | null> {
    const values: Record<string, unknown> = {};
    FINAL_RUN_STATUSES.forEach((status, i) => (values[`:f${i}`] = status));
    const names: Record<string, string> = { '#status': 'status' };
    const sets: string[] = [];
    for (const [field, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    const outcome = patch.uploadOutcome;
    if (outcome && 'graph' in outcome) {
      names['#variables'] = 'variables';
      values[':graph'] = outcome.graph;
      sets.push('#variables.system_uploadedGraphIRI = :graph');
    }
    if (sets.length === 0) return this.getRun(runId);
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: K.run(runId),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: `attribute_exists(pk) AND NOT (#status IN (${FINAL_RUN_STATUSES.map((_, i) => `:f${i}`).join(', ')}))`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes ? strip<RunRecord>(out.Attributes) : null;
    } catch (e) {
      if (isConditionFailure(e)) return null;
      throw e;
    }
  }

  listRuns(blueprintUid: string | null, request: ListRequest): Promise<Batch<RunRecord>> {
    if (blueprintUid === null) {
      return this.queryBatch<RunRecord>(
        {
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :p',
          ExpressionAttributeValues: { ':p': 'RUNS' },
          ScanIndexForward: false,
        },
        (i) => ({ pk: i.pk, sk: i.sk, gsi2pk: i.gsi2pk, gsi2sk: i.gsi2sk }),
        request,
      );
    }
    return this.queryBatch<RunRecord>(
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p',
        ExpressionAttributeValues: { ':p': `FLOWRUNS#${blueprintUid}` },
        ScanIndexForward: false,
      },
      (i) => ({ pk: i.pk, sk: i.sk, gsi1pk: i.gsi1pk, gsi1sk: i.gsi1sk }),
      request,
    );
  }

  /** Removes the task instances and the secret first and the run last, so a retry still finds it. */
  async deleteRun(runId: string): Promise<void> {
    const items = await this.queryAllItems({
      KeyConditionExpression: 'pk = :p',
      ExpressionAttributeValues: { ':p': `RUN#${runId}` },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    });
    for (const item of items) if (item.sk !== 'RUN') await this.delete({ pk: item.pk, sk: item.sk });
    await this.delete(K.activeRun(runId));
    await this.delete(K.run(runId));
  }

  listActiveRuns(dueBefore: string, request: ListRequest): Promise<Batch<ActiveRunMarker>> {
    return this.queryBatch<ActiveRunMarker>(
      {
        KeyConditionExpression: 'pk = :p',
        FilterExpression: 'checkAfter < :due',
        ExpressionAttributeValues: { ':p': 'ACTIVERUNS', ':due': dueBefore },
      },
      (i) => ({ pk: i.pk, sk: i.sk }),
      request,
    );
  }

  async postponeActiveRun(runId: string, checkAfter: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: K.activeRun(runId),
          UpdateExpression: 'SET checkAfter = :c',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':c': checkAfter },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  async forgetActiveRun(runId: string): Promise<void> {
    await this.delete(K.activeRun(runId));
  }

  // Task instances

  async putTaskInstance(instance: TaskInstanceRecord): Promise<void> {
    await this.put({ ...instance, ...K.task(instance.runId, instance.taskId) });
  }

  getTaskInstance(runId: string, taskId: string): Promise<TaskInstanceRecord | null> {
    return this.get<TaskInstanceRecord>(K.task(runId, taskId));
  }

  listTaskInstances(runId: string): Promise<TaskInstanceRecord[]> {
    return this.queryAll<TaskInstanceRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `RUN#${runId}`, ':s': 'TASK#' },
      ConsistentRead: true,
    });
  }

  // Run secrets

  async putRunSecret(runId: string, token: string): Promise<void> {
    await this.put({ ...K.runSecret(runId), token });
  }

  async getRunSecret(runId: string): Promise<string | null> {
    return (await this.get<{ token: string }>(K.runSecret(runId)))?.token ?? null;
  }

  async deleteRunSecret(runId: string): Promise<void> {
    await this.delete(K.runSecret(runId));
  }

  // Schedules: FLOWDATA#<flow> / SCHEDULE#<id>; gsi1 lists all schedules, gsi2 those of an owner.

  async putSchedule(schedule: ScheduleRecord): Promise<void> {
    await this.put({
      ...schedule,
      ...K.schedule(schedule.blueprintUid, schedule.id),
      gsi1pk: 'SCHEDULES',
      gsi1sk: schedule.id,
      gsi2pk: `OWNERSCHEDULES#${schedule.ownerUid}`,
      gsi2sk: schedule.id,
    });
  }

  getSchedule(blueprintUid: string, scheduleId: string): Promise<ScheduleRecord | null> {
    return this.get<ScheduleRecord>(K.schedule(blueprintUid, scheduleId));
  }

  async deleteSchedule(blueprintUid: string, scheduleId: string): Promise<void> {
    await this.delete(K.schedule(blueprintUid, scheduleId));
  }

  listSchedules(blueprintUid: string): Promise<ScheduleRecord[]> {
    return this.queryAll<ScheduleRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': `FLOWDATA#${blueprintUid}`, ':sk': 'SCHEDULE#' },
    });
  }

  listAllSchedules(): Promise<ScheduleRecord[]> {
    return this.queryAll<ScheduleRecord>({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': 'SCHEDULES' },
    });
  }

  listSchedulesOfOwner(ownerUid: string): Promise<ScheduleRecord[]> {
    return this.queryAll<ScheduleRecord>({
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': `OWNERSCHEDULES#${ownerUid}` },
    });
  }

  // Hooks: FLOWDATA#<flow> / HOOK#<id>; gsi1 lists a dataset's hooks, gsi2 those of an owner.

  async putHook(hook: HookRecord): Promise<void> {
    await this.put({
      ...hook,
      ...K.hook(hook.blueprintUid, hook.id),
      gsi1pk: `DSHOOKS#${hook.datasetId}`,
      gsi1sk: hook.id,
      gsi2pk: `OWNERHOOKS#${hook.ownerUid}`,
      gsi2sk: hook.id,
    });
  }

  getHook(blueprintUid: string, hookId: string): Promise<HookRecord | null> {
    return this.get<HookRecord>(K.hook(blueprintUid, hookId));
  }

  async deleteHook(blueprintUid: string, hookId: string): Promise<void> {
    await this.delete(K.hook(blueprintUid, hookId));
  }

  listHooks(blueprintUid: string): Promise<HookRecord[]> {
    return this.queryAll<HookRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': `FLOWDATA#${blueprintUid}`, ':sk': 'HOOK#' },
    });
  }

  listHooksOfDataset(datasetId: string): Promise<HookRecord[]> {
    return this.queryAll<HookRecord>({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': `DSHOOKS#${datasetId}` },
    });
  }

  listHooksOfOwner(ownerUid: string): Promise<HookRecord[]> {
    return this.queryAll<HookRecord>({
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': `OWNERHOOKS#${ownerUid}` },
    });
  }
}
