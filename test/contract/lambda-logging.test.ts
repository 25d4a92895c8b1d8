/**
 * The Lambda entry modules' logs, as CloudWatch gets them (their stdout and stderr): every line of
 * an invocation carries the Lambda request id, function name and cold start, and for the HTTP
 * API the route and API Gateway request id; a 500 is logged, never echoed; and a password, an API
 * token and a session cookie sent to the functions never appear. Metadata in dynalite, no buckets
 * (a function touching one fails: the failing request).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { apiEvent, useAwsStandIns } from '../support/aws-stand-ins.js';

const TABLE = 'platform-lambda-logging';
const PASSWORD = 'carol-Pa55word-on-lambda';
const written: string[] = [];
const secrets: string[] = [PASSWORD];

interface Line {
  level: string;
  message: string;
  route?: string;
  apiRequestId?: string;
  function_request_id?: string;
  function_name?: string;
  cold_start?: boolean;
  [key: string]: unknown;
}

// Metadata in dynalite, no buckets.
useAwsStandIns({
  table: TABLE,
  buckets: false,
  credentials: 'local',
  // The handlers' logger reads its level when first imported (after the set-up).
  env: { [ENV.logLevel]: 'INFO' },
});

/** A JSON body (an object) or a raw one (a string, sent with no content type). */
const event = (method: string, path: string, options: { body?: string | object; headers?: Record<string, string>; cookies?: string[]; requestId: string }): APIGatewayProxyEventV2 => {
  const { body, ...rest } = options;
  return apiEvent(method, path, { ...rest, ...(typeof body === 'object' ? { body } : { rawBody: body }) });
};

const contextOf = (functionName: string, awsRequestId: string) =>
  ({
    functionName,
    awsRequestId,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    getRemainingTimeInMillis: () => 30_000,
  }) as unknown as Context;

/** Runs `work` with the process's stdout and stderr captured (what Lambda sends to CloudWatch). */
async function captured<T>(work: () => Promise<T>): Promise<T> {
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((s) => s.write);
  for (const s of streams) {
    s.write = ((chunk: string | Uint8Array) => {
      written.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    }) as typeof s.write;
  }
  try {
    return await work();
  } finally {
    streams.forEach((s, i) => (s.write = originals[i]!));
  }
}

async function invoke(family: string, e: APIGatewayProxyEventV2, awsRequestId: string) {
  const module = await import(`../../functions/handlers/${family}.ts`);
  return captured(async () => (await module.handler(e, contextOf(family, awsRequestId))) as APIGatewayProxyStructuredResultV2);
}

const lines = (): Line[] => written.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);

describe('Lambda handler logs', () => {
  it('carry the Lambda context, route and API Gateway request id on every line, and never the secrets sent', async () => {
    const { awsServices } = await import('../../functions/composition/aws.js');
    const services = await awsServices();
    const { account: admin } = await services.accounts.ensureAdministrator('ops', 'ops-password-123');
    const { token: adminToken } = await services.auth.issueToken(admin, { description: 'logging', readOnly: false }, 'https://api.example.org');
    secrets.push(adminToken);

    const created = await invoke('accounts', event('POST', '/accounts', { requestId: 'apigw-1', headers: { authorization: `Bearer ${adminToken}` }, body: { type: 'user', accountName: 'carol', password: PASSWORD } }), 'lambda-1');
    expect(created.statusCode).toBe(201);
    const login = await invoke('auth', event('POST', '/login', { requestId: 'apigw-2', body: { accountName: 'carol', password: PASSWORD } }), 'lambda-2');
    expect(login.statusCode).toBe(200);
    const cookies = login.cookies!.map((c) => c.split(';')[0]!);
    secrets.push(...cookies.map((c) => c.slice(c.indexOf('=') + 1)));
    const { token } = JSON.parse(
      (await invoke('accounts', event('POST', '/accounts/carol/tokens', { requestId: 'apigw-3', cookies, headers: { 'x-csrf-token': JSON.parse(login.body!).csrfToken }, body: { description: 'logs', readOnly: false } }), 'lambda-3')).body!,
    );
    secrets.push(token);
    const me = await invoke('auth', event('GET', '/me', { requestId: 'apigw-4', headers: { authorization: `Bearer ${token}` }, cookies }), 'lambda-4');
    expect(me.statusCode).toBe(200);

    const loginLine = lines().find((l) => l.message === 'request' && l.route === 'POST /login');
    expect(loginLine).toMatchObject({ level: 'INFO', status: 200, apiRequestId: 'apigw-2', function_request_id: 'lambda-2', function_name: 'auth', service: 'linked-data-platform' });
    expect(typeof loginLine!.cold_start).toBe('boolean');
    expect(lines().find((l) => l.route === 'GET /me')).toMatchObject({ status: 200, apiRequestId: 'apigw-4', function_request_id: 'lambda-4' });
  });

  it('logs a 500 with its route and request ids, answers a generic message, and never echoes the error', async () => {
    const token = secrets.at(-1)!;
    const dataset = await invoke('datasets', event('POST', '/datasets/carol', { requestId: 'apigw-d', headers: { authorization: `Bearer ${token}` }, body: { name: 'files', accessLevel: 'private' } }), 'lambda-d');
    expect(dataset.statusCode).toBe(201);
    const boundary = 'logging-boundary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="secrets.txt"\r\nContent-Type: text/plain\r\n\r\npassword=${PASSWORD}\r\n--${boundary}--\r\n`;
    // This function is given no bucket: storing the file fails, an internal error.
    const res = await invoke('assets', event('POST', '/datasets/carol/files/assets', { requestId: 'apigw-5', headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body }), 'lambda-5');
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body!).message).toMatch(/^Internal server error/);
    expect(res.body).not.toMatch(/BUCKET/);
    const route = 'POST /datasets/{account}/{dataset}/assets';
    const error = lines().find((l) => l.level === 'ERROR' && l.route === route);
    expect(error).toMatchObject({ apiRequestId: 'apigw-5', function_request_id: 'lambda-5', function_name: 'assets' });
    expect(JSON.stringify(error)).toMatch(/BUCKET_NAME is not set/);
    expect(lines().find((l) => l.message === 'request' && l.route === route)).toMatchObject({ status: 500 });
  });

  it('starts every invocation without the last one\'s keys (an EventBridge event has no route)', async () => {
    const settle = await import('../../functions/handlers/flow-settle.js');
    await captured(() => settle.handler({ detail: {} } as never, contextOf('flow-settle', 'lambda-6')));
    const warning = lines().find((l) => l.function_request_id === 'lambda-6');
    expect(warning).toMatchObject({ level: 'WARN', message: 'flow-settle: ignoring a malformed event', function_name: 'flow-settle' });
    expect(warning!.route).toBeUndefined();
    expect(warning!.apiRequestId).toBeUndefined();
  });

  it('wrote none of the secrets the requests carried', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    const text = written.join('\n');
    expect(text.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
