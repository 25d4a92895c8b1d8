/**
 * Services whose host ended on its own (issue 19): a SPARQL host task that died before it reported
 * would leave its service `starting` forever, and one that died after it, `running` but unreachable.
 * The watchdog asks the hosts about every service's host and pending host; the embedded hosts tell
 * at once when their virtuoso-t exits (HostReporter.lost). Either way `lost` settles the service.
 * A service whose launch never happened (no pending host after LAUNCH_GRACE_MS) is settled too.
 */
import type { Platform } from '../shared/platform.js';
import type { ServiceLifecycle } from './service-lifecycle.js';

/**
 * A service `starting` (or `updating`) with no pending host was never launched: its load request
 * was lost (the worker's asynchronous invocation is kept at most an hour, then dropped). After this
 * long it is settled like a host that ended.
 */
export const LAUNCH_GRACE_MS = 90 * 60_000;

export class HostWatchdog {
  constructor(
    private readonly platform: Platform,
    private readonly lifecycle: Pick<ServiceLifecycle, 'hostFailed'>,
  ) {}

  /**
   * The host `ref` of a service ended (`reason`: how). A pending host that ended is a failed start
   * (error) or sync (back to the old host); a service running on it goes to error. A service whose
   * host and pending host are other ones is left alone.
   */
  async lost(datasetId: string, serviceId: string, ref: string, reason: string): Promise<void> {
    const service = (await this.platform.store.listServices(datasetId)).find((s) => s.id === serviceId);
    if (!service) return;
    const pending = service.pendingHost?.ref === ref;
    if (!pending && service.host?.ref !== ref) return;
    this.platform.logger.warn('a SPARQL service\'s host ended on its own', { datasetId, serviceId, ref, pending, reason });
    const message = pending
      ? `The service's host ended before it had loaded the data (${reason}).`
      : `The service's host ended (${reason}); the service answers queries again once started (POST {"start": true}).`;
    await this.lifecycle.hostFailed(datasetId, serviceId, ref, message, true);
  }

  /**
   * The watchdog's sweep (for a scheduled worker): every service with a host or pending host asks
   * the hosts whether it still runs, until `deadline` (epoch ms). A host that cannot be asked now
   * (a throttled DescribeTasks) is asked again next sweep. Nothing to do without hosts.
   */
  async sweep(deadline: number): Promise<{ hosts: number; lost: number }> {
    let hosts = 0;
    let lost = 0;
    const serviceHosts = this.platform.serviceHosts;
    if (!serviceHosts) return { hosts, lost };
    let after: string | undefined;
    for (let round = 0; round < 10_000 && this.platform.clock.now().getTime() < deadline; round++) {
      const batch = await this.platform.store.listDatasets(null, { after, batch: 100 });
      for (const { item: dataset } of batch.items) {
        for (const service of await this.platform.store.listServices(dataset.id)) {
          for (const ref of [service.pendingHost?.ref, service.host?.ref]) {
            if (!ref) continue;
            hosts++;
            let reason: string | undefined;
            try {
              reason = await serviceHosts.stopped(ref);
            } catch (e) {
              this.platform.logger.warn('asking about a SPARQL service\'s host failed', { serviceId: service.id, ref, error: (e as Error)?.message ?? String(e) });
              continue;
            }
            if (reason === undefined) continue;
            lost++;
            await this.lost(dataset.id, service.id, ref, reason);
          }
          const waiting = service.status === 'starting' || service.status === 'updating';
          const since = this.platform.clock.now().getTime() - Date.parse(service.updatedAt);
          if (waiting && !service.pendingHost && serviceHosts.serves(service.type) && since > LAUNCH_GRACE_MS) {
            lost++;
            this.platform.logger.warn('a SPARQL service\'s host was never launched', { datasetId: dataset.id, serviceId: service.id, status: service.status });
            const message = `The service's host was never started (nothing launched it within ${LAUNCH_GRACE_MS / 60_000} minutes); start it again (POST {"start": true}).`;
            await this.lifecycle.hostFailed(dataset.id, service.id, null, message);
          }
        }
      }
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) break;
      after = last.cursor;
    }
    return { hosts, lost };
  }
}
