import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SesMailer } from '../adapters/aws/ses-mailer.js';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EventBridgeUploadEvents } from '../adapters/aws/eventbridge-upload-events.js';
import { S3BlobStore } from '../adapters/aws/s3-blob-store.js';
import { S3TusUploads } from '../adapters/aws/s3-tus-uploads.js';
import { MAX_UPLOAD_BYTES } from '../adapters/common/tus-uploads.js';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { LambdaTaskQueue } from '../adapters/aws/lambda-task-queue.js';
import { EcsServiceHosts, sparqlHostsSettings } from '../adapters/aws/ecs-service-hosts.js';
import { OpenSearchIndexes } from '../adapters/aws/opensearch-indexes.js';
import type { Logger } from '../ports/logger.js';
import type { ServiceHosts } from '../ports/service-hosts.js';
import { EcsTaskQueue, workerTaskSettings } from '../adapters/aws/ecs-task-queue.js';
import { ecsApi } from '../adapters/aws/ecs-api.js';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { EventBridgeScheduler } from '../adapters/aws/eventbridge-scheduler.js';
import type { FlowScheduler } from '../ports/flow-scheduler.js';
import type { Clock } from '../ports/clock.js';
import { DynamoDbFlowStore } from '../adapters/aws/dynamodb-flow-store.js';
import { StepFunctionsExecutor } from '../adapters/aws/step-functions-executor.js';
import type { FlowExecutor } from '../ports/flow-executor.js';
import type { ResumableUploads } from '../ports/resumable-uploads.js';
import type { TaskQueue } from '../ports/task-queue.js';
import { DynamoDbMetadataStore } from '../adapters/aws/dynamodb-metadata-store.js';
import { awsSettingsFromEnv, internalEndpointsFromEnv, requiredEnv } from '../config.js';
import type { Blobs, PlatformSettings } from '../domain/shared/platform.js';
import { ENV, type EnvName } from '../env-names.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { Services } from '../http/api.js';
import type { LambdaRuntime } from '../http/lambda.js';
import { lambdaLogging } from '../adapters/aws/lambda-logging.js';
import { createLogger } from '../adapters/common/powertools-logger.js';
import { commonPorts, createServices } from './wiring.js';

