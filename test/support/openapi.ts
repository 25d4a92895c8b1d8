/**
 * Checks answers of the platform against its own OpenAPI document (`GET /openapi.json`): the
 * document itself with @seriousme/openapi-schema-validator (OpenAPI 3.1's published schema), each
 * answer's status, media type and JSON body with Ajv (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1; Ajv comes with that validator).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { matchRoute } from '../../functions/http/router.js';
import type { ApiResponse, PlatformClient, RequestOptions } from './platform-client.js';

type Json = Record<string, any>;

/** Validates an OpenAPI document; resolves to the validator's errors (none when valid). */
export async function openApiProblems(document: unknown): Promise<unknown[]> {
  const result = await new Validator().validate(document as Parameters<Validator["validate"]>[0]);
  return result.valid ? [] : ((result.errors as unknown[] | undefined) ?? ['invalid']);
}

const DOC_ID = 'urn:ldp:openapi';

export class OpenApiChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  private readonly compiled = new Map<object, ValidateFunction>();
  /** `METHOD /path/template status` of every answer checked (what the e2e tests covered). */
  readonly seen = new Set<string>();

  constructor(readonly document: Json) {
    this.ajv.addSchema({ $id: DOC_ID, components: document.components }, DOC_ID);
  }

  static async load(p: PlatformClient): Promise<OpenApiChecker> {
    const res = await fetch(`${p.url}/openapi.json`);
    if (res.status !== 200) throw new Error(`GET /openapi.json: ${res.status}`);
    return new OpenApiChecker((await res.json()) as Json);
  }

  /** Problems of one answer to `method path` (path may hold a query string); empty when it matches the document. */
  problems(method: string, path: string, res: Pick<ApiResponse, 'status' | 'headers' | 'text'>): string[] {
    const pathname = new URL(path, 'http://x').pathname;
    const match = matchRoute(method.toUpperCase(), pathname);
    if (match.kind !== 'match') return res.status === 404 || res.status === 405 ? [] : [`${method} ${pathname}: no route, yet ${res.status}`];
    const template = match.route.path;
    const operation = this.document.paths?.[template]?.[match.route.method.toLowerCase()];
    const where = `${match.route.method} ${template} ${res.status}`;
    this.seen.add(where);
    if (!operation) return [`${where}: the route is not in the document`];
    const status = String(res.status);
    const answer = operation.responses?.[status] ?? operation.responses?.[`${status[0]}XX`] ?? operation.responses?.default;
    if (!answer) return [`${where}: the status is not documented (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`];
    if (res.status === 204 || res.status === 304 || method.toUpperCase() === 'HEAD' || res.text === '') return [];
    const media = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const content = answer.content as Json | undefined;
    if (!content) return [`${where}: a ${media} body where the document says none`];
    const entry = content[media] ?? content[`${media.split('/')[0]}/*`] ?? content['*/*'];
    if (!entry) return [`${where}: ${media} is not documented (documented: ${Object.keys(content).join(', ')})`];
    if (!entry.schema || !(media === 'application/json' || media.endsWith('+json'))) return [];
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      return [`${where}: the body is not JSON`];
    }
    const validate = this.validator(entry.schema);
    if (validate(body)) return [];
    return [`${where}: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}`];
  }

  /** Throws when an answer does not match the document. */
  check(method: string, path: string, res: Pick<ApiResponse, 'status' | 'headers' | 'text'>): void {
    const problems = this.problems(method, path, res);
    if (problems.length) throw new Error(`Answer does not match /openapi.json: ${problems.join('; ')}`);
  }

  /** `p.request` whose answer is checked against the document. */
  async request(p: PlatformClient, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const res = await p.request(method, path, options);
    this.check(method, path, res);
    return res;
  }

  private validator(schema: object): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) {
      const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`));
      validate = this.ajv.compile(rebased);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade', 'proxy-connection'];
const forwardable = (headers: IncomingHttpHeaders) => Object.fromEntries(Object.entries(headers).filter(([k, v]) => v !== undefined && !HOP_BY_HOP.includes(k)));

/**
 * A proxy on 127.0.0.1 in front of the platform that checks every answer passing through against
 * the document (a client such as @triply/triplydb is pointed at it unchanged). Problems are
 * collected, not thrown: the test asserts `problems` is empty at its end.
 */
export async function startCheckingProxy(target: string, checker: OpenApiChecker): Promise<{ url: string; problems: string[]; answers: () => number; seen: Set<string>; close(): Promise<void> }> {
  const problems: string[] = [];
  let answers = 0;
  const upstream = new URL(target);
  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const answer = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        const out = httpRequest(
          { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...forwardable(req.headers), 'content-length': String(body.length) } },
          (r) => {
            const parts: Buffer[] = [];
            r.on('data', (c: Buffer) => parts.push(c));
            r.on('end', () => resolve({ status: r.statusCode ?? 500, headers: r.headers, body: Buffer.concat(parts) }));
            r.on('error', reject);
          },
        );
        out.on('error', reject);
        out.end(body);
      });
      answers++;
      const headers = new Headers();
      for (const [k, v] of Object.entries(answer.headers)) for (const value of [v ?? []].flat()) headers.append(k, value);
      problems.push(...checker.problems(req.method ?? 'GET', req.url ?? '/', { status: answer.status, headers, text: answer.body.toString('utf8') }));
      res.writeHead(answer.status, forwardable(answer.headers));
      res.end(answer.body);
    } catch (error) {
      problems.push(`proxy: ${req.method} ${req.url}: ${(error as Error).message}`);
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    problems,
    answers: () => answers,
    seen: checker.seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
