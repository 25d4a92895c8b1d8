/**
 * Container role `sparql-loader` (see main.ts): the Node side of one SPARQL host task (issue 19,
 * lib/constructs/sparql-hosts.ts). Beside it the `virtuoso` container (the openlink image) serves
 * SPARQL on VIRTUOSO_HTTP_PORT; this container
 *
 * 1. waits until that Virtuoso answers on 127.0.0.1 (containers of a task share the loopback)
 *    and takes updates (the image runs its initdb grant after it starts answering);
 * 2. loads the service's snapshot from the data bucket into it with the SPARQL-protocol engine's
 *    loader (reasoning materialised for `jena` services) and records the host on the service
 *    (endpoint `http://<task IP>:<port>/sparql`, the snapshot's stored graph names) through the
 *    service lifecycle, which swaps it in and stops the host it replaces;
 * 3. stays up, checking every SPARQL_HOST_WATCH_MS (60 s) that it is still its service's host: a
 *    host that is not (service stopped, deleted with its dataset, synced past it) exits 0, which
 *    stops the task (this container is essential). SIGTERM (StopTask) ends it at once.
 *
 * Fails (exit 1, the task stops, the service records why at once) when Virtuoso never answers or
 * takes no updates, or the load fails. RunTask's overrides name the service: SPARQL_HOST_DATASET_ID, SPARQL_HOST_SERVICE_ID
 * (SPARQL_HOST_MANIFEST_KEY is informative: the lifecycle loads the service's current target).
 */
import { awsLogger, awsServices } from '../composition/aws.js';
import { ENV } from '../env-names.js';
import { hostLoad, virtuosoEndpoints, waitForSparql } from '../adapters/common/sparql-protocol/host-loader.js';

/** How long Virtuoso may take to answer after the task starts (it creates its database first). */
const VIRTUOSO_START_MS = 10 * 60_000;
const DEFAULT_WATCH_MS = 60_000;

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: RunTask's overrides name the service this host loads`);
  return value;
}

/** The task's ARN and private IPv4 address, from the ECS task metadata endpoint (v4). */
async function taskIdentity(): Promise<{ arn: string; ip: string }> {
  const base = process.env.ECS_CONTAINER_METADATA_URI_V4;
  if (!base) throw new Error('ECS_CONTAINER_METADATA_URI_V4 is not set: the loader runs in an ECS task');
  const res = await fetch(`${base}/task`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`the task metadata endpoint answered ${res.status}`);
  const task = (await res.json()) as { TaskARN?: string; Containers?: { Networks?: { IPv4Addresses?: string[] }[] }[] };
  const ip = task.Containers?.flatMap((c) => c.Networks ?? []).flatMap((n) => n.IPv4Addresses ?? [])[0];
  if (!task.TaskARN || !ip) throw new Error('the task metadata names no task ARN or IPv4 address');
  return { arn: task.TaskARN, ip };
}

const PROBE_GRAPH = '<urn:x-platform:readiness-probe>';

/**
 * Waits until Virtuoso takes SPARQL updates: its image answers queries before its `/initdb.d`
 * scripts (the SPARQL_UPDATE grant) have run, and a load started then fails with SR186
 * ("No permission to execute procedure"). Probes with an insert into a graph of its own, then
 * drops it; bounded by `timeoutMs`.
 */
async function waitForUpdates(endpoint: string, timeoutMs: number, stopping: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const update = (text: string) =>
    fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ update: text }),
      signal: AbortSignal.timeout(10_000),
    }).then(async (res) => ({ ok: res.ok, text: await res.text() }));
  let last = '';
  for (let attempt = 0; attempt < 100_000 && !stopping(); attempt++) {
    try {
      const res = await update(`INSERT DATA { GRAPH ${PROBE_GRAPH} { ${PROBE_GRAPH} ${PROBE_GRAPH} "ready" } }`);
      if (res.ok) {
        await update(`DROP SILENT GRAPH ${PROBE_GRAPH}`);
        return;
      }
      last = res.text.slice(0, 300);
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  if (stopping()) throw new Error('the task is stopping');
  throw new Error(`Virtuoso at ${endpoint} did not take SPARQL updates within ${timeoutMs} ms (its initdb grant): ${last}`);
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

export async function run(_args: string[]): Promise<void> {
  const datasetId = required(ENV.sparqlHostDatasetId);
  const serviceId = required(ENV.sparqlHostServiceId);
  const port = positive(ENV.virtuosoHttpPort, 8890);
  const watchMs = positive(ENV.sparqlHostWatchMs, DEFAULT_WATCH_MS);

  let stopping = false;
  let wake: (() => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    awsLogger.info('sparql host stopping', { signal });
    stopping = true;
    wake?.();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const { arn, ip } = await taskIdentity();
    const local = virtuosoEndpoints(`http://127.0.0.1:${port}`);
    const services = await awsServices();
    const lifecycle = services.sparqlServices;
    try {
      await waitForSparql(local.queryEndpoint, { timeoutMs: VIRTUOSO_START_MS, gone: () => (stopping ? 'the task is stopping' : null) });
      await waitForUpdates(local.queryEndpoint, VIRTUOSO_START_MS, () => stopping);
    } catch (e) {
      // Tell the service now (a start ends in error, a sync keeps its old host) rather than leave
      // it waiting for the watchdog; a host stopped on purpose (StopTask) says nothing.
      if (!stopping) await lifecycle.hostFailed(datasetId, serviceId, arn, `The service's host did not start: ${(e as Error).message}`, true).catch(() => {});
      throw e;
    }
    const endpoint = `http://${ip}:${port}/sparql`;
    const started = Date.now();
    awsLogger.info('sparql host loading', { datasetId, serviceId, manifestKey: process.env[ENV.sparqlHostManifestKey] || null });
    const current = await lifecycle.runHost(datasetId, serviceId, arn, endpoint, hostLoad({ ...local, logger: awsLogger }));
    if (!current) {
      awsLogger.info('sparql host not wanted (the service stopped or moved on): exiting', { serviceId });
      return;
    }
    awsLogger.info('sparql host running', { serviceId, loadMs: Date.now() - started });
    // Bounded only by the task's life: one check per interval until the host is not the service's.
    for (let round = 0; !stopping && round < Number.MAX_SAFE_INTEGER; round++) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, watchMs);
      });
      if (stopping) break;
      const still = await lifecycle.hostIsCurrent(datasetId, serviceId, arn).catch((e: unknown) => {
        awsLogger.warn('checking the service failed; trying again later', { error: e });
        return true;
      });
      if (!still) {
        awsLogger.info('sparql host is no longer its service\'s: exiting', { serviceId });
        return;
      }
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
