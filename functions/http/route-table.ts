import { ENV, type EnvName } from '../env-names.js';
import { EXPORT_FORMATS, formatByName, RESULT_SUFFIXES } from '../rdf/formats.js';

/**
 * The one route table of the platform. Pure data: the CDK stateless stack creates an API Gateway
 * route per entry, wired to the Lambda function of the entry's family; the embedded server matches
 * requests against the same entries. Each family is one small Lambda function whose handler
 * module is `functions/handlers/<family>.ts`.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

export type Access = 'R' | 'RW';
/**
 * Access to a bucket: 'R' reads (and lists, so a missing key is a 404, not a 403); 'RW' also
 * writes and deletes current objects (never old versions); 'delete' only lists and deletes (the
 * accounts family removing a deleted account's datasets); 'readDelete' reads too (the accounts family
 * also shows pinned stories, issue 14).
 */
export type BucketAccess = Access | 'delete' | 'readDelete';
/**
 * What a function does with the flows' Step Functions state machines and executions: the
 * FlowExecutor methods it calls (functions/adapters/aws/step-functions-executor.ts). Each grants
 * exactly the actions that method sends, scoped to the flows' name prefix.
 */
export type FlowExecutionUse = 'prepare' | 'start' | 'abort' | 'result' | 'status' | 'discard' | 'release' | 'heartbeat';

export interface FamilySpec {
  /**
   * What the family's function may touch; the stack grants exactly this, nothing more. Families
   * whose answers can outgrow Lambda's response limit get the artifacts bucket to spill them to.
   */
  grants: {
    table?: Access;
    dataBucket?: BucketAccess;
    uploadsBucket?: BucketAccess;
    artifactsBucket?: BucketAccess;
    /**
     * The FlowExecutor methods it calls: 'prepare' creates state machines (and passes their role),
     * 'start' starts executions, 'abort' stops them, 'result' and 'status' read how one ended, 'discard'
     * deletes state machines, 'release' ends a task-token wait, 'heartbeat' tells a wait its long task
     * still works (the worker task). Any of them sets the flows env.
     */
    flowExecutions?: readonly FlowExecutionUse[];
    /**
     * The flows' EventBridge Scheduler schedules: 'manage' creates, changes and removes them (and
     * passes their role); 'remove' only removes them (a removed user's schedules).
     */
    flowSchedules?: 'manage' | 'remove';
    /**
     * Puts upload events (`Import started`, `Import finished`) on the default EventBridge bus,
     * where a rule hands them to the hook dispatcher; only with the uploads' event source.
     */
    uploadEvents?: true;
    /**
     * Sends email through SES from the stack's sender address (and is told it in MAIL_FROM):
     * the flows' failure emails when a run settles, and the Send email task.
     */
    mail?: true;
    /**
     * tus over the uploads bucket (the upload host): lists the parts of its multipart uploads
     * under `tus/` (s3:ListMultipartUploadParts); the objects themselves come with uploadsBucket.
     */
    tusUploads?: true;
    /**
     * The worker task (ECS Fargate, lib/constructs/worker-task.ts): 'run' starts it for an import
     * (RunTask, PassRole of its roles); 'describe' asks whether a job's task still runs (the watchdog).
     */
    workerTask?: 'run' | 'describe';
    /**
     * SPARQL hosts (ECS Fargate, lib/constructs/sparql-hosts.ts): 'query' places the function in
     * the VPC with the security group the hosts' Virtuoso admits (it attaches to loaded snapshots);
     * 'describe' asks whether host tasks still run (DescribeTasks in the cluster; the watchdog);
     * 'stop' may stop host tasks (StopTask in the cluster); 'manage' may also start them (RunTask
     * of the host task definition, PassRole of its roles). All are told SPARQL_HOSTS.
     */
    serviceHosts?: 'query' | 'describe' | 'stop' | 'manage';
    /**
     * Text search indexes on the stack's OpenSearch domain, when it has one (lib/constructs/search-domain.ts):
     * 'read' searches, 'write' also builds and drops indexes; both are told OPENSEARCH_URL. Without a
     * domain the indexes are data bucket blobs, which the dataBucket grant covers.
     */
    searchIndexes?: 'read' | 'write';
  };
  memoryMb: number;
  timeoutSeconds: number;
}

