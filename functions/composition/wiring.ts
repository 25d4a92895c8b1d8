import { AccessService } from '../domain/datasets/access-service.js';
import { AccountService } from '../domain/accounts/account-service.js';
import { AuthService } from '../domain/accounts/auth-service.js';
import { AssetService } from '../domain/data/asset-service.js';
import { DatasetService } from '../domain/datasets/dataset-service.js';
import { ExportService } from '../domain/data/export-service.js';
import { GraphCatalog } from '../domain/data/graph-catalog.js';
import { GraphService } from '../domain/data/graph-service.js';
import { DatasetCopier } from '../domain/data/dataset-copy.js';
import { JobAdmin } from '../domain/data/job-admin.js';
import { StatementReader } from '../domain/data/statements.js';
import { ImportService } from '../domain/data/import-service.js';
import { SavedQueryService } from '../domain/queries/saved-query-service.js';
import { FlowService } from '../domain/flows/blueprints/blueprint-service.js';
import { RunCaches } from '../domain/flows/runs/run-caches.js';
import { RunListing } from '../domain/flows/runs/listing.js';
import { RunSettler } from '../domain/flows/runs/settle.js';
import { FlowWatchdog } from '../domain/flows/runs/watchdog.js';
import { RunStarter } from '../domain/flows/runs/start.js';
import { TaskWorker } from '../domain/flows/runs/task-worker.js';
import { UploadWaits } from '../domain/flows/runs/upload-wait.js';
import { FlowHookService } from '../domain/flows/hooks/hook-service.js';
import { FlowScheduleService } from '../domain/flows/schedules/schedule-service.js';
import { FlowNotifier } from '../domain/flows/runs/notifications.js';
import { ServiceLifecycle } from '../domain/sparql/service-lifecycle.js';
import { HostWatchdog } from '../domain/sparql/host-watchdog.js';
import { SearchLifecycle } from '../domain/search/search-lifecycle.js';
import { SearchService } from '../domain/search/search-service.js';
import { MiniSearchIndexes } from '../adapters/common/minisearch/minisearch-indexes.js';
import { GraphqlService } from '../domain/graphql/graphql-service.js';
import { urlFetcher } from '../adapters/common/fetch-url.js';
import type { InternalEndpoint } from '../adapters/common/outbound-guard.js';
import { joseTokenCodec, randomIds, scryptPasswordHasher, systemClock } from '../adapters/common/node-crypto.js';
import { createOxigraphEngine } from '../adapters/common/oxigraph/oxigraph-engine.js';
import type { Logger } from '../ports/logger.js';
import { SparqlProtocolEngine } from '../adapters/common/sparql-protocol/engine.js';
import type { Platform, PlatformSettings } from '../domain/shared/platform.js';
import type { Services } from '../http/api.js';
import { StoryService } from '../domain/stories/story-service.js';
import { accountAvatarKey } from '../domain/accounts/accounts.js';

/**
 * The ports whose adapters are the same in both runtimes (storage, tasks and uploads differ).
 * `internalEndpoints`: the platform's own back ends, never reachable on a user's behalf.
 * `logger`: the runtime's logger (one per Lambda environment, one per embedded platform).
 */
export function commonPorts(settings: PlatformSettings, logger: Logger, internalEndpoints: readonly InternalEndpoint[] = []) {
  return {
    fetcher: urlFetcher({ ...settings.outbound, internalEndpoints }),
    engine: createOxigraphEngine(logger),
    externalEngine: settings.sparql.external && new SparqlProtocolEngine({ ...settings.sparql.external, logger }),
    logger,
    clock: systemClock,
    ids: randomIds,
    passwords: scryptPasswordHasher,
    tokens: joseTokenCodec,
    settings,
  };
}

/** Wires the use cases over a platform's ports; the same for both runtimes. */
export function createServices(given: Omit<Platform, 'search'> & { search?: Platform['search'] }): Services {
  // Text search: Amazon OpenSearch when the runtime gives it, else the embedded engine with its indexes as data blobs.
  const platform: Platform = { ...given, search: given.search ?? new MiniSearchIndexes(given.blobs.data, { logger: given.logger }) };
  const access = new AccessService(platform);
  const auth = new AuthService(platform);
  const catalog = new GraphCatalog(platform);
  const datasets = new DatasetService(platform, access);
  const sparqlServices = new ServiceLifecycle(platform, access, catalog, platform.settings.sparql, new SearchLifecycle(platform, catalog));
  const savedQueries = new SavedQueryService(platform, access, sparqlServices);
  const flows = new FlowService(platform, access);
  const accounts = new AccountService(platform, access, auth);
  // Runs: starting, the task worker, settling and listing share what this process read about runs.
  const runCaches = new RunCaches(platform);
  const runSettler = new RunSettler(platform, runCaches);
  const runStarter = new RunStarter(platform, flows, auth, runCaches, runSettler);
  const uploadWaits = new UploadWaits(platform);
  const taskWorker = new TaskWorker(platform, flows, runCaches, uploadWaits, { platform, access, catalog, sparql: sparqlServices, savedQueries, datasets });
  const flowRuns = new RunListing(platform, flows, runCaches, runSettler);
  const hooks = new FlowHookService(platform, access, flows, runStarter, uploadWaits);
  const schedules = new FlowScheduleService(platform, flows, runStarter);
  const notifier = new FlowNotifier(platform);
  runSettler.onSettled((run, flow, definition) => notifier.runSettled(run, flow, definition));
  accounts.onDelete(async (account) => {
    await schedules.removeOfOwner(account.uid);
    await hooks.removeOfOwner(account.uid);
    await flows.removeAllOf(account.uid);
    await datasets.removeAllOf(account.uid);
    await new StoryService(platform, access).removeAllOf(account.uid);
    await platform.blobs.data.delete(accountAvatarKey(account.uid));
  });
  const imports = new ImportService(platform, access, catalog);
  return {
    platform,
    access,
    auth,
    accounts,
    datasets,
    imports,
    statements: new StatementReader(access, catalog),
    datasetCopier: new DatasetCopier(platform, access, datasets, catalog),
    jobAdmin: new JobAdmin(platform, access, imports),
    graphs: new GraphService(access, catalog),
    exports: new ExportService(access, catalog),
    assets: new AssetService(platform, access),
    sparqlServices,
    hostWatchdog: new HostWatchdog(platform, sparqlServices),
    search: new SearchService(platform, access),
    graphql: new GraphqlService(sparqlServices),
    savedQueries,
    flows,
    flowRuns,
    runStarter,
    runSettler,
    flowRuntime: {
      runTask: (invocation, options) => taskWorker.runTask(invocation, options),
      runStagedTask: (stagedKey) => taskWorker.runStagedTask(stagedKey),
      settle: (runId, result) => runSettler.settle(runId, result),
    },
    flowWatchdog: new FlowWatchdog(platform, flows, runSettler),
    hooks,
    schedules,
    logger: platform.logger,
  };
}
