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
};

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
    config: service.type === 'jena' ? { reasonerType: service.reasoner } : {},
    endpoint: `${datasetUrl}/services/${encodeURIComponent(service.name)}/sparql`,
    capabilities: ['sparql'],
    numberOfLoadedStatements: service.status === 'running' ? (service.loadedStatements ?? service.snapshot.statements) : 0,
    numberOfGraphs: service.snapshot.graphCount,
    createdAt: service.createdAt,
    updatedAt: service.updatedAt,
    loadedAt: service.loadedAt,
    error: service.error,
    version: service.snapshot.manifestKey ?? 'empty',
  };
}
