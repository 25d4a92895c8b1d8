/**
 * The AWS harness: the deployed functions run as AWS runs them, in the test suite.
 *
 * What it is: the app synthesized as `bin/platform.ts` does (real esbuild bundles; cached by a
 * hash of the sources, so a run synthesizes once), every AWS::Lambda::Function run from its asset
 * folder in child processes with the template's exact environment, Handler, MemorySize
 * (--max-old-space-size) and Timeout; API Gateway HTTP API v2 events built from real HTTP
 * requests; every AWS SDK call a function makes evaluated against the policy the template gives
 * its role (@cloud-copilot/iam-simulate) and refused as AWS refuses; dynalite (DynamoDB), s3rver
 * (S3) and stateful fakes for Lambda Invoke, Step Functions (aws-local-stepfunctions), EventBridge
 * (the template's rules), EventBridge Scheduler and SESv2. Payload limits of Lambda (6 MB sync,
 * 256 KB async) and API Gateway (10 MB request, 30 s) hold.
 *
 * Usage (see test/aws/*.test.ts):
 *
 *   import { AwsHarness } from '../support/aws-harness/index.js';
 *   let aws: AwsHarness;
 *   beforeAll(async () => { aws = await AwsHarness.start(); }, 300_000);   // first synth ~70 s, then cached
 *   afterAll(() => aws?.stop());
 *
 *   // The API, over HTTP (as an operator's client would call the deployed ApiUrl):
 *   const res = await fetch(`${aws.apiUrl}/info`);
 *   // Or the e2e client with TestPlatform's surface (request, createUser, createToken, ...):
 *   const platform = await AwsTestPlatform.start();   // from './client.js'; platform.aws is the harness
 *
 *   // Inspect the stores (as the operator: no IAM): aws.dynamo (DynamoDBClient), aws.s3 (S3Client),
 *   // aws.bucket('data' | 'uploads' | 'artifacts'), aws.tableName; recorded state of the fakes:
 *   // aws.endpoint.emails, .events, .executions, .schedules, .asyncFailures; aws.iam.log (every
 *   // IAM decision, refusals included); aws.runtime.invocations; aws.gateway.gatewayErrors.
 *
 *   // Invoke a worker as Lambda would (sync, or `{ async: true }` as an Event):
 *   await aws.invoke('FlowSettle', event);           // logical id prefix, name or ARN
 *   // Throttle a function as Lambda does when out of concurrency (its next 2 sync invocations answer
 *   // 429 TooManyRequestsException; a Task state sees Lambda.TooManyRequestsException):
 *   aws.throttle('FlowTaskWorker', 2);               // recorded in aws.endpoint.throttles
 *   // Fire a schedule as EventBridge Scheduler would (invokes its target as the schedule role):
 *   aws.fireSchedule(name);                          // names: [...aws.endpoint.schedules.values()]
 *   // Fire a scheduled EventBridge rule of the template (its targets get the Scheduled Event):
 *   aws.fireRule('Watchdog');                        // logical id prefix
 *   // Wait until no asynchronous invocation, event or execution is under way:
 *   await aws.idle();
 *
 *   // Remove a grant (one action from one function's role) and show the scenario then fails:
 *   const weaker = await AwsHarness.start({ removeGrants: [{ functionOrRole: 'Accounts', action: 'dynamodb:PutItem' }] });
 *   // A test override of an operator setting (an env var the template leaves unset), on one function:
 *   AwsHarness.start({ testOverridesOfOperatorSettings: [{ function: 'DatasetSparql', name: 'MAX_SERVICE_STATEMENTS', value: '100' }] });
 *
 * ECS (ecs.ts): the template's ECS services run their DesiredCount tasks from start() on (start()
 * waits until each listens; the API's VPC-link routes forward to them); RunTask, StopTask,
 * DescribeTasks and ListTasks are served on the endpoint, IAM-checked, and run tasks as Fargate
 * would start them (containers in dependsOn order, the bundle copied from cdk.out and extracted,
 * Node containers as child processes with the task role's credentials):
 *
 *   aws.ecs.tasks                                    // every task: lastStatus, stopCode, overrides,
 *                                                    // containers[].exitCode/.logTail, ports
 *   await aws.ecs.waitStopped(taskArn);              // bounded; the STOPPED task
 *   aws.ecs.task(arnOrId); aws.ecs.describe(task);   // DescribeTasks' shape
 *   // A task started as a role would (IAM-checked as that role; `undefined` = the operator):
 *   await aws.ecs.handle('ImportsFunction...Role', 'test', 'RunTask', { cluster, taskDefinition, launchType: 'FARGATE', ... });
 *   aws.app.taskDefinitions, aws.app.clusters, aws.app.ecsServices    // what the template declares
 *   // Images other than node, aws-cli and busybox need a runner (before AwsHarness.start):
 *   registerImageRunner('openlink/virtuoso-opensource-7', runner);   // from './ecs.js'
 *
 * Each function's SDK calls carry AWS_ACCESS_KEY_ID = its logical id, and each task's its task
 * role's logical id, which is how the endpoint knows whose policy applies. Function and task
 * output is dropped unless HARNESS_VERBOSE=1 (errors are shown).
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { addMultipartListing } from '../s3rver-multipart.js';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiGateway } from './api-gateway.js';
import { AwsEndpoint, OPERATOR_KEY } from './aws-endpoint.js';
import { FakeEcs } from './ecs.js';
import { IamEvaluator, type RemovedGrant } from './iam.js';
import { LambdaRuntime, type InvokeResult } from './lambda-runtime.js';
import { REPO_ROOT, synthesizedApp } from './synth.js';
import { API_ID, REGION, readDeployedApp, type DeployedApp } from './template.js';

export interface HarnessOptions {
  /** Grants to take away from the template's policies (see IamEvaluator). */
  removeGrants?: RemovedGrant[];
  /**
   * TEST overrides of operator settings: an environment variable the template leaves unset and an
   * operator may set on a deployed function (e.g. MAX_SERVICE_STATEMENTS, lowered so a small
   * dataset is "too large"), set on one function each (or, by a task definition's logical id
   * start, on that task's Node `app` container). Variables the template sets are refused:
   * everything else still runs with the template's exact environment.
   */
  testOverridesOfOperatorSettings?: { function: string; name: string; value: string }[];
}

