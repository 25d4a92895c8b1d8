/**
 * Shared settings for the property-based (fast-check) hostile-input tests: one fixed seed so a
 * failure replays the same inputs, bounded run counts, and a watch on the event loop of this
 * process (the embedded platform runs in it, so a request that blocks the loop shows here).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Every fuzz test uses this seed (fast-check prints it with a counterexample). */
export const FUZZ_SEED = 20261124;

/**
 * Longest the event loop may stay blocked while hostile inputs are handled. Generous (a loaded
 * two-core CI machine), but far below what the attacks did (15 s to minutes): it catches a freeze,
 * not a slow request.
 */
export const MAX_EVENT_LOOP_BLOCK_MS = 2_000;

export interface EventLoopWatch {
  /** Longest single stall of the event loop since the watch started, in ms. */
  maxBlockMs(): number;
  stop(): number;
}

/** Starts measuring how long the event loop stays blocked (resolution 10 ms). */
export function watchEventLoop(): EventLoopWatch {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const maxBlockMs = () => histogram.max / 1e6;
  return {
    maxBlockMs,
    stop() {
      histogram.disable();
      return maxBlockMs();
    },
  };
}
