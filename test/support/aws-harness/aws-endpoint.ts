/**
 * The one endpoint every function's AWS SDK talks to (AWS_ENDPOINT_URL). Each call is identified
 * by its SigV4 credential (access key id = the calling function's logical id), mapped to its IAM
 * action and resource, evaluated against the caller's role policy, refused as the service refuses
 * (its AccessDenied shape) or served: DynamoDB by dynalite and S3 by s3rver (forwarded), Lambda
 * by the harness runtime, Step Functions / EventBridge / Scheduler / SESv2 by stateful fakes here.
 */
import '../../../functions/adapters/local/promise-with-resolvers.js';
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExecutionError, StateMachine } from 'aws-local-stepfunctions';
import { forLocalRun, taskStates } from '../../../statemachines/local.js';
import type { AslDefinition } from '../../../statemachines/asl.js';
import { matchesPattern } from './event-patterns.js';
import type { FakeEcs } from './ecs.js';
import type { IamEvaluator, IamRequest } from './iam.js';
import type { InvokeResult, LambdaRuntime } from './lambda-runtime.js';
import { ACCOUNT, REGION, type DeployedApp, type DeployedFunction } from './template.js';

/** The access key id of calls made as the operator (the admin CLI, test inspection): not IAM-checked, like an administrator. */
export const OPERATOR_KEY = 'HARNESS-OPERATOR';

