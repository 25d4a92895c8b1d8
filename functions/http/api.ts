import type { AccessService } from '../domain/datasets/access-service.js';
import type { AccountService } from '../domain/accounts/account-service.js';
import { CSRF_HEADER, type AuthService } from '../domain/accounts/auth-service.js';
import type { Caller } from '../domain/shared/caller.js';
import type { AssetService } from '../domain/data/asset-service.js';
import type { DatasetCopier } from '../domain/data/dataset-copy.js';
import type { JobAdmin } from '../domain/data/job-admin.js';
import type { StatementReader } from '../domain/data/statements.js';
import type { DatasetService } from '../domain/datasets/dataset-service.js';
import type { ExportService } from '../domain/data/export-service.js';
import type { GraphService } from '../domain/data/graph-service.js';
import type { ImportService } from '../domain/data/import-service.js';
import type { SavedQueryService } from '../domain/queries/saved-query-service.js';
import type { FlowService } from '../domain/flows/blueprints/blueprint-service.js';
import type { RunListing } from '../domain/flows/runs/listing.js';
import type { RunSettler } from '../domain/flows/runs/settle.js';
import type { RunStarter } from '../domain/flows/runs/start.js';
import type { FlowWatchdog } from '../domain/flows/runs/watchdog.js';
import type { FlowHookService } from '../domain/flows/hooks/hook-service.js';
import type { FlowScheduleService } from '../domain/flows/schedules/schedule-service.js';
import type { FlowRuntimeHooks } from '../ports/flow-executor.js';
import type { ServiceLifecycle } from '../domain/sparql/service-lifecycle.js';
import type { HostWatchdog } from '../domain/sparql/host-watchdog.js';
import type { SearchService } from '../domain/search/search-service.js';
import type { GraphqlService } from '../domain/graphql/graphql-service.js';
import { ValidationError } from '../domain/shared/errors.js';
import type { Platform } from '../domain/shared/platform.js';
import type { Logger } from '../ports/logger.js';
import { errorResponse } from './errors.js';
import { parseCookies } from './request.js';
import type { Family, RouteSpec } from './route-table.js';
import type { HttpRequest, HttpResponse } from './types.js';

/** The use cases the HTTP layer drives, built once per process by a composition root. */
export interface Services {
  platform: Platform;
  access: AccessService;
  auth: AuthService;
  accounts: AccountService;
  datasets: DatasetService;
  imports: ImportService;
  graphs: GraphService;
  exports: ExportService;
  assets: AssetService;
  /** Statements and terms read from the graph blobs (issue 14). */
  statements: StatementReader;
  /** Dataset copies and graphs imported from other datasets (issue 14). */
  datasetCopier: DatasetCopier;
  /** Clearing, resetting import jobs and removing their files (issue 14). */
  jobAdmin: JobAdmin;
  sparqlServices: ServiceLifecycle;
  /** Services whose host ended on its own (the watchdog's sweep; the embedded hosts' reports). */
  hostWatchdog: HostWatchdog;
  /** Text search services' searches (issue 15). */
  search: SearchService;
  /** GraphQL over a dataset, its schema from the dataset's SHACL shapes. */
  graphql: GraphqlService;
  savedQueries: SavedQueryService;
  flows: FlowService;
  /** Existing runs: read, list, abort. */
  flowRuns: RunListing;
  runStarter: RunStarter;
  /** Settles runs; the embedded platform also ends the runs a restart interrupted. */
  runSettler: RunSettler;
  /** What the flow executor calls back: the task worker and the settle hook. */
  flowRuntime: FlowRuntimeHooks;
  /** Settles runs that stopped reporting and finishes recorded flow removals (the watchdog worker). */
  flowWatchdog: FlowWatchdog;
  /** Flow hooks; they also listen to upload events. */
  hooks: FlowHookService;
  /** Flow schedules; `fire` is what their triggers call. */
  schedules: FlowScheduleService;
  /** The platform's logger (`platform.logger`): unknown errors are logged here, never echoed. */
  logger: Logger;
}

export interface OperationContext {
  req: HttpRequest;
  params: Record<string, string>;
  caller: Caller | null;
  services: Services;
  /** The API base URL, no trailing slash. */
  apiUrl: string;
}

export type Operation = (ctx: OperationContext) => Promise<HttpResponse>;
export type Operations = Record<string, Operation>;

/**
 * Longest `{name}` path segment, decoded, in UTF-8 bytes. Every name and id of the platform fits
 * far below it; longer ones would only reach storage keys (DynamoDB caps them at 1 KB to 2 KB).
 */
export const MAX_PATH_SEGMENT_BYTES = 256;

/** Decodes `{name}` segments; a malformed escape or an oversized segment is a 400 rather than a crash. */
function decodeParams(raw: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      throw new ValidationError('The path holds a malformed %-escape.');
    }
    if (Buffer.byteLength(out[k]!) > MAX_PATH_SEGMENT_BYTES) {
      throw new ValidationError(`${k}: the path segment is longer than ${MAX_PATH_SEGMENT_BYTES} bytes; no name or id here is that long.`);
    }
  }
  return out;
}

const NO_STORE = { 'cache-control': 'no-store' };

/**
 * Runs one matched route: authenticates the caller, calls the operation, maps errors. Shared by the
 * Lambda handlers and the embedded server, so both behave the same.
 */
export function createFamilyHandler(family: Family, operations: Operations, services: Services) {
  return async (route: RouteSpec, rawParams: Record<string, string>, req: HttpRequest): Promise<HttpResponse> => {
    try {
      const operation = operations[route.operation];
      if (route.family !== family || !operation) throw new Error(`route ${route.operation} is not served by family ${family}`);
      const params = decodeParams(rawParams);
      const caller = await services.auth.authenticate({
        method: req.method,
        authorization: req.headers.authorization,
        cookies: parseCookies(req.headers.cookie),
        csrfHeader: req.headers[CSRF_HEADER],
      });
      const apiUrl = (services.platform.settings.publicApiUrl ?? req.origin).replace(/\/+$/, '');
      const response = await operation({ req, params, caller, services, apiUrl });
      // Answers depend on who asks; never let a shared cache keep them.
      response.headers = { ...NO_STORE, ...response.headers };
      return response;
    } catch (error) {
      const response = errorResponse(error, services.logger, { plain: route.plainErrors });
      response.headers = { ...NO_STORE, ...response.headers };
      return response;
    }
  };
}

export type FamilyHandler = ReturnType<typeof createFamilyHandler>;
