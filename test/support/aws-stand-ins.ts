/**
 * Shared set-up of the AWS contract tests (test/contract/{aws-data,aws-flows,lambda-handlers,
 * lambda-logging}.test.ts): the local stand-ins the AWS composition root is pointed at (dynalite
 * for DynamoDB, s3rver for S3 with the data, uploads and artifacts buckets), one recording server
 * for the services with no local stand-in (Lambda, EventBridge, Step Functions, Scheduler: each
 * file answers them its own way), the environment the deployed functions read, and the API
 * Gateway (HTTP API v2) events the Lambda entry modules are invoked with.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { ROUTES, routeKey } from '../../functions/http/route-table.js';
import { addMultipartListing } from './s3rver-multipart.js';

/** AWS services with no local stand-in, answered by the file's own recording server. */
export type FakedService = 'LAMBDA' | 'EVENTBRIDGE' | 'SFN' | 'SCHEDULER';

export interface AwsStandInOptions {
  /** The DynamoDB table (created in dynalite before the tests). */
  table: string;
  /** s3rver with the data, uploads and artifacts buckets, and their names in the env (default true). */
  buckets?: boolean;
  /** Prefix of s3rver's temporary folder. */
  s3DirPrefix?: string;
  /** Answers a call to a service with no local stand-in (the request body already read). */
  fake?: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void;
  /** The services whose endpoint is the fake (AWS_ENDPOINT_URL_<service>). */
  faked?: FakedService[];
  /** The file's own variables (set after the shared ones). */
  env?: Record<string, string>;
  /** Access key id and secret (s3rver accepts only S3RVER; dynalite any). */
  credentials?: string;
}

export interface AwsStandIns {
  /** dynalite's client (set in beforeAll). */
  readonly dynamo: DynamoDBClient;
  /** The fake's URL (set in beforeAll when a fake is given). */
  readonly fakeUrl: string;
}

const listen = (server: Server) => new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Registers the file's beforeAll (start the stand-ins, set the env, create the table) and afterAll (stop them). */
export function useAwsStandIns(options: AwsStandInOptions): AwsStandIns {
  const buckets = options.buckets ?? true;
  let dynamoServer: Server | undefined;
  let fake: Server | undefined;
  let s3rver: S3rver | undefined;
  let s3Dir: string | undefined;
  const state = { dynamo: undefined as unknown as DynamoDBClient, fakeUrl: '' };

  beforeAll(async () => {
    dynamoServer = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    await listen(dynamoServer);
    const env: Record<string, string> = { [ENV.tableName]: options.table, AWS_ENDPOINT_URL_DYNAMODB: urlOf(dynamoServer) };
    if (buckets) {
      s3Dir = await mkdtemp(join(tmpdir(), options.s3DirPrefix ?? 'ldp-s3-'));
      s3rver = addMultipartListing(new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir, configureBuckets: ['data', 'uploads', 'artifacts'].map((name) => ({ name, configs: [] })) }));
      const { port } = await s3rver.run();
      Object.assign(env, {
        [ENV.dataBucketName]: 'data',
        [ENV.uploadsBucketName]: 'uploads',
        [ENV.artifactsBucketName]: 'artifacts',
        AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
        AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
        AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
      });
    } else {
      for (const name of [ENV.dataBucketName, ENV.uploadsBucketName, ENV.artifactsBucketName]) delete process.env[name];
    }
    if (options.fake) {
      const answer = options.fake;
      fake = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => answer(req, Buffer.concat(chunks), res));
      });
      await listen(fake);
      state.fakeUrl = urlOf(fake);
      for (const service of options.faked ?? []) env[`AWS_ENDPOINT_URL_${service}`] = state.fakeUrl;
    }
    const credentials = options.credentials ?? 'S3RVER';
    Object.assign(process.env, env, { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: credentials, AWS_SECRET_ACCESS_KEY: credentials }, options.env);
    state.dynamo = new DynamoDBClient({});
    // Imported only now: it loads the AWS composition root, whose logger reads its level on load.
    const { ensureTable } = await import('../../functions/composition/local.js');
    await ensureTable(state.dynamo, options.table);
  });

  afterAll(async () => {
    state.dynamo?.destroy();
    if (fake) await new Promise((r) => fake!.close(r));
    if (dynamoServer) await new Promise((r) => dynamoServer!.close(r));
    await s3rver?.close();
    if (s3Dir) await rm(s3Dir, { recursive: true, force: true });
  });

  return state;
}

export interface ApiEventOptions {
  /** Sent as JSON (with its content type). */
  body?: unknown;
  /** Sent as is: a Buffer base64-encoded (as API Gateway does binary content), a string as text. */
  rawBody?: Buffer | string;
  token?: string;
  query?: string;
  headers?: Record<string, string>;
  cookies?: string[];
  /** API Gateway's request id. */
  requestId?: string;
  /** The API's host name; its first label is the API id. */
  host?: string;
}

/** The API Gateway (HTTP API, payload 2.0) event for a request on one of the route table's routes. */
export function apiEvent(method: string, path: string, options: ApiEventOptions = {}): APIGatewayProxyEventV2 {
  const route = ROUTES.find((r) => r.method === method && new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(path));
  if (!route) throw new Error(`no route for ${method} ${path}`);
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const values = new RegExp(`^${route.path.replace(/\{\w+\}/g, '([^/]+)')}$`).exec(path)!.slice(1);
  const host = options.host ?? 'api.example.org';
  const apiId = host.split('.')[0]!;
  const { rawBody } = options;
  return {
    version: '2.0',
    routeKey: routeKey(route),
    rawPath: path,
    rawQueryString: options.query ?? '',
    headers: {
      host,
      'x-forwarded-proto': 'https',
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(options.cookies ? { cookies: options.cookies } : {}),
    pathParameters: Object.fromEntries(names.map((n, i) => [n, values[i]!])),
    requestContext: {
      accountId: '123',
      apiId,
      domainName: host,
      domainPrefix: apiId,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: options.requestId ?? 'id',
      routeKey: routeKey(route),
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    body: Buffer.isBuffer(rawBody) ? rawBody.toString('base64') : rawBody !== undefined ? rawBody : options.body !== undefined ? JSON.stringify(options.body) : undefined,
    isBase64Encoded: Buffer.isBuffer(rawBody),
  };
}

/** A Lambda context with the time left that a 30 s function has at its start. */
export const lambdaContext = { getRemainingTimeInMillis: () => 30_000 } as Context;

/** Invokes a family's Lambda entry module (functions/handlers/<family>.ts); `json` is the parsed JSON body, if any. */
export async function invokeHandler(family: string, e: APIGatewayProxyEventV2, context: Context = lambdaContext) {
  const module = await import(`../../functions/handlers/${family}.ts`);
  const result = (await module.handler(e, context)) as APIGatewayProxyStructuredResultV2;
  const json = result.body && String(result.headers?.['content-type'] ?? '').startsWith('application/json') ? JSON.parse(result.body) : undefined;
  return { ...result, json };
}
