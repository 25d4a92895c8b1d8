/**
 * ServiceHosts port: compute that keeps one SPARQL service's snapshot loaded (issue 19). On AWS a
 * Fargate task (Virtuoso plus the loader); embedded, when configured, a `virtuoso-t` process.
 *
 * The lifecycle launches a host for a snapshot and records its ref as the service's pending host;
 * the host loads the snapshot and reports back (`HostReporter.run`, which loads and records the
 * host on the service); queries then `attach` to the loaded snapshot (nothing is loaded per
 * request). A sync launches a second host and swaps when it is loaded (blue/green); stop, delete
 * and restart stop the host.
 */
import type { Reasoner, SnapshotSource, SparqlStore } from './sparql-engine.js';
import type { HostedSnapshot, ServiceHost, ServiceType } from './records/sparql.js';

export type { HostedSnapshot, ServiceHost } from './records/sparql.js';

/** What a host is started for. */
export interface HostLaunch {
  datasetId: string;
  serviceId: string;
  type: ServiceType;
  reasoner: Reasoner;
  /** The manifest the host loads (null: the dataset had no graphs). */
  manifestKey: string | null;
  statements: number;
}

/** Loads a snapshot into the host's store: what `HostReporter.run` is given by the host. */
export type HostLoad = (source: SnapshotSource, reasoner: Reasoner) => Promise<HostedSnapshot>;

/**
 * How a host reports to the service lifecycle (bound by the composition). `run` loads the
 * service's pending snapshot with `load` and records the host running; it resolves `false` when
 * the host is not (or no longer) the service's, and rejects when loading failed (recorded first).
 */
export interface HostReporter {
  run(datasetId: string, serviceId: string, ref: string, endpoint: string, load: HostLoad): Promise<boolean>;
  /** Whether `ref` is still the service's host or pending host (a host that is not ends itself). */
  current(datasetId: string, serviceId: string, ref: string): Promise<boolean>;
  /**
   * A host (`ref`) that was the service's host or pending host ended on its own (it crashed, or
   * was killed): the service must not claim to run on it. `reason` says how it ended.
   */
  lost(datasetId: string, serviceId: string, ref: string, reason: string): Promise<void>;
}

export interface ServiceHosts {
  /** Whether services of this type run on hosts here (else they stay on the embedded engine). */
  serves(type: ServiceType): boolean;
  /** Starts a host for a snapshot; resolves its ref once started (not yet loaded). */
  launch(target: HostLaunch): Promise<string>;
  /**
   * Why the host `ref` is no longer there (it stopped, or is unknown here), or undefined while it
   * runs (or is still starting). Rejects when that cannot be told now (ask again later). Asked
   * by the watchdog about every service's host and pending host.
   */
  stopped(ref: string): Promise<string | undefined>;
  /** Stops a host (idempotent: a host already gone is fine). */
  stop(ref: string): Promise<void>;
  /** A store over a snapshot a host has loaded; loads nothing. Its close() leaves the host's data alone. */
  attach(host: ServiceHost): Promise<SparqlStore>;
}
