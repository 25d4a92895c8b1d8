/**
 * Names of the environment variables shared by the CDK stacks (which set them) and the functions
 * (which read them in `functions/config.ts`). Declared once so the two sides cannot drift.
 */
export const ENV = {
  tableName: 'TABLE_NAME',
  /** DEBUG, INFO (default), WARN, ERROR or SILENT; Powertools' own name, read by the logger. */
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  dataBucketName: 'DATA_BUCKET_NAME',
  uploadsBucketName: 'UPLOADS_BUCKET_NAME',
  artifactsBucketName: 'ARTIFACTS_BUCKET_NAME',
  publicApiUrl: 'PUBLIC_API_URL',
  consoleUrl: 'CONSOLE_URL',
  enabledServices: 'ENABLED_SERVICES',
  flowsEnabled: 'FLOWS_ENABLED',
  /** Sender address of the platform's email (a verified SES identity on AWS). */
  mailFrom: 'MAIL_FROM',
  /** `true` lets URL imports and flow tasks call loopback and private-network addresses. */
  outboundAllowPrivateNetworks: 'OUTBOUND_ALLOW_PRIVATE_NETWORKS',
  importWorkerFunctionName: 'IMPORT_WORKER_FUNCTION_NAME',
  /** The worker task (ECS Fargate) as JSON {cluster, taskDefinition, container, command, subnets, securityGroups}: see adapters/aws/ecs-task-queue.ts. */
  workerTask: 'WORKER_TASK',
  /** The role the flows' state machines run as (passed to CreateStateMachine). */
  flowStateMachineRoleArn: 'FLOW_STATE_MACHINE_ROLE_ARN',
  /** The flow task worker function, filled into the state machines' Task states. */
  flowTaskWorkerArn: 'FLOW_TASK_WORKER_ARN',
  /** Start of every flow state machine's name; IAM and the execution-status rule are scoped to it. */
  flowStateMachinePrefix: 'FLOW_STATE_MACHINE_PREFIX',
  /** The EventBridge Scheduler group every flow schedule goes in (IAM is scoped to it). */
  flowScheduleGroup: 'FLOW_SCHEDULE_GROUP',
  /** The role EventBridge Scheduler assumes to invoke the schedule-start function (passed to CreateSchedule). */
  flowScheduleRoleArn: 'FLOW_SCHEDULE_ROLE_ARN',
  /** The schedule-start function every flow schedule invokes. */
  flowScheduleStartArn: 'FLOW_SCHEDULE_START_ARN',
  queryTimeoutMs: 'QUERY_TIMEOUT_MS',
  maxServiceStatements: 'MAX_SERVICE_STATEMENTS',
  externalSparqlEndpoint: 'EXTERNAL_SPARQL_ENDPOINT',
  externalSparqlUpdateEndpoint: 'EXTERNAL_SPARQL_UPDATE_ENDPOINT',
  externalGraphStoreEndpoint: 'EXTERNAL_GRAPH_STORE_ENDPOINT',
  /** `true` only on the upload host's task definition: tus goes to the uploads bucket (S3 multipart); functions refuse tus. */
  uploadHost: 'UPLOAD_HOST',
  /** Port a Node container that serves listens on (set by its task definition). */
  port: 'PORT',
  /** Embedded: path of `virtuoso-t`; when set, `virtuoso` services run on their own virtuoso-t process (issue 19). */
  virtuosoHosts: 'VIRTUOSO_HOSTS',
  /** SPARQL host task: Virtuoso's HTTP port (the `virtuoso` container listens on it, the loader reaches it on 127.0.0.1). */
  virtuosoHttpPort: 'VIRTUOSO_HTTP_PORT',
  /** SPARQL services run on hosts (JSON: use query|stop|manage, cluster, task definition, network; adapters/aws/ecs-service-hosts.ts). */
  sparqlHosts: 'SPARQL_HOSTS',
  /** RunTask overrides of one SPARQL host's loader: which service and snapshot it loads. */
  sparqlHostDatasetId: 'SPARQL_HOST_DATASET_ID',
  sparqlHostServiceId: 'SPARQL_HOST_SERVICE_ID',
  sparqlHostManifestKey: 'SPARQL_HOST_MANIFEST_KEY',
  /** How often a loaded SPARQL host checks it is still its service's (ms, default 60000); one that is not stops. */
  sparqlHostWatchMs: 'SPARQL_HOST_WATCH_MS',
  /** Text search on OpenSearch (issue 15): the cluster's endpoint; absent: the embedded engine (indexes as data blobs). */
  opensearchUrl: 'OPENSEARCH_URL',
  /** `es` (Amazon OpenSearch Service) or `aoss` (Serverless): requests are signed with the function's role; absent: unsigned. */
  opensearchSigning: 'OPENSEARCH_SIGNING',
} as const;

export type EnvName = (typeof ENV)[keyof typeof ENV];
