/**
 * The API's public URL for runs nobody started over HTTP (schedules, hooks, the watchdog). A run
 * needs it to be whole: its platform token names it as issuer, `?system_uploadedAssetURL` and the
 * default graph name are built from it, and the failure email links to the run. An HTTP request
 * knows its own origin; a scheduled or event-driven function only knows the configured one
 * (PUBLIC_API_URL), so without it nothing may start: a relative URL would be stored for good.
 */
import type { PlatformSettings } from '../../shared/platform.js';

export class MissingApiUrlError extends Error {
  constructor() {
    super(
      'PUBLIC_API_URL is not set: runs started by schedules and hooks need the API\'s public URL (https://<api-id>.execute-api.<region>.amazonaws.com or your domain) for their platform token, links and ?system_uploadedAssetURL. Set PUBLIC_API_URL on this function.',
    );
    this.name = 'MissingApiUrlError';
  }
}

/** The configured public URL, else the one the event carried; refuses when there is neither. */
export function requireApiUrl(settings: Pick<PlatformSettings, 'publicApiUrl'>, given?: string | null): string {
  const url = (settings.publicApiUrl || given || '').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(url)) throw new MissingApiUrlError();
  return url;
}
