/**
 * A data upload hook's waiting run. Its execution waits at the compiled `upload.wait` state until
 * the upload ends: the task worker records the wait's task token on the run, the hook records the
 * outcome (the graph the run is for, or why there is none), and whichever comes second hands the
 * outcome to the executor (`FlowExecutor.release`), on AWS and embedded alike. Each side sets only
 * its own attribute, atomically, and reads the run as that update left it: on AWS the two sides
 * run in different functions at the same moment, and a whole-record write from a stale read would
 * erase the other side's (a run then waited forever).
 */
import type { RunRecord } from '../records.js';
import type { Platform } from '../../shared/platform.js';
import { TaskFailure } from '../tasks/task-context.js';

/** How a data upload hook's waiting run goes on: with the graph it is for, or aborted. */
export type UploadOutcome = { graph: string } | { none: string };

export class UploadWaits {
  /** Per run, the two sides take turns within one process, so neither write undoes the other's. */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(private readonly platform: Platform) {}

  /** Ends a run's wait for its upload: on with the graph it is for, or aborted with the reason. */
  release(run: RunRecord, outcome: UploadOutcome): Promise<void> {
    return this.inTurn(run.id, () => this.recordOutcome(run, outcome));
  }

  /**
   * The `upload.wait` state reached the worker with its task token: recorded on the run, and if
   * the upload already ended, its outcome is delivered right away.
   */
  tokenReceived(runId: string, taskToken: string): Promise<void> {
    return this.inTurn(runId, () => this.recordToken(runId, taskToken));
  }

  private async recordOutcome(run: RunRecord, outcome: UploadOutcome): Promise<void> {
    // One attribute, set atomically: the run as stored afterwards shows the token if the worker
    // recorded it first, and then this side delivers.
    const recorded = await this.platform.flows.patchRun(run.id, { uploadOutcome: outcome });
    if (recorded) await this.deliver(recorded);
  }

  private async recordToken(runId: string, taskToken: string): Promise<void> {
    const recorded = await this.platform.flows.patchRun(runId, { uploadTaskToken: taskToken });
    if (!recorded) {
      if (!(await this.platform.flows.getRun(runId))) throw new TaskFailure(`Run ${runId} does not exist.`);
      return;
    }
    // An outcome recorded before the token is delivered now (else the hook delivers it later).
    await this.deliver(recorded);
  }

  /** Hands a known upload outcome to the execution waiting with the recorded token. */
  private async deliver(run: RunRecord): Promise<void> {
    const outcome = run.uploadOutcome;
    if (!outcome || !run.uploadTaskToken) return;
    await this.platform.flowExecutor.release(
      run.uploadTaskToken,
      'graph' in outcome ? { output: { system_uploadedGraphIRI: outcome.graph } } : { error: 'Flow.aborted', cause: outcome.none },
    );
  }

  private inTurn(runId: string, work: () => Promise<void>): Promise<void> {
    const turn = (this.turns.get(runId) ?? Promise.resolve()).then(work);
    const done = turn.catch(() => {});
    this.turns.set(runId, done);
    void done.then(() => {
      if (this.turns.get(runId) === done) this.turns.delete(runId);
    });
    return turn;
  }
}
