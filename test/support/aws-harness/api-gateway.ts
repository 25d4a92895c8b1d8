/**
 * API Gateway HTTP API (payload format 2.0) on a local port: real HTTP requests matched to the
 * template's routes (literal segments before `{param}` ones), turned into the v2 event (cookies,
 * lower-cased comma-joined headers, rawQueryString, base64 bodies for binary content), the route's
 * function invoked synchronously, its answer mapped back. The limits hold: 10 MB request body,
 * 30 s integration timeout (503), 6 MB Lambda payloads (a larger one fails the integration: 500).
 *
 * Routes with an HTTP_PROXY private integration (VPC link → Cloud Map service) forward the request
 * as it came (method, path, query, headers, body streamed) to a task the ECS service registered
 * there (round robin), with API Gateway's changes: Host is the integration's (the Cloud Map
 * name), X-Forwarded-For/-Proto/-Port added; the answer streams back. Same limits: a request body
 * over 10 MB is refused (413) and the whole exchange must end within 30 s (504); no registered
 * task, or a refused connection, answers 503.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeEcs } from './ecs.js';
import type { LambdaRuntime } from './lambda-runtime.js';
import { ACCOUNT, API_ID, REGION, type DeployedRoute } from './template.js';

export const API_REQUEST_LIMIT = 10 * 1024 * 1024;
export const INTEGRATION_TIMEOUT_MS = 30_000;

/** Content types API Gateway passes as text; everything else is base64-encoded. */
const TEXT = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded|sparql-query|sparql-update|ld\+json|n-triples|n-quads|trig|turtle)|[^;]*\+(json|xml))/i;

function matchRoute(routes: DeployedRoute[], method: string, path: string): { route: DeployedRoute; params: Record<string, string> } | undefined {
  const segments = path.split('/').slice(1);
  let best: { route: DeployedRoute; params: Record<string, string>; score: string } | undefined;
  for (const route of routes) {
    if (route.method !== method && route.method !== 'ANY') continue;
    const parts = route.path.split('/').slice(1);
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let score = '';
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const p = parts[i]!;
      const m = /^\{(\w+)\}$/.exec(p);
      if (m) {
        if (!segments[i]) ok = false;
        params[m[1]!] = decodeURIComponent(segments[i]!);
        score += '0';
      } else {
        ok = p === segments[i];
        score += '1';
      }
    }
    if (ok && (!best || score > best.score)) best = { route, params, score };
  }
  return best;
}

export class ApiGateway {
  private server!: Server;
  url = '';
  /** Answers API Gateway itself gave (not the functions), for tests: status and reason. */
  readonly gatewayErrors: { status: number; path: string; reason: string }[] = [];