export const documentClient = (client: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/**
 * A function only gets the bucket env vars its family is granted (see FAMILIES in the route
 * table); touching another bucket is a programming error, reported as such.
 */
function bucketStores(s3: () => S3Client): Blobs {
  const store = (env: EnvName): BlobStore => {
    const bucket = process.env[env];
    if (bucket) return new S3BlobStore(s3(), bucket);
    const refuse = () => {
      throw new Error(`${env} is not set: this function is not granted that bucket`);
    };
    return { put: refuse, get: refuse, head: refuse, delete: refuse, list: refuse };
  };
  return { data: store(ENV.dataBucketName), uploads: store(ENV.uploadsBucketName), artifacts: store(ENV.artifactsBucketName) };
}

/**
 * Only the functions told the import worker (imports, services, the flow task worker) start
 * background work; elsewhere a task is a programming error. Those also told the worker task
 * (WORKER_TASK: the imports family) run imports and URL loads there (small uploads stay on the
 * function, see EcsTaskQueue); the watchdog is told it to ask whether a job's worker task stopped.
 */
function taskQueue(): TaskQueue {
  const worker = process.env[ENV.importWorkerFunctionName];
  const functions = worker ? new LambdaTaskQueue(new LambdaClient({}), worker) : undefined;
  const workerTask = process.env[ENV.workerTask];
  if (workerTask) return new EcsTaskQueue(ecsApi(), workerTaskSettings(workerTask), functions);
  if (functions) return functions;
  const refuse = async () => {
    throw new Error(`${ENV.importWorkerFunctionName} is not set: this function cannot start background work`);
  };
  return { enqueueImport: refuse, enqueueServiceLoad: refuse };
}

/**
 * Flow executions on Step Functions, for the functions the stack gives the flows env (the flows
 * family, the task worker, the settle function); elsewhere running a flow is a programming error.
 * The task worker cannot be told its own ARN (a circular reference), so it prepares no state
 * machines; it has no need to.
 */
function flowExecutor(): FlowExecutor {
  const namePrefix = process.env[ENV.flowStateMachinePrefix];
  const roleArn = process.env[ENV.flowStateMachineRoleArn];
  const taskWorkerArn = process.env[ENV.flowTaskWorkerArn];
  const refuse = (what: string) => async (): Promise<never> => {
    throw new Error(`${what} is not set: this function cannot run flows`);
  };
  if (!namePrefix) {
    const no = refuse(ENV.flowStateMachinePrefix);
    return { prepare: no, start: no, abort: no, result: no, status: no, discard: no, release: no };
  }
  const executor = new StepFunctionsExecutor(new SFNClient({}), { roleArn: roleArn ?? '', taskWorkerArn: taskWorkerArn ?? '', namePrefix });
  if (roleArn && taskWorkerArn) return executor;
  return {
    prepare: refuse(roleArn ? ENV.flowTaskWorkerArn : ENV.flowStateMachineRoleArn),
    start: (...args) => executor.start(...args),
    abort: (ref) => executor.abort(ref),
    result: (ref) => executor.result(ref),
    status: (ref) => executor.status(ref),
    discard: (executable) => executor.discard(executable),
    release: (token, outcome) => executor.release(token, outcome),
    heartbeat: (token) => executor.heartbeat(token),
  };
}

/**
 * Flow schedules on EventBridge Scheduler, for the functions the stack gives the schedule group:
 * the flows family creates, changes and removes them; the accounts family (removing a user) and
 * the schedule-start function (a schedule whose flow or owner is gone) only remove them.
 * Elsewhere touching a schedule is a programming error.
 */
function flowScheduler(clock: Clock): FlowScheduler {
  const groupName = process.env[ENV.flowScheduleGroup];
  if (!groupName) {
    const refuse = async (): Promise<never> => {
      throw new Error(`${ENV.flowScheduleGroup} is not set: this function cannot manage flow schedules`);
    };
    return { upsert: refuse, remove: refuse };
  }
  return new EventBridgeScheduler(new SchedulerClient({}), clock, {
    groupName,
    targetArn: process.env[ENV.flowScheduleStartArn],
    roleArn: process.env[ENV.flowScheduleRoleArn],
  });
}

/**
 * Resumable (tus) uploads need a host without Lambda's 6 MB event limit (the client's 5 MiB
 * chunks are about 7 MB in base64): the upload host, a Fargate service the API routes the tus
 * routes to (see lib/constructs/upload-host.ts), which alone has UPLOAD_HOST set and keeps the
 * uploads in the uploads bucket (S3 multipart). A tus request that reaches a function was routed
 * wrongly by the deployment: answer so, with what still works. Functions granted the uploads
 * bucket still see which uploads are unfinished.
 */
function resumableUploads(): ResumableUploads {
  if (process.env[ENV.uploadHost] === 'true') return new S3TusUploads({ bucket: requiredEnv(ENV.uploadsBucketName), maxSize: MAX_UPLOAD_BYTES });
  // Starting a job (the imports function) refuses while one of its uploads is half done: the
  // upload host's state is in the uploads bucket, so the function reads it there.
  const bucket = process.env[ENV.uploadsBucketName];
  const stored = bucket ? new S3TusUploads({ bucket, maxSize: MAX_UPLOAD_BYTES }) : undefined;
  return {
    unfinished: stored && ((scopeSuffix) => stored.unfinished(scopeSuffix)),
    async handle() {
      return new Response(
        JSON.stringify({
          message:
            'Resumable (tus) uploads are served by the upload host, but this request reached a function: the deployment does not route the upload routes (.../add) to the upload host. Ask the operator to redeploy; meanwhile upload files of up to 4 MiB with a multipart POST to .../jobs (data) or .../assets (assets), or import data from a URL (POST .../jobs with {"type":"download","downloadUrls":[...]}).',
        }),
        { status: 503, headers: { 'content-type': 'application/json; charset=utf-8' } },
      );
    },
  };
}

/**
 * SPARQL services on Fargate hosts (issue 19) for the functions the stack gives SPARQL_HOSTS: those
 * that start or stop them (manage), the loader (stop), those that query them (query, in the VPC).
 * Without it a function serves services as before issue 19 (loading small snapshots itself).
 */
function serviceHosts(): ServiceHosts | undefined {
  const raw = process.env[ENV.sparqlHosts];
  return raw ? new EcsServiceHosts(ecsApi(), sparqlHostsSettings(raw), awsLogger) : undefined;
}

/**
 * Text search on OpenSearch when OPENSEARCH_URL is set (signed as OPENSEARCH_SIGNING says, in the
 * function's region); undefined: the embedded engine (createServices' default).
 */
export function openSearchFromEnv(env: NodeJS.ProcessEnv, logger: Logger): OpenSearchIndexes | undefined {
  const url = env[ENV.opensearchUrl];
  if (!url) return undefined;
  const signing = env[ENV.opensearchSigning];
  if (signing !== undefined && signing !== 'es' && signing !== 'aoss') throw new Error(`${ENV.opensearchSigning} must be es or aoss, got "${signing}"`);
  return new OpenSearchIndexes({ url, ...(signing ? { aws: { region: env.AWS_REGION ?? 'us-east-1', service: signing } } : {}) }, logger);
}

/** One logger per Lambda environment; its level comes from POWERTOOLS_LOG_LEVEL (default INFO). */
export const awsLogger = createLogger();

let services: Promise<Services> | undefined;

/**
 * The AWS composition root: SDK clients are built once per cold start from the environment
 * (endpoints come from AWS_ENDPOINT_URL_* when set, so the same code runs against stand-ins).
 */
export function awsServices(options: { imports?: PlatformSettings['imports'] } = {}): Promise<Services> {
  services ??= Promise.resolve().then(() => {
    const db = documentClient(new DynamoDBClient({}));
    // `imports`: the worker task's own import limits (functions/containers/worker.ts).
    const settings = { ...awsSettingsFromEnv(), ...(options.imports ? { imports: options.imports } : {}) };
    const table = requiredEnv(ENV.tableName);
    let s3: S3Client | undefined;
    const ports = commonPorts(settings, awsLogger, internalEndpointsFromEnv());
    return createServices({
      store: new DynamoDbMetadataStore(db, table),
      flows: new DynamoDbFlowStore(db, table),
      flowExecutor: flowExecutor(),
      scheduler: flowScheduler(ports.clock),
      mailer: new SesMailer(new SESv2Client({}), settings.mailFrom),
      events: new EventBridgeUploadEvents(new EventBridgeClient({})),
      blobs: bucketStores(() => (s3 ??= new S3Client({}))),
      tasks: taskQueue(),
      uploads: resumableUploads(),
      serviceHosts: serviceHosts(),
      search: openSearchFromEnv(process.env, awsLogger),
      ...ports,
    });
  });
  return services;
}

/** What every Lambda entry uses: the services, the logger, and the logging middleware. */
export const awsLambda: LambdaRuntime = { services: awsServices, logger: awsLogger, middlewares: lambdaLogging(awsLogger) };
