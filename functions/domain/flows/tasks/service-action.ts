/**
 * Service action: starts (creating it when missing), stops or syncs a service of a dataset, and
 * waits until it runs, polling through the Clock port.
 */
import { NotFoundError } from '../../shared/errors.js';
import { isOutOfSync, serviceTypeOf, type ServiceRecord } from '../../sparql/service-types.js';
import { datasetRef } from './settings-reader.js';
import { datasetOf, substituted, TaskFailure, type TaskContext, type TaskServices } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

/** Service actions wait at most this long for the service to run, unless the Timeout is shorter. */
const SERVICE_WAIT_SECONDS = 600;
const SERVICE_POLL_MS = 250;

export const serviceAction: TaskTypeDefinition = {
  type: 'serviceAction',
  title: 'Service action',
  kind: 'data',
  check(s) {
    datasetRef(s, 'dataset', true);
    s.text('service', { required: true, what: 'the service name' });
    s.choice('action', ['start', 'stop', 'sync'] as const, { required: true });
    s.choice('serviceType', ['Sparql', 'RichSparql', 'textSearch'] as const);
    s.finish();
  },
  async run(ctx, services) {
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset');
    const name = substituted(ctx, ctx.settings.service).trim();
    if (!name) throw new TaskFailure('service: the service name is empty; check the variables it uses.');
    const action = String(ctx.settings.action) as 'start' | 'stop' | 'sync';
    const serviceType = ctx.settings.serviceType === undefined ? undefined : String(ctx.settings.serviceType);
    const manager = services.sparql;
    // Reading the dataset first: a missing or unreadable dataset fails here, a missing service below.
    const { dataset: record } = await services.access.readableDataset(ctx.caller, account, dataset);
    const existing = await manager.get(ctx.caller, account, dataset, name).then(
      (found) => found.service,
      (e: unknown) => {
        if (e instanceof NotFoundError) return null;
        throw e;
      },
    );
    const label = `service "${name}" of ${account}/${dataset}`;
    if (!existing) {
      if (action !== 'start') throw new TaskFailure(`Cannot ${action} the ${label}: it does not exist.`);
      await manager.create(ctx.caller, account, dataset, { name, type: serviceType ?? 'Sparql' });
      ctx.log(`Created the ${label} (${serviceType ?? 'Sparql'}).`);
    } else if (action === 'sync' && !isOutOfSync(existing, record.graphsManifest)) {
      ctx.log(`The ${label} already serves the dataset's current data.`);
    } else {
      if (serviceType && serviceTypeOf(serviceType) !== existing.type) ctx.log(`The ${label} is of type ${existing.type}; the task's type ${serviceType} applies only when it creates the service.`);
      await manager.act(ctx.caller, account, dataset, name, action);
      ctx.log(`${action === 'stop' ? 'Stopped' : action === 'start' ? 'Starting' : 'Syncing'} the ${label}.`);
    }
    if (action === 'stop') return { service: name, status: 'stopped' };
    const service = await untilSettled(ctx, services, account, dataset, name, label);
    if (service.status !== 'running') {
      throw new TaskFailure(`The ${label} did not ${action}: ${service.error?.message ?? `it is ${service.status}`}.`);
    }
    // A failed sync leaves the service running on its old data.
    if (action === 'sync' && service.snapshot.manifestKey !== (record.graphsManifest ?? null) && service.error) {
      throw new TaskFailure(`The ${label} did not sync: ${service.error.message}`);
    }
    ctx.log(`The ${label} is running.`);
    return { service: name, status: service.status };
  },
};

/** Polls a service until it is no longer starting or updating (bounded by the Timeout). */
async function untilSettled(ctx: TaskContext, services: TaskServices, account: string, dataset: string, name: string, label: string): Promise<ServiceRecord> {
  const seconds = Math.min(ctx.timeoutSeconds ?? SERVICE_WAIT_SECONDS, SERVICE_WAIT_SECONDS);
  const { clock } = services.platform;
  const deadline = clock.now().getTime() + seconds * 1000;
  for (;;) {
    const { service } = await services.sparql.get(ctx.caller, account, dataset, name);
    if (service.status !== 'starting' && service.status !== 'updating') return service;
    if (clock.now().getTime() >= deadline) throw new TaskFailure(`The ${label} is still ${service.status} after ${seconds} s.`);
    await clock.sleep(SERVICE_POLL_MS);
  }
}
