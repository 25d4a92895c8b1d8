import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArnFormat, Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal, type IGrantable, type IRole } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct, type IConstruct } from 'constructs';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.js';
import { ENV, type EnvName } from '../../functions/env-names.js';
import { UPLOAD_EVENT_SOURCE } from '../../functions/adapters/aws/eventbridge-upload-events.js';
import type { Access, BucketAccess, FamilySpec, FlowExecutionUse } from '../../functions/http/route-table.js';

type Grants = FamilySpec['grants'];
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';

/** Repo root, from this file's location, so synth works from any working directory. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Lambda entry module `functions/handlers/<name>.ts`: a route family's name, or a worker's
 * `handler` (see FAMILIES and WORKERS in the route table).
 */
export const handlerEntry = (name: string): string => join(REPO_ROOT, 'functions', 'handlers', `${name}.ts`);

/**
 * Packages installed (by `npm ci` against our package-lock.json) into each asset's `node_modules`
 * instead of bundled. oxigraph (Rust→WASM) reads `node_bg.wasm` from its own folder at import,
 * which a bundled copy cannot do.
 */
export const INSTALLED_MODULES = ['oxigraph', 'sparqljs'] as const;

/**
 * The SPARQL engine's worker-thread module. The engine starts it as
 * `new URL('./worker.mjs', import.meta.url)`; in a bundle `import.meta.url` is the asset's
 * `index.mjs`, so it is copied to `<asset>/worker.mjs`. Plain JavaScript importing only
 * `oxigraph` (installed above) and Node built-ins, so it needs no bundling.
 */
export const ENGINE_WORKER = join(REPO_ROOT, 'functions', 'adapters', 'common', 'oxigraph', 'worker.mjs');
/** Plain-JavaScript modules the worker imports by relative path; copied beside it. */
export const ENGINE_WORKER_MODULES = [join(REPO_ROOT, 'functions', 'adapters', 'common', 'oxigraph', 'reasoning-rules.mjs')];

/**
 * The SPARQL parser's worker-thread module (sparqljs off the main thread), started as
 * `new URL('./sparql-parse-worker.mjs', import.meta.url)` and copied to the asset root like the
 * engine's worker, with the plain modules it imports; it imports `sparqljs` (installed above).
 */
export const SPARQL_PARSE_WORKER = join(REPO_ROOT, 'functions', 'rdf', 'sparql-parse-worker.mjs');
export const SPARQL_PARSE_WORKER_MODULES = [join(REPO_ROOT, 'functions', 'rdf', 'sparql-lru.mjs')];

/**
 * The RDF parse worker (oxigraph's JSON-LD and RDF/XML parsers run on untrusted uploads off the
 * main thread), started as `new URL('./rdf-parse-worker.mjs', import.meta.url)` from
 * `functions/rdf/parse/worker-pool.ts`; copied to the asset root. Imports only `oxigraph` and Node built-ins.
 */
export const RDF_PARSE_WORKER = join(REPO_ROOT, 'functions', 'rdf', 'parse', 'rdf-parse-worker.mjs');

/**
 * The import's parse worker (functions/rdf/parse/import-worker.ts: parsing, sorting into graphs and
 * dropping duplicates off the main thread), started as `new URL('./import-worker.mjs', import.meta.url)`
 * from `functions/rdf/parse/import-pool.ts`. That entry is copied to the asset root; it loads the
 * worker's code, which esbuild bundles beside it as `import-worker-bundle.mjs`.
 */
export const IMPORT_WORKER_ENTRY = join(REPO_ROOT, 'functions', 'rdf', 'parse', 'import-worker.mjs');
export const IMPORT_WORKER_SOURCE = join(REPO_ROOT, 'functions', 'rdf', 'parse', 'import-worker.ts');
const ESBUILD = join(REPO_ROOT, 'node_modules', '.bin', 'esbuild');

