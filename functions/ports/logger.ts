/**
 * Structured logging: one JSON line per event, with attributes rather than text to parse. The
 * domain logs through `platform.logger`; adapters, http/ and the entry points get one directly.
 * Never pass headers, bodies or secrets as attributes: the adapter redacts known shapes
 * (tokens, cookies, passwords) as a second line of defence, not the first.
 */

/** Extra fields of one line; an `error` attribute holding an Error is written with its name and stack. */
export type LogAttributes = Record<string, unknown>;

export interface Logger {
  info(message: string, attributes?: LogAttributes): void;
  warn(message: string, attributes?: LogAttributes): void;
  error(message: string, attributes?: LogAttributes): void;
}

/** A logger that can put attributes on every line a piece of work (one request) logs. */
export interface ScopedLogger extends Logger {
  /**
   * Runs `work` with `attributes` on every line it, and everything it starts, logs. Scopes of
   * concurrent requests in one process never mix (they follow the async context, not a global).
   */
  withAttributes<T>(attributes: LogAttributes, work: () => T): T;
}
