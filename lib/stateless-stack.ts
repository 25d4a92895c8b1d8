import { createHash } from 'node:crypto';
import { CfnOutput, Duration, RemovalPolicy, Stack, Token, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination, type ThrottleSettings } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Match as EventMatch, Rule, Schedule as EventSchedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Bucket, type IBucket } from 'aws-cdk-lib/aws-s3';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { Construct } from 'constructs';
import { ENV, type EnvName } from '../functions/env-names.js';
import { FAMILIES, ROUTES, WORKERS, type Family, type FamilySpec, type WorkerSpec } from '../functions/http/route-table.js';
import { FLOW_SCHEDULE_NAME_PREFIX } from '../functions/adapters/aws/eventbridge-scheduler.js';
import { ASSET_KEY_WILDCARD, UPLOAD_EVENT_SOURCE, UPLOAD_EVENT_TYPES } from '../functions/adapters/aws/eventbridge-upload-events.js';
import {
  AppFunction,
  bindFlowExecutions,
  bindFlowSchedules,
  bindGrants as bindDeclaredGrants,
  bindInvoke,
  flowExecutionArns,
  flowScheduleArns,
  type BucketGrant,
  type GrantResources,
} from './constructs/app-function.js';
import { ContainerPlatform, type NodeTaskDefinition } from './constructs/container-platform.js';
import { UploadHost } from './constructs/upload-host.js';
import { WorkerTask } from './constructs/worker-task.js';
import { SparqlHosts } from './constructs/sparql-hosts.js';
import { SearchDomain, type SearchDomainProps } from './constructs/search-domain.js';
import { acknowledge } from './nag.js';

export interface StatelessStackProps extends StackProps {
  table: ITableV2;
  dataBucket: IBucket;
  uploadsBucket: IBucket;
  artifactsBucket: IBucket;
  /**
   * Start of the flows' state machine names (letters, digits, `-`, `_`; at most 40 characters).
   * Default: from the stack name. IAM and the execution-status rule are scoped to `<prefix>-*`.
   */
  flowStateMachinePrefix?: string;
  /**
   * Sender address of the platform's email (flow failure emails, the Send email task), set as
   * MAIL_FROM on the functions granted `mail`; they may send through SES from this address only.
   * A bare address whose own or domain identity is verified in SES (in the stack's region).
   * Default: DEFAULT_MAIL_FROM, a placeholder that SES will refuse until replaced.
   */
  mailFrom?: string;
  /**
   * The API's public base URL, set as PUBLIC_API_URL on every function (links, run tokens' issuer,
   * graph names of scheduled and hook runs). Default: the HTTP API's own execute-api URL; set it
   * when a custom domain or CDN fronts the API.
   */
  publicApiUrl?: string;
  /**
   * Request throttling of the API's stage (all routes together). Default: DEFAULT_API_THROTTLE.
   */
  apiThrottle?: ThrottleSettings;
  /**
   * Text search on Amazon OpenSearch Service (lib/constructs/search-domain.ts): a domain is made
   * and the functions granted `searchIndexes` use it. Default: none, text search runs on the
   * embedded engine with its indexes in the data bucket (`cdk deploy -c search=opensearch`).
   */
  search?: SearchDomainProps;
}

/** The stage's default throttling: steady requests per second and the burst above it. */
export const DEFAULT_API_THROTTLE: Required<ThrottleSettings> = { rateLimit: 200, burstLimit: 400 };

/**
 * Where the data bucket's objects live (`datasets/<id>/graphs|manifests|assets/...`, see
 * graph-catalog.ts and asset-service.ts): every data bucket grant is held to these keys.
 */
export const DATA_KEY_PREFIX = 'datasets/';

/** Placeholder sender when the stack is given no `mailFrom`: deployable, but SES sends nothing from it. */
export const DEFAULT_MAIL_FROM = 'no-reply@example.org';

export type Worker = keyof typeof WORKERS;

/**
 * Asynchronous invocation of workers: one retry (a worker run is idempotent, it only picks up
 * pending work), and an event that waited an hour (throttling) is dropped rather than run late.
 */
const WORKER_ASYNC_INVOKE = { retryAttempts: 1, maxEventAge: Duration.hours(1) };