export const FAMILIES = {
  info: { grants: { table: 'R' }, memoryMb: 256, timeoutSeconds: 5 },
  // dataBucket R: /me shows pinned stories (blobs).
  auth: { grants: { table: 'RW', dataBucket: 'R' }, memoryMb: 512, timeoutSeconds: 10 },
  // Deleting an account removes its datasets' (and stories') blobs and its flows' state machines;
  // readDelete (was 'delete'): account pages show pinned stories, blobs read here (issue 14).
  accounts: { grants: { table: 'RW', dataBucket: 'readDelete', flowExecutions: ['discard'], flowSchedules: 'remove' }, memoryMb: 512, timeoutSeconds: 10 },
  datasets: { grants: { table: 'RW', dataBucket: 'RW' }, memoryMb: 512, timeoutSeconds: 30 },
  // workerTask: imports and URL loads past a function's 15 minutes run on the worker task.
  // tusUploads: starting a job refuses while one of its uploads (kept by the upload host) is half done.
  imports: { grants: { table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', uploadEvents: true, workerTask: 'run', tusUploads: true }, memoryMb: 2048, timeoutSeconds: 30 },
  graphs: { grants: { table: 'RW', dataBucket: 'RW' }, memoryMb: 1024, timeoutSeconds: 30 },
  exports: { grants: { table: 'R', dataBucket: 'R', artifactsBucket: 'RW' }, memoryMb: 1024, timeoutSeconds: 30 },
  assets: { grants: { table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', artifactsBucket: 'RW' }, memoryMb: 1024, timeoutSeconds: 30 },
  // serviceHosts: stop, restart, sync and delete stop a service's host task (the import worker starts it).
  // searchIndexes: stop and delete drop a text search service's index.
  services: { grants: { table: 'RW', dataBucket: 'RW', serviceHosts: 'manage', searchIndexes: 'write' }, memoryMb: 512, timeoutSeconds: 30 },
  // serviceHosts 'query': in the VPC, querying the hosts' Virtuoso; everything else they call is S3 and DynamoDB (gateway endpoints).
  sparql: { grants: { table: 'R', dataBucket: 'R', artifactsBucket: 'RW', serviceHosts: 'query' }, memoryMb: 3008, timeoutSeconds: 30 },
  queries: { grants: { table: 'RW', dataBucket: 'RW', artifactsBucket: 'RW', serviceHosts: 'query' }, memoryMb: 3008, timeoutSeconds: 30 },
  'dataset-sparql': { grants: { table: 'RW', dataBucket: 'RW', artifactsBucket: 'RW' }, memoryMb: 3008, timeoutSeconds: 30 },
  // Text search (issue 15): reads the service and its index (a data blob loaded once per warm function, or Amazon OpenSearch).
  search: { grants: { table: 'R', dataBucket: 'R', searchIndexes: 'read' }, memoryMb: 3008, timeoutSeconds: 30 },
  flows: {
    grants: { table: 'RW', artifactsBucket: 'RW', flowExecutions: ['prepare', 'start', 'abort', 'discard'], flowSchedules: 'manage', mail: true },
    memoryMb: 1024,
    timeoutSeconds: 30,
  },
} as const satisfies Record<string, FamilySpec>;

export type Family = keyof typeof FAMILIES;

export interface RouteSpec {
  method: HttpMethod;
  /** API Gateway style path: `{name}` matches one segment. */
  path: string;
  family: Family;
  operation: string;
  /** The body is streamed to the operation instead of buffered (uploads). */
  stream?: boolean;
  /** Errors are text/plain, as SPARQL protocol clients expect. */
  plainErrors?: boolean;
  /**
   * On AWS the route is served by a container host instead of its family's function: 'uploads',
   * the upload host (tus: its 5 MiB chunks do not fit a Lambda event), reached over the API's VPC
   * link (lib/constructs/upload-host.ts). The embedded server and the handlers are the same.
   */
  host?: 'uploads';
}

const route = (method: HttpMethod, path: string, family: Family, operation: string, options: { stream?: boolean; plainErrors?: boolean; host?: 'uploads' } = {}): RouteSpec => ({
  method,
  path,
  family,
  operation,
  ...options,
});

const DS = '/datasets/{account}/{dataset}';

/** Result suffixes in a fixed (alphabetical) order, so the routes do not move when the table's preference order does. */
const SUFFIXES = [...RESULT_SUFFIXES].sort();

/** `sparql` and `sparql.<suffix>` for every result format of the format table. */
const SPARQL_FILES = ['sparql', ...SUFFIXES.map((s) => `sparql.${s}`)];

/** `run` and `run.<suffix>` of saved queries. */
const RUN_FILES = ['run', ...SUFFIXES.map((s) => `run.${s}`)];
const Q = '/queries/{account}/{query}';

/** `download`, then `download.<ext>` and `download.<ext>.gz` for every export format (API Gateway has no partial-segment parameters). */
const DOWNLOAD_FILES = ['download', ...EXPORT_FORMATS.map((f) => f.extensions[0]!).flatMap((ext) => [`download.${ext}`, `download.${ext}.gz`])];

const F = '/flows/blueprints/{account}/{flow}';

/** Flows: blueprints (changed only from a console session), runs, task instances, switches. */
const FLOW_ROUTES: RouteSpec[] = [
  route('GET', '/admin/flows', 'flows', 'getFlowSwitches'),
  route('PATCH', '/admin/flows', 'flows', 'setFlowSwitches'),
  route('GET', '/flows/blueprints/{account}', 'flows', 'listFlows'),
  route('POST', '/flows/blueprints/{account}', 'flows', 'createFlow'),
  route('GET', F, 'flows', 'getFlow'),
  route('PUT', F, 'flows', 'saveFlow'),
  route('DELETE', F, 'flows', 'deleteFlow'),
  route('GET', `${F}/download.ttl`, 'flows', 'downloadFlow'),
  route('GET', `${F}/versions`, 'flows', 'listFlowVersions'),
  route('GET', `${F}/versions/{version}`, 'flows', 'getFlowVersion'),
  route('POST', `${F}/versions/{version}/restore`, 'flows', 'restoreFlowVersion'),
  route('POST', `${F}/copy`, 'flows', 'copyFlow'),
  route('POST', `${F}/move`, 'flows', 'moveFlow'),
  route('GET', `${F}/presets`, 'flows', 'listPresets'),
  route('PUT', `${F}/presets/{preset}`, 'flows', 'putPreset'),
  route('DELETE', `${F}/presets/{preset}`, 'flows', 'deletePreset'),
  route('GET', `${F}/maskedValues`, 'flows', 'listMaskedValues'),
  route('GET', `${F}/maskedValues/{name}`, 'flows', 'getMaskedValue'),
  route('PUT', `${F}/maskedValues/{name}`, 'flows', 'putMaskedValue'),
  route('DELETE', `${F}/maskedValues/{name}`, 'flows', 'deleteMaskedValue'),
  route('GET', `${F}/schedules`, 'flows', 'listSchedules'),
  route('POST', `${F}/schedules`, 'flows', 'createSchedule'),
  route('GET', `${F}/schedules/{schedule}`, 'flows', 'getSchedule'),
  route('PATCH', `${F}/schedules/{schedule}`, 'flows', 'updateSchedule'),
  route('DELETE', `${F}/schedules/{schedule}`, 'flows', 'deleteSchedule'),
  route('GET', `${F}/hooks`, 'flows', 'listHooks'),
  route('POST', `${F}/hooks`, 'flows', 'createHook'),
  route('GET', `${F}/hooks/{hook}`, 'flows', 'getHook'),
  route('PATCH', `${F}/hooks/{hook}`, 'flows', 'updateHook'),
  route('DELETE', `${F}/hooks/{hook}`, 'flows', 'deleteHook'),
  route('POST', `${F}/run`, 'flows', 'startRun'),
  route('POST', `${F}/triggers/{preset}/run`, 'flows', 'startRun'),
  route('GET', '/flows/runs', 'flows', 'listRuns'),
  route('GET', '/flows/runs/{run}', 'flows', 'getRun'),
  route('POST', '/flows/runs/{run}/abort', 'flows', 'abortRun'),
  route('GET', '/flows/taskTypes', 'flows', 'listTaskTypes'),
  route('GET', '/flows/taskInstances', 'flows', 'listTaskInstances'),
  route('GET', '/flows/taskInstances/{task}/artifacts/{artifact}', 'flows', 'downloadArtifact'),
];

export const ROUTES: readonly RouteSpec[] = [
  route('GET', '/info', 'info', 'getInfo'),
  route('GET', '/openapi.json', 'info', 'getOpenApi'),

  route('GET', '/me', 'auth', 'getMe'),
  route('PATCH', '/me', 'accounts', 'updateMe'),
  route('DELETE', '/me', 'accounts', 'deleteMe'),
  route('POST', '/login', 'auth', 'login'),
  route('POST', '/logout', 'auth', 'logout'),

  route('GET', '/accounts', 'accounts', 'listAccounts'),
  route('POST', '/accounts', 'accounts', 'createAccount'),
  route('GET', '/accounts/{account}', 'accounts', 'getAccount'),
  route('PATCH', '/accounts/{account}', 'accounts', 'updateAccount'),
  route('DELETE', '/accounts/{account}', 'accounts', 'deleteAccount'),
  route('GET', '/accounts/{account}/orgs', 'accounts', 'listOrganizationsOfUser'),
  route('POST', '/accounts/{account}/orgs', 'accounts', 'createOrganizationForUser'),
  route('GET', '/accounts/{account}/members', 'accounts', 'listMembers'),
  route('POST', '/accounts/{account}/members', 'accounts', 'addMember'),
  route('GET', '/accounts/{account}/members/{member}', 'accounts', 'getMember'),
  route('PATCH', '/accounts/{account}/members/{member}', 'accounts', 'updateMember'),
  route('DELETE', '/accounts/{account}/members/{member}', 'accounts', 'removeMember'),
  route('GET', '/accounts/{account}/roles', 'accounts', 'listRoles'),
  route('POST', '/accounts/{account}/roles', 'accounts', 'createRole'),
  route('PATCH', '/accounts/{account}/roles/{role}', 'accounts', 'updateRole'),
  route('DELETE', '/accounts/{account}/roles/{role}', 'accounts', 'deleteRole'),
  route('GET', '/accounts/{account}/tokens', 'accounts', 'listTokens'),
  route('POST', '/accounts/{account}/tokens', 'accounts', 'createToken'),
  route('DELETE', '/accounts/{account}/tokens/{tokenId}', 'accounts', 'deleteToken'),

  route('GET', '/datasets', 'datasets', 'listAllDatasets'),
  route('GET', '/datasets/{account}', 'datasets', 'listAccountDatasets'),
  route('POST', '/datasets/{account}', 'datasets', 'createDataset'),
  route('GET', '/datasets/{account}/{dataset}', 'datasets', 'getDataset'),
  route('PATCH', '/datasets/{account}/{dataset}', 'datasets', 'updateDataset'),
  route('DELETE', '/datasets/{account}/{dataset}', 'datasets', 'deleteDataset'),
  route('GET', '/datasets/{account}/{dataset}/prefixes', 'datasets', 'getPrefixes'),
  route('PATCH', '/datasets/{account}/{dataset}/prefixes', 'datasets', 'updatePrefixes'),
  route('DELETE', '/datasets/{account}/{dataset}/prefixes/{prefix}', 'datasets', 'deletePrefix'),
  // Issue 14 (area B): prefixes, chown, webhooks, stories, avatars.
  route('GET', '/prefixes', 'datasets', 'getGlobalPrefixes'),
  route('GET', '/prefixes/{prefix}', 'datasets', 'getGlobalPrefix'),
  route('POST', `${DS}/prefixes`, 'datasets', 'addDatasetPrefixes'),
  route('PUT', `${DS}/prefixes`, 'datasets', 'replaceDatasetPrefixes'),
  route('GET', `${DS}/prefixes/{prefix}`, 'datasets', 'getDatasetPrefix'),
  route('PUT', `${DS}/prefixes/{prefix}`, 'datasets', 'putDatasetPrefix'),
  route('POST', `${DS}/chown`, 'datasets', 'chownDataset'),
  route('GET', `${DS}/hooks`, 'datasets', 'listDatasetHooks'),
  route('POST', `${DS}/hooks`, 'datasets', 'createDatasetHook'),
  route('GET', `${DS}/hooks/{hookId}`, 'datasets', 'getDatasetHook'),
  route('PATCH', `${DS}/hooks/{hookId}`, 'datasets', 'updateDatasetHook'),
  route('DELETE', `${DS}/hooks/{hookId}`, 'datasets', 'deleteDatasetHook'),
  route('GET', `${DS}/hookrecords/{hookId}`, 'datasets', 'getDatasetHookRecords'),
  route('GET', '/stories', 'datasets', 'listAllStories'),
  route('GET', '/stories/{account}', 'datasets', 'listAccountStories'),
  route('POST', '/stories/{account}', 'datasets', 'createStory'),
  route('GET', '/stories/{account}/{story}', 'datasets', 'getStory'),
  route('PATCH', '/stories/{account}/{story}', 'datasets', 'updateStory'),
  route('DELETE', '/stories/{account}/{story}', 'datasets', 'deleteStory'),
  route('POST', '/stories/{account}/{story}/copy', 'datasets', 'copyStory'),
  route('POST', '/stories/{account}/{story}/chown', 'datasets', 'chownStory'),
  route('POST', '/stories/{account}/{story}/banner.webp', 'datasets', 'uploadStoryBanner'),
  route('GET', '/stories/{account}/{story}/banner.webp', 'datasets', 'getStoryBanner'),
  route('GET', '/stories/{account}/{story}/banner', 'datasets', 'getStoryBanner'),
  route('POST', '/imgs/avatars/a/{id}', 'datasets', 'setAccountAvatar'),
  route('POST', '/imgs/avatars/d/{id}', 'datasets', 'setDatasetAvatar'),
  route('GET', '/imgs/avatars/{kind}/{id}', 'datasets', 'getAvatar'),

  route('POST', `${DS}/jobs`, 'imports', 'createJob', { stream: true }),
  route('GET', `${DS}/jobs`, 'imports', 'listJobs'),
  route('GET', `${DS}/jobs/{jobId}`, 'imports', 'getJob'),
  // Issue 14 (area A): clearing jobs, reset, removing a file of a job.
  route('DELETE', `${DS}/jobs`, 'imports', 'cancelAllJobs'),
  route('POST', `${DS}/jobs/{jobId}/reset`, 'imports', 'resetJob'),
  route('DELETE', `${DS}/jobs/{jobId}/{sourceFileId}`, 'imports', 'deleteJobFile'),
  route('DELETE', `${DS}/jobs/{jobId}`, 'imports', 'cancelJob'),
  route('POST', `${DS}/jobs/{jobId}/start`, 'imports', 'startJob'),
  route('POST', `${DS}/jobs/{jobId}/add`, 'imports', 'createJobUpload', { stream: true, host: 'uploads' }),
  route('HEAD', `${DS}/jobs/{jobId}/add/{uploadId}`, 'imports', 'jobUpload', { stream: true, host: 'uploads' }),
  route('PATCH', `${DS}/jobs/{jobId}/add/{uploadId}`, 'imports', 'jobUpload', { stream: true, host: 'uploads' }),
  route('DELETE', `${DS}/jobs/{jobId}/add/{uploadId}`, 'imports', 'jobUpload', { stream: true, host: 'uploads' }),

  route('GET', `${DS}/graphs`, 'graphs', 'listGraphs'),
  route('DELETE', `${DS}/graphs`, 'graphs', 'deleteAllGraphs'),
  route('GET', `${DS}/graphs/{graphId}`, 'graphs', 'getGraph'),
  route('PATCH', `${DS}/graphs/{graphId}`, 'graphs', 'renameGraph'),
  route('DELETE', `${DS}/graphs/{graphId}`, 'graphs', 'deleteGraph'),
  // Issue 14 (area A): a copy of the dataset in another account, graphs imported from other datasets.
  route('POST', `${DS}/copy`, 'graphs', 'copyDataset'),
  route('GET', `${DS}/imports`, 'graphs', 'getImports'),
  route('PATCH', `${DS}/imports`, 'graphs', 'updateImports'),

  route('GET', `${DS}/assets`, 'assets', 'listAssets'),
  route('DELETE', `${DS}/assets`, 'assets', 'deleteAllAssets'),
  route('GET', `${DS}/assets/download`, 'assets', 'downloadAssetByName'),
  route('POST', `${DS}/assets`, 'assets', 'uploadAsset', { stream: true }),
  route('POST', `${DS}/assets/add`, 'assets', 'assetUpload', { stream: true, host: 'uploads' }),
  route('HEAD', `${DS}/assets/add/{uploadId}`, 'assets', 'assetUpload', { stream: true, host: 'uploads' }),
  route('PATCH', `${DS}/assets/add/{uploadId}`, 'assets', 'assetUpload', { stream: true, host: 'uploads' }),
  route('DELETE', `${DS}/assets/add/{uploadId}`, 'assets', 'assetUpload', { stream: true, host: 'uploads' }),
  route('GET', `${DS}/assets/{identifier}`, 'assets', 'downloadAsset'),
  route('GET', `${DS}/assets/{identifier}/{versionId}`, 'assets', 'downloadAsset'),
  route('DELETE', `${DS}/assets/{identifier}`, 'assets', 'deleteAsset'),
  route('DELETE', `${DS}/assets/{identifier}/{versionId}`, 'assets', 'deleteAsset'),

  route('GET', `${DS}/services`, 'services', 'listServices'),
  route('POST', `${DS}/services`, 'services', 'createService'),
  route('GET', `${DS}/services/{service}`, 'services', 'getService'),
  route('POST', `${DS}/services/{service}`, 'services', 'serviceAction'),
  route('PATCH', `${DS}/services/{service}`, 'services', 'renameService'),
  route('DELETE', `${DS}/services/{service}`, 'services', 'deleteService'),
  route('GET', `${DS}/services/{service}/graphs`, 'services', 'serviceGraphs'),
  ...SPARQL_FILES.flatMap((file) => [
    route('GET', `${DS}/services/{service}/${file}`, 'sparql', 'serviceSparql', { plainErrors: true }),
    route('POST', `${DS}/services/{service}/${file}`, 'sparql', 'serviceSparql', { plainErrors: true }),
    route('GET', `${DS}/${file}`, 'dataset-sparql', 'datasetSparql', { plainErrors: true }),
    route('POST', `${DS}/${file}`, 'dataset-sparql', 'datasetSparql', { plainErrors: true }),
  ]),

  // GraphQL over the dataset (functions/domain/graphql): in the sparql family, which reaches the services' hosts.
  route('GET', `${DS}/graphql`, 'sparql', 'graphql'),
  route('POST', `${DS}/graphql`, 'sparql', 'graphql'),
  route('GET', `${DS}/graphql/status`, 'sparql', 'graphqlStatus'),

  // Text search services: Elasticsearch's routes (functions/domain/search).
  route('GET', `${DS}/services/{service}/search`, 'search', 'simpleSearch'),
  ...['search', 'elasticsearch', '_search'].map((file) => route('POST', `${DS}/services/{service}/${file}`, 'search', 'dslSearch')),
  route('POST', `${DS}/services/{service}/_msearch`, 'search', 'multiSearch'),
  route('POST', `${DS}/services/{service}/_count`, 'search', 'countSearch'),
  route('POST', `${DS}/services/{service}/_terms_enum`, 'search', 'termsEnum'),
  route('GET', `${DS}/services/{service}/mappings`, 'search', 'searchMappings'),

  // Pipelines (TriplyDB's query jobs): saved queries' results written into a graph (functions/domain/pipelines).
  route('POST', '/pipelines/{account}', 'queries', 'createPipeline'),
  route('GET', '/pipelines/{account}/{pipeline}', 'queries', 'getPipeline'),
  route('GET', '/queries', 'queries', 'listQueries'),
  route('GET', '/queries/{account}', 'queries', 'listAccountQueries'),
  route('POST', '/queries/{account}', 'queries', 'createQuery'),
  route('GET', Q, 'queries', 'getQuery'),
  route('POST', Q, 'queries', 'addQueryVersion'),
  route('PATCH', Q, 'queries', 'updateQuery'),
  route('DELETE', Q, 'queries', 'deleteQuery'),
  route('POST', `${Q}/chown`, 'queries', 'chownQuery'),
  route('GET', `${Q}/{version}`, 'queries', 'getQuery'),
  route('GET', `${Q}/text`, 'queries', 'queryText'),
  route('GET', `${Q}/{version}/text`, 'queries', 'queryText'),
  ...RUN_FILES.flatMap((file) => [
    route('GET', `${Q}/${file}`, 'queries', 'runQuery'),
    route('POST', `${Q}/${file}`, 'queries', 'runQuery'),
    route('GET', `${Q}/{version}/${file}`, 'queries', 'runQuery'),
    route('POST', `${Q}/{version}/${file}`, 'queries', 'runQuery'),
  ]),

  ...FLOW_ROUTES,

  ...DOWNLOAD_FILES.map((file) => route('GET', `${DS}/${file}`, 'exports', 'download')),
  route('GET', `${DS}/describe`, 'exports', 'describe'),
  // Issue 14 (area A): statements and terms (autocomplete), read from the graph blobs.
  route('GET', `${DS}/statements`, 'exports', 'getStatements'),
  route('GET', `${DS}/terms`, 'exports', 'getTerms'),
  route('GET', `${DS}/describe.${formatByName('ntriples').extensions[0]}`, 'exports', 'describe'),
];

/** API Gateway route key, e.g. `GET /datasets/{account}`. */
export const routeKey = (r: Pick<RouteSpec, 'method' | 'path'>): string => `${r.method} ${r.path}`;

/**
 * Functions that serve no route. `handler` names the module `functions/handlers/<handler>.ts`.
 * Who invokes a worker:
 * - `invokedBy`: route families that invoke it asynchronously (`InvocationType: 'Event'`); they
 *   are allowed to, and get the worker's name in `envName`.
 * - `invokedByService`: an AWS service instead, wired by the stack: `stepFunctions` (the Task
 *   states of the flows' state machines invoke it synchronously, through the flow state machine
 *   role) or `flowExecutionEvents` (the EventBridge rule on the flows' final execution statuses
 *   invokes it asynchronously) or `flowSchedules` (EventBridge Scheduler invokes it asynchronously,
 *   through the schedule role, when a flow schedule is due) or `uploadEvents` (two EventBridge
 *   rules invoke it asynchronously: the data bucket's S3 `Object Created` events for asset files,
 *   and our own `Import started` / `Import finished` events) or `watchdogSchedule` (an EventBridge
 *   rule invokes it every few minutes).
 * - `invokedByWorkers`: other workers that invoke it asynchronously, as `invokedBy` families do
 *   (the flow task worker loads a service through the import worker).
 * `grants.flowExecutions` says which FlowExecutor methods the worker calls; never 'prepare' for
 * the task worker, which cannot be told its own ARN (the state machines' Task states need it).
 */
export interface WorkerSpec {
  handler: string;
  grants: FamilySpec['grants'];
  memoryMb: number;
  timeoutSeconds: number;
  invokedBy: readonly Family[];
  /** Names of WORKERS that invoke this one; checked by the stack. */
  invokedByWorkers?: readonly string[];
  /** Required when `invokedBy` or `invokedByWorkers` is not empty. */
  envName?: EnvName;
  invokedByService?: 'stepFunctions' | 'flowExecutionEvents' | 'flowSchedules' | 'uploadEvents' | 'watchdogSchedule';
}

export const WORKERS = {
  importWorker: {
    handler: 'import-worker',
    // serviceHosts: a service load starts the service's host task (RunTask).
    // searchIndexes: a text search service's load builds its index.
    grants: { table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', uploadEvents: true, serviceHosts: 'manage', searchIndexes: 'write' },
    memoryMb: 3008,
    timeoutSeconds: 900,
    invokedBy: ['imports', 'services'],
    // The flow task worker's service action starts or reloads a service (enqueueServiceLoad).
    invokedByWorkers: ['flowTaskWorker'],
    envName: ENV.importWorkerFunctionName,
  },
  flowTaskWorker: {
    handler: 'flow-task-worker',
    // release: the upload wait's task token, when the upload ended before the wait began.
    // serviceHosts: the service action stops or restarts a service's host (its start goes through the import worker).
    // workerTask: a long task (Timeout past a function's 15 minutes) is staged and run on the worker task.
    // searchIndexes: the service action's stop drops a text search service's index.
    grants: { table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', artifactsBucket: 'RW', flowExecutions: ['release'], mail: true, serviceHosts: 'manage', workerTask: 'run', searchIndexes: 'write' },
    memoryMb: 3008,
    timeoutSeconds: 900,
    invokedBy: [],
    invokedByService: 'stepFunctions',
  },
  flowSettle: {
    handler: 'flow-settle',
    // result: how the execution ended (its output or error).
    grants: { table: 'RW', artifactsBucket: 'RW', flowExecutions: ['result'], mail: true },
    memoryMb: 1024,
    timeoutSeconds: 60,
    invokedBy: [],
    invokedByService: 'flowExecutionEvents',
  },
  /**
   * Starts a due schedule's run; it may start flows (flowExecutions) like the flows family. A run
   * that fails to start settles failed here, which sends the failure email (mail).
   */
  flowScheduleStart: {
    handler: 'flow-schedule-start',
    grants: { table: 'RW', flowExecutions: ['prepare', 'start'], flowSchedules: 'remove', mail: true },
    memoryMb: 1024,
    timeoutSeconds: 60,
    invokedBy: [],
    invokedByService: 'flowSchedules',
  },
  /**
   * Flow hooks: an asset file stored in the data bucket (S3 through EventBridge) or an import
   * started or finished (our upload events) creates, starts or aborts the hooks' runs. It starts
   * flows (flowExecutions) and issues their API tokens (table RW) like the flows family; a run that
   * fails to start settles failed here, which sends the failure email (mail).
   */
  flowHookDispatcher: {
    handler: 'flow-hook-dispatcher',
    // release: a data upload hook's waiting run goes on (or is aborted) when the import ends.
    // dataBucket RW: dataset webhooks (issue 14) record each delivery next to the dataset's hooks.
    grants: { table: 'RW', dataBucket: 'RW', flowExecutions: ['prepare', 'start', 'release'], mail: true },
    memoryMb: 1024,
    timeoutSeconds: 300,
    invokedBy: [],
    invokedByService: 'uploadEvents',
  },
  /**
   * The watchdog (handlers/watchdog.ts), every few minutes: nothing is stranded when a function
   * was cut short or an event lost. Flows: runs whose execution ended or never existed are
   * settled (status: DescribeExecution; mail: a failed run's email), recorded flow removals go on
   * (discard: DeleteStateMachine; table RW: versions, runs). Imports: jobs whose worker was cut
   * off end in error (data and uploads buckets, upload events), superseded graph blobs go.
   */
  watchdog: {
    handler: 'watchdog',
    // workerTask 'describe': a job whose worker task stopped before ending it ends in error.
    // serviceHosts 'describe': a SPARQL service whose host task stopped leaves starting/running (error).
    grants: {
      table: 'RW',
      dataBucket: 'RW',
      uploadsBucket: 'RW',
      artifactsBucket: 'RW',
      uploadEvents: true,
      flowExecutions: ['status', 'discard'],
      mail: true,
      workerTask: 'describe',
      serviceHosts: 'describe',
    },
    memoryMb: 1024,
    timeoutSeconds: 300,
    invokedBy: [],
    invokedByService: 'watchdogSchedule',
  },
} as const satisfies Record<string, WorkerSpec>;
