/**
 * Removing flows: a flow disappears for readers at once (its record goes, a removal record is
 * written), and what it held (state machines, versions, values, hooks, runs) is removed a bounded
 * amount per call, so a request never runs past API Gateway's 30 s and a refused deletion is
 * retried by the next call (the watchdog on AWS, the periodic sweep embedded, a retried account
 * deletion) instead of being forgotten.
 */
import { ServiceUnavailableError } from '../../shared/errors.js';
import type { FlowRecord, FlowRemovalRecord } from '../records.js';
import type { Platform } from '../../shared/platform.js';
import { removeSchedule } from '../schedules/schedule-removal.js';

/**
 * How long one request spends removing a flow's leftovers (runs above all: a flow may have
 * 100,000); the rest is recorded and finished later. API Gateway answers within 30 s.
 */
const REMOVAL_BUDGET_MS = 10_000;
/** Runs deleted per listing (each is a few single-item deletes). */
const REMOVAL_RUN_BATCH = 25;

export class FlowRemoval {
  constructor(private readonly platform: Platform) {}

  /**
   * Removes a flow with its versions, values and runs (an account's deletion uses it too). Its
   * schedules stop first (none may start a run of a flow going away); then a removal record is
   * written and the flow record deleted, so the flow is gone for every reader at once. The rest
   * (state machines, versions, values, hooks, runs) is removed by `continueRemoval`, a bounded
   * amount per call: what does not fit, or fails (a state machine that cannot be deleted), stays
   * recorded and is finished by the next call (the watchdog, or a retried account deletion).
   * Returns whether everything is gone.
   */
  async remove(flow: FlowRecord, budgetMs = REMOVAL_BUDGET_MS): Promise<boolean> {
    for (const s of await this.platform.flows.listSchedules(flow.uid)) await removeSchedule(this.platform, s);
    const removal: FlowRemovalRecord = { blueprintUid: flow.uid, ownerUid: flow.ownerUid, flowId: flow.flowId, requestedAt: this.platform.clock.now().toISOString() };
    await this.platform.flows.putFlowRemoval(removal);
    await this.platform.flows.deleteFlow(flow);
    try {
      return await this.continueRemoval(removal, budgetMs);
    } catch (e) {
      // Recorded (with the reason) for the next attempt; the flow itself is gone already.
      this.platform.logger.error('flow removal stopped; it is recorded and resumes later', { flowId: flow.flowId, blueprintUid: flow.uid, error: (e as Error).message });
      return false;
    }
  }

  /**
   * Removes what is left of a flow whose record is gone, for at most about `budgetMs` (a batch of
   * runs may run over by one batch). A state machine that cannot be deleted stops the removal
   * with that error (recorded on the removal, then thrown): its version record stays, so the next
   * attempt tries again rather than forgetting it.
   */
  async continueRemoval(removal: FlowRemovalRecord, budgetMs = REMOVAL_BUDGET_MS): Promise<boolean> {
    const deadline = this.platform.clock.now().getTime() + budgetMs;
    const uid = removal.blueprintUid;
    try {
      for (const v of await this.platform.flows.listFlowVersions(uid)) {
        if (v.executable) await this.platform.flowExecutor.discard(v.executable);
        await this.platform.flows.deleteFlowVersion(uid, v.version);
      }
      await this.platform.flows.deleteMaskedValues(uid);
      for (const hook of await this.platform.flows.listHooks(uid)) await this.platform.flows.deleteHook(uid, hook.id);
      let after: string | undefined;
      for (let i = 0; i < 10_000; i++) {
        if (this.platform.clock.now().getTime() >= deadline) return false;
        const batch = await this.platform.flows.listRuns(uid, { after, batch: REMOVAL_RUN_BATCH });
        for (const { item } of batch.items) await this.platform.flows.deleteRun(item.id);
        const last = batch.items[batch.items.length - 1];
        if (!batch.more || !last) {
          // The listing is an index that may lag behind the deletions: done when it shows none.
          if (after === undefined) break;
          after = undefined;
          continue;
        }
        after = last.cursor;
      }
      await this.platform.flows.deleteFlowRemoval(removal.ownerUid, uid);
      return true;
    } catch (e) {
      await this.platform.flows.putFlowRemoval({ ...removal, lastError: String((e as Error).message ?? e).slice(0, 1_000) }).catch(() => {});
      throw e;
    }
  }

  /**
   * Removals still recorded (all, or an owner's): each continued within what is left of the
   * budget. Errors are thrown when `strict` (an account deletion must not end with a flow's state
   * machines left), else logged and left for the next sweep.
   */
  async continueRemovals(ownerUid: string | null, budgetMs = REMOVAL_BUDGET_MS, strict = false): Promise<{ finished: number; left: number }> {
    const deadline = this.platform.clock.now().getTime() + budgetMs;
    let finished = 0;
    let left = 0;
    let after: string | undefined;
    for (let i = 0; i < 100; i++) {
      const batch = await this.platform.flows.listFlowRemovals(ownerUid, { after, batch: 25 });
      for (const { item } of batch.items) {
        const remaining = deadline - this.platform.clock.now().getTime();
        if (remaining <= 0) {
          left++;
          continue;
        }
        try {
          if (await this.continueRemoval(item, remaining)) finished++;
          else left++;
        } catch (e) {
          left++;
          if (strict) throw e;
          this.platform.logger.error('flow removal failed; it resumes at the next sweep', { flowId: item.flowId, blueprintUid: item.blueprintUid, error: (e as Error).message });
        }
      }
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) break;
      after = last.cursor;
    }
    return { finished, left };
  }

  /**
   * Removes every flow an account owns (the account is being deleted), and finishes the removals
   * recorded for it. A state machine that cannot be deleted fails the deletion (a retry goes on
   * from there); work that does not fit this request answers 503, and a retry (or the watchdog)
   * finishes it.
   */
  async removeAllOf(ownerUid: string): Promise<void> {
    const deadline = this.platform.clock.now().getTime() + REMOVAL_BUDGET_MS;
    for (let i = 0; i < 1_000; i++) {
      const batch = await this.platform.flows.listFlows(ownerUid, { batch: 100 });
      if (batch.items.length === 0) break;
      for (const { item } of batch.items) await this.remove(item, 0);
    }
    const { left } = await this.continueRemovals(ownerUid, Math.max(0, deadline - this.platform.clock.now().getTime()), true);
    if (left > 0) {
      throw new ServiceUnavailableError(`The account's flows are still being removed (${left} left, with their runs); send the deletion again in a minute to finish it.`);
    }
  }
}
