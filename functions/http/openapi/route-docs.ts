/**
 * What the route table does not say about an operation, for the OpenAPI document: a summary, the
 * zod schema its JSON body is checked with (named by module and export, so the routes keep their
 * schemas beside their handlers), and its answers. An operation without an entry still appears in
 * the document (generator.ts), with a generic answer: new routes show up on their own.
 */
import { z } from 'zod';
import * as accounts from '../routes/accounts.js';
import * as auth from '../routes/auth.js';
import * as datasetHooks from '../routes/dataset-hooks.js';
import * as datasets from '../routes/datasets.js';
import * as datasetCopy from '../routes/data/copy.js';
import * as flows from '../routes/flows/flows.js';
import * as flowHooks from '../routes/flows/hooks.js';
import * as schedules from '../routes/flows/schedules.js';
import * as graphql from '../routes/graphql.js';
import * as graphs from '../routes/data/graphs.js';
import * as imports from '../routes/data/imports.js';
import * as pipelines from '../routes/pipelines.js';
import * as queries from '../routes/queries.js';
import * as services from '../routes/services.js';
import * as statements from '../routes/data/statements.js';
import * as stories from '../routes/stories.js';
import * as R from './response-schemas.js';
import * as M from './more-schemas.js';
import { RUN_FILTER_PARAMS } from '../routes/flows/run-filters.js';

/** The route modules whose exported body schemas the docs name. */
export const SCHEMA_MODULES = { accounts, auth, datasetHooks, datasets, datasetCopy, flows, flowHooks, schedules, graphql, graphs, imports, pipelines, queries, services, stories } as const;
export type SchemaModule = keyof typeof SCHEMA_MODULES;

/** One answer: a JSON view (schema), an empty answer, or a body of another media type (`media`). */
export interface AnswerDoc {
  description: string;
  schema?: z.ZodType;
  /** Media types of a non-JSON body (RDF, SPARQL results, files); `*\/*` when it depends on Accept. */
  media?: string[];
  empty?: true;
}

export interface OperationDoc {
  summary: string;
  /** The JSON body's schema: `[module, export]` of a route module. */
  body?: readonly [SchemaModule, string];
  /** Body media types of streamed or non-JSON requests. */
  bodyMedia?: string[];
  /** Status code (or `2XX`) to answer. */
  answers: Record<string, AnswerDoc>;
  /** Errors may also be plain text (the tus protocol's own refusals). */
  plainErrorsToo?: true;
  /** Query parameters the operation reads. */
  query?: string[];
  /** Why the operation takes query parameters of any name (it refuses none); every other refuses those not in `query`. */
  anyQuery?: string;
}

const ok = (schema: z.ZodType, description = 'OK'): AnswerDoc => ({ description, schema });
const list = (item: z.ZodType, description = 'A page of the list; a Link header names the next page.'): AnswerDoc => ({ description, schema: R.listOf(item) });
const none = (description = 'Done; no content.'): AnswerDoc => ({ description, empty: true });
const any = (description: string, media = ['*/*']): AnswerDoc => ({ description, media });

const RDF = ['application/n-triples', 'application/n-quads', 'text/turtle', 'application/trig', 'application/ld+json', 'application/rdf+xml', '*/*'];
const SPARQL_RESULTS = ['application/sparql-results+json', 'application/sparql-results+xml', 'text/csv', 'text/tab-separated-values', ...RDF];
const UPLOAD_MEDIA = ['multipart/form-data', 'application/offset+octet-stream', 'application/octet-stream'];
const PAGED = ['limit', 'offset', 'since'];
/** tus refusals: the protocol's own statuses, plain text (412: no or another Tus-Resumable version). */
const TUS_REFUSALS = { 412: any('tus: the Tus-Resumable header is missing or names a version this server does not speak.', ['text/plain']) };
const PIPELINE_STATUS = z.enum(['pending', 'running', 'finished', 'error', 'cancelled']);
const PipelineView = z.looseObject({
  id: z.string(),
  status: PIPELINE_STATUS,
  progress: z.number().min(0).max(1),
  error: z.object({ message: z.string() }).optional(),
  jobs: z.array(z.looseObject({ id: z.string(), status: PIPELINE_STATUS, progress: z.number(), query: z.looseObject({ owner: z.string(), name: z.string() }) })),
});

