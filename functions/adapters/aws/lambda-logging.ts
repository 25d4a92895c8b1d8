/**
 * The middy middleware every Lambda entry uses: Powertools' injectLambdaContext (request id,
 * function name, cold start on every line) and ours, which adds an HTTP API event's route and
 * API Gateway request id, logs one line per request, and logs an error that escapes the handler
 * (an HTTP caller then gets a generic 500, never the error).
 */
import type { MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { PlatformLogger } from '../common/powertools-logger.js';

interface HttpApiEvent {
  routeKey?: unknown;
  requestContext?: { requestId?: unknown; http?: unknown };
}

/** An API Gateway HTTP API (v2) event, as opposed to EventBridge, Step Functions or our own invocations. */
const httpEventOf = (event: unknown): HttpApiEvent | undefined => {
  const e = event as HttpApiEvent | undefined;
  return typeof e?.routeKey === 'string' && e.requestContext?.http ? e : undefined;
};

const GENERIC_500 = {
  statusCode: 500,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify({ message: 'Internal server error. The error was logged; try again later.' }),
};

/** Our half: the route keys, the request line, and errors nobody caught. */
function routeAndErrors(logger: PlatformLogger): MiddlewareObj {
  return {
    before: (request) => {
      const http = httpEventOf(request.event);
      // API Gateway's route key is already "METHOD /path/{param}", the same as the embedded server's.
      if (http) logger.powertools.appendKeys({ route: http.routeKey as string, apiRequestId: String(http.requestContext?.requestId ?? '') });
    },
    after: (request) => {
      if (!httpEventOf(request.event)) return;
      logger.info('request', { status: (request.response as { statusCode?: number } | undefined)?.statusCode });
    },
    onError: (request) => {
      logger.error('invocation failed', { error: request.error });
      // An HTTP caller gets a generic answer; other invocations throw on, so Lambda retries them.
      if (httpEventOf(request.event)) request.response = GENERIC_500;
    },
  };
}

/** Every Lambda entry's logging middleware, in order; keys are reset after each invocation. */
export function lambdaLogging(logger: PlatformLogger): MiddlewareObj[] {
  return [injectLambdaContext(logger.powertools, { resetKeys: true }), routeAndErrors(logger)];
}
