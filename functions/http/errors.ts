import { DomainError, type DomainErrorKind, TooManyRequestsError } from '../domain/shared/errors.js';
import { EngineExecutionError, EngineOverloadedError, EngineQueryError, EngineTimeoutError } from '../ports/sparql-engine.js';
import { SparqlSyntaxError } from '../rdf/sparql-analysis.js';
import type { HttpResponse } from './types.js';
import type { Logger } from '../ports/logger.js';

const STATUS: Record<DomainErrorKind, number> = {
  validation: 400,
  unauthenticated: 401,
  forbidden: 403,
  'not-found': 404,
  'not-acceptable': 406,
  conflict: 409,
  'too-large': 413,
  'unsupported-media-type': 415,
  unprocessable: 422,
  'too-many-requests': 429,
  unavailable: 503,
};

export const JSON_TYPE = 'application/json; charset=utf-8';

export const jsonResponse = (status: number, body: unknown, headers: Record<string, string | string[]> = {}): HttpResponse => ({
  status,
  headers: { 'content-type': JSON_TYPE, ...headers },
  body: JSON.stringify(body),
});

/** Only the error level of the Logger port is needed here. */
export type ErrorLogger = Pick<Logger, 'error'>;

/**
 * The one mapper from errors to responses: domain errors keep their message and get their status;
 * anything else is a 500 with a generic message, logged (never echoed). `plain` serves the SPARQL
 * protocol, whose clients expect text errors.
 */
export function errorResponse(error: unknown, logger: ErrorLogger, options: { plain?: boolean; requestId?: string } = {}): HttpResponse {
  let status = 500;
  let message = 'Internal server error. The error was logged; try again later.';
  let extra: Record<string, unknown> = {};
  if (error instanceof DomainError) {
    status = STATUS[error.kind];
    message = error.message;
    // Errors that list several problems (a flow's validation) keep them apart for the console.
    const problems = (error as { problems?: unknown }).problems;
    if (Array.isArray(problems)) extra = { problems };
  } else if (
    error instanceof EngineTimeoutError ||
    error instanceof EngineOverloadedError ||
    error instanceof EngineQueryError ||
    error instanceof EngineExecutionError ||
    error instanceof SparqlSyntaxError
  ) {
    // Engine and parser failures are about the request (or the load), never internals. 400 is a
    // malformed request only; one that is well-formed but cannot be carried out is a 422.
    status =
      error instanceof EngineTimeoutError ? 504 : error instanceof EngineOverloadedError ? 503 : error instanceof EngineExecutionError ? 422 : 400;
    message = error.message;
  } else {
    logger.error('unhandled error', {
      requestId: options.requestId,
      name: (error as Error)?.name,
      error: (error as Error)?.stack ?? String(error),
    });
  }
  const headers: Record<string, string> = {};
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  if (status === 503) headers['retry-after'] = '5';
  if (error instanceof TooManyRequestsError) headers['retry-after'] = String(error.retryAfterSeconds);
  if (options.plain) return { status, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: message };
  return jsonResponse(status, { message, ...extra }, headers);
}
