import { ENV } from './env-names.js';
import type { PlatformSettings } from './domain/platform.js';
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
  return {
    publicApiUrl,
    consoleUrl: env[ENV.consoleUrl]?.replace(/\/+$/, '') || undefined,
    version: PLATFORM_VERSION,
    enabledServices,
    featureToggles: { flows: env[ENV.flowsEnabled] === 'true', queryJobsApi: false },
  };
}

export function requiredEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
}