/** EventBridge rule targets: EventBridge's own retries (when it cannot invoke), then Lambda's. */
const RULE_TARGET_RETRY = { retryAttempts: 8, maxEventAge: Duration.hours(6) };

/** The final statuses of an execution: the flow-settle worker is told of these. */
export const FINAL_EXECUTION_STATUSES = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;

/** State machine names hold at most 80 characters; the prefix leaves room for uid and version. */
export const FLOW_PREFIX_MAX = 40;

/** `<stack name>-flow`, shortened (with a hash, to stay unique) to FLOW_PREFIX_MAX characters. */
export function defaultFlowPrefix(stackName: string): string {
  const name = `${stackName.replace(/[^A-Za-z0-9_-]/g, '')}-flow`;
  if (name.length <= FLOW_PREFIX_MAX) return name;
  const hash = createHash('sha256').update(stackName).digest('hex').slice(0, 8);
  return `${name.slice(0, FLOW_PREFIX_MAX - hash.length - 6).replace(/-+$/, '')}-${hash}-flow`;
}

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
  /**
   * Worker functions: no route; invoked asynchronously by the families in their `invokedBy`, or by
   * the AWS service in their `invokedByService`.
   */
  readonly workers: Readonly<Record<Worker, AppFunction>>;
  /** The role the flows' state machines run as: it may invoke the flow task worker, nothing else. */
  readonly flowStateMachineRole: Role;
  /** Start of the flows' state machine names. */
  readonly flowStateMachinePrefix: string;
  /** Sends the flows' final execution statuses to the flow-settle worker. */
  readonly flowExecutionEndedRule: Rule;
  /** Holds every flow schedule (one EventBridge Scheduler schedule each, created at run time). */
  readonly flowScheduleGroup: ScheduleGroup;
  /** The role EventBridge Scheduler invokes the schedule-start worker with, and nothing else. */
  readonly flowScheduleRole: Role;
  /** Sends the data bucket's `Object Created` events for asset files to the hook dispatcher. */
  readonly assetStoredRule: Rule;
  /** Sends our upload events (`Import started`, `Import finished`) to the hook dispatcher. */
  readonly uploadEventsRule: Rule;
  /** Invoke the watchdog worker(s) every 5 minutes. */
  readonly watchdogRules: Rule[] = [];
  /** Sender address (MAIL_FROM) of the functions granted `mail`. */
  readonly mailFrom: string;
  /** PUBLIC_API_URL of every function. */
  readonly publicApiUrl: string;
  /** Where the containers run (VPC, cluster, namespace, bundle): the container constructs' prop. */
  readonly containers: ContainerPlatform;
  /** The `worker` container's task definition (CONTAINERS.worker): long imports and URL loads. */
  readonly workerTask: NodeTaskDefinition;
  /** The tus upload host (Fargate service behind the API's VPC link), for the route table's `host: 'uploads'` routes. */
  readonly uploadHost: UploadHost;
  /** The worker task's security group and the grants to start it and ask about it (lib/constructs/worker-task.ts). */
  readonly worker: WorkerTask;
  /** The SPARQL hosts' task definition, security groups and grants (lib/constructs/sparql-hosts.ts). */
  readonly sparqlHosts: SparqlHosts;
  /** The OpenSearch domain of text search services, when the stack is configured for search. */
  readonly searchDomain?: SearchDomain;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);

    // The buckets as this stack imports them, so a policy's resource is already the import it will
    // be in the template (cdk-nag acknowledgements name it so; the template is the same).
    const imported = (bucket: IBucket, id: string): IBucket => {
      const home = Stack.of(bucket);
      if (home === this) return bucket;
      return Bucket.fromBucketAttributes(this, id, { bucketArn: home.exportValue(bucket.bucketArn), bucketName: home.exportValue(bucket.bucketName) });
    };
    // Which bucket, env var and keys each bucket grant of FAMILIES refers to.
    const buckets: Record<BucketGrant, { bucket: IBucket; env: EnvName; keyPrefix: string }> = {
      dataBucket: { bucket: imported(props.dataBucket, 'DataBucketRef'), env: ENV.dataBucketName, keyPrefix: DATA_KEY_PREFIX },
      uploadsBucket: { bucket: imported(props.uploadsBucket, 'UploadsBucketRef'), env: ENV.uploadsBucketName, keyPrefix: '' },
      artifactsBucket: { bucket: imported(props.artifactsBucket, 'ArtifactsBucketRef'), env: ENV.artifactsBucketName, keyPrefix: '' },
    };
    this.mailFrom = props.mailFrom ?? DEFAULT_MAIL_FROM;
    // Exactly the access a table entry declares, nothing more (flows: see below).
    const grantResources: GrantResources = { table: props.table, buckets, mailFrom: this.mailFrom };
    const bindGrants = (fn: AppFunction, grants: FamilySpec['grants']): void => bindDeclaredGrants(fn, grants, grantResources);

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
      throttle: props.apiThrottle ?? DEFAULT_API_THROTTLE,
    });
    acknowledge(
      this.api,
      'APIG4',
      'Authorization is the functions\' own: every route serves anonymous readers of public data too, and each request is authenticated in ' +
        'the function (API tokens and console sessions, checked against the table) and authorized per account, dataset and flow.',
    );
    // No dependency cycle: functions do not depend on the API's routes, only on its id.
    this.publicApiUrl = props.publicApiUrl ?? `https://${this.api.apiId}.execute-api.${this.region}.${this.urlSuffix}`;

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
      fn.addEnvironment(ENV.publicApiUrl, this.publicApiUrl);
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
        // Step Functions invokes synchronously: its Task states retry, not Lambda.
        asyncInvoke: spec.invokedByService === 'stepFunctions' ? undefined : WORKER_ASYNC_INVOKE,
      });
      bindGrants(worker, spec.grants);
      worker.addEnvironment(ENV.publicApiUrl, this.publicApiUrl);
      if ((spec.invokedBy.length > 0 || (spec.invokedByWorkers ?? []).length > 0) && !spec.envName) throw new Error(`worker ${name} is invoked by functions but has no envName`);
      for (const family of spec.invokedBy) {
        bindInvoke(functions[family], worker);
        functions[family].addEnvironment(spec.envName!, worker.functionName);
      }
      workers[name] = worker;
    }
    this.workers = workers;
    if (props.search) {
      // Text search on OpenSearch: each function granted searchIndexes gets its actions and OPENSEARCH_URL.
      const domain = new SearchDomain(this, 'SearchDomain', props.search);
      this.searchDomain = domain;
      for (const [fn, spec] of [...(Object.keys(FAMILIES) as Family[]).map((f) => [functions[f], FAMILIES[f] as FamilySpec] as const), ...(Object.keys(WORKERS) as Worker[]).map((w) => [workers[w], WORKERS[w] as WorkerSpec] as const)]) {
        if (spec.grants.searchIndexes) domain.grant(fn, spec.grants.searchIndexes);
      }
    }
    // Workers invoking workers, once all exist.
    for (const name of Object.keys(WORKERS) as Worker[]) {
      const spec: WorkerSpec = WORKERS[name];
      for (const invoker of spec.invokedByWorkers ?? []) {
        if (!(invoker in workers) || invoker === name) throw new Error(`worker ${name}: invokedByWorkers names "${invoker}", not another worker`);
        bindInvoke(workers[invoker as Worker], workers[name]);
        workers[invoker as Worker].addEnvironment(spec.envName!, workers[name].functionName);
      }
    }

    // Flows: one state machine per flow version, created at run time by the families granted
    // `flowExecutions`, all named under one prefix, all running as one role.
    const invokedBy = (service: NonNullable<WorkerSpec['invokedByService']>): Worker[] =>
      (Object.keys(WORKERS) as Worker[]).filter((w) => (WORKERS[w] as WorkerSpec).invokedByService === service);
    const [taskWorkerName, ...extraTaskWorkers] = invokedBy('stepFunctions');
    if (!taskWorkerName || extraTaskWorkers.length > 0) throw new Error('WORKERS must hold exactly one worker invoked by Step Functions (the flow task worker)');
    const taskWorker = workers[taskWorkerName];

    const prefix = props.flowStateMachinePrefix ?? defaultFlowPrefix(this.resolveStackName());
    if (!/^[A-Za-z0-9_-]+$/.test(prefix) || prefix.length > FLOW_PREFIX_MAX) {
      throw new Error(`flowStateMachinePrefix must be 1 to ${FLOW_PREFIX_MAX} letters, digits, - or _, got "${prefix}"`);
    }
    this.flowStateMachinePrefix = prefix;
    const flowArns = flowExecutionArns(this, prefix);
    this.flowStateMachineRole = new Role(this, 'FlowStateMachineRole', {
      description: `Runs the flows' state machines (${prefix}-*): invokes the flow task worker`,
      // Only Step Functions, and only for this account's state machines under the prefix.
      assumedBy: new ServicePrincipal('states.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': this.account },
          ArnLike: { 'aws:SourceArn': flowArns.stateMachines },
        },
      }),
    });
    bindInvoke(this.flowStateMachineRole, taskWorker);

    const flows = { prefix, role: this.flowStateMachineRole, taskWorkerArn: taskWorker.functionArn };
    for (const family of Object.keys(FAMILIES) as Family[]) {
      const uses = (FAMILIES[family] as FamilySpec).grants.flowExecutions;
      if (uses) bindFlowExecutions(functions[family], flows, uses);
    }
    for (const name of Object.keys(WORKERS) as Worker[]) {
      const uses = (WORKERS[name] as WorkerSpec).grants.flowExecutions;
      if (!uses) continue;
      // The task worker is not told its own ARN (a circular reference), so it cannot prepare.
      if (name === taskWorkerName && uses.includes('prepare')) throw new Error(`worker ${name}: the task worker cannot prepare state machines (it is their Task states' target)`);
      bindFlowExecutions(workers[name], { ...flows, taskWorkerArn: name === taskWorkerName ? undefined : flows.taskWorkerArn }, uses);
    }

    // Flow schedules: one EventBridge Scheduler schedule per flow schedule, created at run time by
    // the families granted `flowSchedules: 'manage'`, all in one group, all invoking the
    // schedule-start worker through one role.
    const [scheduleStartName, ...extraScheduleStarts] = invokedBy('flowSchedules');
    if (!scheduleStartName || extraScheduleStarts.length > 0) throw new Error('WORKERS must hold exactly one worker invoked by flowSchedules (the schedule-start worker)');
    const scheduleStart = workers[scheduleStartName];
    this.flowScheduleGroup = new ScheduleGroup(this, 'FlowScheduleGroup', { scheduleGroupName: `${prefix}-schedules` });
    const groupName = this.flowScheduleGroup.scheduleGroupName;
    const scheduleArns = flowScheduleArns(this, groupName, FLOW_SCHEDULE_NAME_PREFIX);
    this.flowScheduleRole = new Role(this, 'FlowScheduleRole', {
      description: `Runs the flow schedules of ${prefix}-schedules: invokes the schedule-start function`,
      // Only EventBridge Scheduler, and only for this account's schedule group.
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': this.account },
          ArnLike: { 'aws:SourceArn': scheduleArns.group },
        },
      }),
    });
    bindInvoke(this.flowScheduleRole, scheduleStart);
    const schedules = { groupName, namePrefix: FLOW_SCHEDULE_NAME_PREFIX, role: this.flowScheduleRole, targetArn: scheduleStart.functionArn };
    const declared: [AppFunction, FamilySpec['grants']][] = [
      ...(Object.keys(FAMILIES) as Family[]).map((f): [AppFunction, FamilySpec['grants']] => [functions[f], FAMILIES[f].grants]),
      ...(Object.keys(WORKERS) as Worker[]).map((w): [AppFunction, FamilySpec['grants']] => [workers[w], WORKERS[w].grants]),
    ];
    for (const [fn, grants] of declared) {
      if (!grants.flowSchedules) continue;
      // The schedule-start worker only removes schedules: being their target, it cannot be told its own ARN.
      if (fn === scheduleStart && grants.flowSchedules === 'manage') throw new Error(`worker ${scheduleStartName}: flowSchedules 'remove' only (it is the schedules' target)`);
      bindFlowSchedules(fn, schedules, grants.flowSchedules);
    }

    // Containers (issue 19): what Lambda cannot host, granted from the container table like the functions.
    this.containers = new ContainerPlatform(this, 'Containers', {
      grantResources,
      flows,
      environment: { [ENV.publicApiUrl]: this.publicApiUrl },
    });
    this.workerTask = this.containers.nodeTaskDefinition(this, 'WorkerTask', 'worker');
    // Who starts the worker task (imports) and who asks about it (the watchdog): grants.workerTask.
    this.worker = new WorkerTask(this, 'Worker', { platform: this.containers, task: this.workerTask });
    for (const [fn, grants] of declared) if (grants.workerTask) this.worker.grant(fn, grants.workerTask);
    // SPARQL services on Fargate hosts: who starts/stops them and who queries them (in the VPC): grants.serviceHosts.
    this.sparqlHosts = new SparqlHosts(this, 'SparqlHosts', { platform: this.containers });
    for (const [fn, grants] of declared) if (grants.serviceHosts) this.sparqlHosts.grant(fn, grants.serviceHosts);

    // Every final status of our executions goes to the settle worker(s). EventBridge invokes
    // asynchronously: its own retries, then Lambda's (WORKER_ASYNC_INVOKE).
    this.flowExecutionEndedRule = new Rule(this, 'FlowExecutionEndedRule', {
      description: `Settles flow runs when an execution of a ${prefix}-* state machine ends`,
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          stateMachineArn: EventMatch.prefix(flowArns.stateMachineArnPrefix),
          status: [...FINAL_EXECUTION_STATUSES],
        },
      },
    });
    const settleWorkers = invokedBy('flowExecutionEvents');
    if (settleWorkers.length === 0) throw new Error('WORKERS must hold a worker invoked by flowExecutionEvents (the flow settle worker)');
    for (const name of settleWorkers) {
      this.flowExecutionEndedRule.addTarget(new LambdaTarget(workers[name], RULE_TARGET_RETRY));
    }

    // Flow hooks: asset files stored in the data bucket (S3 sends its events to EventBridge, see
    // the stateful stack) and our upload events (put by the functions granted `uploadEvents`) go
    // to the hook dispatcher(s), both on the default bus.
    const hookWorkers = invokedBy('uploadEvents');
    if (hookWorkers.length === 0) throw new Error('WORKERS must hold a worker invoked by uploadEvents (the flow hook dispatcher)');
    this.assetStoredRule = new Rule(this, 'AssetStoredRule', {
      description: 'Runs flow hooks when an asset file is stored in the data bucket',
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: {
          bucket: { name: [props.dataBucket.bucketName] },
          object: { key: EventMatch.wildcard(ASSET_KEY_WILDCARD) },
        },
      },
    });
    this.uploadEventsRule = new Rule(this, 'UploadEventsRule', {
      description: 'Runs flow hooks when an import starts or finishes',
      eventPattern: {
        source: [UPLOAD_EVENT_SOURCE],
        detailType: Object.values(UPLOAD_EVENT_TYPES),
      },
    });
    for (const name of hookWorkers) {
      this.assetStoredRule.addTarget(new LambdaTarget(workers[name], RULE_TARGET_RETRY));
      this.uploadEventsRule.addTarget(new LambdaTarget(workers[name], RULE_TARGET_RETRY));
    }

    // The watchdog settles what stopped reporting and finishes what was left (WORKERS.watchdog).
    for (const name of invokedBy('watchdogSchedule')) {
      const rule = new Rule(this, `${name[0]!.toUpperCase()}${name.slice(1)}Schedule`, {
        description: 'Every 5 minutes: settles flow runs and import jobs that stopped reporting, finishes flow removals',
        schedule: EventSchedule.rate(Duration.minutes(5)),
        targets: [new LambdaTarget(workers[name], RULE_TARGET_RETRY)],
      });
      this.watchdogRules.push(rule);
    }

    for (const route of ROUTES) {
      if (route.host) continue; // served by a container host (below)
      this.api.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration: integrations[route.family] });
    }
    // The tus routes go to the upload host over a VPC link (lib/constructs/upload-host.ts).
    this.uploadHost = new UploadHost(this, 'UploadHost', { platform: this.containers, api: this.api, routes: ROUTES.filter((r) => r.host === 'uploads') });

    new CfnOutput(this, 'ApiUrl', { value: stage.url, description: 'Base URL of the public API' });
  }

  private resolveStackName(): string {
    if (Token.isUnresolved(this.stackName)) throw new Error('StatelessStack needs a concrete stack name (or flowStateMachinePrefix)');
    return this.stackName;
  }
}
