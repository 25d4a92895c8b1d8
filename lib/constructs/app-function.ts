import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, Runtime, Tracing, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ENV, type EnvName } from '../../functions/env-names.js';
import { FAMILIES, type Access, type Family } from '../../functions/http/route-table.js';

/** Repo root, from this file's location, so synth works from any working directory. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Lambda entry module of a route family (`functions/handlers/<family>.ts`). */
export const handlerEntry = (family: Family): string => join(REPO_ROOT, 'functions', 'handlers', `${family}.ts`);

/** ESM bundles have no `require`; some bundled CommonJS dependencies still call it. */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'module'; const require = __createRequire(import.meta.url);";

export interface AppFunctionProps {
  family: Family;
  /** Extra environment; table/bucket variables are set by `bindTable`/`bindBucket`. */
  environment?: Record<string, string>;
}

/**
 * The house Lambda function: one per route family, with memory and timeout from `FAMILIES`.
 * Node 22 on arm64, ESM bundle built by the local esbuild (never Docker), the AWS SDK bundled
 * (we pin its versions instead of trusting the runtime's copy), X-Ray tracing, and an explicit
 * log group so retention and deletion are ours rather than Lambda's implicit never-expiring group.
 */
export class AppFunction extends NodejsFunction {
  readonly family: Family;

  constructor(scope: Construct, id: string, props: AppFunctionProps) {
    const spec = FAMILIES[props.family];
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    super(scope, id, {
      entry: handlerEntry(props.family),
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(spec.timeoutSeconds),
      tracing: Tracing.ACTIVE,
      logGroup,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      environment: {
        // Source maps make stack traces point at the TypeScript sources.
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        bundleAwsSDK: true,
        externalModules: [],
      },
    });
    this.family = props.family;
  }
}

/** Grants exactly the requested table access and tells the function the table's name. */
export function bindTable(fn: LambdaFunction, table: ITableV2, access: Access): void {
  if (access === 'RW') table.grantReadWriteData(fn);
  else table.grantReadData(fn);
  fn.addEnvironment(ENV.tableName, table.tableName);
}

/**
 * Grants exactly the requested bucket access and sets the bucket's name under `envName`.
 * 'RW' includes deletes (s3:DeleteObject*), which replacing graphs and cleaning uploads need.
 */
export function bindBucket(fn: LambdaFunction, bucket: IBucket, envName: EnvName, access: Access): void {
  if (access === 'RW') bucket.grantReadWrite(fn);
  else bucket.grantRead(fn);
  fn.addEnvironment(envName, bucket.bucketName);
}