export class AwsHarness {
  private constructor(
    readonly app: DeployedApp,
    readonly iam: IamEvaluator,
    readonly runtime: LambdaRuntime,
    readonly endpoint: AwsEndpoint,
    readonly gateway: ApiGateway,
    private readonly dynaliteServer: Server,
    private readonly s3rver: S3rver,
    private readonly s3Dir: string,
    readonly dynamo: DynamoDBClient,
    readonly s3: S3Client,
    readonly ecs: FakeEcs,
  ) {}

  /** Base URL of the HTTP API (the stack's ApiUrl output, locally). */
  get apiUrl(): string {
    return this.gateway.url;
  }

  /** The API URL the functions see in their events (https, the API's execute-api domain): the URL an operator passes to the CLI. */
  readonly publicApiUrl = `https://${API_ID}.execute-api.${REGION}.amazonaws.com`;

  get tableName(): string {
    return this.app.table.name;
  }

  /** A bucket's deployed name: 'data', 'uploads' or 'artifacts' (start of its logical id, any case). */
  bucket(kind: string): string {
    const b = this.app.buckets.find((x) => x.logicalId.toLowerCase().startsWith(kind.toLowerCase()));
    if (!b) throw new Error(`harness: no bucket ${kind}`);
    return b.name;
  }

