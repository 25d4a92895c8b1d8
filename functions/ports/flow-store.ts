import type { ActiveRunMarker, FlowRecord, FlowRemovalRecord, FlowSwitches, FlowVersionRecord, HookRecord, MaskedValuesRecord, RunRecord, ScheduleRecord, TaskInstanceRecord } from './records/flows.js';
import type { Batch, ListRequest } from './metadata-store.js';

/**
 * Storage of flows (DynamoDB's single table on AWS, dynalite locally). As with the metadata
 * store, every write is one conditional single-item write.
 */
export interface FlowStore {
  /** The stored switches, or null when an administrator never set them (defaults apply). */
  getSwitches(): Promise<FlowSwitches | null>;
  putSwitches(switches: FlowSwitches): Promise<void>;

  /** ConflictError when the owner already has a flow with that flow ID (case-insensitive). */
  createFlow(flow: FlowRecord): Promise<void>;
  getFlow(ownerUid: string, flowId: string): Promise<FlowRecord | null>;
  getFlowByUid(uid: string): Promise<FlowRecord | null>;
  /** Writes the flow if its stored `latestVersion` is `expectedVersion`; ConflictError otherwise. */
  replaceFlow(flow: FlowRecord, expectedVersion: number): Promise<void>;
  /** Removes the flow record (versions, values and runs are removed by the caller). */
  deleteFlow(flow: FlowRecord): Promise<void>;
  /** Flows of one owner by flow ID. */
  listFlows(ownerUid: string, request: ListRequest): Promise<Batch<FlowRecord>>;

  /** ConflictError if the version exists. */
  putFlowVersion(version: FlowVersionRecord): Promise<void>;
  getFlowVersion(blueprintUid: string, version: number): Promise<FlowVersionRecord | null>;
  /** Records how the executor runs the version. */
  setFlowVersionExecutable(blueprintUid: string, version: number, executable: string): Promise<void>;
  /** Newest first. */
  listFlowVersions(blueprintUid: string): Promise<FlowVersionRecord[]>;
  deleteFlowVersion(blueprintUid: string, version: number): Promise<void>;

  getMaskedValues(blueprintUid: string): Promise<MaskedValuesRecord | null>;
  putMaskedValues(record: MaskedValuesRecord): Promise<void>;
  deleteMaskedValues(blueprintUid: string): Promise<void>;

  /** Records a removal to finish (idempotent). */
  putFlowRemoval(removal: FlowRemovalRecord): Promise<void>;
  deleteFlowRemoval(ownerUid: string, blueprintUid: string): Promise<void>;
  /** Removals not finished yet: of one owner, or of the whole instance. */
  listFlowRemovals(ownerUid: string | null, request: ListRequest): Promise<Batch<FlowRemovalRecord>>;

  /** Also marks the run active (see listActiveRuns) until a final status is written or it is deleted. */
  createRun(run: RunRecord): Promise<void>;
  getRun(runId: string): Promise<RunRecord | null>;
  /** Writes the run unless its stored status is final; returns false (and writes nothing) then. */
  updateRun(run: RunRecord): Promise<boolean>;
  /**
   * Sets the given fields of a run, leaving every other field as stored (an atomic update of those
   * attributes, not a write of the whole record), and returns the run as it is after the update.
   * What different functions write at the same moment (the execution handle, the upload wait's
   * token, the upload's outcome) goes through here, so no whole-record write from a stale read
   * erases another's. An outcome with a graph also sets the `system_uploadedGraphIRI` variable.
   * Null when the run is gone or its status is final.
   */
  patchRun(runId: string, patch: RunPatch): Promise<RunRecord | null>;
  /** Runs of one flow, or of the whole instance, newest first. */
  listRuns(blueprintUid: string | null, request: ListRequest): Promise<Batch<RunRecord>>;
  deleteRun(runId: string): Promise<void>;
  /**
   * Runs not yet ended whose check is due (`checkAfter` before `dueBefore`), in no particular
   * order; a batch may hold fewer items than asked (or none) while `more` is true.
   */
  listActiveRuns(dueBefore: string, request: ListRequest): Promise<Batch<ActiveRunMarker>>;
  /** The next check of an active run; nothing when its marker is gone. */
  postponeActiveRun(runId: string, checkAfter: string): Promise<void>;
  /** Drops the marker (the run ended or is gone). */
  forgetActiveRun(runId: string): Promise<void>;

  putTaskInstance(instance: TaskInstanceRecord): Promise<void>;
  getTaskInstance(runId: string, taskId: string): Promise<TaskInstanceRecord | null>;
  listTaskInstances(runId: string): Promise<TaskInstanceRecord[]>;

  /** The run's platform token, held only while the run lasts. */
  putRunSecret(runId: string, token: string): Promise<void>;
  getRunSecret(runId: string): Promise<string | null>;
  deleteRunSecret(runId: string): Promise<void>;

  putSchedule(schedule: ScheduleRecord): Promise<void>;
  getSchedule(blueprintUid: string, scheduleId: string): Promise<ScheduleRecord | null>;
  deleteSchedule(blueprintUid: string, scheduleId: string): Promise<void>;
  listSchedules(blueprintUid: string): Promise<ScheduleRecord[]>;
  /** Every schedule of the instance (the embedded scheduler loads them at start). */
  listAllSchedules(): Promise<ScheduleRecord[]>;
  listSchedulesOfOwner(ownerUid: string): Promise<ScheduleRecord[]>;

  putHook(hook: HookRecord): Promise<void>;
  getHook(blueprintUid: string, hookId: string): Promise<HookRecord | null>;
  deleteHook(blueprintUid: string, hookId: string): Promise<void>;
  listHooks(blueprintUid: string): Promise<HookRecord[]>;
  /** The hooks watching a dataset (an upload looks them up). */
  listHooksOfDataset(datasetId: string): Promise<HookRecord[]>;
  listHooksOfOwner(ownerUid: string): Promise<HookRecord[]>;
}

/** The run fields `patchRun` sets. */
export type RunPatch = Partial<Pick<RunRecord, 'executionRef' | 'uploadTaskToken' | 'uploadOutcome'>>;
