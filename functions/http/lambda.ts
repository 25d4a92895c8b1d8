import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Readable } from 'node:stream';
import { createFamilyHandler, type FamilyHandler, type Services } from './api.js';
import { errorResponse, jsonResponse } from './errors.js';
import { FAMILY_OPERATIONS } from './families.js';
import { ROUTES, routeKey, type Family, type RouteSpec } from './route-table.js';
import type { HttpRequest, HttpResponse } from './types.js';
import type { Logger } from '../ports/logger.js';

const ROUTES_BY_KEY = new Map<string, RouteSpec>(ROUTES.map((r) => [routeKey(r), r]));

export function fromApiGateway(event: APIGatewayProxyEventV2): HttpRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) headers[k.toLowerCase()] = v;
  if (event.cookies?.length) headers.cookie = event.cookies.join('; ');
  const body = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  const proto = headers['x-forwarded-proto'] ?? 'https';
  return {
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    headers,
    query: new URLSearchParams(event.rawQueryString ?? ''),
    body,
    origin: `${proto}://${event.requestContext.domainName}`,
    sourceIp: event.requestContext.http.sourceIp,
  };
}

/** Lambda's synchronous response limit is 6 MB; keep room for headers and base64 growth. */
export const LAMBDA_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * The largest request body a function takes. Lambda refuses events over 6 MB (6,291,456 bytes),
 * and API Gateway hands binary bodies over in base64 (a third larger), so about 4.5 MiB of raw
 * body is the most that can ever arrive; 4 MiB leaves room for headers and multipart framing.
 * A larger body never reaches the function (API Gateway answers for it), so this is a bound the
 * function states, not one it could raise. The embedded server keeps its own limits (5 MB).
 */
export const LAMBDA_REQUEST_BODY_LIMIT = 4 * 1024 * 1024;

function tooLargeRequest(route: RouteSpec, size: number): HttpResponse {
  const limit = `${LAMBDA_REQUEST_BODY_LIMIT} bytes (4 MiB)`;
  const why = `AWS Lambda takes requests up to 6 MB and a body grows by a third in base64, so this deployment takes request bodies up to ${limit}; this one has ${size} bytes.`;
  const instead =
    route.family === 'imports' ? ' Upload larger files with tus (POST .../jobs/{jobId}/add, as the official client does), split the data into files under 4 MiB (one job can take several), or import it from a URL (POST .../jobs with {"type":"download","downloadUrls":[...]}).'
    : route.family === 'assets' ? ' Upload larger assets with tus (POST .../assets/add, as the official client\'s uploadAsset does).'
    : '';
  return jsonResponse(413, { message: `${why}${instead}` });
}
const SPILL_URL_SECONDS = 300;

type Spill = (body: Buffer | Readable, contentType: string | undefined) => Promise<HttpResponse | null>;

/**
 * A response too large for Lambda goes to the artifacts bucket and the client is redirected to a
 * short-lived link. Only functions granted the artifacts bucket can spill; others answer 500.
 */
function spillTo(services: Services): Spill {
  return async (body, contentType) => {
    const store = services.platform.blobs.artifacts;
    if (!store.signedUrl) return null;
    const key = `responses/${new Date().toISOString().slice(0, 10)}/${services.platform.ids.newId()}`;
    await store.put(key, body, { contentType });
    const location = await store.signedUrl(key, SPILL_URL_SECONDS);
    return jsonResponse(303, { message: `The response is larger than a function may answer; download it from the Location within ${SPILL_URL_SECONDS} s.` }, { location });
  };
}

/**
 * The first `limit` bytes of a stream. When the stream is longer, `rest` is the whole stream again
 * (the bytes read so far, then the unread remainder), to be passed on without holding it.
 */
