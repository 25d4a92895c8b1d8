/**
 * The flows' watchdog: what a scheduled sweep (on AWS every few minutes) does so nothing about a
 * flow stays stranded when a function was cut short or an event was lost.
 *
 * - Runs that stopped reporting: a run not yet ended is marked active in the store. Once it is
 *   older than a grace period, each sweep asks the executor about it: an execution that ended
 *   (its status event was lost, or the settle function failed for good) settles the run as it
 *   ended; one that does not exist (the starting function died between recording the run and
 *   starting it) settles it failed, saying so; one still running is checked again later. A run
 *   already ended, or gone, just loses its mark.
 * - Flow removals still recorded (a state machine that could not be deleted, runs beyond one
 *   request's budget) go on.
 * Each part has its own share of the sweep's time budget; failures are logged and left for the
 * next sweep, never thrown (one bad item must not stop the others).
 */
import type { ExecutionResult } from '../../../../statemachines/outcome.js';
import type { Platform } from '../../shared/platform.js';
import type { FlowService } from '../blueprints/blueprint-service.js';
import { isFinalRunStatus } from './run-status.js';
import type { RunSettler } from './settle.js';

/** A run younger than this is left alone (its start and first events are still on their way). */
export const RUN_GRACE_MS = 15 * 60_000;
/** How long a run found running waits for its next check. */
export const RUN_RECHECK_MS = 10 * 60_000;
/** What a run lost this way shows as its error. */
export const LOST_RUN_MESSAGE = 'The run stopped reporting: its execution does not exist (the function starting it was cut short). Start it again.';

export interface FlowSweepSummary {
  runsChecked: number;
  runsSettled: number;
  removalsFinished: number;
  removalsLeft: number;
}

export class FlowWatchdog {
  constructor(
    private readonly platform: Platform,
    private readonly flows: FlowService,
    private readonly settler: RunSettler,
  ) {}

  async sweep(budgetMs = 60_000): Promise<FlowSweepSummary> {
    const start = this.platform.clock.now().getTime();
    const runs = await this.checkRuns(start + budgetMs / 2);
    const left = Math.max(0, start + budgetMs - this.platform.clock.now().getTime());
    const removals = await this.flows.continueRemovals(null, left).catch((e: Error) => {
      this.platform.logger.error('watchdog: flow removals failed', { error: e.message });
      return { finished: 0, left: -1 };
    });
    return { ...runs, removalsFinished: removals.finished, removalsLeft: removals.left };
  }

  private async checkRuns(deadline: number): Promise<{ runsChecked: number; runsSettled: number }> {
    const now = () => this.platform.clock.now();
    let runsChecked = 0;
    let runsSettled = 0;
    let after: string | undefined;
    for (let page = 0; page < 100 && now().getTime() < deadline; page++) {
      const batch = await this.platform.flows.listActiveRuns(now().toISOString(), { after, batch: 100 });
      for (const { item } of batch.items) {
        if (now().getTime() >= deadline) break;
        runsChecked++;
        try {
          if (await this.checkRun(item.runId, item.createdAt)) runsSettled++;
        } catch (e) {
          this.platform.logger.error('watchdog: a run could not be checked', { runId: item.runId, error: (e as Error).message });
        }
      }
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) break;
      after = last.cursor;
    }
    return { runsChecked, runsSettled };
  }

  /** Returns whether the run was settled here. */
  private async checkRun(runId: string, createdAt: string): Promise<boolean> {
    const nowMs = this.platform.clock.now().getTime();
    const later = (ms: number) => this.platform.flows.postponeActiveRun(runId, new Date(ms).toISOString());
    const run = await this.platform.flows.getRun(runId);
    if (!run || isFinalRunStatus(run.status)) {
      await this.platform.flows.forgetActiveRun(runId);
      return false;
    }
    const born = Date.parse(run.createdAt || createdAt);
    if (nowMs - born < RUN_GRACE_MS) {
      await later(born + RUN_GRACE_MS);
      return false;
    }
    const executor = this.platform.flowExecutor;
    const ref = run.executionRef ?? run.id;
    const state: ExecutionResult | 'running' | 'unknown' = executor.status ? await executor.status(ref) : ((await executor.result(ref)) ?? 'running');
    if (state === 'running') {
      await later(nowMs + RUN_RECHECK_MS);
      return false;
    }
    const result: ExecutionResult = state === 'unknown' ? { kind: 'failed', error: 'Flow.lost', cause: LOST_RUN_MESSAGE } : state;
    this.platform.logger.warn('watchdog: settling a run that stopped reporting', { runId, execution: state === 'unknown' ? 'unknown' : result.kind });
    await this.settler.settle(run.id, result);
    await this.platform.flows.forgetActiveRun(runId);
    return true;
  }
}