/** Files of oxigraph's browser build: never loaded on Node (`main` is `node.js`), ~4 MB each asset. */
const OXIGRAPH_BROWSER_FILES = ['web.js', 'web.d.ts', 'web_bg.wasm', 'web_bg.wasm.d.ts'];

/**
 * npm settings for the `npm ci` that installs INSTALLED_MODULES: use the local cache without
 * revalidating (synth works offline once the packages are cached, e.g. after the repo's own
 * `npm ci`), and no scripts, audit, fund or update checks.
 */
export const INSTALL_ENVIRONMENT: Record<string, string> = {
  npm_config_prefer_offline: 'true',
  npm_config_ignore_scripts: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

export const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
/** `a/b` under the bundling input dir, in the bundling shell's (posix) path syntax. */
const inInput = (inputDir: string, file: string): string => [inputDir, ...relative(REPO_ROOT, file).split(sep)].join('/');

/** ESM bundles have no `require`; some bundled CommonJS dependencies still call it. */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'module'; const require = __createRequire(import.meta.url);";

/**
 * Shell commands run in a bundle's directory after esbuild and the `npm ci` of INSTALLED_MODULES
 * (the Lambda bundles and the container bundle alike): the worker-thread modules copied to the
 * bundle root, oxigraph's browser build and the project lockfile removed.
 */
export function afterBundlingCommands(inputDir: string, outputDir: string): string[] {
  return [
    `cp ${shellQuote(inInput(inputDir, ENGINE_WORKER))} ${shellQuote(`${outputDir}/worker.mjs`)}`,
    ...[...ENGINE_WORKER_MODULES, SPARQL_PARSE_WORKER, ...SPARQL_PARSE_WORKER_MODULES, RDF_PARSE_WORKER].map(
      (m) => `cp ${shellQuote(inInput(inputDir, m))} ${shellQuote(`${outputDir}/${basename(m)}`)}`,
    ),
    `cp ${shellQuote(inInput(inputDir, IMPORT_WORKER_ENTRY))} ${shellQuote(`${outputDir}/${basename(IMPORT_WORKER_ENTRY)}`)}`,
    [
      shellQuote(inInput(inputDir, ESBUILD)),
      shellQuote(inInput(inputDir, IMPORT_WORKER_SOURCE)),
      '--bundle --platform=node --format=esm --target=node20 --minify --main-fields=module,main --log-level=warning',
      shellQuote(`--banner:js=${ESM_REQUIRE_BANNER}`),
      ...INSTALLED_MODULES.map((m) => `--external:${m}`),
      shellQuote(`--outfile=${outputDir}/import-worker-bundle.mjs`),
    ].join(' '),
    `cd ${shellQuote(`${outputDir}/node_modules/oxigraph`)} && rm -f ${OXIGRAPH_BROWSER_FILES.join(' ')}`,
    // The whole project lockfile `npm ci` needed: not used at run time, and it would change every
    // bundle's asset hash on any dependency change. (node_modules keeps its own
    // `.package-lock.json` of what was installed.)
    `rm -f ${shellQuote(`${outputDir}/package-lock.json`)}`,
  ];
}

export interface AppFunctionProps {
  /** Module name under `functions/handlers/` (without `.ts`): a family name or a worker's `handler`. */
  entry: string;
  memoryMb: number;
  timeoutSeconds: number;
  /** Extra environment; table/bucket variables are set by `bindTable`/`bindBucket`. */
  environment?: Record<string, string>;
  /**
   * Asynchronous invocation settings, for functions invoked with `InvocationType: 'Event'`
   * (workers). Unset: Lambda's defaults (2 retries, events kept up to 6 hours).
   */
  asyncInvoke?: { retryAttempts: number; maxEventAge: Duration };
}

/** The Lambda runtime of every function: the newest Node.js Lambda offers (cdk-nag's L1). */
export const RUNTIME = Runtime.NODEJS_24_X;
/** esbuild's target for that runtime. */
const BUNDLE_TARGET = 'node24';

/** What a function needs to write its own logs: streams and events in its log group, nothing else. */
export const LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'] as const;

/**
 * The house Lambda function: one per route family and one per worker, sized from their table
 * entry (`FAMILIES`/`WORKERS`).
 * Node 24 on arm64, ESM bundle built by the local esbuild (never Docker), the AWS SDK bundled
 * (we pin its versions instead of trusting the runtime's copy), oxigraph installed next to the
 * bundle with the SPARQL engine's worker module, X-Ray tracing, and an explicit
 * log group so retention and deletion are ours rather than Lambda's implicit never-expiring group.
 * Its role is its own and starts empty but for writing to that log group (no
 * AWSLambdaBasicExecutionRole, which may write to any log group); the bind helpers below add
 * exactly what the function's code calls.
 */
export class AppFunction extends NodejsFunction {
  /** The entry module name (`functions/handlers/<entry>.ts`). */
  readonly entryName: string;

  constructor(scope: Construct, id: string, props: AppFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${props.entry} function`,
    });
    // The log group's ARN (`...:log-group:<name>:*`) covers its streams and nothing else.
    role.addToPolicy(new PolicyStatement({ actions: [...LOG_ACTIONS], resources: [logGroup.logGroupArn] }));
    super(scope, id, {
      entry: handlerEntry(props.entry),
      handler: 'handler',
      role,
      runtime: RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: Duration.seconds(props.timeoutSeconds),
      retryAttempts: props.asyncInvoke?.retryAttempts,
      maxEventAge: props.asyncInvoke?.maxEventAge,
      tracing: Tracing.ACTIVE,
      logGroup,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      environment: {
        // Source maps make stack traces point at the TypeScript sources.
        NODE_OPTIONS: '--enable-source-maps',
        // Libraries' production mode (graphql-js skips its development-only checks: ~6% of a GraphQL request).
        NODE_ENV: 'production',
        // Structured logs (Powertools Logger): INFO and up; an operator lowers it per function.
        [ENV.logLevel]: 'INFO',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE_TARGET,
        minify: true,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        bundleAwsSDK: true,
        externalModules: [],
        nodeModules: [...INSTALLED_MODULES],
        environment: INSTALL_ENVIRONMENT,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          // Runs after esbuild and `npm ci`, in the asset directory being built.
          afterBundling: afterBundlingCommands,
        },
      },
    });
    this.entryName = props.entry;
    acknowledge(role, 'IAM5[Resource::*]', X_RAY_REASON);
  }
}

/** Why a function's policy has actions on "*": X-Ray first, task tokens added by bindFlowExecutions. */
const X_RAY_REASON = 'Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords take no resource ARN (X-Ray has no resource-level permissions for them).';

/**
 * What the bind helpers grant to: a role, and how the code running as it is told its settings
 * (environment variables). A Lambda function is one (its role, `addEnvironment`); so is a Fargate
 * task (its task role, its app container's environment: see container-platform.ts).
 */
export interface GrantTarget {
  readonly node: IConstruct['node'];
  readonly role?: IRole;
  addEnvironment(name: string, value: string): unknown;
}

/** The target's role: where policies are added, and the construct cdk-nag reports their findings on. */
const roleOf = (target: GrantTarget): IRole => {
  if (!target.role) throw new Error(`${target.node.path} has no role`);
  return target.role;
};
const addToRolePolicy = (target: GrantTarget, statement: PolicyStatement): void => {
  roleOf(target).addToPrincipalPolicy(statement);
};

/**
 * DynamoDB actions by access: exactly the calls the adapters make (functions/adapters/aws/
 * dynamodb-*.ts: GetItem, Query, PutItem, UpdateItem, DeleteItem). No Scan, no batch or
 * transaction calls, no stream reads, no DescribeTable; Query on the indexes is the only index use.
 */
export const TABLE_ACTIONS = {
  R: ['dynamodb:GetItem', 'dynamodb:Query'],
  RW: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
} as const satisfies Record<Access, readonly string[]>;
export const INDEX_ACTIONS = ['dynamodb:Query'] as const;

/**
 * Grants exactly the requested table access (on the table, and Query on each of its indexes by
 * name, from the shared table schema) and tells the function the table's name.
 */
export function bindTable(fn: GrantTarget, table: ITableV2, access: Access): void {
  addToRolePolicy(fn, new PolicyStatement({ actions: [...TABLE_ACTIONS[access]], resources: [table.tableArn] }));
  const indexes = TABLE_SCHEMA.globalSecondaryIndexes.map((i) => `${table.tableArn}/index/${i.indexName}`);
  if (indexes.length > 0) addToRolePolicy(fn, new PolicyStatement({ actions: [...INDEX_ACTIONS], resources: indexes }));
  fn.addEnvironment(ENV.tableName, table.tableName);
}

/**
 * S3 actions by access, on the objects and on the bucket: exactly the calls S3BlobStore makes
 * (GetObject and HeadObject are s3:GetObject; PutObject and the multipart calls but Abort are
 * s3:PutObject; ListObjectsV2 is s3:ListBucket, which also makes a missing key a 404 rather than
 * a 403). s3:DeleteObject removes the current version only: no function may purge old versions
 * (s3:DeleteObjectVersion), which is what guards the versioned data bucket.
 */
export const BUCKET_ACTIONS = {
  R: { objects: ['s3:GetObject'], bucket: ['s3:ListBucket'] },
  RW: { objects: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'], bucket: ['s3:ListBucket'] },
  delete: { objects: ['s3:DeleteObject'], bucket: ['s3:ListBucket'] },
  readDelete: { objects: ['s3:GetObject', 's3:DeleteObject'], bucket: ['s3:ListBucket'] },
} as const satisfies Record<BucketAccess, { objects: readonly string[]; bucket: readonly string[] }>;

/**
 * Grants exactly the requested bucket access, on the objects under `keyPrefix` (every key when
 * empty), and sets the bucket's name under `envName`.
 */
export function bindBucket(fn: GrantTarget, bucket: IBucket, envName: EnvName, access: BucketAccess, keyPrefix = ''): void {
  const actions = BUCKET_ACTIONS[access];
  const objects = bucket.arnForObjects(`${keyPrefix}*`);
  addToRolePolicy(fn, new PolicyStatement({ actions: [...actions.objects], resources: [objects] }));
  addToRolePolicy(fn, new PolicyStatement({ actions: [...actions.bucket], resources: [bucket.bucketArn] }));
  acknowledgeWildcardResource(
    roleOf(fn),
    objects,
    `The bucket's objects are named at run time (keys derived from ids the platform generates), under ${keyPrefix ? `"${keyPrefix}"` : 'the bucket root'}; ` +
      `no ARN can name them in advance. Only ${actions.objects.join(', ')} on them (never s3:DeleteObjectVersion).`,
  );
  fn.addEnvironment(envName, bucket.bucketName);
}

/** The bucket grants of a table entry (`FamilySpec['grants']`). */
export type BucketGrant = 'dataBucket' | 'uploadsBucket' | 'artifactsBucket';

/** What a table entry's grants refer to: see `bindGrants`. */
export interface GrantResources {
  table: ITableV2;
  /** Each bucket grant's bucket, the env var that tells its name, and the keys the grant is held to. */
  buckets: Record<BucketGrant, { bucket: IBucket; env: EnvName; keyPrefix: string }>;
  /** Sender address of the targets granted `mail`. */
  mailFrom: string;
}

/**
 * Grants exactly the table, bucket, upload event and mail access a table entry declares (route
 * families, workers, containers), nothing more. Flow executions and schedules are bound
 * separately (`bindFlowExecutions`, `bindFlowSchedules`): they depend on which function is which.
 */
export function bindGrants(target: GrantTarget, grants: Grants, resources: GrantResources): void {
  if (grants.table) bindTable(target, resources.table, grants.table);
  for (const key of Object.keys(resources.buckets) as BucketGrant[]) {
    const access: BucketAccess | undefined = grants[key];
    const { bucket, env, keyPrefix } = resources.buckets[key];
    if (access) bindBucket(target, bucket, env, access, keyPrefix);
  }
  if (grants.uploadEvents) bindEventSource(target, UPLOAD_EVENT_SOURCE);
  if (grants.mail) bindMail(target, resources.mailFrom);
  if (grants.tusUploads) bindTusUploads(target, resources.buckets.uploadsBucket.bucket);
}

/** Where tus keeps its uploads in the uploads bucket (functions/adapters/common/tus-uploads.ts). */
export const TUS_KEY_PREFIX = 'tus/';

/**
 * tus over S3 (@tus/s3-store) reads an upload's offset from its multipart upload's parts
 * (ListParts). Create, UploadPart and Complete are s3:PutObject and Abort is in 'RW' (uploadsBucket).
 */
function bindTusUploads(target: GrantTarget, bucket: IBucket): void {
  const objects = bucket.arnForObjects(`${TUS_KEY_PREFIX}*`);
  addToRolePolicy(target, new PolicyStatement({ actions: ['s3:ListMultipartUploadParts'], resources: [objects] }));
  acknowledgeWildcardResource(roleOf(target), objects, 'tus uploads are named at run time (random ids) under "tus/"; only s3:ListMultipartUploadParts on them.');
}

/**
 * Lets `grantee` invoke `fn`, by its unqualified ARN only (we never invoke versions or aliases),
 * which is all `grantInvoke` adds beyond `<arn>:*`.
 */
export function bindInvoke(grantee: IGrantable, fn: IFunction): void {
  grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }));
}