async function readUpTo(stream: Readable, limit: number): Promise<{ head: Buffer; rest?: Readable }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = stream[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { head: Buffer.concat(chunks, size) };
    const chunk = Buffer.from(next.value as Uint8Array | string);
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) break;
  }
  async function* all(): AsyncGenerator<Buffer> {
    yield* chunks.splice(0);
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield Buffer.from(next.value as Uint8Array | string);
    }
  }
  return { head: Buffer.alloc(0), rest: Readable.from(all(), { objectMode: false }) };
}

async function toApiGateway(response: HttpResponse, spill?: Spill): Promise<APIGatewayProxyStructuredResultV2> {
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [k, v] of Object.entries(response.headers)) {
    if (k === 'set-cookie') cookies = Array.isArray(v) ? v : [v];
    else headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  let body: Buffer | undefined;
  if (typeof response.body === 'string') body = Buffer.from(response.body);
  else if (Buffer.isBuffer(response.body)) body = response.body;
  else if (response.body instanceof Readable) {
    // Read at most the limit: a longer stream goes on to S3 part by part, never whole in memory.
    const read = await readUpTo(response.body, LAMBDA_BODY_LIMIT);
    if (read.rest) {
      const redirect = spill ? await spill(read.rest, headers['content-type']) : null;
      if (redirect) return toApiGateway(redirect);
      read.rest.destroy();
      throw new Error(`A response of more than ${LAMBDA_BODY_LIMIT} bytes from a function that cannot spill it to S3`);
    }
    body = read.head;
  }
  if (body && body.length > LAMBDA_BODY_LIMIT && spill) {
    const redirect = await spill(body, headers['content-type']);
    if (redirect) return toApiGateway(redirect);
  }
  const textual = /^(application\/(json|.*\+json)|text\/)/.test(headers['content-type'] ?? '');
  return {
    statusCode: response.status,
    headers,
    cookies,
    body: body ? (textual ? body.toString('utf8') : body.toString('base64')) : undefined,
    isBase64Encoded: body ? !textual : false,
  };
}

/** What a Lambda entry gets from the AWS composition root. */
export interface LambdaRuntime {
  /** Built on the first request (once per cold start). */
  services(): Promise<Services>;
  /** Where unknown errors are logged (the caller gets a generic 500). */
  logger: Logger;
  /** Middy middleware run on every invocation (the logging context). */
  middlewares: MiddlewareObj[];
}

/**
 * One route family's entry points: `handler` for Lambda, `mount` for the embedded server. Both run
 * the same family handler, so what the stack deploys is what `npm start` serves.
 */
export function familyEntry(family: Family, runtime: LambdaRuntime) {
  return {
    handler: lambdaHandler(family, runtime),
    mount: (services: Services): FamilyHandler => createFamilyHandler(family, FAMILY_OPERATIONS[family], services),
  };
}

/**
 * The Lambda entry of one route family. Services are built on the first request (once per cold
 * start), so importing a handler module never touches AWS.
 */
export function lambdaHandler(family: Family, runtime: LambdaRuntime) {
  let handler: Promise<{ run: FamilyHandler; spill: Spill }> | undefined;
  const base = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    handler ??= runtime.services().then((services) => ({ run: createFamilyHandler(family, FAMILY_OPERATIONS[family], services), spill: spillTo(services) }));
    const route = ROUTES_BY_KEY.get(event.routeKey);
    if (!route || route.family !== family) {
      return toApiGateway(jsonResponse(404, { message: `No route ${event.routeKey} in this function.` }));
    }
    try {
      const request = fromApiGateway(event);
      if (request.body.length > LAMBDA_REQUEST_BODY_LIMIT) return await toApiGateway(tooLargeRequest(route, request.body.length));
      if (route.stream) request.stream = Readable.from([request.body]);
      const { run, spill } = await handler;
      return await toApiGateway(await run(route, (event.pathParameters as Record<string, string>) ?? {}, request), spill);
    } catch (error) {
      handler = undefined;
      return toApiGateway(errorResponse(error, runtime.logger));
    }
  };
  return middy(base).use(runtime.middlewares);
}
