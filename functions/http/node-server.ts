import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FamilyHandler } from './api.js';
import type { ConsoleStatic } from './console-static.js';
import { jsonResponse } from './errors.js';
import { MAX_JSON_BODY_BYTES } from './request.js';
import type { ScopedLogger } from '../ports/logger.js';
import { routeKey, type Family } from './route-table.js';
import { matchRoute } from './router.js';
import type { HttpRequest, HttpResponse } from './types.js';

/** Bodies beyond this are refused (uploads get their own streaming routes). */
const MAX_BUFFERED_BODY = MAX_JSON_BODY_BYTES + 1;
/**
 * How much of a refused body is still read (and dropped) before the 413: a client such as Node's
 * fetch reads an answer only once it has sent its body, so closing earlier gives it EPIPE instead
 * of the 413. Past this the connection is closed anyway.
 */
const MAX_DRAINED_BODY = 64 * 1024 * 1024;

type BodyRead = { body: Buffer } | { tooLarge: true; drained: boolean };

async function readBody(req: IncomingMessage): Promise<BodyRead> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BUFFERED_BODY + MAX_DRAINED_BODY) return { tooLarge: true, drained: false };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size <= MAX_BUFFERED_BODY) chunks.push(chunk as Buffer);
    else if (size > MAX_BUFFERED_BODY + MAX_DRAINED_BODY) return { tooLarge: true, drained: false };
  }
  return size > MAX_BUFFERED_BODY ? { tooLarge: true, drained: true } : { body: Buffer.concat(chunks) };
}

async function send(res: ServerResponse, response: HttpResponse, head: boolean): Promise<void> {
  res.statusCode = response.status;
  for (const [k, v] of Object.entries(response.headers)) res.setHeader(k, v);
  if (head || response.body === undefined) return void res.end();
  if (response.body instanceof Readable) return pipeline(response.body, res);
  res.end(response.body);
}

/**
 * The address and port this connection reached, as an origin. Never the Host header: the client
 * chooses that, and the API URL (token issuer, Link headers, run tokens) must not be its choice.
 */
function listeningOrigin(req: IncomingMessage): string {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, '');
  return `http://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}

/**
 * The embedded platform's HTTP server: matches the shared route table and calls the same family
 * handlers the Lambda functions run. Every line logged while a request runs carries its request
 * id and route pattern (never the path: it may hold names, and never headers or bodies), as the
 * Lambda middleware does on AWS; one line per request gives its status.
 */
export function createNodeServer(
  handlers: Record<Family, FamilyHandler>,
  options: { origin?: string; logger: ScopedLogger; consoleSite?: ConsoleStatic },
): Server {
  const { logger } = options;
  return createServer((req, res) => {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const match = matchRoute(method, url.pathname);
    const route = match.kind === 'match' ? routeKey(match.route) : `${method} (no route)`;
    const started = performance.now();
    return logger.withAttributes({ requestId: randomUUID(), route }, async () => {
      await serve(req, res, method, url, match);
      logger.info('request', { status: res.statusCode, durationMs: Math.round(performance.now() - started) });
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse, method: string, url: URL, match: ReturnType<typeof matchRoute>): Promise<void> {
    try {
      // The console's files (issue 17) live beside the API on the same origin, so its session cookie is the API's.
      if (match.kind === 'not-found' && options.consoleSite && (await options.consoleSite(req, res, method, url.pathname))) return;
      if (match.kind === 'not-found') {
        return await send(res, jsonResponse(404, { message: `No route for ${method} ${url.pathname}.` }), false);
      }
      if (match.kind === 'method-not-allowed') {
        return await send(
          res,
          jsonResponse(405, { message: `${method} is not allowed here; use ${match.allowed.join(' or ')}.` }, { allow: match.allowed.join(', ') }),
          false,
        );
      }
      const read = match.route.stream ? { body: Buffer.alloc(0) } : await readBody(req);
      if (!('body' in read)) {
        // A body read to its end leaves the connection usable; an unread rest does not: close it after answering.
        const message = { message: `The request body is larger than ${MAX_JSON_BODY_BYTES} bytes.` };
        return await send(res, jsonResponse(413, message, read.drained ? {} : { connection: 'close' }), false);
      }
      const { body } = read;
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      const request: HttpRequest = {
        method: match.route.method,
        path: url.pathname,
        headers,
        query: url.searchParams,
        body,
        stream: match.route.stream ? req : undefined,
        origin: options.origin ?? listeningOrigin(req),
        sourceIp: req.socket.remoteAddress,
      };
      const response = await handlers[match.route.family](match.route, match.params, request);
      // A streamed body the operation did not read (a refusal) leaves the connection unusable.
      if (match.route.stream && !req.readableEnded) response.headers = { ...response.headers, connection: 'close' };
      await send(res, response, method === 'HEAD');
    } catch (error) {
      logger.error('request failed', { error });
      if (!res.headersSent) await send(res, jsonResponse(500, { message: 'Internal server error.' }), false).catch(() => {});
      else res.destroy();
    }
  }
}
