import type { Reasoner } from '../../ports/sparql-engine.js';
import { ValidationError } from '../shared/errors.js';

import type { ServiceRecord, ServiceType } from '../../ports/records/sparql.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type { ServiceRecord, ServiceSnapshot, ServiceStatus, ServiceType } from '../../ports/records/sparql.js';

/** Names accepted for each type: the spec's, TriplyDB's current and its older (V1) ones. */
const TYPE_ALIASES: Record<string, ServiceType> = {
  virtuoso: 'virtuoso',
  sparql: 'virtuoso',
  Sparql: 'virtuoso',
  jena: 'jena',
  'sparql-jena': 'jena',
  RichSparql: 'jena',
  richSparql: 'jena',
  elasticSearch: 'elasticSearch',
  elasticsearch: 'elasticSearch',
  textSearch: 'elasticSearch',
};

/**
 * Service types another (higher) context serves: text search (domain/search/search-lifecycle.ts),
 * given to ServiceLifecycle by the wiring. ServiceLifecycle keeps the records, access and actions;
 * the other context builds, serves and drops what a snapshot becomes.
 */
export interface OtherServiceTypes {
  serves(type: ServiceType): boolean;
  /** The stored settings of a new service of this type from its create body's `config` (a 400 naming the field). */
  configure(config: unknown): Pick<ServiceRecord, 'search'>;
  /** Loads the service's target snapshot and marks it running (or error) through `change` (ServiceLifecycle.prepare). */
  prepare(service: ServiceRecord, change: (apply: (s: ServiceRecord) => ServiceRecord | null) => Promise<ServiceRecord | null>): Promise<void>;
  /** Drops what the service's snapshots became (stop, delete). */
  release(service: ServiceRecord): Promise<void>;
}

export const SERVICE_TYPE_NAMES = Object.keys(TYPE_ALIASES);

export function serviceTypeOf(type: string | undefined): ServiceType {
  const resolved = TYPE_ALIASES[type ?? 'virtuoso'];
  if (!resolved) {
    // Avoid the phrases "Service of type" and "Invalid service type": the TriplyDB client retries on them forever.
    throw new ValidationError(`type: "${type}" is not offered here; use one of ${SERVICE_TYPE_NAMES.join(', ')}.`);
  }
  return resolved;
}

const REASONERS: Reasoner[] = ['None', 'RDFS', 'OWL'];

export function reasonerOf(type: ServiceType, config: { reasonerType?: string; reasoner?: string } | undefined): Reasoner {
  const value = config?.reasonerType ?? config?.reasoner;
  if (value === undefined) return 'None';
  const found = REASONERS.find((r) => r.toLowerCase() === String(value).toLowerCase());
  if (!found) throw new ValidationError(`config.reasonerType: must be one of ${REASONERS.join(', ')}.`);
  if (type !== 'jena' && found !== 'None') {
    throw new ValidationError('config.reasonerType: reasoning is offered by the jena (RichSparql) type; create the service with type "jena".');
  }
  return found;
}

const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9-]{0,39}$/;

export function assertServiceName(name: unknown): string {
  if (typeof name !== 'string' || !SERVICE_NAME.test(name)) {
    throw new ValidationError('name: a service name has 1 to 40 letters, digits or hyphens and starts with a letter or digit.');
  }
  if (name.toLowerCase() === 'speedy') throw new ValidationError('name: "Speedy" is reserved; choose another service name.');
  return name;
}

export const isOutOfSync = (service: ServiceRecord, currentManifest: string | undefined): boolean =>
  (service.pendingSnapshot ?? service.snapshot).manifestKey !== (currentManifest ?? null);

export function serviceView(service: ServiceRecord, currentManifest: string | undefined, datasetUrl: string): Record<string, unknown> {
  return {
    id: service.id,
    name: service.name,
    type: service.type,
    status: service.status,
    outOfSync: isOutOfSync(service, currentManifest),
    config: service.type === 'jena' ? { reasonerType: service.reasoner } : (service.search ?? {}),
    endpoint: `${datasetUrl}/services/${encodeURIComponent(service.name)}/${service.type === 'elasticSearch' ? 'search' : 'sparql'}`,
    capabilities: [service.type === 'elasticSearch' ? 'elasticSearch' : 'sparql'],
    numberOfLoadedStatements: service.status === 'running' ? (service.loadedStatements ?? service.snapshot.statements) : 0,
    numberOfGraphs: service.snapshot.graphCount,
    createdAt: service.createdAt,
    updatedAt: service.updatedAt,
    loadedAt: service.loadedAt,
    error: service.error,
    // The snapshot the service serves, by its id (the manifest's blob key is storage, not for callers).
    version: service.snapshot.manifestKey?.replace(/^.*\//, '').replace(/\.json$/, '') ?? 'empty',
  };
}