  constructor(
    private readonly routes: DeployedRoute[],
    private readonly runtime: LambdaRuntime,
    private readonly ecs?: FakeEcs,
    private readonly cloudMapNames: Map<string, string> = new Map(),
  ) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res).catch((e) => this.fail(res, 500, 'Internal Server Error', String(e), req.url ?? '')));
    // API Gateway keeps idle connections far longer than Node's default 5 s. With 5 s, a client's
    // pooled keep-alive socket could be closed by the server just as a large POST went out on it
    // (ECONNRESET: fetch retries no POST), which test/aws/sparql-hosts saw after a pause of a few seconds.
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private fail(res: ServerResponse, status: number, message: string, reason: string, path: string): void {
    this.gatewayErrors.push({ status, path, reason });
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { 'content-type': 'application/json', 'apigw-requestid': randomUUID() });
    res.end(JSON.stringify({ message }));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const method = req.method ?? 'GET';
    const found = matchRoute(this.routes, method, url.pathname);
    if (!found) return this.fail(res, 404, 'Not Found', 'no route', url.pathname);
    if (found.route.cloudMapServiceArn) return this.forwardPrivate(found.route.cloudMapServiceArn, req, res, url);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > API_REQUEST_LIMIT) {
        req.resume();
        return this.fail(res, 413, 'Request Entity Too Large', `request body over ${API_REQUEST_LIMIT} bytes`, url.pathname);
      }
      chunks.push(c as Buffer);
    }
    const body = Buffer.concat(chunks);
    const fn = this.runtime.byName(found.route.functionName)!;

    const headers: Record<string, string> = {};
    let cookies: string[] | undefined;
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!.toLowerCase();
      const value = req.rawHeaders[i + 1]!;
      if (name === 'cookie') {
        cookies = [...(cookies ?? []), ...value.split(/;\s*/).filter(Boolean)];
        continue;
      }
      headers[name] = headers[name] !== undefined ? `${headers[name]},${value}` : value;
    }
    // As behind API Gateway's TLS front door, under the API's own domain.
    const host = `${API_ID}.execute-api.${REGION}.amazonaws.com`;
    headers.host = host;
    headers['x-forwarded-proto'] = 'https';
    headers['x-forwarded-port'] = '443';
    headers['x-forwarded-for'] = '127.0.0.1';
    const rawQueryString = url.search.replace(/^\?/, '');
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = query[k] !== undefined ? `${query[k]},${v}` : v;
    const binary = body.length > 0 && !TEXT.test(headers['content-type'] ?? '');
    const now = new Date();
    const event = {
      version: '2.0',
      routeKey: `${found.route.method} ${found.route.path}`,
      rawPath: url.pathname,
      rawQueryString,
      ...(cookies ? { cookies } : {}),
      headers,
      ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
      ...(Object.keys(found.params).length ? { pathParameters: found.params } : {}),
      requestContext: {
        accountId: ACCOUNT,
        apiId: API_ID,
        domainName: host,
        domainPrefix: API_ID,
        http: { method, path: url.pathname, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
        requestId: randomUUID(),
        routeKey: `${found.route.method} ${found.route.path}`,
        stage: '$default',
        time: now.toUTCString(),
        timeEpoch: now.getTime(),
      },
      ...(body.length ? { body: binary ? body.toString('base64') : body.toString('utf8') } : {}),
      isBase64Encoded: binary,
    };

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), INTEGRATION_TIMEOUT_MS)));
    const result = await Promise.race([this.runtime.invoke(fn, event), timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') return this.fail(res, 503, 'Service Unavailable', 'integration timeout (30 s)', url.pathname);
    if (!result.ok) return this.fail(res, result.kind === 'TooLarge' ? 500 : 500, 'Internal Server Error', `${result.error.errorType}: ${result.error.errorMessage}`, url.pathname);

    const out = JSON.parse(result.payload);
    // Format 2.0: an object with statusCode is the response; anything else is a 200 JSON body.
    const structured = out && typeof out === 'object' && 'statusCode' in out;
    const status = structured ? Number(out.statusCode) : 200;
    const resHeaders: Record<string, string | string[]> = structured ? { ...(out.headers ?? {}) } : { 'content-type': 'application/json' };
    if (structured && out.cookies?.length) resHeaders['set-cookie'] = out.cookies;
    const rawBody = structured ? out.body : JSON.stringify(out);
    const payload = rawBody === undefined || rawBody === null ? Buffer.alloc(0) : structured && out.isBase64Encoded ? Buffer.from(String(rawBody), 'base64') : Buffer.from(String(rawBody), 'utf8');
    resHeaders['apigw-requestid'] = event.requestContext.requestId;
    res.writeHead(status, resHeaders);
    res.end(method === 'HEAD' ? undefined : payload);
  }

  /** An HTTP_PROXY private integration: the request streamed to a registered task of the Cloud Map service, the answer streamed back. */
  private async forwardPrivate(cloudMapServiceArn: string, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const instance = this.ecs?.pickInstance(cloudMapServiceArn);
    if (!instance) {
      req.resume();
      return this.fail(res, 503, 'Service Unavailable', `no task registered in ${cloudMapServiceArn}`, url.pathname);
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > API_REQUEST_LIMIT) {
      req.resume();
      return this.fail(res, 413, 'Request Entity Too Large', `request body over ${API_REQUEST_LIMIT} bytes`, url.pathname);
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== 'host' && k !== 'connection') headers[k] = v;
    headers.host = `${this.cloudMapNames.get(cloudMapServiceArn) ?? 'service'}:${instance.port}`;
    headers['x-forwarded-for'] = '127.0.0.1';
    headers['x-forwarded-proto'] = 'https';
    headers['x-forwarded-port'] = '443';
    headers['x-amzn-trace-id'] = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const requestId = randomUUID();
    await new Promise<void>((resolve) => {
      let done = false;
      const finish = (status?: number, message?: string, reason?: string) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (status) {
          out.destroy();
          this.fail(res, status, message!, reason!, url.pathname);
        }
        resolve();
      };
      const timer = setTimeout(() => finish(504, 'Gateway Timeout', 'integration timeout (30 s)'), INTEGRATION_TIMEOUT_MS);
      const out = httpRequest({ host: '127.0.0.1', port: instance.port, method: req.method, path: `${url.pathname}${url.search}`, headers }, (answer) => {
        const h: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && k !== 'connection' && k !== 'keep-alive') h[k] = v;
        h['apigw-requestid'] = requestId;
        res.writeHead(answer.statusCode ?? 502, h);
        answer.pipe(res);
        answer.on('end', () => finish());
        answer.on('error', () => finish(502, 'Bad Gateway', 'integration answer broke off'));
      });
      out.on('error', (e) => finish(503, 'Service Unavailable', `integration unreachable: ${e.message}`));
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > API_REQUEST_LIMIT) {
          req.unpipe(out);
          req.resume();
          finish(413, 'Request Entity Too Large', `request body over ${API_REQUEST_LIMIT} bytes`);
        }
      });
      req.pipe(out);
    });
  }
}
