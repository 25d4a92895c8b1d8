import { ENV } from './env-names.js';
import type { PlatformSettings } from './domain/platform.js';
import { PLATFORM_VERSION } from './version.js';

/** Reads instance settings from the environment, in one place, failing fast on bad values. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): PlatformSettings {
  const publicApiUrl = env[ENV.publicApiUrl]?.replace(/\/+$/, '') || undefined;
  if (publicApiUrl && !/^https?:\/\/[^/]+/.test(publicApiUrl)) {
    throw new Error(`${ENV.publicApiUrl} must be an http(s) URL, got "${publicApiUrl}"`);
  }
  const enabledServices = (env[ENV.enabledServices] ?? 'virtuoso,jena')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const positive = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
    return value;
  };
  return {
    publicApiUrl,
    consoleUrl: env[ENV.consoleUrl]?.replace(/\/+$/, '') || undefined,
    mailFrom: env[ENV.mailFrom] || 'platform@localhost',
    // Deployments never call private networks unless told to; the embedded platform's default is
    // set by its composition (a laptop's data is often on localhost).
    outbound: { allowPrivateNetworks: env[ENV.outboundAllowPrivateNetworks] === 'true' },
    version: PLATFORM_VERSION,
    enabledServices,
    featureToggles: { flows: env[ENV.flowsEnabled] === 'true', queryJobsApi: false },
    sparql: {
      queryTimeoutMs: positive(ENV.queryTimeoutMs, 30_000),
      maxStatements: positive(ENV.maxServiceStatements, 12_000_000),
      replicas: 2,
      external: env[ENV.externalSparqlEndpoint]
        ? {
            queryEndpoint: env[ENV.externalSparqlEndpoint]!,
            updateEndpoint: env[ENV.externalSparqlUpdateEndpoint] || undefined,
            graphStoreEndpoint: env[ENV.externalGraphStoreEndpoint] || undefined,
          }
        : undefined,
    },
  };
}

export function requiredEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
}