/** Who signed a call: the operator, a function (its role), or a role itself (an ECS task's task role). */
type Caller = { kind: 'operator' } | { kind: 'function'; fn: DeployedFunction } | { kind: 'role'; roleLogicalId: string };

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'content-type': 'application/x-amz-json-1.0', ...headers },
  body: JSON.stringify(body),
});
/** AWS JSON protocol error (`__type`). */
const jsonError = (status: number, type: string, message: string): Reply => json(status, { __type: type, message }, { 'x-amzn-errortype': type });
/** REST-JSON error (Lambda, Scheduler, SESv2): the type in a header. */
const restError = (status: number, type: string, message: string): Reply => ({
  status,
  headers: { 'content-type': 'application/json', 'x-amzn-errortype': type },
  body: JSON.stringify({ message, Message: message, Type: 'User' }),
});
const s3Error = (status: number, code: string, message: string): Reply => ({
  status,
  headers: { 'content-type': 'application/xml' },
  body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</Message><RequestId>${randomUUID()}</RequestId></Error>`,
});

export interface Execution {
  arn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  startDate: number;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
  abort?: () => void;
}

export interface Schedule {
  name: string;
  groupName: string;
  input: Record<string, any>;
}

export interface SentEmail {
  from: string;
  to: string[];
  subject: string;
  text?: string;
  html?: string;
  sentBy: string;
}

export interface AwsEndpointOptions {
  app: DeployedApp;
  iam: IamEvaluator;
  runtime: LambdaRuntime;
  dynamoUrl: string;
  s3Url: string;
  /** ECS (RunTask, StopTask, DescribeTasks, ListTasks) and the tasks it runs. */
  ecs: FakeEcs;
}

export class AwsEndpoint {
  private server!: Server;
  url = '';
  readonly stateMachines = new Map<string, { name: string; definition: string; roleArn: string; created: number }>();
  readonly executions = new Map<string, Execution>();
  readonly schedules = new Map<string, Schedule>();
  readonly emails: SentEmail[] = [];
  /** Every event put on the default bus (ours and the services'), in order. */
  readonly events: Record<string, any>[] = [];
  /** Failed asynchronous invocations (after their retries), for tests to assert on. */
  readonly asyncFailures: { functionName: string; error: unknown }[] = [];
  private readonly taskWaits = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  /** Task tokens that received SendTaskHeartbeat (long flow tasks on the worker task), in order. */
  readonly heartbeats: string[] = [];
  /** Synchronous invocations still to throttle, by function name (see throttle()). */
  private readonly throttled = new Map<string, number>();
  /** Invocations Lambda throttled (TooManyRequestsException), in order. */
  readonly throttles: { functionName: string }[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly o: AwsEndpointOptions) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const e of this.executions.values()) e.abort?.();
    for (const w of this.taskWaits.values()) w.reject(new Error('harness stopped'));
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  /** Resolves when no asynchronous invocation, event delivery or execution is under way (bounded). */
  async idle(timeoutMs = 120_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (let i = 0; i < 10_000 && this.inFlight.size > 0; i++) {
      if (Date.now() > until) throw new Error(`harness: still busy after ${timeoutMs} ms (${this.inFlight.size} under way)`);
      await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => setTimeout(r, 200))]);
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => {});
    return p;
  }

  private caller(req: IncomingMessage, query: URLSearchParams): { caller?: Caller; service?: string } {
    const auth = String(req.headers.authorization ?? '');
    const cred = /Credential=([^/]+)\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(auth) ?? /^([^/]+)\/\d{8}\/[^/]+\/([^/]+)\/aws4_request$/.exec(query.get('X-Amz-Credential') ?? '');
    if (!cred) return {};
    const [, key, service] = cred as unknown as [string, string, string];
    if (key === OPERATOR_KEY) return { caller: { kind: 'operator' }, service };
    const fn = this.o.app.functions.find((f) => f.logicalId === key);
    if (fn) return { caller: { kind: 'function', fn }, service };
    // ECS tasks call with their task role's logical id (see ecs.ts).
    return { caller: this.o.app.roles.has(key) ? { kind: 'role', roleLogicalId: key } : undefined, service };
  }

  /** IAM check of every request; the first refusal, or undefined when all are allowed. */
  private async refused(caller: Caller, requests: IamRequest[]): Promise<string | undefined> {
    if (caller.kind === 'operator') return undefined;
    const [role, session] = caller.kind === 'function' ? [caller.fn.roleLogicalId, caller.fn.name] : [caller.roleLogicalId, 'ecs-task'];
    for (const r of requests) {
      const d = await this.o.iam.decide(role, session, r);
      if (!d.allowed) return d.message;
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://x');
    let reply: Reply;
    try {
      const { caller, service } = this.caller(req, url.searchParams);
      if (!caller || !service) {
        reply = service === 's3' || !service ? s3Error(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.') : jsonError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
      } else if (service === 's3') {
        return await this.s3(caller, req, res, url, body);
      } else if (service === 'dynamodb') {
        return await this.dynamodb(caller, req, res, body);
      } else if (service === 'lambda') reply = await this.lambda(caller, req, url, body);
      else if (service === 'states') reply = await this.states(caller, req, body);
      else if (service === 'events') reply = await this.eventsApi(caller, req, body);
      else if (service === 'scheduler') reply = await this.scheduler(caller, req, url, body);
      else if (service === 'ses') reply = await this.ses(caller, url, body);
      else if (service === 'ecs') {
        const op = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
        const [role, session] = caller.kind === 'operator' ? [undefined, 'operator'] : caller.kind === 'function' ? [caller.fn.roleLogicalId, caller.fn.name] : [caller.roleLogicalId, 'ecs-task'];
        reply = await this.o.ecs.handle(role, session, op, JSON.parse(body.toString('utf8') || '{}'));
      }
      else reply = jsonError(400, 'UnknownOperationException', `harness: service ${service} not modelled`);
    } catch (e) {
      reply = jsonError(500, 'InternalFailure', `harness: ${(e as Error).stack ?? e}`);
    }
    res.writeHead(reply.status, { 'x-amzn-requestid': randomUUID(), ...reply.headers });
    res.end(reply.body);
  }

  // ---- DynamoDB: X-Amz-Target + TableName/IndexName, forwarded to dynalite.

  private async dynamodb(caller: Caller, req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const op = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    const input = JSON.parse(body.toString('utf8') || '{}');
    const table = (name: string, index?: string) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}${index ? `/index/${index}` : ''}`;
    const requests: IamRequest[] = [];
    if (op === 'BatchGetItem' || op === 'BatchWriteItem') for (const name of Object.keys(input.RequestItems ?? {})) requests.push({ action: `dynamodb:${op}`, resource: table(name) });
    else if (op === 'TransactWriteItems' || op === 'TransactGetItems') {
      const actions: Record<string, string> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem', Get: 'GetItem' };
      for (const item of input.TransactItems ?? []) for (const [k, v] of Object.entries(item)) requests.push({ action: `dynamodb:${actions[k]}`, resource: table((v as any).TableName) });
    } else if (input.TableName) requests.push({ action: `dynamodb:${op}`, resource: table(input.TableName, input.IndexName) });
    else requests.push({ action: `dynamodb:${op}`, resource: '*' });
    const denied = await this.refused(caller, requests);
    if (denied) return this.send(res, jsonError(400, 'com.amazon.coral.service#AccessDeniedException', denied));
    await this.forward(this.o.dynamoUrl, req, res, body, req.url ?? '/');
  }

  // ---- S3: method + path + query → action and ARN; forwarded to s3rver without the signature.

  private s3Requests(method: string, url: URL, headers: IncomingMessage['headers'], body: Buffer): { requests: IamRequest[]; bucket: string; key?: string } {
    const [, bucket = '', ...rest] = url.pathname.split('/');
    // `/bucket` and `/bucket/` are the bucket; anything after is the object key.
    const key = rest.join('/') ? decodeURIComponent(rest.join('/')) : undefined;
    const q = url.searchParams;
    const b = `arn:aws:s3:::${bucket}`;
    const o = `${b}/${key}`;
    const one = (action: string, resource: string, context?: Record<string, string>) => ({ requests: [{ action: `s3:${action}`, resource, context }], bucket, key });
    if (key === undefined) {
      if (method === 'POST' && q.has('delete')) {
        const keys = [...body.toString('utf8').matchAll(/<Object>([\s\S]*?)<\/Object>/g)].map((m) => ({
          key: /<Key>([\s\S]*?)<\/Key>/.exec(m[1]!)?.[1]?.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'") ?? '',
          version: /<VersionId>/.test(m[1]!),
        }));
        return { requests: keys.map((k) => ({ action: k.version ? 's3:DeleteObjectVersion' : 's3:DeleteObject', resource: `${b}/${k.key}` })), bucket };
      }
      if (method === 'GET' && q.has('versions')) return one('ListBucketVersions', b);
      if (method === 'GET' && q.has('uploads')) return one('ListBucketMultipartUploads', b);
      if (method === 'GET' && q.has('location')) return one('GetBucketLocation', b);
      if (method === 'GET' || method === 'HEAD') return one('ListBucket', b, q.has('prefix') ? { 's3:prefix': q.get('prefix')! } : undefined);
      if (method === 'PUT') return one('CreateBucket', b);
      if (method === 'DELETE') return one('DeleteBucket', b);
      return one(`Unknown${method}Bucket`, b);
    }
    if (method === 'GET' || method === 'HEAD') {
      if (q.has('uploadId')) return one('ListMultipartUploadParts', o);
      if (q.has('tagging')) return one(q.has('versionId') ? 'GetObjectVersionTagging' : 'GetObjectTagging', o);
      return one(q.has('versionId') ? 'GetObjectVersion' : 'GetObject', o);
    }
    if (method === 'PUT') {
      if (q.has('tagging')) return one('PutObjectTagging', o);
      const source = headers['x-amz-copy-source'];
      if (source) {
        const [src, version] = decodeURIComponent(String(source)).replace(/^\//, '').split('?versionId=');
        return { requests: [{ action: version ? 's3:GetObjectVersion' : 's3:GetObject', resource: `arn:aws:s3:::${src}` }, { action: 's3:PutObject', resource: o }], bucket, key };
      }
      return one('PutObject', o);
    }
    if (method === 'POST') return one('PutObject', o); // CreateMultipartUpload / CompleteMultipartUpload
    if (method === 'DELETE') {
      if (q.has('uploadId')) return one('AbortMultipartUpload', o);
      if (q.has('tagging')) return one('DeleteObjectTagging', o);
      return one(q.has('versionId') ? 'DeleteObjectVersion' : 'DeleteObject', o);
    }
    return one(`Unknown${method}Object`, o);
  }

  private async s3(caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer): Promise<void> {
    const method = req.method ?? 'GET';
    const { requests, bucket, key } = this.s3Requests(method, url, req.headers, body);
    const denied = await this.refused(caller, requests);
    if (denied) return this.send(res, s3Error(403, 'AccessDenied', denied));
    // s3rver checks signatures of its own key only: the harness has checked identity and policy,
    // so the call goes on unsigned (s3rver serves anonymous calls).
    const q = new URLSearchParams(url.search);
    for (const k of [...q.keys()]) if (/^X-Amz-(Algorithm|Credential|Date|Expires|SignedHeaders|Signature|Security-Token)$/i.test(k)) q.delete(k);
    // Response header overrides (`response-content-disposition`, ...) are for signed requests
    // only, which s3rver no longer sees: the harness applies them to the answer itself.
    const overrides: Record<string, string> = {};
    for (const k of [...q.keys()]) {
      const m = /^response-(content-type|content-disposition|content-language|content-encoding|cache-control|expires)$/i.exec(k);
      if (m) {
        overrides[m[1]!.toLowerCase()] = q.get(k)!;
        q.delete(k);
      }
    }
    const path = `${url.pathname}${q.size ? `?${q}` : ''}`;
    const headers = { ...req.headers };
    delete headers.authorization;
    const status = await this.forward(this.o.s3Url, req, res, body, path, headers, overrides);
    // S3 → EventBridge for buckets that send their events there ("Object Created"; keys URL-encoded as S3 does).
    const created = status < 300 && key !== undefined && ((method === 'PUT' && !url.searchParams.has('partNumber') && !url.searchParams.has('tagging')) || (method === 'POST' && url.searchParams.has('uploadId')));
    const target = this.o.app.buckets.find((b) => b.name === bucket);
    if (created && target?.eventBridge) {
      const encodedKey = encodeURIComponent(key).replace(/%2F/g, '/').replace(/%20/g, '+');
      this.putEvent({ source: 'aws.s3', 'detail-type': 'Object Created', resources: [target.arn], detail: { version: '0', bucket: { name: bucket }, object: { key: encodedKey, size: body.length }, reason: method === 'POST' ? 'CompleteMultipartUpload' : req.headers['x-amz-copy-source'] ? 'CopyObject' : 'PutObject' } });
    }
  }

  private send(res: ServerResponse, reply: Reply): void {
    res.writeHead(reply.status, { 'x-amzn-requestid': randomUUID(), ...reply.headers });
    res.end(reply.body);
  }

  private forward(base: string, req: IncomingMessage, res: ServerResponse, body: Buffer, path: string, headers = req.headers, overrides: Record<string, string> = {}): Promise<number> {
    const target = new URL(base);
    return new Promise((resolve, reject) => {
      const out = httpRequest({ host: target.hostname, port: target.port, method: req.method, path, headers: { ...headers, host: target.host, 'content-length': String(body.length) } }, (answer) => {
        const ok = (answer.statusCode ?? 500) < 300;
        res.writeHead(answer.statusCode ?? 500, ok ? { ...answer.headers, ...overrides } : answer.headers);
        answer.pipe(res);
        answer.on('end', () => resolve(answer.statusCode ?? 500));
        answer.on('error', reject);
      });
      out.on('error', reject);
      out.end(body);
    });
  }

  // ---- Lambda: Invoke (RequestResponse and Event).

  /**
   * Lambda throttles the next `count` synchronous invocations of `fn` (the Invoke API, Step
   * Functions' Task states) as it does when the function is out of concurrency: 429
   * TooManyRequestsException before the function runs, which Step Functions reports as
   * `Lambda.TooManyRequestsException`. Event invocations are not throttled at the API (Lambda
   * queues them and retries throttles itself).
   */
  throttle(fn: DeployedFunction, count: number): void {
    this.throttled.set(fn.name, count);
  }

  private takeThrottle(fn: DeployedFunction): boolean {
    const left = this.throttled.get(fn.name) ?? 0;
    if (left <= 0) return false;
    this.throttled.set(fn.name, left - 1);
    this.throttles.push({ functionName: fn.name });
    return true;
  }

  /** Invokes a function as `caller` would through Lambda (IAM-checked by the caller). */
  async invokeAs(roleLogicalId: string | undefined, target: string, payload: unknown, async: boolean): Promise<InvokeResult | 'denied' | 'not-found' | 'accepted' | 'throttled'> {
    const fn = this.o.runtime.byName(target);
    if (!fn) return 'not-found';
    if (roleLogicalId) {
      const d = await this.o.iam.decide(roleLogicalId, 'harness', { action: 'lambda:InvokeFunction', resource: fn.arn });
      if (!d.allowed) return 'denied';
    }
    if (!async) return this.takeThrottle(fn) ? 'throttled' : this.o.runtime.invoke(fn, payload);
    const size = Buffer.byteLength(JSON.stringify(payload ?? null));
    if (size > 256 * 1024) return { ok: false, kind: 'TooLarge', error: { errorType: 'RequestEntityTooLargeException', errorMessage: `${size} byte payload is too large for the Event invocation type (limit 262144 bytes)` } };
    this.invokeAsync(fn, payload, fn.asyncRetries);
    return 'accepted';
  }

  /**
   * Lambda's asynchronous invocation: queued, retried `retries` times on error. Lambda waits about
   * a minute, then two, between attempts; the harness waits half a second per attempt, so a retry
   * still comes after the work that was racing it.
   */
  invokeAsync(fn: DeployedFunction, payload: unknown, retries: number): void {
    this.track(
      (async () => {
        let last: unknown;
        for (let attempt = 0; attempt <= retries; attempt++) {
          if (attempt > 0) await new Promise((r) => setTimeout(r, 500 * attempt));
          const r = await this.o.runtime.invoke(fn, payload, { async: true });
          if (r.ok) return;
          last = r.error;
        }
        this.asyncFailures.push({ functionName: fn.name, error: last });
      })(),
    );
  }

  private async lambda(caller: Caller, req: IncomingMessage, url: URL, body: Buffer): Promise<Reply> {
    const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(url.pathname);
    if (!m || req.method !== 'POST') return restError(400, 'InvalidRequestContentException', `harness: Lambda ${req.method} ${url.pathname} not modelled`);
    const name = decodeURIComponent(m[1]!);
    const fn = this.o.runtime.byName(name);
    const arn = fn?.arn ?? (name.startsWith('arn:') ? name : `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`);
    const denied = await this.refused(caller, [{ action: 'lambda:InvokeFunction', resource: arn }]);
    if (denied) return restError(403, 'AccessDeniedException', denied);
    if (!fn) return restError(404, 'ResourceNotFoundException', `Function not found: ${arn}`);
    const async = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse') === 'Event';
    const payload = body.length ? JSON.parse(body.toString('utf8')) : {};
    const limit = async ? 256 * 1024 : 6 * 1024 * 1024;
    if (body.length > limit) return restError(413, 'RequestEntityTooLargeException', `${body.length} byte payload is too large for the ${async ? 'Event' : 'RequestResponse'} invocation type (limit ${limit} bytes)`);
    if (async) {
      this.invokeAsync(fn, payload, fn.asyncRetries);
      return { status: 202, body: '' };
    }
    if (this.takeThrottle(fn)) return restError(429, 'TooManyRequestsException', 'Rate Exceeded.');
    const r = await this.o.runtime.invoke(fn, payload);
    if (r.ok) return { status: 200, headers: { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' }, body: r.payload };
    return { status: 200, headers: { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST', 'x-amz-function-error': 'Unhandled' }, body: JSON.stringify(r.error) };
  }

  // ---- EventBridge: PutEvents on the default bus → the template's rules → their targets.

  private async eventsApi(caller: Caller, req: IncomingMessage, body: Buffer): Promise<Reply> {
    const op = String(req.headers['x-amz-target'] ?? '').split('.').pop();
    if (op !== 'PutEvents') return jsonError(400, 'UnknownOperationException', `harness: EventBridge ${op} not modelled`);
    const input = JSON.parse(body.toString('utf8'));
    const bus = `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/default`;
    const entries = (input.Entries ?? []) as any[];
    const denied = await this.refused(
      caller,
      entries.map((e) => ({ action: 'events:PutEvents', resource: e.EventBusName?.startsWith('arn:') ? e.EventBusName : bus, context: { 'events:source': e.Source, 'events:detail-type': e.DetailType } })),
    );
    if (denied) return jsonError(400, 'AccessDeniedException', denied);
    const results = entries.map((e) => {
      const id = this.putEvent({ source: e.Source, 'detail-type': e.DetailType, resources: e.Resources ?? [], detail: JSON.parse(e.Detail ?? '{}') });
      return { EventId: id };
    });
    return json(200, { FailedEntryCount: 0, Entries: results }, { 'content-type': 'application/x-amz-json-1.1' });
  }

  /** Puts one event on the default bus: every matching rule's targets are invoked asynchronously. */
  putEvent(e: { source: string; 'detail-type': string; resources?: string[]; detail: unknown }): string {
    const event = { version: '0', id: randomUUID(), 'detail-type': e['detail-type'], source: e.source, account: ACCOUNT, time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), region: REGION, resources: e.resources ?? [], detail: e.detail };
    this.events.push(event);
    for (const rule of this.o.app.rules) {
      if (!rule.pattern || !matchesPattern(rule.pattern, event)) continue;
      for (const target of rule.targets) {
        const fn = this.o.runtime.byName(target.arn);
        // EventBridge's own retries (when it cannot invoke) are not modelled; Lambda's async retries are.
        if (fn) this.invokeAsync(fn, event, fn.asyncRetries);
      }
    }
    return event.id;
  }

  /** A scheduled EventBridge rule's turn: its targets get the "Scheduled Event" (or the target's Input), asynchronously. */
  fireRule(logicalIdPrefix: string): void {
    const rule = this.o.app.rules.find((r) => r.schedule && r.logicalId.startsWith(logicalIdPrefix));
    if (!rule) throw new Error(`harness: no scheduled rule ${logicalIdPrefix} (have: ${this.o.app.rules.filter((r) => r.schedule).map((r) => r.logicalId).join(', ') || 'none'})`);
    const event = { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', account: ACCOUNT, time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), region: REGION, resources: [`arn:aws:events:${REGION}:${ACCOUNT}:rule/${rule.logicalId}`], detail: {} };
    for (const target of rule.targets) {
      const fn = this.o.runtime.byName(target.arn);
      if (fn) this.invokeAsync(fn, target.input ? JSON.parse(target.input) : event, fn.asyncRetries);
    }
  }

  // ---- Step Functions: state machines and executions run by aws-local-stepfunctions.

  private async states(caller: Caller, req: IncomingMessage, body: Buffer): Promise<Reply> {
    const op = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    const input = JSON.parse(body.toString('utf8') || '{}');
    const smArn = (name: string) => `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
    const deny = async (requests: IamRequest[]) => {
      const d = await this.refused(caller, requests);
      return d ? jsonError(400, 'AccessDeniedException', d) : undefined;
    };
    switch (op) {
      case 'CreateStateMachine': {
        const arn = smArn(input.name);
        const denied = await deny([
          { action: 'states:CreateStateMachine', resource: arn },
          ...(input.tags?.length ? [{ action: 'states:TagResource', resource: arn }] : []),
          { action: 'iam:PassRole', resource: input.roleArn, context: { 'iam:PassedToService': 'states.amazonaws.com' } },
        ]);
        if (denied) return denied;
        const existing = this.stateMachines.get(arn);
        if (existing && (existing.definition !== input.definition || existing.roleArn !== input.roleArn)) return jsonError(400, 'StateMachineAlreadyExists', `State Machine Already Exists: '${arn}'`);
        try {
          new StateMachine(JSON.parse(input.definition), { validationOptions: { checkArn: false, checkPaths: false } });
        } catch (e) {
          return jsonError(400, 'InvalidDefinition', `Invalid State Machine Definition: '${(e as Error).message}'`);
        }
        if (!existing) this.stateMachines.set(arn, { name: input.name, definition: input.definition, roleArn: input.roleArn, created: Date.now() / 1000 });
        return json(200, { stateMachineArn: arn, creationDate: this.stateMachines.get(arn)!.created });
      }
      case 'DescribeStateMachine': {
        const denied = await deny([{ action: 'states:DescribeStateMachine', resource: input.stateMachineArn }]);
        if (denied) return denied;
        const sm = this.stateMachines.get(input.stateMachineArn);
        if (!sm) return jsonError(400, 'StateMachineDoesNotExist', `State Machine Does Not Exist: '${input.stateMachineArn}'`);
        return json(200, { stateMachineArn: input.stateMachineArn, name: sm.name, status: 'ACTIVE', definition: sm.definition, roleArn: sm.roleArn, type: 'STANDARD', creationDate: sm.created });
      }
      case 'DeleteStateMachine': {
        const denied = await deny([{ action: 'states:DeleteStateMachine', resource: input.stateMachineArn }]);
        if (denied) return denied;
        this.stateMachines.delete(input.stateMachineArn);
        return json(200, {});
      }
      case 'TagResource': {
        const denied = await deny([{ action: 'states:TagResource', resource: input.resourceArn }]);
        return denied ?? json(200, {});
      }
      case 'StartExecution': {
        const denied = await deny([{ action: 'states:StartExecution', resource: input.stateMachineArn }]);
        if (denied) return denied;
        const sm = this.stateMachines.get(input.stateMachineArn);
        if (!sm) return jsonError(400, 'StateMachineDoesNotExist', `State Machine Does Not Exist: '${input.stateMachineArn}'`);
        const name = input.name ?? randomUUID();
        const arn = `arn:aws:states:${REGION}:${ACCOUNT}:execution:${sm.name}:${name}`;
        const existing = this.executions.get(arn);
        if (existing) {
          if (existing.input === (input.input ?? '{}') && existing.status === 'RUNNING') return json(200, { executionArn: arn, startDate: existing.startDate });
          return jsonError(400, 'ExecutionAlreadyExists', `Execution Already Exists: '${arn}'`);
        }
        const execution = this.startExecution(arn, input.stateMachineArn, name, sm, input.input ?? '{}');
        return json(200, { executionArn: arn, startDate: execution.startDate });
      }
      case 'DescribeExecution': {
        const denied = await deny([{ action: 'states:DescribeExecution', resource: input.executionArn }]);
        if (denied) return denied;
        const e = this.executions.get(input.executionArn);
        if (!e) return jsonError(400, 'ExecutionDoesNotExist', `Execution Does Not Exist: '${input.executionArn}'`);
        return json(200, { executionArn: e.arn, stateMachineArn: e.stateMachineArn, name: e.name, status: e.status, startDate: e.startDate, stopDate: e.stopDate, input: e.input, output: e.output, error: e.error, cause: e.cause });
      }
      case 'StopExecution': {
        const denied = await deny([{ action: 'states:StopExecution', resource: input.executionArn }]);
        if (denied) return denied;
        const e = this.executions.get(input.executionArn);
        if (!e) return jsonError(400, 'ExecutionDoesNotExist', `Execution Does Not Exist: '${input.executionArn}'`);
        if (e.status === 'RUNNING') {
          e.error = input.error;
          e.cause = input.cause;
          this.endExecution(e, 'ABORTED');
          e.abort?.();
        }
        return json(200, { stopDate: Date.now() / 1000 });
      }
      case 'SendTaskSuccess':
      case 'SendTaskFailure': {
        const denied = await deny([{ action: `states:${op}`, resource: '*' }]);
        if (denied) return denied;
        const wait = this.taskWaits.get(input.taskToken);
        if (!wait) return jsonError(400, 'TaskDoesNotExist', 'Task Does Not Exist');
        this.taskWaits.delete(input.taskToken);
        if (op === 'SendTaskSuccess') wait.resolve(JSON.parse(input.output));
        else wait.reject(Object.assign(new Error(input.cause ?? ''), { name: input.error ?? 'States.TaskFailed' }));
        return json(200, {});
      }
      case 'SendTaskHeartbeat': {
        // A long task on the worker task reports it still works (HeartbeatSeconds is not enforced here).
        const denied = await deny([{ action: 'states:SendTaskHeartbeat', resource: '*' }]);
        if (denied) return denied;
        if (!this.taskWaits.has(input.taskToken)) return jsonError(400, 'TaskDoesNotExist', 'Task Does Not Exist');
        this.heartbeats.push(input.taskToken);
        return json(200, {});
      }
      default:
        return jsonError(400, 'UnknownOperationException', `harness: Step Functions ${op} not modelled`);
    }
  }

  private startExecution(arn: string, stateMachineArn: string, name: string, sm: { definition: string; roleArn: string }, input: string): Execution {
    const definition = JSON.parse(sm.definition) as AslDefinition;
    const states = new Map(taskStates(definition));
    const roleLogicalId = sm.roleArn.split('/').pop()!;
    const token = `${arn}#task-token`;
    const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
    for (const [stateName, state] of states) {
      handlers[stateName] = async (params: any) => {
        const resource = String((state as { Resource?: string }).Resource);
        const waitForToken = resource.endsWith('.waitForTaskToken');
        const integration = resource.startsWith('arn:aws:states:::lambda:invoke');
        const target = integration ? params.FunctionName : resource;
        const payload = integration ? params.Payload : params;
        const waited = waitForToken ? new Promise((resolve, reject) => this.taskWaits.set(token, { resolve, reject })) : undefined;
        // The state machine's role invokes the function (IAM-checked as that role).
        const r = await this.invokeAs(roleLogicalId, target, payload, false);
        if (r === 'denied') throw Object.assign(new Error(`User: arn:aws:sts::${ACCOUNT}:assumed-role/${roleLogicalId} is not authorized to perform: lambda:InvokeFunction on resource: ${target}`), { name: 'Lambda.AWSLambdaException' });
        if (r === 'not-found') throw Object.assign(new Error(`Function not found: ${target}`), { name: 'Lambda.ResourceNotFoundException' });
        if (r === 'throttled') throw Object.assign(new Error('Rate Exceeded. (Service: Lambda, Status Code: 429, Error Code: TooManyRequestsException)'), { name: 'Lambda.TooManyRequestsException' });
        if (r !== 'accepted' && !r.ok) {
          this.taskWaits.delete(token);
          // Step Functions: Error is the function's errorType, Cause its whole error payload.
          throw Object.assign(new Error(JSON.stringify(r.error)), { name: r.error.errorType });
        }
        if (waited) return waited;
        const out = r !== 'accepted' && r.ok ? JSON.parse(r.payload) : null;
        return integration ? { ExecutedVersion: '$LATEST', Payload: out, StatusCode: 200 } : out;
      };
    }
    const execution: Execution = { arn, stateMachineArn, name, input, status: 'RUNNING', startDate: Date.now() / 1000 };
    this.executions.set(arn, execution);
    const machine = new StateMachine(forLocalRun(definition) as never, { validationOptions: { noValidate: true } });
    const run = machine.run(JSON.parse(input), { context: { Task: { Token: token } } as never, overrides: { taskResourceLocalHandlers: handlers as never } });
    execution.abort = () => run.abort();
    this.track(
      run.result.then(
        (output: unknown) => {
          execution.output = JSON.stringify(output);
          this.endExecution(execution, 'SUCCEEDED');
        },
        (error: unknown) => {
          if (execution.status !== 'RUNNING') return;
          const e = error as Error & { cause?: { name?: string; message?: string } };
          if (e?.name === 'ExecutionAbortedError') return this.endExecution(execution, 'ABORTED');
          if (e?.name === 'ExecutionTimeoutError') return this.endExecution(execution, 'TIMED_OUT');
          if (error instanceof ExecutionError) {
            execution.error = e.cause?.name ?? 'States.Runtime';
            execution.cause = e.cause?.message;
          } else {
            execution.error = e?.name ?? 'States.Runtime';
            execution.cause = e?.message ?? String(error);
          }
          this.endExecution(execution, 'FAILED');
        },
      ),
    );
    return execution;
  }

  private endExecution(e: Execution, status: Execution['status']): void {
    if (e.status !== 'RUNNING') return;
    e.status = status;
    e.stopDate = Date.now() / 1000;
    this.taskWaits.delete(`${e.arn}#task-token`);
    const detail = { executionArn: e.arn, stateMachineArn: e.stateMachineArn, name: e.name, status, startDate: Math.round(e.startDate * 1000), stopDate: Math.round(e.stopDate * 1000), input: e.input, output: e.output ?? null, error: e.error ?? null, cause: e.cause ?? null };
    this.putEvent({ source: 'aws.states', 'detail-type': 'Step Functions Execution Status Change', resources: [e.arn], detail });
  }

  // ---- EventBridge Scheduler (REST): Create/Update/Delete/GetSchedule; fired by tests.

  private async scheduler(caller: Caller, req: IncomingMessage, url: URL, body: Buffer): Promise<Reply> {
    const m = /^\/schedules\/([^/]+)$/.exec(url.pathname);
    if (!m) return restError(400, 'ValidationException', `harness: Scheduler ${req.method} ${url.pathname} not modelled`);
    const name = decodeURIComponent(m[1]!);
    const input = body.length ? JSON.parse(body.toString('utf8')) : {};
    const group = input.GroupName ?? url.searchParams.get('groupName') ?? 'default';
    const arn = `arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule/${group}/${name}`;
    const key = `${group}/${name}`;
    const action = { POST: 'CreateSchedule', PUT: 'UpdateSchedule', DELETE: 'DeleteSchedule', GET: 'GetSchedule' }[req.method ?? ''] ?? 'Unknown';
    const requests: IamRequest[] = [{ action: `scheduler:${action}`, resource: arn }];
    if ((action === 'CreateSchedule' || action === 'UpdateSchedule') && input.Target?.RoleArn) {
      requests.push({ action: 'iam:PassRole', resource: input.Target.RoleArn, context: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    }
    const denied = await this.refused(caller, requests);
    if (denied) return restError(403, 'AccessDeniedException', denied);
    if (!this.o.app.scheduleGroups.includes(group) && group !== 'default') return restError(404, 'ResourceNotFoundException', `Schedule group ${group} does not exist.`);
    const existing = this.schedules.get(key);
    switch (action) {
      case 'CreateSchedule':
        if (existing) return restError(409, 'ConflictException', `Schedule ${name} already exists.`);
        this.schedules.set(key, { name, groupName: group, input });
        return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ScheduleArn: arn }) };
      case 'UpdateSchedule':
        if (!existing) return restError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
        this.schedules.set(key, { name, groupName: group, input });
        return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ScheduleArn: arn }) };
      case 'DeleteSchedule':
        if (!existing) return restError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
        this.schedules.delete(key);
        return { status: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
      case 'GetSchedule':
        if (!existing) return restError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
        return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...existing.input, Name: name, GroupName: group, Arn: arn }) };
      default:
        return restError(400, 'ValidationException', `harness: Scheduler ${req.method} not modelled`);
    }
  }

  /**
   * EventBridge Scheduler's turn: invokes the schedule's target as its role (IAM-checked),
   * asynchronously, with the schedule's Input. Throws when there is no such schedule or it is disabled.
   */
  fireSchedule(name: string): void {
    const schedule = [...this.schedules.values()].find((s) => s.name === name || `${s.groupName}/${s.name}` === name);
    if (!schedule) throw new Error(`harness: no schedule ${name} (have: ${[...this.schedules.keys()].join(', ') || 'none'})`);
    if (schedule.input.State === 'DISABLED') throw new Error(`harness: schedule ${name} is disabled`);
    const target = schedule.input.Target;
    const role = String(target.RoleArn).split('/').pop()!;
    this.track(
      (async () => {
        const r = await this.invokeAs(role, target.Arn, target.Input ? JSON.parse(target.Input) : {}, true);
        if (r !== 'accepted') this.asyncFailures.push({ functionName: target.Arn, error: r });
      })(),
    );
  }

  // ---- SESv2 SendEmail: recorded.

  private async ses(caller: Caller, url: URL, body: Buffer): Promise<Reply> {
    if (url.pathname !== '/v2/email/outbound-emails') return restError(400, 'BadRequestException', `harness: SES ${url.pathname} not modelled`);
    const input = JSON.parse(body.toString('utf8'));
    const from = String(input.FromEmailAddress ?? '');
    const address = /<([^>]+)>/.exec(from)?.[1] ?? from;
    const domain = address.split('@')[1] ?? '';
    const identity = (n: string) => `arn:aws:ses:${REGION}:${ACCOUNT}:identity/${n}`;
    const context = { 'ses:FromAddress': address };
    // SES authorizes against the identity that is verified: either the address's or its domain's may allow it.
    const byAddress = await this.refused(caller, [{ action: 'ses:SendEmail', resource: identity(address), context }]);
    const byDomain = byAddress && (await this.refused(caller, [{ action: 'ses:SendEmail', resource: identity(domain), context }]));
    if (byAddress && byDomain) return restError(403, 'AccessDeniedException', byDomain);
    const simple = input.Content?.Simple ?? {};
    this.emails.push({
      from: address,
      to: input.Destination?.ToAddresses ?? [],
      subject: simple.Subject?.Data ?? '',
      text: simple.Body?.Text?.Data,
      html: simple.Body?.Html?.Data,
      sentBy: caller.kind === 'function' ? caller.fn.name : caller.kind === 'role' ? caller.roleLogicalId : 'operator',
    });
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ MessageId: randomUUID() }) };
  }
}