/** What functions that run flows are told: see `flowExecutionArns` and `bindFlowExecutions`. */
export interface FlowExecutionsBinding {
  /** Start of every flow state machine's name (`<prefix>-<blueprint>-v<version>`). */
  prefix: string;
  /** The role the state machines run as. */
  role: IRole;
  /** Filled into every Task state; unset for the task worker itself (its own ARN would be a cycle). */
  taskWorkerArn?: string;
}

/**
 * The state machines and executions named under `prefix`, and nothing else (IAM patterns), and
 * the start every such state machine's ARN has (for prefix matching).
 */
export function flowExecutionArns(scope: Construct, prefix: string): { stateMachines: string; executions: string; stateMachineArnPrefix: string } {
  const stack = Stack.of(scope);
  const arn = (resource: string, resourceName: string) =>
    stack.formatArn({ service: 'states', resource, resourceName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  return {
    stateMachines: arn('stateMachine', `${prefix}-*`),
    executions: arn('execution', `${prefix}-*:*`),
    stateMachineArnPrefix: arn('stateMachine', `${prefix}-`),
  };
}

/** Actions on task tokens (a data upload hook's wait): 'release'. They take no resource scoping. */
export const FLOW_TASK_TOKEN_ACTIONS = ['states:SendTaskSuccess', 'states:SendTaskFailure'] as const;

/**
 * The actions each FlowExecutor method sends (StepFunctionsExecutor), on the prefix's state
 * machines, on their executions, or (task tokens) on '*'. 'prepare' creates a tagged state
 * machine and, when it exists already, describes it.
 */
export const FLOW_EXECUTION_ACTIONS = {
  prepare: { stateMachines: ['states:CreateStateMachine', 'states:TagResource', 'states:DescribeStateMachine'] },
  start: { stateMachines: ['states:StartExecution'] },
  abort: { executions: ['states:StopExecution'] },
  result: { executions: ['states:DescribeExecution'] },
  status: { executions: ['states:DescribeExecution'] },
  discard: { stateMachines: ['states:DeleteStateMachine'] },
  release: { any: FLOW_TASK_TOKEN_ACTIONS },
  heartbeat: { any: ['states:SendTaskHeartbeat'] },
} as const satisfies Record<FlowExecutionUse, { stateMachines?: readonly string[]; executions?: readonly string[]; any?: readonly string[] }>;

/**
 * Lets the function call exactly the given FlowExecutor methods on the prefix's state machines and
 * executions, and tells it the prefix. 'prepare' also may pass the state machine role (to Step
 * Functions only) and is told the role and the task worker (filled into every Task state).
 */
export function bindFlowExecutions(fn: GrantTarget, flows: FlowExecutionsBinding, uses: readonly FlowExecutionUse[]): void {
  if (uses.length === 0) return;
  const arns = flowExecutionArns(roleOf(fn), flows.prefix);
  const on = (key: 'stateMachines' | 'executions' | 'any') =>
    [...new Set(uses.flatMap((u) => [...((FLOW_EXECUTION_ACTIONS[u] as Partial<Record<typeof key, readonly string[]>>)[key] ?? [])]))].sort();
  const resources = { stateMachines: arns.stateMachines, executions: arns.executions, any: '*' };
  const reasons = {
    stateMachines: `State machines are created at run time, one per flow version, all named "${flows.prefix}-<flow>-v<version>"; the grant is held to that prefix.`,
    executions: `Executions are started at run time, one per run, all of state machines named "${flows.prefix}-*"; the grant is held to that prefix.`,
    any: `${X_RAY_REASON} states:SendTaskSuccess and states:SendTaskFailure take no resource ARN either: a task token is not an ARN (a data upload hook's wait).`,
  };
  for (const key of ['stateMachines', 'executions', 'any'] as const) {
    const actions = on(key);
    if (actions.length === 0) continue;
    addToRolePolicy(fn, new PolicyStatement({ actions, resources: [resources[key]] }));
    // The '*' finding is X-Ray's too: the reason naming both goes on the policy itself (nearest wins in the template).
    if (key === 'any') acknowledge(roleOf(fn).node.findChild('DefaultPolicy'), 'IAM5[Resource::*]', reasons.any);
    else acknowledgeWildcardResource(roleOf(fn), resources[key], reasons[key]);
  }
  fn.addEnvironment(ENV.flowStateMachinePrefix, flows.prefix);
  if (uses.includes('prepare')) {
    if (!flows.taskWorkerArn) throw new Error('prepare needs the task worker ARN (the task worker itself cannot prepare)');
    addToRolePolicy(fn, 
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [flows.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'states.amazonaws.com' } },
      }),
    );
    fn.addEnvironment(ENV.flowStateMachineRoleArn, flows.role.roleArn);
    fn.addEnvironment(ENV.flowTaskWorkerArn, flows.taskWorkerArn);
  }
}