  static async start(options: HarnessOptions = {}): Promise<AwsHarness> {
    const outdir = await synthesizedApp();
    const app = readDeployedApp(outdir);
    for (const o of options.testOverridesOfOperatorSettings ?? []) {
      const fn = app.functions.find((f) => f.logicalId.startsWith(o.function) || f.name === o.function);
      // Or a task definition (logical id start): the setting goes on its Node app container.
      const task = fn ? undefined : app.taskDefinitions.find((t) => t.logicalId.startsWith(o.function));
      const target = fn ?? task?.containers.find((c) => c.name === 'app');
      if (!target) throw new Error(`harness: no function or task definition ${o.function} to set ${o.name} on`);
      const where = fn?.logicalId ?? task!.logicalId;
      if (o.name in target.environment) throw new Error(`harness: the template sets ${o.name} on ${where}; only settings it leaves to the operator may be overridden`);
      target.environment = { ...target.environment, [o.name]: o.value };
    }

    const dyn = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server;
    await new Promise<void>((r) => dyn.listen(0, '127.0.0.1', () => r()));
    const dynamoUrl = `http://127.0.0.1:${(dyn.address() as AddressInfo).port}`;
    const s3Dir = await mkdtemp(join(tmpdir(), 'ldp-aws-harness-s3-'));
    // With ListParts and AbortMultipartUpload, which the upload host's tus store needs (see s3rver-multipart.ts).
    const s3rver = addMultipartListing(new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir, configureBuckets: app.buckets.map((b) => ({ name: b.name, configs: [] })) }));
    const { port: s3Port } = await s3rver.run();
    const s3Url = `http://127.0.0.1:${s3Port}`;

    const direct = { region: REGION, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } };
    const dynamo = new DynamoDBClient({ ...direct, endpoint: dynamoUrl });
    const t = app.table;
    await dynamo.send(
      new CreateTableCommand({
        TableName: t.name,
        KeySchema: t.keySchema as never,
        AttributeDefinitions: t.attributeDefinitions as never,
        BillingMode: 'PAY_PER_REQUEST',
        GlobalSecondaryIndexes: t.globalSecondaryIndexes as never,
      }),
    );
    const s3 = new S3Client({ ...direct, endpoint: s3Url, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });

    const iam = new IamEvaluator(app, options.removeGrants ?? []);
    let endpointUrl = '';
    const runtime = new LambdaRuntime(app.functions, {
      verbose: process.env.HARNESS_VERBOSE === '1',
      baseEnv: (fn) => ({
        AWS_ENDPOINT_URL: endpointUrl,
        AWS_ACCESS_KEY_ID: fn.logicalId,
        AWS_SECRET_ACCESS_KEY: 'harness-secret',
        AWS_SESSION_TOKEN: `harness-session-${fn.logicalId}`,
        AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
        AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      }),
    });
    const ecs = new FakeEcs({ app, iam, endpointUrl: () => endpointUrl, verbose: process.env.HARNESS_VERBOSE === '1' });
    await ecs.start();
    const endpoint = new AwsEndpoint({ app, iam, runtime, dynamoUrl, s3Url, ecs });
    await endpoint.start();
    endpointUrl = endpoint.url;
    const gateway = new ApiGateway(app.routes, runtime, ecs, new Map(app.cloudMapServices.map((s) => [s.arn, s.name])));
    await gateway.start();
    const harness = new AwsHarness(app, iam, runtime, endpoint, gateway, dyn, s3rver, s3Dir, dynamo, s3, ecs);
    try {
      // ECS services run their tasks from the start (the upload host behind the VPC-link routes).
      await ecs.startServices();
    } catch (e) {
      await harness.stop();
      throw e;
    }
    return harness;
  }

  /** The environment of a process acting as the operator against this deployment (the admin CLI): not IAM-checked. */
  operatorEnv(): Record<string, string> {
    const withTable = this.app.functions.find((f) => f.environment.TABLE_NAME)!;
    return {
      TABLE_NAME: withTable.environment.TABLE_NAME!,
      AWS_REGION: REGION,
      AWS_ENDPOINT_URL: this.endpoint.url,
      AWS_ACCESS_KEY_ID: OPERATOR_KEY,
      AWS_SECRET_ACCESS_KEY: 'harness-secret',
      AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
      AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
  }

  /**
   * The README's operator step: `bin/cli.ts create-admin` against this deployment's table, run
   * with tsx as an operator would. Returns the administrator's API token.
   */
  async createAdmin(account: string, password: string): Promise<string> {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bin', 'cli.ts'), 'create-admin', '--account', account, '--api-url', this.publicApiUrl], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...this.operatorEnv(), ADMIN_PASSWORD: password, POWERTOOLS_LOG_LEVEL: 'ERROR' },
      timeout: 120_000,
    });
    const token = /API token \(shown once\): (\S+)/.exec(stdout)?.[1];
    if (!token) throw new Error(`harness: create-admin printed no token:\n${stdout}`);
    return token;
  }

  /** A function by logical id (or its start), name or ARN. */
  fn(id: string) {
    const fn = this.runtime.byName(id) ?? this.app.functions.find((f) => f.logicalId.startsWith(id));
    if (!fn) throw new Error(`harness: no function ${id}`);
    return fn;
  }

  /** Invokes a function as Lambda would: synchronously (its result), or `{ async: true }` as an Event (with its retries). */
  async invoke(id: string, event: unknown, options: { async?: boolean } = {}): Promise<InvokeResult | 'accepted'> {
    const fn = this.fn(id);
    if (options.async) {
      this.endpoint.invokeAsync(fn, event, fn.asyncRetries);
      return 'accepted';
    }
    return this.runtime.invoke(fn, event);
  }

  /**
   * Lambda throttles the next `count` synchronous invocations of a function (429
   * TooManyRequestsException; `Lambda.TooManyRequestsException` in a Task state); the throttled
   * ones are recorded in aws.endpoint.throttles.
   */
  throttle(id: string, count: number): void {
    this.endpoint.throttle(this.fn(id), count);
  }

  fireSchedule(name: string): void {
    this.endpoint.fireSchedule(name);
  }

  /** Fires a scheduled EventBridge rule of the template (e.g. a watchdog) by its logical id's start. */
  fireRule(logicalIdPrefix: string): void {
    this.endpoint.fireRule(logicalIdPrefix);
  }

  idle(timeoutMs?: number): Promise<void> {
    return this.endpoint.idle(timeoutMs);
  }

  /** IAM refusals so far (what a function was denied). */
  refusals() {
    return this.iam.log.filter((d) => !d.allowed);
  }

  async stop(): Promise<void> {
    await this.ecs.stop();
    await this.runtime.stop();
    await this.gateway.stop();
    await this.endpoint.stop();
    this.dynamo.destroy();
    this.s3.destroy();
    await new Promise((r) => this.dynaliteServer.close(r));
    await this.s3rver.close();
    await rm(this.s3Dir, { recursive: true, force: true });
  }
}
