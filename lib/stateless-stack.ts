import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { ENV, type EnvName } from '../functions/env-names.js';
import { FAMILIES, ROUTES, WORKERS, type Family, type FamilySpec, type WorkerSpec } from '../functions/http/route-table.js';
import { AppFunction, bindBucket, bindTable } from './constructs/app-function.js';

export interface StatelessStackProps extends StackProps {
  table: ITableV2;
  dataBucket: IBucket;
  uploadsBucket: IBucket;
  artifactsBucket: IBucket;
}

type BucketGrant = Exclude<keyof FamilySpec['grants'], 'table'>;
export type Worker = keyof typeof WORKERS;

/**
 * Asynchronous invocation of workers: one retry (a worker run is idempotent, it only picks up
 * pending work), and an event that waited an hour (throttling) is dropped rather than run late.
 */
const WORKER_ASYNC_INVOKE = { retryAttempts: 1, maxEventAge: Duration.hours(1) };

/** `saved-queries` -> `SavedQueries`: PascalCase construct ids from family names. */
const pascal = (name: string): string =>
  name.replace(/(^|[-_])([a-z0-9])/g, (_m, _sep: string, c: string) => c.toUpperCase());

/**
 * Everything replaceable: the HTTP API, one function per route family and one per background
 * worker. Routes, families, workers and grants all come from the shared route table, so adding a
 * family, route or worker there is the whole change; nothing here lists them.
 */
export class StatelessStack extends Stack {
  readonly api: HttpApi;
  /** Route family functions, behind the API. */
  readonly functions: Readonly<Record<Family, AppFunction>>;
  /** Worker functions: no route, invoked asynchronously by the families in their `invokedBy`. */
  readonly workers: Readonly<Record<Worker, AppFunction>>;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);

    // Which bucket and env var each bucket grant of FAMILIES refers to.
    const buckets: Record<BucketGrant, { bucket: IBucket; env: EnvName }> = {
      dataBucket: { bucket: props.dataBucket, env: ENV.dataBucketName },
      uploadsBucket: { bucket: props.uploadsBucket, env: ENV.uploadsBucketName },
      artifactsBucket: { bucket: props.artifactsBucket, env: ENV.artifactsBucketName },
    };
    // Exactly the access a table entry declares, nothing more.
    const bindGrants = (fn: AppFunction, grants: FamilySpec['grants']): void => {
      if (grants.table) bindTable(fn, props.table, grants.table);
      for (const key of Object.keys(buckets) as BucketGrant[]) {
        const access = grants[key];
        if (access) bindBucket(fn, buckets[key].bucket, buckets[key].env, access);
      }
    };

    // No CORS: the console is served from the same origin; add it deliberately if that changes.
    this.api = new HttpApi(this, 'HttpApi', {
      description: 'Linked-data platform public API',
      createDefaultStage: false,
    });
    // An explicit $default stage, because HttpApi's own default stage cannot take access logs.
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogs) },
    });

    const functions = {} as Record<Family, AppFunction>;
    const integrations = {} as Record<Family, HttpLambdaIntegration>;
    for (const family of Object.keys(FAMILIES) as Family[]) {
      const spec: FamilySpec = FAMILIES[family];
      const fn = new AppFunction(this, `${pascal(family)}Function`, {
        entry: family,
        memoryMb: spec.memoryMb,
        timeoutSeconds: spec.timeoutSeconds,
      });
      bindGrants(fn, spec.grants);
      functions[family] = fn;
      // One integration per family, shared by its routes. One API-wide invoke permission per
      // function instead of one per route keeps the function's resource policy small as routes grow.
      integrations[family] = new HttpLambdaIntegration(`${pascal(family)}Integration`, fn, {
        scopePermissionToRoute: false,
      });
    }
    this.functions = functions;

    const workers = {} as Record<Worker, AppFunction>;
    for (const name of Object.keys(WORKERS) as Worker[]) {
      const spec: WorkerSpec = WORKERS[name];
      const worker = new AppFunction(this, `${pascal(name)}Function`, {
        entry: spec.handler,
        memoryMb: spec.memoryMb,
        timeoutSeconds: spec.timeoutSeconds,
        asyncInvoke: WORKER_ASYNC_INVOKE,
      });
      bindGrants(worker, spec.grants);
      for (const family of spec.invokedBy) {
        worker.grantInvoke(functions[family]);
        functions[family].addEnvironment(spec.envName, worker.functionName);
      }
      workers[name] = worker;
    }
    this.workers = workers;

    for (const route of ROUTES) {
      this.api.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration: integrations[route.family] });
    }

    new CfnOutput(this, 'ApiUrl', { value: stage.url, description: 'Base URL of the public API' });
  }
}
