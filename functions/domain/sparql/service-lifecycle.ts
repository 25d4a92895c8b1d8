import type { EngineQuery, SparqlStore } from '../../ports/sparql-engine.js';
import type { HostLoad, ServiceHost, ServiceHosts } from '../../ports/service-hosts.js';
import type { AccessService } from '../datasets/access-service.js';
import type { Caller } from '../shared/caller.js';
import type { DatasetRecord } from '../datasets/datasets.js';
import { ConflictError, NotFoundError, ServiceUnavailableError, ValidationError } from '../shared/errors.js';
import type { GraphCatalog } from '../data/graph-catalog.js';
import { manifestTotals } from '../data/graphs.js';
import { applyDatasetUpdate } from './dataset-update.js';
import { countServices } from './service-count.js';
import { changedInPlace, changedOrOpened } from './snapshot-change.js';
import type { Platform, PlatformSettings } from '../shared/platform.js';
import {
  assertServiceName,
  isOutOfSync,
  type OtherServiceTypes,
  reasonerOf,
  type ServiceRecord,
  type ServiceSnapshot,
  type ServiceType,
  serviceTypeOf,
} from './service-types.js';

/** Statements one embedded store holds (oxigraph in WASM: about 12 million), query timeout, threads per service. */
export type ServiceLimits = PlatformSettings['sparql'];

const MAX_SERVICES_PER_DATASET = 10;
const MAX_RETRIES = 8;
/** Attached host snapshots a warm process keeps (by snapshot id). */
const MAX_ATTACHED = 16;

interface Loaded {
  manifestKey: string | null;
  store: Promise<SparqlStore>;
}

/**
 * SPARQL services of datasets. A service serves a snapshot (one manifest of its dataset); an
 * import moves the dataset on and the service reports outOfSync until synced. Loaded stores live
 * in this process (the embedded platform, or a warm SPARQL function); a sync loads the new
 * snapshot beside the old one and swaps when it is complete, so no query sees half a load.
 *
 * Services on hosts (issue 19; `platform.serviceHosts`, for the types it serves): a start
 * launches a host for the snapshot and records it as the pending host; the host loads the
 * snapshot (`runHost`) and is recorded as the service's host, and queries attach to it (cached
 * per process by snapshot id; nothing is loaded per request). A sync launches a second host and
 * swaps when it has loaded, then stops the old one (blue/green); stop, restart and delete stop
 * the host; a host that fails leaves the service in error (or on its old host, after a sync).
 */
