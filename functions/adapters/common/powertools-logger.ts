/**
 * The Logger port on Powertools for AWS Lambda's Logger, for both runtimes: JSON lines on
 * stdout/stderr (what CloudWatch and `npm start` users read), level from POWERTOOLS_LOG_LEVEL
 * (default INFO). Per-request attributes follow the async context (AsyncLocalStorage), so
 * concurrent requests of the embedded server never mix; on Lambda the middy middleware also
 * appends keys for the invocation (one invocation at a time per environment).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger as PowertoolsLogger, type LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, ScopedLogger } from '../../ports/logger.js';

export const SERVICE_NAME = 'linked-data-platform';
const REDACTED = '[redacted]';

/** Attribute names whose values are never written, whatever they hold. */
const SECRET_KEY = /password|secret|token|authorization|cookie|credential|api[-_]?key|masked/i;

/**
 * Secret shapes inside text (an error message quoting a header or a URL): JWTs (API and run
 * tokens), bearer credentials, our session and CSRF cookies, and a URL's user:password.
 */
const SECRET_TEXT: [RegExp, string][] = [
  [/\beyJ[\w-]{2,}\.[\w-]{2,}\.[\w-]*/g, REDACTED],
  [/\b(Bearer|Basic)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`],
  [/\b(ldp_session|ldp_csrf)=[^;\s"',]*/g, `$1=${REDACTED}`],
  [/(\b[a-z][\w+.-]*:\/\/)[^/\s@:"']+:[^/\s@"']*@/gi, `$1${REDACTED}@`],
];

export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_TEXT) out = out.replace(pattern, replacement);
  return out;
}

/** JSON replacer run on every key and value of a line before it is written. */
function redact(key: string, value: unknown): unknown {
  if (key && SECRET_KEY.test(key) && value !== undefined && value !== null && value !== '') return REDACTED;
  return typeof value === 'string' ? redactText(value) : value;
}

export interface LoggerOptions {
  /** DEBUG, INFO, WARN, ERROR, SILENT; absent: POWERTOOLS_LOG_LEVEL, else INFO. */
  level?: string;
  serviceName?: string;
  /** Where lines go instead of stdout/stderr (tests capture them here). */
  write?: (line: string) => void;
}

/** Powertools' Logger with an optional sink in place of the console. */
class SinkLogger extends PowertoolsLogger {
  sink?: (line: string) => void;

  protected override printLog(logLevel: number, log: LogItem): void {
    if (!this.sink) return super.printLog(logLevel, log);
    this.sink(JSON.stringify(log.getAttributes(), this.getJsonReplacer()));
  }
}

export class PlatformLogger implements ScopedLogger {
  private readonly scope = new AsyncLocalStorage<LogAttributes>();
  /** The Powertools instance, for its middy middleware (Lambda context, cold start). */
  readonly powertools: PowertoolsLogger;

  constructor(options: LoggerOptions = {}) {
    const logger = new SinkLogger({
      serviceName: options.serviceName ?? SERVICE_NAME,
      ...(options.level ? { logLevel: options.level.toUpperCase() as 'INFO' } : {}),
      jsonReplacerFn: redact,
    });
    logger.sink = options.write;
    this.powertools = logger;
  }

  info(message: string, attributes?: LogAttributes): void {
    this.powertools.info(message, this.attributes(attributes));
  }

  warn(message: string, attributes?: LogAttributes): void {
    this.powertools.warn(message, this.attributes(attributes));
  }

  error(message: string, attributes?: LogAttributes): void {
    this.powertools.error(message, this.attributes(attributes));
  }

  withAttributes<T>(attributes: LogAttributes, work: () => T): T {
    return this.scope.run({ ...this.scope.getStore(), ...attributes }, work);
  }

  /** The scope's attributes under the line's own; an undefined value never hides a scoped one. */
  private attributes(extra: LogAttributes | undefined): LogAttributes {
    const merged: LogAttributes = { ...this.scope.getStore() };
    for (const [key, value] of Object.entries(extra ?? {})) if (value !== undefined) merged[key] = value;
    return merged;
  }
}

export const createLogger = (options: LoggerOptions = {}): PlatformLogger => new PlatformLogger(options);

/** For adapters built without a logger (scripts, adapter tests); the composition roots pass their own. */
export const defaultLogger: PlatformLogger = createLogger();
