import { ENV } from './env-names.js';
import type { PlatformSettings } from './domain/shared/platform.js';
import { PLATFORM_VERSION } from './version.js';

/** Reads instance settings from the environment, in one place, failing fast on bad values. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): PlatformSettings {
  const publicApiUrl = env[ENV.publicApiUrl]?.replace(/\/+$/, '') || undefined;
  if (publicApiUrl && !/^https?:\/\/[^/]+/.test(publicApiUrl)) {
    throw new Error(`${ENV.publicApiUrl} must be an http(s) URL, got "${publicApiUrl}"`);
  }
  const enabledServices = (env[ENV.enabledServices] ?? 'virtuoso,jena,elasticSearch')
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
    featureToggles: { flows: env[ENV.flowsEnabled] === 'true', queryJobsApi: true },
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

/**
 * SPARQL in a Lambda function (the `sparql`, `queries` and `dataset-sparql` families: 3,008 MB,
 * 30 s). A cold function loads the snapshot inside the first request, then runs the query, so
 * load + query must end well before the function's timeout, or Lambda kills the instance instead
 * of the platform answering 504:
 * - one replica (a function serves one request at a time; the embedded default of two loads the
 *   whole snapshot twice);
 * - queries stop after 20 s, leaving 10 s of the 30 for the cold load and the answer;
 * - at most 500,000 statements. Measured with test/bench/sparql-cold-load.ts (the engine and its
 *   worker module as bundled, Node 20.20, x86-64, two shared cores; one replica):
 *     100,000 statements: load 0.5 s, peak RSS 180 MiB
 *     250,000 statements: load 1.0 s, peak RSS 276 MiB
 *     500,000 statements: load 1.8 s, peak RSS 388 MiB
 *     1,000,000 statements: load 3.7 s, peak RSS 657 MiB (two replicas: 3.9 s, 754 MiB)
 *   A function reads the graphs from S3 and gunzips them as well, on arm64 with under two vCPUs:
 *   500,000 leaves about a factor of four for that within the 10 s; 1,000,000 would not. Memory
 *   is far from the limit at this size. Larger datasets need an external engine (the next issue
 *   gives SPARQL a host of its own).
 * QUERY_TIMEOUT_MS and MAX_SERVICE_STATEMENTS may lower these, never raise them.
 */
export const AWS_SPARQL_LIMITS = { queryTimeoutMs: 20_000, maxStatements: 500_000, replicas: 1 } as const;

/**
 * Imports on AWS run in the import worker, which Lambda stops after 15 minutes (900 s). A URL
 * download gets at most 5 minutes and 1 GiB, leaving 10 for parsing and writing the graphs (the
 * old 30 minutes and 20 GiB could never finish). A job that has not reported for 20 minutes
 * (the worker's limit and a margin) has lost its worker, and the watchdog ends it in error.
 * Graph blobs an import superseded are deleted 20 minutes later, not at once.
 */
export const AWS_IMPORT_LIMITS = {
  maxDownloadBytes: 1024 ** 3,
  downloadTimeoutMs: 5 * 60_000,
  stalledAfterMs: 20 * 60_000,
  /** Longer than any function runs (15 minutes), so no reader of an old manifest is still at work. */
  supersededGraphGraceMs: 20 * 60_000,
} as const;

/**
 * Imports on the worker task (ECS Fargate, functions/containers/worker.ts): no time limit, so URL
 * downloads get the spec's 30 minutes and 20 GiB, as on the embedded platform. A job the worker
 * task runs records the task, and the watchdog ends it when ECS reports the task stopped (not by
 * time: it may run for hours); the other limits are the functions'.
 */
export const WORKER_TASK_IMPORT_LIMITS = {
  ...AWS_IMPORT_LIMITS,
  maxDownloadBytes: 20 * 1024 ** 3,
  downloadTimeoutMs: 30 * 60_000,
} as const;

/** settingsFromEnv as the AWS functions use it: SPARQL and imports bounded by what a function can do in time. */
export function awsSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): PlatformSettings {
  const settings = settingsFromEnv(env);
  // An operator's setting (already read and checked by settingsFromEnv) may lower a limit, never raise it.
  const lower = (name: string, configured: number, limit: number) => (env[name] ? Math.min(configured, limit) : limit);
  return {
    ...settings,
    imports: { ...AWS_IMPORT_LIMITS },
    sparql: {
      ...settings.sparql,
      queryTimeoutMs: lower(ENV.queryTimeoutMs, settings.sparql.queryTimeoutMs, AWS_SPARQL_LIMITS.queryTimeoutMs),
      maxStatements: lower(ENV.maxServiceStatements, settings.sparql.maxStatements, AWS_SPARQL_LIMITS.maxStatements),
      replicas: AWS_SPARQL_LIMITS.replicas,
    },
  };
}

/**
 * The platform's own back ends, which requests on a user's behalf must never reach (a flow talking
 * to the SPARQL store directly would go around access control): the external SPARQL endpoints, the
 * AWS endpoints set with AWS_ENDPOINT_URL[_<SERVICE>] and, in a Lambda, its runtime API. Named by
 * variable, never by URL (a URL may hold credentials).
 */
export function internalEndpointsFromEnv(env: NodeJS.ProcessEnv = process.env): { name: string; host: string; port: number }[] {
  const urls: [string, string][] = ([ENV.externalSparqlEndpoint, ENV.externalSparqlUpdateEndpoint, ENV.externalGraphStoreEndpoint] as string[])
    .concat(Object.keys(env).filter((name) => name.startsWith('AWS_ENDPOINT_URL')))
    .flatMap((name) => (env[name] ? [[name, env[name]!] as [string, string]] : []));
  // The Lambda runtime API is given as host:port.
  if (env.AWS_LAMBDA_RUNTIME_API) urls.push(['AWS_LAMBDA_RUNTIME_API', `http://${env.AWS_LAMBDA_RUNTIME_API}`]);
  return urls.flatMap(([name, value]) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new Error(`${name} must be a URL`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return [{ name, host, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) }];
  });
}

export function requiredEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
}