export const OPERATION_DOCS: Record<string, OperationDoc> = {
  getInfo: { summary: 'The instance: API and console URLs, version, feature toggles, enabled services.', answers: { 200: ok(R.InfoView) } },
  getOpenApi: { summary: 'This OpenAPI 3.1 document, generated from the route table.', answers: { 200: any('The document.', ['application/json']) } },

  getMe: { summary: 'The signed-in account (session or token).', query: ['verbose'], answers: { 200: ok(R.AccountView) } },
  login: { summary: 'Signs in with account name (or email) and password: sets the session cookie and answers the CSRF token.', body: ['auth', 'LoginBody'], answers: { '2XX': any('Signed in.', ['application/json']) } },
  logout: { summary: 'Ends the session.', answers: { 204: none() } },

  listAccounts: { summary: 'Accounts, filtered by q and type; sortBy (accountNameLower|createdAt|updatedAt) and sortDirection (asc|desc) sort, offset pages a sorted listing.', query: ['q', 'type', 'sortBy', 'sortDirection', 'verbose', 'after', 'limit', 'offset'], answers: { 200: list(R.AccountView) } },
  createAccount: { summary: 'Creates a user (administrators) or an organisation (any user, who becomes its owner).', body: ['accounts', 'NewAccountBody'], answers: { 201: ok(R.AccountView) } },
  getAccount: { summary: 'One account.', query: ['verbose'], answers: { 200: ok(R.AccountView) } },
  updateAccount: { summary: 'Changes an account.', body: ['accounts', 'AccountPatchBody'], answers: { 200: ok(R.AccountView) } },
  deleteAccount: { summary: 'Deletes an account and what it owns.', answers: { 204: none() } },
  listOrganizationsOfUser: { summary: 'The organisations a user is a member of.', answers: { 200: list(R.AccountView) } },
  createOrganizationForUser: { summary: 'Creates an organisation owned by the user.', body: ['accounts', 'NewOrgBody'], answers: { 201: ok(R.AccountView) } },
  listMembers: { summary: 'Members of an organisation.', answers: { 200: list(R.MembershipView) } },
  addMember: { summary: 'Adds a member with a role.', body: ['accounts', 'MemberBody'], answers: { 201: ok(R.MembershipView) } },
  getMember: { summary: 'One member.', answers: { 200: ok(R.MembershipView) } },
  updateMember: { summary: "Changes a member's role.", body: ['accounts', 'RoleChangeBody'], answers: { '2XX': ok(R.MembershipView) } },
  removeMember: { summary: 'Removes a member.', answers: { 204: none() } },
  listRoles: { summary: 'Roles of an organisation (built-in and custom).', answers: { 200: list(R.RoleView) } },
  createRole: { summary: 'Creates a custom role.', body: ['accounts', 'RoleBody'], answers: { 201: ok(R.RoleView) } },
  updateRole: { summary: "Changes a custom role's permissions.", body: ['accounts', 'RolePatchBody'], answers: { 200: ok(R.RoleView) } },
  deleteRole: { summary: 'Deletes a custom role.', answers: { 204: none() } },
  listTokens: { summary: "The account's API tokens (never their secrets).", answers: { 200: list(R.TokenView) } },
  createToken: { summary: 'Creates an API token; the secret is in `token`, this once.', body: ['accounts', 'TokenBody'], answers: { 201: ok(R.TokenView) } },
  deleteToken: { summary: 'Revokes a token.', answers: { 204: none() } },

  listAllDatasets: { summary: 'Datasets the caller may read; sortDirection (asc|desc) sorts by createdAt; since is the Link cursor.', query: ['q', 'verbose', 'sparql', 'sortDirection', 'after', 'limit', 'since'], answers: { 200: list(R.DatasetView) } },
  listAccountDatasets: { summary: "An account's datasets the caller may read; sortBy (createdAt|updatedAt|name) and sortDirection (asc|desc) sort; since is the Link cursor.", query: ['q', 'verbose', 'sparql', 'sortBy', 'sortDirection', 'after', 'limit', 'since'], answers: { 200: list(R.DatasetView) } },
  createDataset: { summary: 'Creates a dataset.', body: ['datasets', 'NewDatasetBody'], answers: { 201: ok(R.DatasetView) } },
  getDataset: { summary: 'One dataset.', answers: { 200: ok(R.DatasetView) } },
  updateDataset: { summary: 'Changes a dataset (name, access level, metadata).', body: ['datasets', 'DatasetPatchBody'], answers: { 200: ok(R.DatasetView) } },
  deleteDataset: { summary: 'Deletes a dataset, its graphs, assets and services.', answers: { 204: none() } },
  updatePrefixes: { summary: "Adds or changes the dataset's prefixes.", body: ['datasets', 'PrefixesBody'], answers: { '2XX': any('The prefixes.', ['application/json']) } },

  createJob: { summary: 'Creates an import job (JSON options), or imports the multipart files sent in one go.', body: ['imports', 'JobBody'], bodyMedia: ['application/json', 'multipart/form-data'], answers: { 201: ok(R.JobView, 'The job (started already when files were sent).') } },
  listJobs: { summary: "The dataset's import jobs.", answers: { 200: list(R.JobView) } },
  getJob: { summary: 'One import job, with its progress.', answers: { 200: ok(R.JobView) } },
  cancelJob: { summary: 'Cancels a job that has not finished.', answers: { 204: none('Canceled.') } },
  startJob: { summary: "Starts indexing the job's uploaded files.", answers: { 202: ok(R.JobView, 'Indexing started.') } },
  createJobUpload: { summary: 'Starts a tus upload of one file of the job.', bodyMedia: UPLOAD_MEDIA, answers: { '2XX': any('tus answer.'), ...TUS_REFUSALS }, plainErrorsToo: true },
  jobUpload: { summary: 'tus: offset (HEAD), a chunk (PATCH), or ends (DELETE) one upload of the job.', bodyMedia: UPLOAD_MEDIA, answers: { '2XX': any('tus answer.'), ...TUS_REFUSALS }, plainErrorsToo: true },

  listGraphs: { summary: "The dataset's graphs.", query: ['limit', 'after'], answers: { 200: list(R.GraphView) } },
  deleteAllGraphs: { summary: 'Deletes every graph.', answers: { 204: none() } },
  getGraph: { summary: 'One graph: its JSON description, or its statements in the RDF format asked for.', answers: { 200: { description: 'The graph.', schema: R.GraphView, media: RDF } } },
  renameGraph: { summary: 'Renames a graph.', body: ['graphs', 'RenameBody'], answers: { 200: ok(R.GraphView) } },
  deleteGraph: { summary: 'Deletes a graph.', answers: { 204: none() } },

  listAssets: { summary: "The dataset's assets; with fileName= the one asset of that name (404 if none).", query: ['fileName'], answers: { 200: ok(z.union([R.listOf(R.AssetView), R.AssetView]), 'A page of assets, or the asset named by fileName.') } },
  uploadAsset: { summary: 'Uploads an asset or a new version (multipart).', bodyMedia: ['multipart/form-data'], answers: { '2XX': ok(R.AssetView) } },
  assetUpload: { summary: 'tus upload of an asset.', bodyMedia: UPLOAD_MEDIA, answers: { '2XX': any('tus answer.'), ...TUS_REFUSALS }, plainErrorsToo: true },
  downloadAsset: { summary: "An asset's (latest or given) version.", answers: { '2XX': any('The file (206 for a Range).') } },
  deleteAsset: { summary: 'Deletes an asset, or one of its versions.', answers: { '2XX': { description: 'Deleted (the asset, when a version was deleted).', schema: R.AssetView, empty: true } } },

  listServices: { summary: "The dataset's services.", answers: { 200: list(R.ServiceView) } },
  createService: { summary: 'Creates (and starts loading) a service.', body: ['services', 'CreateBody'], answers: { 201: ok(R.ServiceView, 'The service, loading.') } },
  getService: { summary: 'One service.', answers: { 200: ok(R.ServiceView) } },
  serviceAction: { summary: 'Stops, starts, restarts or syncs a service.', body: ['services', 'ActionBody'], answers: { 200: ok(R.ServiceView) } },
  renameService: { summary: 'Renames a service.', body: ['services', 'RenameBody'], answers: { 200: ok(R.ServiceView) } },
  deleteService: { summary: 'Deletes a service.', answers: { 204: none() } },
  serviceGraphs: { summary: 'The graphs a service has loaded.', answers: { 200: list(R.ServiceGraphView, 'Every graph, with its load status.') } },
  serviceSparql: { anyQuery: 'The SPARQL 1.1 protocol defines the parameters (query, update, default-graph-uri, named-graph-uri, using-graph-uri, ...).', summary: 'SPARQL 1.1 protocol: query (GET or POST) or update (POST) through a service.', query: ['query', 'default-graph-uri', 'named-graph-uri'], bodyMedia: ['application/sparql-query', 'application/sparql-update', 'application/x-www-form-urlencoded'], answers: { '2XX': any('Results.', SPARQL_RESULTS) } },
  datasetSparql: { anyQuery: 'The SPARQL 1.1 protocol defines the parameters (query, update, default-graph-uri, named-graph-uri, using-graph-uri, ...).', summary: 'SPARQL 1.1 protocol on the dataset itself: query, and update (changes the graphs).', query: ['query', 'default-graph-uri', 'named-graph-uri'], bodyMedia: ['application/sparql-query', 'application/sparql-update', 'application/x-www-form-urlencoded'], answers: { '2XX': any('Results.', SPARQL_RESULTS) } },

  graphql: { anyQuery: 'GraphQL over HTTP defines the parameters (query, variables, operationName, extensions).', summary: 'GraphQL over the dataset (schema from its SHACL shapes).', query: ['query', 'variables', 'operationName'], body: ['graphql', 'Body'], answers: { 200: any('GraphQL result.', ['application/json', 'application/graphql-response+json']) } },

  createPipeline: {
    summary: "Runs saved CONSTRUCT/DESCRIBE queries (PipelineConfig v0.2) against a source dataset and replaces a graph of the target dataset with their results; answers the pipeline as it ended (finished or error).",
    body: ['pipelines', 'PipelineBody'],
    answers: { 201: ok(PipelineView) },
  },
  getPipeline: { summary: 'A pipeline of the account: status (pending|running|finished|error|cancelled), progress and its query jobs.', answers: { 200: ok(PipelineView) } },

  listQueries: { summary: 'Saved queries the caller may read.', query: ['limit', 'after'], answers: { 200: list(R.QueryView) } },
  listAccountQueries: { summary: "An account's saved queries.", query: ['limit', 'after'], answers: { 200: list(R.QueryView) } },
  createQuery: { summary: 'Saves a query.', body: ['queries', 'CreateBody'], answers: { 201: ok(R.QueryView) } },
  getQuery: { summary: 'A saved query (latest or given version).', answers: { 200: ok(R.QueryView) } },
  addQueryVersion: { summary: 'Adds a version of a saved query.', body: ['queries', 'VersionBody'], answers: { '2XX': ok(R.QueryView) } },
  updateQuery: { summary: "Changes a saved query's metadata.", body: ['queries', 'MetaBody'], answers: { 200: ok(R.QueryView) } },
  deleteQuery: { summary: 'Deletes a saved query.', answers: { 204: none() } },
  queryText: { anyQuery: "The saved query's API variables arrive as query parameters named after them (the text with them filled in).", summary: 'The query text with its annotations.', answers: { 200: any('Text.', ['text/plain', 'application/sparql-query']) } },
  runQuery: { anyQuery: "The saved query's API variables arrive as query parameters named after them.", summary: 'Runs a saved query (its variables as query parameters).', answers: { '2XX': any('Results.', SPARQL_RESULTS) } },

  setFlowSwitches: { summary: 'Turns flows features on or off (administrators).', body: ['flows', 'SwitchesBody'], answers: { 200: ok(M.FlowSwitchesView, 'The switches.') } },
  copyFlow: { summary: 'Copies a flow.', body: ['flows', 'CopyBody'], answers: { 201: ok(M.FlowView, 'The copy (Location names it).') } },
  moveFlow: { summary: 'Moves a flow to another account.', body: ['flows', 'MoveBody'], answers: { 200: ok(M.FlowView, 'The flow, under its new account (Location names it).') } },
  putPreset: { summary: 'Saves a preset of variables.', body: ['flows', 'PresetBody'], answers: { 200: ok(M.PresetView, 'The preset.') } },
  putMaskedValue: { summary: 'Stores a masked value.', body: ['flows', 'MaskedValueBody'], answers: { 204: none() } },
  createHook: { summary: 'Creates a flow hook.', body: ['flowHooks', 'HookBody'], answers: { 201: ok(M.FlowHookView, 'The hook.') } },
  updateHook: { summary: 'Changes a flow hook.', body: ['flowHooks', 'HookBody'], answers: { 200: ok(M.FlowHookView, 'The hook.') } },
  createSchedule: { summary: 'Creates a flow schedule.', body: ['schedules', 'ScheduleBody'], answers: { 201: ok(M.ScheduleView, 'The schedule.') } },
  updateSchedule: { summary: 'Changes a flow schedule.', body: ['schedules', 'ScheduleBody'], answers: { 200: ok(M.ScheduleView, 'The schedule.') } },
  startRun: { anyQuery: "The flow's variables arrive as query parameters named after them.", summary: "Starts a run of the flow; the query string (and a JSON object body) give its variables' values, by name.", answers: { 201: ok(M.FlowRunView, 'The run (Location names it).') } },
  getRun: { summary: 'One run.', answers: { 200: ok(M.FlowRunView) } },
  listRuns: { summary: 'Runs the caller may see, filtered and sorted.', query: [...RUN_FILTER_PARAMS], answers: { 200: list(M.FlowRunView) } },

  createStory: { summary: 'Creates a story.', body: ['stories', 'StoryBody'], answers: { 201: any('The story.', ['application/json']) } },
  updateStory: { summary: 'Changes a story.', body: ['stories', 'StoryPatch'], answers: { 200: any('The story.', ['application/json']) } },
  copyStory: { summary: 'Copies a story to an account.', body: ['stories', 'ToAccountBody'], answers: { 201: any('The copy.', ['application/json']) } },
  chownStory: { summary: 'Moves a story to an account.', body: ['stories', 'ToAccountBody'], answers: { '2XX': any('The story.', ['application/json']) } },
  createDatasetHook: { summary: 'Creates a dataset webhook.', body: ['datasetHooks', 'HookBody'], answers: { 201: ok(M.DatasetHookView, 'The webhook.') } },
  updateDatasetHook: { summary: 'Changes a dataset webhook.', body: ['datasetHooks', 'HookPatch'], answers: { 200: ok(M.DatasetHookView, 'The webhook.') } },

  updateMe: { summary: 'Changes the signed-in account (as PATCH /accounts/{account}).', body: ['accounts', 'AccountPatchBody'], answers: { 200: ok(R.AccountView) } },
  deleteMe: { summary: 'Deletes the signed-in account.', answers: { 204: none() } },
  getGlobalPrefixes: { summary: "The instance's prefixes.", answers: { 200: list(R.PrefixView, 'Every prefix.') } },
  getGlobalPrefix: { summary: 'One prefix of the instance.', answers: { 200: ok(z.string().meta({ description: 'The IRI.' }), 'The IRI the prefix stands for, as a JSON string.') } },
  getPrefixes: { summary: "The dataset's prefixes, its own and the instance's.", answers: { 200: list(R.PrefixView, 'Every prefix.') } },
  addDatasetPrefixes: { summary: 'Adds prefixes to the dataset.', body: ['datasets', 'PrefixesBody'], answers: { '2XX': any('The prefixes.', ['application/json']) } },
  replaceDatasetPrefixes: { summary: "Replaces the dataset's prefixes.", body: ['datasets', 'PrefixesBody'], answers: { '2XX': any('The prefixes.', ['application/json']) } },
  getDatasetPrefix: { summary: 'One prefix of the dataset.', answers: { 200: ok(z.string().meta({ description: 'The IRI.' }), 'The IRI the prefix stands for, as a JSON string.') } },
  putDatasetPrefix: { summary: 'Sets one prefix of the dataset.', body: ['datasets', 'PrefixIriBody'], answers: { '2XX': ok(z.string().meta({ description: 'The IRI.' }), 'The IRI the prefix stands for, as a JSON string.') } },
  deletePrefix: { summary: 'Removes a prefix of the dataset.', answers: { '2XX': none() } },
  chownDataset: { summary: 'Moves the dataset to another account.', body: ['datasets', 'ToAccountBody'], answers: { 200: ok(R.DatasetView) } },
  copyDataset: { summary: 'Copies the dataset (graphs, metadata) to an account.', body: ['datasetCopy', 'CopyBody'], answers: { '2XX': ok(R.DatasetView) } },
  getImports: { summary: 'The graphs imported from other datasets.', answers: { 200: ok(R.listOf(M.GraphImportView), 'The imports, by source dataset.') } },
  updateImports: { summary: 'Imports graphs from other datasets.', body: ['datasetCopy', 'ImportsBody'], answers: { 200: ok(R.listOf(M.GraphImportView), 'The imports, by source dataset.') } },
  getStatements: { summary: 'Statements matching subject, predicate, object and graph.', query: Object.keys(statements.StatementsQuery.shape), answers: { 200: list(R.StatementView) } },
  getTerms: { summary: 'Terms starting with q (autocomplete).', query: Object.keys(statements.TermsQuery.shape), answers: { 200: any('The terms.', ['application/json']) } },
  cancelAllJobs: { summary: "Cancels the dataset's unfinished jobs.", answers: { 200: ok(z.looseObject({ deletedJobIds: z.array(z.string()) }), 'The jobs canceled.') } },
  resetJob: { summary: 'Resets a job that ended in error, to start it again.', answers: { 200: ok(R.JobView, 'The job, back to be started again.') } },
  deleteJobFile: { summary: 'Removes one uploaded file from a job that has not started.', answers: { 204: none('Removed.') } },
  deleteAllAssets: { summary: "Deletes every asset of the dataset.", answers: { 204: none() } },
  downloadAssetByName: { summary: 'The asset named by fileName (its latest version).', query: ['fileName'], answers: { '2XX': any('The file (206 for a Range).') } },
  chownQuery: { summary: 'Moves the saved query to another account.', answers: { 200: ok(R.QueryView) } },
  listAllStories: { summary: 'Stories the caller may read; sortDirection (asc|desc) sorts by owner and name; since (or offset) is the position.', query: ['q', 'sortDirection', ...PAGED], answers: { 200: list(R.StoryView) } },
  listAccountStories: { summary: "An account's stories; sortBy (name) and sortDirection (asc|desc) sort; since (or offset) is the position.", query: ['q', 'sortBy', 'sortDirection', ...PAGED], answers: { 200: list(R.StoryView) } },
  getStory: { summary: 'One story.', answers: { 200: ok(R.StoryView) } },
  deleteStory: { summary: 'Deletes a story.', answers: { 204: none() } },
  uploadStoryBanner: { summary: "Sets the story's banner image (multipart field banner).", bodyMedia: ['multipart/form-data'], answers: { '2XX': any('The story.', ['application/json']) } },
  getStoryBanner: { summary: "The story's banner image.", answers: { 200: any('The image.', ['image/*']) } },
  setAccountAvatar: { summary: "Sets an account's avatar (multipart field avatar).", bodyMedia: ['multipart/form-data'], answers: { '2XX': any('Done.', ['application/json']) } },
  setDatasetAvatar: { summary: "Sets a dataset's avatar (multipart field avatar).", bodyMedia: ['multipart/form-data'], answers: { '2XX': any('Done.', ['application/json']) } },
  getAvatar: { summary: 'An avatar image.', answers: { 200: any('The image.', ['image/*']) } },

  listDatasetHooks: { summary: "The dataset's webhooks.", answers: { 200: ok(R.listOf(M.DatasetHookView), 'The webhooks.') } },
  getDatasetHook: { summary: 'One dataset webhook.', answers: { 200: ok(M.DatasetHookView, 'The webhook.') } },
  deleteDatasetHook: { summary: 'Deletes a dataset webhook.', answers: { 204: none() } },
  getDatasetHookRecords: { summary: "A webhook's recent deliveries.", answers: { 200: ok(R.listOf(M.HookDeliveryView), 'The deliveries, newest first.') } },

  graphqlStatus: { summary: "Whether the dataset's GraphQL schema is ready.", answers: { 200: ok(M.GraphqlStatusView, 'The status: errors is null when the schema is ready.') } },
  simpleSearch: { summary: 'Text search of a search service (query=).', query: ['query', 'from', 'size'], answers: { 200: ok(M.SearchReplyView, 'Matching documents.') } },
  dslSearch: { summary: 'Elasticsearch query DSL search of a search service.', bodyMedia: ['application/json'], answers: { 200: ok(M.SearchReplyView, 'The Elasticsearch answer.') } },
  multiSearch: { summary: 'Elasticsearch multi-search (NDJSON).', bodyMedia: ['application/x-ndjson', 'application/json'], answers: { 200: ok(M.MultiSearchView, 'One answer per search.') } },
  countSearch: { summary: 'Elasticsearch count.', bodyMedia: ['application/json'], answers: { 200: ok(M.CountView, 'The count.') } },
  termsEnum: { summary: 'Elasticsearch terms enumeration.', bodyMedia: ['application/json'], answers: { 200: ok(M.TermsEnumView, 'The terms.') } },
  searchMappings: { summary: "The search index's mappings.", answers: { 200: ok(M.MappingsView, 'The mappings.') } },

  listTaskTypes: {
    summary: 'The flow task types (the console builds its palette from them); "enabled" is false for the SPARQL update task while the administrator has it off.',
    answers: { 200: ok(R.listOf(M.TaskTypeView), 'The task types.') },
  },
  getFlowSwitches: { summary: 'Whether flows features are on (administrators).', answers: { 200: ok(M.FlowSwitchesView, 'The switches.') } },
  listFlows: { summary: "An account's flows.", answers: { 200: ok(R.listOf(M.FlowView), 'The flows.') } },
  createFlow: { summary: 'Creates a flow (console session).', bodyMedia: ['application/json', 'text/turtle'], answers: { 201: ok(M.FlowView, 'The flow (Location names it).') } },
  getFlow: { summary: 'One flow.', answers: { 200: ok(M.FlowView, 'The flow with its current definition.') } },
  saveFlow: { summary: "Saves a flow's definition as a new version (console session).", bodyMedia: ['application/json', 'text/turtle'], answers: { 200: ok(M.FlowView, 'The flow with its new version.') } },
  deleteFlow: { summary: 'Deletes a flow.', answers: { 204: none('Deleted.') } },
  downloadFlow: { summary: "The flow's definition as Turtle.", answers: { 200: any('Turtle.', ['text/turtle']) } },
  listFlowVersions: { summary: "The flow's versions.", answers: { 200: ok(R.listOf(M.FlowVersionSummary), 'The versions.') } },
  getFlowVersion: { summary: 'One version of the flow.', answers: { 200: ok(M.FlowView, 'The flow at that version.') } },
  restoreFlowVersion: { summary: 'Makes an old version the current one.', answers: { 200: ok(M.FlowView, 'The flow with the restored version as a new one.') } },
  listPresets: { summary: "The flow's presets.", answers: { 200: ok(R.listOf(M.PresetView), 'The presets.') } },
  deletePreset: { summary: 'Deletes a preset.', answers: { 204: none() } },
  listMaskedValues: { summary: "The flow's masked values (names only).", answers: { 200: ok(R.listOf(M.MaskedValueView), 'The names, and whether each is set.') } },
  getMaskedValue: { summary: 'One masked value (never its value).', answers: { 200: ok(M.MaskedValueView, 'The masked value.') } },
  deleteMaskedValue: { summary: 'Deletes a masked value.', answers: { 204: none() } },
  listSchedules: { summary: "The flow's schedules.", answers: { 200: ok(R.listOf(M.ScheduleView), 'The schedules.') } },
  getSchedule: { summary: 'One schedule.', answers: { 200: ok(M.ScheduleView, 'The schedule.') } },
  deleteSchedule: { summary: 'Deletes a schedule.', answers: { 204: none() } },
  listHooks: { summary: "The flow's hooks.", answers: { 200: ok(R.listOf(M.FlowHookView), 'The hooks.') } },
  getHook: { summary: 'One flow hook.', answers: { 200: ok(M.FlowHookView, 'The hook.') } },
  deleteHook: { summary: 'Deletes a flow hook.', answers: { 204: none() } },
  abortRun: { summary: 'Aborts a run.', answers: { 200: ok(M.FlowRunView) } },
  listTaskInstances: { summary: 'Task instances of one run (runId=).', query: ['runId'], answers: { 200: ok(R.listOf(M.TaskInstanceView), 'The task instances.') } },
  downloadArtifact: { summary: "A task instance's artifact.", answers: { 200: any('The artifact.') } },

  download: { summary: 'Every graph (or the one graph= names) in one RDF file (format by extension or Accept; .gz compressed).', query: ['graph'], answers: { 200: any('RDF.', RDF) } },
  describe: { summary: 'The statements about one resource.', query: ['resource'], answers: { 200: any('RDF.', RDF) } },
};
