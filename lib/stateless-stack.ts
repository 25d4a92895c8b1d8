import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { ENV, type EnvName } from '../functions/env-names.js';
import { FAMILIES, ROUTES, type Family, type FamilySpec } from '../functions/http/route-table.js';
import { AppFunction, bindBucket, bindTable } from './constructs/app-function.js';

export interface StatelessStackProps extends StackProps {
  table: ITableV2;
  dataBucket: IBucket;
  uploadsBucket: IBucket;
  artifactsBucket: IBucket;
}

type BucketGrant = Exclude<keyof FamilySpec['grants'], 'table'>;

/** `saved-queries` -> `SavedQueries`: PascalCase construct ids from family names. */
const pascal = (name: string): string =>
  name.replace(/(^|[-_])([a-z0-9])/g, (_m, _sep: string, c: string) => c.toUpperCase());

/**
 * Everything replaceable: the HTTP API and one function per route family. Routes, families and
 * grants all come from the shared route table, so adding a family or route there is the whole
 * change; nothing here lists them.
 */
export class StatelessStack extends Stack {
  readonly api: HttpApi;
  readonly functions: Readonly<Record<Family, AppFunction>>;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);

    // Which bucket and env var each bucket grant of FAMILIES refers to.
    const buckets: Record<BucketGrant, { bucket: IBucket; env: EnvName }> = {
      dataBucket: { bucket: props.dataBucket, env: ENV.dataBucketName },
      uploadsBucket: { bucket: props.uploadsBucket, env: ENV.uploadsBucketName },
      artifactsBucket: { bucket: props.artifactsBucket, env: ENV.artifactsBucketName },
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
      const fn = new AppFunction(this, `${pascal(family)}Function`, { family });
      const grants: FamilySpec['grants'] = FAMILIES[family].grants;
      if (grants.table) bindTable(fn, props.table, grants.table);
      for (const key of Object.keys(buckets) as BucketGrant[]) {
        const access = grants[key];
        if (access) bindBucket(fn, buckets[key].bucket, buckets[key].env, access);
      }
      functions[family] = fn;
      // One integration per family, shared by its routes. One API-wide invoke permission per
      // function instead of one per route keeps the function's resource policy small as routes grow.
      integrations[family] = new HttpLambdaIntegration(`${pascal(family)}Integration`, fn, {
        scopePermissionToRoute: false,
      });
    }
    this.functions = functions;

    for (const route of ROUTES) {
      this.api.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration: integrations[route.family] });
    }

    new CfnOutput(this, 'ApiUrl', { value: stage.url, description: 'Base URL of the public API' });
  }
}
