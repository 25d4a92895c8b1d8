/**
 * Settling runs: when an execution ends, its result becomes the run's status and its task
 * instances' statuses, the run's platform token ends, and listeners (the failure email) hear of
 * it. Also the embedded platform's restart: runs that were going when it stopped end failed.
 */
import { readOutcome, type ExecutionResult } from '../../../../statemachines/outcome.js';
import type { FlowDefinition } from '../blueprints/model.js';
import type { FlowRecord, RunRecord, TaskInstanceRecord } from '../records.js';
import type { Platform } from '../../shared/platform.js';
import type { RunCaches } from './run-caches.js';
import { isFinalRunStatus, type TaskStatus } from './run-status.js';
import { MAX_LOG_LINES } from './task-worker.js';

const INTERRUPTED_MESSAGE = 'The platform stopped while the run was going; start it again.';
const IN_FLIGHT_TASK_STATUSES: readonly TaskStatus[] = ['running', 'pending', 'waiting'];

/** Ends of a run the settle hook can tell others about (the failure email). */
export type RunSettledListener = (run: RunRecord, flow: FlowRecord, definition: FlowDefinition) => Promise<void>;

export class RunSettler {
  private readonly settledListeners: RunSettledListener[] = [];

  constructor(
    private readonly platform: Platform,
    private readonly caches: RunCaches,
  ) {}

  onSettled(listener: RunSettledListener): void {
    this.settledListeners.push(listener);
  }

  async settle(runId: string, result: ExecutionResult): Promise<void> {
    const [run, instances] = await Promise.all([this.platform.flows.getRun(runId), this.platform.flows.listTaskInstances(runId)]);
    if (!run || isFinalRunStatus(run.status)) return;
    const version = await this.caches.versionOf(run);
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
          await listener(settled, flow, version.definition).catch((e: Error) => this.platform.logger.error('a listener failed after a run ended', { runId: settled.id, error: e.message }));
        }
      }
    }
  }

  /** `?system_platformToken` works only while the run lasts. */
  private async endPlatformToken(run: RunRecord): Promise<void> {
    this.caches.forgetSecret(run.id);
    await Promise.all([
      this.platform.flows.deleteRunSecret(run.id),
      run.platformTokenId ? this.platform.store.deleteToken(run.startedByUid, run.platformTokenId) : undefined,
    ]);
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
