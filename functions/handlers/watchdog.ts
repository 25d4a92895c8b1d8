import middy from '@middy/core';
import { awsLambda, awsLogger, awsServices } from '../composition/aws.js';
import type { Services } from '../http/api.js';

/** Each sweep's share of one invocation (the worker's timeout leaves room for all of them). */
const SWEEP_BUDGET_MS = 60_000;

/**
 * The sweeps of the watchdog, each bounded and independent: flows (runs that stopped reporting,
 * unfinished flow removals), from the data side, import jobs that stopped reporting, and SPARQL
 * services whose host ended. One line each; the domain classes (flows/runs/watchdog.ts,
 * data/import-recovery.ts, sparql/host-watchdog.ts) say what they do.
 */
const SWEEPS: Record<string, (services: Services) => Promise<unknown>> = {
  flows: (services) => services.flowWatchdog.sweep(SWEEP_BUDGET_MS),
  // Import jobs whose worker was cut off end in error; superseded graph blobs past their grace go.
  // Needs: table RW, data and uploads buckets RW (graph trash, the job's uploads), upload events.
  imports: (services) => services.imports.endStalledJobs(Date.now() + SWEEP_BUDGET_MS),
  // SPARQL services whose host task stopped (or ECS no longer knows it) leave starting/running.
  // Needs: table RW, serviceHosts 'describe' (DescribeTasks in the cluster).
  serviceHosts: (services) => services.hostWatchdog.sweep(Date.now() + SWEEP_BUDGET_MS),
};

/**
 * Lambda entry of the watchdog worker, invoked on a schedule (an EventBridge rule every few
 * minutes; the event itself carries nothing used). Work past one function's time on AWS must
 * not strand state: the sweeps settle what stopped reporting and finish what was left. A failed
 * sweep is logged and does not stop the others; the next invocation tries again.
 */
const base = async (): Promise<Record<string, unknown>> => {
  const services = await awsServices();
  const summary: Record<string, unknown> = {};
  for (const [name, sweep] of Object.entries(SWEEPS)) {
    try {
      summary[name] = await sweep(services);
    } catch (e) {
      awsLogger.error('watchdog: a sweep failed', { sweep: name, error: (e as Error).message });
      summary[name] = { failed: (e as Error).message };
    }
  }
  awsLogger.info('watchdog: swept', { summary });
  return summary;
};

export const handler = middy<unknown, Record<string, unknown>>(base).use(awsLambda.middlewares);