/** What functions that touch flow schedules are told: see `bindFlowSchedules`. */
export interface FlowSchedulesBinding {
  /** The EventBridge Scheduler group every flow schedule goes in. */
  groupName: string;
  /** Start of every flow schedule's name in the group. */
  namePrefix: string;
  /** The role EventBridge Scheduler assumes to invoke the target. */
  role: IRole;
  /** The schedule-start function (the schedules' target). */
  targetArn: string;
}

/** The flow schedules (`<group>/<prefix>-*`) and the group, as IAM ARNs. */
export function flowScheduleArns(scope: Construct, groupName: string, namePrefix: string): { schedules: string; group: string } {
  const stack = Stack.of(scope);
  return {
    schedules: stack.formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${groupName}/${namePrefix}-*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
    group: stack.formatArn({ service: 'scheduler', resource: 'schedule-group', resourceName: groupName, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
  };
}

/** Actions of `bindFlowSchedules` on the group's flow schedules. */
export const FLOW_SCHEDULE_ACTIONS = {
  manage: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule'],
  remove: ['scheduler:DeleteSchedule', 'scheduler:GetSchedule'],
} as const;

/**
 * Lets the function touch the flow schedules in the group and tells it the group. 'manage'
 * creates, changes and deletes them, may pass the schedule role (to EventBridge Scheduler only)
 * and is told the role and target; 'remove' only deletes them.
 */
export function bindFlowSchedules(fn: GrantTarget, schedules: FlowSchedulesBinding, access: 'manage' | 'remove'): void {
  const arns = flowScheduleArns(roleOf(fn), schedules.groupName, schedules.namePrefix);
  addToRolePolicy(fn, new PolicyStatement({ actions: [...FLOW_SCHEDULE_ACTIONS[access]], resources: [arns.schedules] }));
  acknowledgeWildcardResource(
    roleOf(fn),
    arns.schedules,
    `Schedules are created at run time, one per flow schedule, all named "${schedules.namePrefix}-<id>" in the group ${schedules.groupName}; the grant is held to them.`,
  );
  fn.addEnvironment(ENV.flowScheduleGroup, schedules.groupName);
  if (access === 'manage') {
    addToRolePolicy(fn, 
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [schedules.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    fn.addEnvironment(ENV.flowScheduleRoleArn, schedules.role.roleArn);
    fn.addEnvironment(ENV.flowScheduleStartArn, schedules.targetArn);
  }
}

/** The default EventBridge bus of the function's account and region (where upload events go). */
export function defaultEventBusArn(scope: Construct): string {
  return Stack.of(scope).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default', arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
}

/**
 * Lets the function put events on the default bus, and only events of `source` (the
 * `events:source` condition), so it can neither imitate other sources nor reach other buses.
 */
export function bindEventSource(fn: GrantTarget, source: string): void {
  addToRolePolicy(fn, 
    new PolicyStatement({
      actions: ['events:PutEvents'],
      resources: [defaultEventBusArn(roleOf(fn))],
      conditions: { StringEquals: { 'events:source': source } },
    }),
  );
}

/** `user@example.org`: a bare address (no display name), as SES's `ses:FromAddress` compares it. */
const MAIL_ADDRESS = /^[^\s@<>"]+@([^\s@<>"]+\.[^\s@<>".]+)$/;

/**
 * The SES identities that may send as `mailFrom`: the address's own identity and its domain's (SES
 * authorizes against whichever of the two is verified). A token (unknown at synth) allows any
 * identity of the account; the `ses:FromAddress` condition still pins the sender.
 */
export function sesIdentityArns(scope: Construct, mailFrom: string): string[] {
  const stack = Stack.of(scope);
  const identity = (name: string) => stack.formatArn({ service: 'ses', resource: 'identity', resourceName: name, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
  if (Token.isUnresolved(mailFrom)) return [identity('*')];
  const match = MAIL_ADDRESS.exec(mailFrom);
  if (!match) throw new Error(`mailFrom must be a bare email address (user@example.org), got "${mailFrom}"`);
  return [identity(match[1]!), identity(mailFrom)];
}

/**
 * Lets the function send email through SES (v2 SendEmail) from `mailFrom` only, and tells it the
 * address (MAIL_FROM). Sending needs `mailFrom` (or its domain) verified in SES, and SES out of
 * its sandbox to reach unverified recipients. Not covered: a configuration set on the identity
 * (SES then also checks `ses:SendEmail` on the configuration set).
 */
export function bindMail(fn: GrantTarget, mailFrom: string): void {
  const identities = sesIdentityArns(roleOf(fn), mailFrom);
  addToRolePolicy(fn, 
    new PolicyStatement({
      actions: ['ses:SendEmail'],
      resources: identities,
      conditions: { StringEquals: { 'ses:FromAddress': mailFrom } },
    }),
  );
  for (const identity of identities.filter((arn) => arn.endsWith('/*'))) {
    acknowledgeWildcardResource(roleOf(fn), identity, 'The sender address is only known at deploy time (a token): any identity of the account, but the ses:FromAddress condition pins the sender.');
  }
  fn.addEnvironment(ENV.mailFrom, mailFrom);
}
