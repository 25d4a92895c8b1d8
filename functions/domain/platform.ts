import type { MetadataStore } from '../ports/metadata-store.js';
import type { Clock, Ids, PasswordHasher, TokenCodec } from '../ports/platform.js';

/** Instance settings the domain needs; read from the environment by the composition root. */
export interface PlatformSettings {
  /** Fixed public API URL; when absent the URL the request came in on is used. */
  publicApiUrl?: string;
  consoleUrl?: string;
  version: string;
  enabledServices: string[];
  featureToggles: Record<string, boolean>;
}

/** The ports every use case may use, wired once by `functions/composition/{aws,local}.ts`. */
export interface Platform {
  store: MetadataStore;
  clock: Clock;
  ids: Ids;
  passwords: PasswordHasher;
  tokens: TokenCodec;
  settings: PlatformSettings;
}