export class ServiceLifecycle {
  private readonly loaded = new Map<string, Loaded>();
  /** Stores of datasets' own endpoints, by manifest key (the last few only). */
  private readonly datasetStores = new Map<string, Promise<SparqlStore>>();
  /** Stores attached to hosts' snapshots, by snapshot id. */
  private readonly attached = new Map<string, Promise<SparqlStore>>();

  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
    private readonly catalog: GraphCatalog,
    private readonly limits: ServiceLimits,
    /** Types another context serves (text search): it builds and drops what their snapshots become. */
    private readonly others?: OtherServiceTypes,
  ) {}

  private now(): string {
    return this.platform.clock.now().toISOString();
  }

  private async service(dataset: DatasetRecord, name: string, label: string): Promise<ServiceRecord> {
    const service = await this.platform.store.getService(dataset.id, name);
    if (!service) throw new NotFoundError(`Service "${name}" does not exist in ${label}.`);
    return service;
  }

  async list(caller: Caller | null, account: string, datasetName: string) {
    const { dataset, owner } = await this.access.readableDataset(caller, account, datasetName);
    const services = await this.platform.store.listServices(dataset.id);
    return { dataset, owner, services: services.sort((a, b) => a.createdAt.localeCompare(b.createdAt)) };
  }

  async get(caller: Caller | null, account: string, datasetName: string, name: string) {
    const { dataset, owner } = await this.access.readableDataset(caller, account, datasetName);
    return { dataset, owner, service: await this.service(dataset, name, `${account}/${datasetName}`) };
  }

  private snapshotOf(dataset: DatasetRecord, options: { external: boolean; type?: ServiceType } = { external: true }): ServiceSnapshot {
    const snapshot = { manifestKey: dataset.graphsManifest ?? null, statements: dataset.statements, graphCount: dataset.graphCount };
    // A host is sized for its service (see the container table), not bound by the embedded store.
    const tooLarge = options.type && this.hostsFor(options.type) ? null : this.tooLarge(snapshot.statements, options);
    if (tooLarge) throw new ValidationError(tooLarge);
    return snapshot;
  }

  /** The hosts services of this type run on here, if any. */
  private hostsFor(type: ServiceType): ServiceHosts | undefined {
    const hosts = this.platform.serviceHosts;
    return hosts?.serves(type) ? hosts : undefined;
  }

  /**
   * Why a snapshot of `statements` cannot be served here, or null when it can: the embedded store
   * holds `maxStatements` at most (on AWS: what a SPARQL function loads in time; see config.ts).
   */
  private tooLarge(statements: number, options: { external: boolean } = { external: true }): string | null {
    if (statements <= this.limits.maxStatements || (options.external && this.platform.externalEngine)) return null;
    return (
      `The dataset has ${statements} statements, more than the ${this.limits.maxStatements} a SPARQL store of this deployment loads; ` +
      'use an external SPARQL engine (Amazon Neptune or Virtuoso) for a dataset this large.'
    );
  }

  async create(caller: Caller | null, account: string, datasetName: string, input: { name: unknown; type?: string; config?: { reasonerType?: string; reasoner?: string } }) {
    const { dataset, owner } = await this.access.writableDataset(caller, account, datasetName, 'start services');
    const name = assertServiceName(input.name);
    const type = serviceTypeOf(input.type);
    const reasoner = reasonerOf(type, input.config);
    const existing = await this.platform.store.listServices(dataset.id);
    if (existing.length >= MAX_SERVICES_PER_DATASET) throw new ValidationError(`A dataset has at most ${MAX_SERVICES_PER_DATASET} services.`);
    const now = this.now();
    const service: ServiceRecord = {
      id: this.platform.ids.newId(),
      datasetId: dataset.id,
      name,
      type,
      reasoner,
      status: 'starting',
      snapshot: this.snapshotOf(dataset, { external: true, type }),
      ...(this.others?.serves(type) ? this.others.configure(input.config) : {}),
      createdAt: now,
      updatedAt: now,
    };
    await this.platform.store.createService(service);
    await countServices(this.platform, dataset.id);
    await this.platform.tasks.enqueueServiceLoad(dataset.id, service.id);
    return { dataset, owner, service };
  }

  /** Writes a change to the service, re-reading and retrying when it changed meanwhile. */
  private async change(datasetId: string, serviceId: string, apply: (s: ServiceRecord) => ServiceRecord | null): Promise<ServiceRecord | null> {
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      const current = (await this.platform.store.listServices(datasetId)).find((s) => s.id === serviceId);
      if (!current) return null;
      const next = apply(current);
      if (!next) return current;
      try {
        await this.platform.store.replaceService({ ...next, updatedAt: this.now() }, current.updatedAt);
        return next;
      } catch (e) {
        if (!(e instanceof ConflictError)) throw e;
      }
    }
    throw new ConflictError('The service is changing too often right now; retry.');
  }

  /**
   * Background: loads the service's snapshot (or the pending one of a sync) and marks it running.
   * With `warm` false (a function that does not serve queries) it only checks and marks; the
   * SPARQL function then loads the snapshot on its first query.
   */
  async prepare(datasetId: string, serviceId: string, options: { warm: boolean }): Promise<void> {
    const service = (await this.platform.store.listServices(datasetId)).find((s) => s.id === serviceId);
    if (!service || (service.status !== 'starting' && service.status !== 'updating')) return;
    if (this.others?.serves(service.type)) return this.others.prepare(service, (apply) => this.change(datasetId, serviceId, apply));
    const hosts = this.hostsFor(service.type);
    if (hosts) return this.launchHost(hosts, service);
    const target = service.pendingSnapshot ?? service.snapshot;
    try {
      // Refused before anything is marked running: a SPARQL function could not load it in time.
      const tooLarge = this.tooLarge(target.statements);
      if (tooLarge) throw new Error(tooLarge);
      let statements = target.statements;
      if (options.warm) {
        const previous = this.loaded.get(service.id);
        // A sync applies what changed to the loaded store when it can (snapshot-change.ts).
        const inPlace = await changedInPlace(this.catalog, previous, service, target.manifestKey, this.limits.maxStatements, this.platform.logger);
        const store = inPlace ?? (await this.open(service, target.manifestKey));
        statements = store.statements;
        this.loaded.set(service.id, { manifestKey: target.manifestKey, store: Promise.resolve(store) });
        if (previous && previous.manifestKey !== target.manifestKey && !inPlace) void previous.store.then((s) => s.close()).catch(() => {});
      }
      const oldSnapshot = service.snapshot;
      await this.change(datasetId, serviceId, (s) => ({
        ...s,
        status: 'running',
        snapshot: s.pendingSnapshot ?? s.snapshot,
        pendingSnapshot: undefined,
        loadedAt: this.now(),
        loadedStatements: statements,
        error: undefined,
      }));
      if (oldSnapshot.manifestKey !== target.manifestKey) await this.catalog.collect(datasetId, await this.catalog.manifestAt(oldSnapshot.manifestKey));
    } catch (e) {
      this.platform.logger.error('loading a service failed', { serviceId, error: e });
      await this.change(datasetId, serviceId, (s) => ({
        ...s,
        status: service.status === 'updating' ? 'running' : 'error',
        pendingSnapshot: undefined,
        error: { message: `Loading the data failed: ${(e as Error).message}` },
      }));
    }
  }

  /** Starts a host for the service's target snapshot and records it as the pending host. */
  private async launchHost(hosts: ServiceHosts, service: ServiceRecord): Promise<void> {
    // A retried task (Lambda retries async invocations): the host is already on its way.
    if (service.pendingHost) return;
    const target = service.pendingSnapshot ?? service.snapshot;
    let ref: string;
    try {
      ref = await hosts.launch({
        datasetId: service.datasetId,
        serviceId: service.id,
        type: service.type,
        reasoner: service.reasoner,
        manifestKey: target.manifestKey,
        statements: target.statements,
      });
    } catch (e) {
      this.platform.logger.error('starting a service host failed', { serviceId: service.id, error: e });
      await this.hostFailed(service.datasetId, service.id, null, `Starting the service's host failed: ${(e as Error).message}`);
      return;
    }
    const launchedAt = this.now();
    const recorded = await this.change(service.datasetId, service.id, (s) => {
      // Already loaded and recorded (a fast host), or no longer wanted (stopped meanwhile).
      if (s.host?.ref === ref || (s.status !== 'starting' && s.status !== 'updating') || s.pendingHost) return null;
      return { ...s, pendingHost: { ref, launchedAt } };
    });
    if (recorded?.pendingHost?.ref !== ref && recorded?.host?.ref !== ref) await this.stopHost(ref);
  }

  private async stopHost(ref: string | undefined): Promise<void> {
    if (!ref || !this.platform.serviceHosts) return;
    await this.platform.serviceHosts.stop(ref).catch((e: unknown) => this.platform.logger.error('stopping a service host failed', { ref, error: e }));
  }

  /**
   * Run by a host (HostReporter.run): loads the service's target snapshot with `load`, records the
   * host as the service's (running, the snapshot swapped in) and stops the host it replaces.
   * Resolves false when this host is not (or no longer) wanted; rejects, after recording the
   * failure on the service, when loading failed.
   */
  async runHost(datasetId: string, serviceId: string, ref: string, endpoint: string, load: HostLoad): Promise<boolean> {
    const service = (await this.platform.store.listServices(datasetId)).find((s) => s.id === serviceId);
    const wanted = (s: ServiceRecord | undefined): s is ServiceRecord =>
      !!s && (s.status === 'starting' || s.status === 'updating') && (!s.pendingHost || s.pendingHost.ref === ref);
    if (!wanted(service)) return false;
    const target = service.pendingSnapshot ?? service.snapshot;
    let hosted;
    try {
      const manifest = await this.catalog.manifestAt(target.manifestKey);
      hosted = await load({ statements: manifestTotals(manifest).statements, chunks: () => this.catalog.nquads(manifest) }, service.reasoner);
    } catch (e) {
      await this.hostFailed(datasetId, serviceId, ref, `Loading the data failed: ${(e as Error).message}`);
      throw e;
    }
    let replaced: ServiceHost | undefined;
    let accepted = false;
    const loadedAt = this.now();
    await this.change(datasetId, serviceId, (s) => {
      accepted = wanted(s) && (s.pendingSnapshot ?? s.snapshot).manifestKey === target.manifestKey;
      if (!accepted) return null;
      replaced = s.host;
      return {
        ...s,
        status: 'running',
        snapshot: s.pendingSnapshot ?? s.snapshot,
        pendingSnapshot: undefined,
        host: { ref, endpoint, ...hosted },
        pendingHost: undefined,
        loadedAt,
        loadedStatements: hosted.statements,
        error: undefined,
      };
    });
    if (!accepted) return false;
    if (replaced && replaced.ref !== ref) await this.stopHost(replaced.ref);
    if (service.snapshot.manifestKey !== target.manifestKey) await this.catalog.collect(datasetId, await this.catalog.manifestAt(service.snapshot.manifestKey));
    return true;
  }

  /** Whether `ref` is still the service's host or pending host (HostReporter.current). */
  async hostIsCurrent(datasetId: string, serviceId: string, ref: string): Promise<boolean> {
    const service = (await this.platform.store.listServices(datasetId)).find((s) => s.id === serviceId);
    return !!service && (service.host?.ref === ref || service.pendingHost?.ref === ref);
  }

  /**
   * A host (`ref`; null: the launch) failed or ended (host-watchdog.ts): a start ends in error, a sync keeps its old
   * host; the service whose host it was is in error (a sync still loading carries on). Other services are left alone. */
  async hostFailed(datasetId: string, serviceId: string, ref: string | null, message: string, recorded = false): Promise<void> {
    await this.change(datasetId, serviceId, (s) => {
      if (ref !== null && s.host?.ref === ref) {
        if (s.status === 'updating' && s.pendingHost) return { ...s, host: undefined, error: { message } };
        return { ...s, status: 'error', host: undefined, pendingSnapshot: undefined, pendingHost: undefined, error: { message } };
      }
      if (s.status !== 'starting' && s.status !== 'updating') return null;
      // `recorded`: only while `ref` is still the pending host (a restart may have dropped it meanwhile).
      if (ref !== null && (recorded ? s.pendingHost?.ref !== ref : s.pendingHost && s.pendingHost.ref !== ref)) return null;
      const keepsOld = s.status === 'updating' && !!s.host;
      return { ...s, status: keepsOld ? 'running' : 'error', pendingSnapshot: undefined, pendingHost: undefined, error: { message } };
    });
  }

  /** Loads a snapshot: into the embedded engine, or the external one when it is too large. */
  private async open(service: Pick<ServiceRecord, 'reasoner'>, manifestKey: string | null, replicas = this.limits.replicas): Promise<SparqlStore> {
    const manifest = await this.catalog.manifestAt(manifestKey);
    const statements = manifestTotals(manifest).statements;
    const engine = statements > this.limits.maxStatements && this.platform.externalEngine ? this.platform.externalEngine : this.platform.engine;
    return engine.open({ statements, chunks: () => this.catalog.nquads(manifest) }, { reasoner: service.reasoner, replicas });
  }

  /** POST {sync|start|restart|stop: true}. */
  async act(caller: Caller | null, account: string, datasetName: string, name: string, action: 'sync' | 'start' | 'restart' | 'stop') {
    const { dataset, owner } = await this.access.writableDataset(caller, account, datasetName, 'manage services');
    const service = await this.service(dataset, name, `${account}/${datasetName}`);
    let next: ServiceRecord | null;
    if (action === 'sync') {
      if (!isOutOfSync(service, dataset.graphsManifest)) throw new ValidationError('Cannot sync a service that is not out of sync.');
      if (service.status === 'stopped' || service.status === 'error') throw new ConflictError(`The service is ${service.status}; start it first.`);
      const pending = this.snapshotOf(dataset, { external: true, type: service.type });
      // A host still loading an older target is dropped: a new one loads the newest.
      let dropped: string | undefined;
      next = await this.change(dataset.id, service.id, (s) => {
        dropped = s.pendingHost?.ref;
        return { ...s, status: 'updating', pendingSnapshot: pending, pendingHost: undefined };
      });
      await this.stopHost(dropped);
    } else if (action === 'stop') {
      const refs: (string | undefined)[] = [];
      next = await this.change(dataset.id, service.id, (s) => {
        refs.splice(0, refs.length, s.host?.ref, s.pendingHost?.ref);
        return { ...s, status: 'stopped', pendingSnapshot: undefined, host: undefined, pendingHost: undefined };
      });
      this.unload(service.id);
      if (this.others?.serves(service.type)) await this.others.release(service);
      for (const ref of refs) await this.stopHost(ref);
    } else {
      if (action === 'start' && service.status === 'running') return { dataset, owner, service };
      // A restart runs on a new host.
      const refs: (string | undefined)[] = [];
      next = await this.change(dataset.id, service.id, (s) => {
        refs.splice(0, refs.length, s.host?.ref, s.pendingHost?.ref);
        return { ...s, status: 'starting', pendingSnapshot: undefined, error: undefined, host: undefined, pendingHost: undefined };
      });
      this.unload(service.id);
      for (const ref of refs) await this.stopHost(ref);
    }
    if (next && next.status !== 'stopped') await this.platform.tasks.enqueueServiceLoad(dataset.id, service.id);
    return { dataset, owner, service: next ?? service };
  }

  private unload(serviceId: string): void {
    const loaded = this.loaded.get(serviceId);
    this.loaded.delete(serviceId);
    if (loaded) void loaded.store.then((s) => s.close()).catch(() => {});
  }

  async rename(caller: Caller | null, account: string, datasetName: string, name: string, newName: unknown) {
    const { dataset, owner } = await this.access.writableDataset(caller, account, datasetName, 'manage services');
    const service = await this.service(dataset, name, `${account}/${datasetName}`);
    const renamed = await this.platform.store.renameService(service, assertServiceName(newName), this.now());
    return { dataset, owner, service: renamed };
  }

  async delete(caller: Caller | null, account: string, datasetName: string, name: string): Promise<void> {
    const { dataset } = await this.access.writableDataset(caller, account, datasetName, 'delete services');
    const service = await this.service(dataset, name, `${account}/${datasetName}`);
    await this.platform.store.deleteService(dataset.id, service.name);
    this.unload(service.id);
    if (this.others?.serves(service.type)) await this.others.release(service);
    await this.stopHost(service.host?.ref);
    await this.stopHost(service.pendingHost?.ref);
    await countServices(this.platform, dataset.id);
    await this.catalog.collect(dataset.id, await this.catalog.manifestAt(service.snapshot.manifestKey));
  }

  async graphs(caller: Caller | null, account: string, datasetName: string, name: string) {
    const { service } = await this.get(caller, account, datasetName, name);
    const manifest = await this.catalog.manifestAt(service.snapshot.manifestKey);
    const status = service.status === 'running' || service.status === 'updating' ? 'loaded' : service.status === 'error' ? 'error' : 'notLoaded';
    return manifest.graphs.map((g) => ({ graphName: g.graphName, status, statements: g.numberOfStatements }));
  }

  /** Runs a query on a service the caller may read. */
  async query(caller: Caller | null, account: string, datasetName: string, name: string, request: Omit<EngineQuery, 'timeoutMs'>): Promise<string> {
    const { service } = await this.get(caller, account, datasetName, name);
    if (this.others?.serves(service.type)) throw new ValidationError(`Service "${name}" is a text search service; send queries to its search route.`);
    if (service.status !== 'running' && service.status !== 'updating') {
      throw new ServiceUnavailableError(`Service "${name}" is ${service.status}; it answers queries once it is running.`);
    }
    const hosts = this.hostsFor(service.type);
    if (hosts) {
      if (!service.host) {
        // A service running since before this deployment ran services on hosts has none: a restart gives it one.
        throw new ServiceUnavailableError(
          service.status === 'running' ? `Service "${name}" has no host; restart it (POST {"restart": true}).` : `Service "${name}" is still loading; it answers queries once it is running.`,
        );
      }
      return (await this.attach(hosts, service.host)).query({ ...request, timeoutMs: this.limits.queryTimeoutMs });
    }
    // Before loading: a snapshot over the limit would not load within the request's time.
    const tooLarge = this.tooLarge(service.snapshot.statements);
    if (tooLarge) throw new ServiceUnavailableError(tooLarge);
    let loaded = this.loaded.get(service.id);
    // During a sync the store may already hold the pending snapshot (swapped in before the record).
    if (!loaded || (loaded.manifestKey !== service.snapshot.manifestKey && loaded.manifestKey !== service.pendingSnapshot?.manifestKey)) {
      // First query in this process (a cold function, or after a restart): load the snapshot; a
      // store on an older one (a warm function after a sync) takes the change if it can.
      const store = changedOrOpened(this.catalog, loaded, service, this.limits.maxStatements, this.platform.logger, () => this.open(service, service.snapshot.manifestKey));
      loaded = { manifestKey: service.snapshot.manifestKey, store };
      this.loaded.set(service.id, loaded);
      store.catch(() => this.loaded.get(service.id) === loaded && this.loaded.delete(service.id));
    }
    return (await loaded.store).query({ ...request, timeoutMs: this.limits.queryTimeoutMs });
  }

  /** A store over a host's loaded snapshot, attached once per process (nothing is loaded). */
  private attach(hosts: ServiceHosts, host: ServiceHost): Promise<SparqlStore> {
    let store = this.attached.get(host.snapshotId);
    if (!store) {
      if (this.attached.size >= MAX_ATTACHED) {
        const [oldest, old] = this.attached.entries().next().value as [string, Promise<SparqlStore>];
        this.attached.delete(oldest);
        void old.then((s) => s.close()).catch(() => {});
      }
      store = hosts.attach(host);
      this.attached.set(host.snapshotId, store);
      store.catch(() => this.attached.delete(host.snapshotId));
    }
    return store;
  }

  /** Queries the dataset's current graphs (its own endpoint). */
  async queryDataset(caller: Caller | null, account: string, datasetName: string, request: Omit<EngineQuery, 'timeoutMs'>): Promise<string> {
    const { dataset } = await this.access.readableDataset(caller, account, datasetName);
    const key = dataset.graphsManifest ?? `empty:${dataset.id}`;
    let store = this.datasetStores.get(key);
    if (!store) {
      const tooLarge = this.tooLarge(dataset.statements, { external: false });
      if (tooLarge) throw new ServiceUnavailableError(tooLarge);
      if (this.datasetStores.size >= 2) {
        const [oldest, old] = this.datasetStores.entries().next().value as [string, Promise<SparqlStore>];
        this.datasetStores.delete(oldest);
        void old.then((s) => s.close()).catch(() => {});
      }
      // As many query threads as a service: one runaway query must not hold the endpoint.
      store = this.open({ reasoner: 'None' }, dataset.graphsManifest ?? null);
      this.datasetStores.set(key, store);
      store.catch(() => this.datasetStores.delete(key));
    }
    return (await store).query({ ...request, timeoutMs: this.limits.queryTimeoutMs });
  }

  /** SPARQL Update on the dataset's own endpoint (dataset-update.ts). */
  async updateDataset(caller: Caller | null, account: string, datasetName: string, update: string, baseUrl: string, baseIri?: string) {
    const { dataset, owner } = await this.access.writableDataset(caller, account, datasetName, 'update data');
    this.snapshotOf(dataset, { external: false });
    return applyDatasetUpdate(this.platform, this.catalog, { dataset, owner }, { update, baseUrl, baseIri });
  }

  /** After a restart of the embedded platform: load the services that were serving. */
  async recover(): Promise<void> {
    let after: string | undefined;
    for (let round = 0; round < 10_000; round++) {
      const batch = await this.platform.store.listDatasets(null, { after, batch: 100 });
      for (const { item: dataset } of batch.items) {
        for (const service of await this.platform.store.listServices(dataset.id)) {
          // A running search service's index is a blob: loaded on its first query, not rebuilt.
          if (this.others?.serves(service.type) && service.status === 'running') continue;
          if (this.hostsFor(service.type) && (service.host || service.pendingHost)) {
            // Hosts of this platform ended with it (embedded virtuoso-t processes): start over.
            await this.change(dataset.id, service.id, (s) => ({
              ...s,
              status: s.status === 'running' || s.status === 'updating' ? 'starting' : s.status,
              host: undefined,
              pendingHost: undefined,
            }));
          } else if (service.status === 'running' || service.status === 'updating') {
            await this.change(dataset.id, service.id, (s) => ({ ...s, status: s.pendingSnapshot ? 'updating' : 'starting' }));
          }
          if (service.status !== 'stopped' && service.status !== 'error') await this.platform.tasks.enqueueServiceLoad(dataset.id, service.id);
        }
      }
      const last = batch.items[batch.items.length - 1];
      if (!batch.more || !last) return;
      after = last.cursor;
    }
  }

  async closeAll(): Promise<void> {
    const stores = [...this.loaded.values()].map((l) => l.store).concat([...this.datasetStores.values()], [...this.attached.values()]);
    this.loaded.clear();
    this.datasetStores.clear();
    this.attached.clear();
    await Promise.allSettled(stores.map((s) => s.then((x) => x.close())));
  }
}
