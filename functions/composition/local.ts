import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { Agent as HttpAgent, type Server } from 'node:http';
import { DynamoDbMetadataStore } from '../adapters/aws/dynamodb-metadata-store.js';
import { DynamoDbFlowStore } from '../adapters/aws/dynamodb-flow-store.js';
import { LocalFlowExecutor } from '../adapters/local/local-flow-executor.js';
import { OutboxMailer } from '../adapters/local/outbox-mailer.js';
import { InProcessUploadEvents } from '../adapters/local/in-process-upload-events.js';
import { DatasetWebhooks } from '../domain/datasets/dataset-webhooks.js';
import { CronerScheduler } from '../adapters/local/croner-scheduler.js';
import { cachedMetadataStore } from '../adapters/local/cached-metadata-store.js';
import { cachedFlowStore } from '../adapters/local/cached-flow-store.js';
import { FsBlobStore } from '../adapters/local/fs-blob-store.js';
import { VirtuosoServiceHosts, virtSettingsFromEnv } from '../adapters/local/virtuoso-service-hosts.js';
import { InProcessTaskQueue } from '../adapters/local/in-process-tasks.js';
import { TUS_PREFIX, TusUploads } from '../adapters/local/tus-uploads.js';
import { MAX_UPLOAD_BYTES } from '../adapters/common/tus-uploads.js';
import { TABLE_SCHEMA } from '../adapters/aws/table-schema.js';
import { internalEndpointsFromEnv, settingsFromEnv } from '../config.js';
import { ENV } from '../env-names.js';
import type { PlatformSettings } from '../domain/shared/platform.js';
import type { Clock } from '../ports/clock.js';
import { HANDLER_MODULES } from '../handlers/index.js';
import type { FamilyHandler, Services } from '../http/api.js';
import { createNodeServer } from '../http/node-server.js';
import { consoleStatic, type ConsoleStatic } from '../http/console-static.js';
import { FAMILIES, type Family } from '../http/route-table.js';
import { documentClient, openSearchFromEnv } from './aws.js';
import { createLogger } from '../adapters/common/powertools-logger.js';
import type { ScopedLogger } from '../ports/logger.js';
import { commonPorts, createServices } from './wiring.js';

export const LOCAL_TABLE_NAME = 'platform';
export const ADMIN_TOKEN_FILE = 'admin-token';
export const ADMIN_PASSWORD_FILE = 'admin-password';
/** Largest resumable upload (imports and assets), the same on AWS. */
export { MAX_UPLOAD_BYTES };

/** Where `bin/console-build.ts` writes the console's build (issue 17). */
export const CONSOLE_BUILD_DIR = resolvePath(import.meta.dirname, '../../console/dist');

export interface EmbeddedOptions {
  dataDir: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  adminAccount?: string;
  adminPassword?: string;
  settings?: Partial<PlatformSettings>;
  env?: NodeJS.ProcessEnv;
  /** Replaces the system clock everywhere (tests move it to fire schedules without waiting). */
  clock?: Clock;
  /** Where the platform logs; default JSON lines on stdout/stderr at `env.POWERTOOLS_LOG_LEVEL` (INFO). */
  logger?: ScopedLogger;
  /** The console's build served at /console (issue 17); default console/dist of this checkout. */
  consoleDir?: string;
}

export interface EmbeddedPlatform {
  url: string;
  services: Services;
  adminTokenFile: string;
  adminPasswordFile?: string;
  close(): Promise<void>;
}

const listen = (server: Server, port: number, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });

/**
 * Closes dynalite once the requests it is answering are done: it closes its LevelDB when its server
 * closes, and a request still being answered then throws "Database is closed" where no one can
 * catch it. Our client is destroyed first, so no new request comes; the wait is bounded.
 */
async function closeMetadataServer(server: Server, waitMs = 5_000): Promise<void> {
  const active = (server as Server & { activeRequests?: number }).activeRequests ?? 0;
  if (active > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      timer.unref();
      server.once('idle', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  await closeServer(server);
}

/** Counts the requests a server is answering, and says when it has none left ('idle'). */
function countActiveRequests(server: Server): void {
  const counted = server as Server & { activeRequests?: number };
  counted.activeRequests = 0;
  server.on('request', (_req, res) => {
    counted.activeRequests! += 1;
    res.once('close', () => {
      counted.activeRequests! -= 1;
      if (counted.activeRequests === 0) server.emit('idle');
    });
  });
}

/** Longest Unix socket path we use: sun_path holds 108 bytes on Linux and 104 on macOS. */
const MAX_SOCKET_PATH_BYTES = 100;

interface MetadataSocket {
  path: string;
  /** A folder of our own under the system temp folder, removed on close. */
  temporaryDir?: string;
}

/**
 * dynalite has no authentication, so it never listens on TCP (a flow's HTTP request or any local
 * OS user could otherwise read and write the metadata, the token secret included): it listens on a
 * Unix socket in a folder only this OS user may enter, `<data>/run/` (or a private temp folder
 * when that path is too long for a socket).
 */
async function metadataSocket(dataDir: string): Promise<MetadataSocket> {
  const preferred = join(resolvePath(dataDir), 'run');
  const useTemp = Buffer.byteLength(join(preferred, 'dynalite.sock')) > MAX_SOCKET_PATH_BYTES;
  const dir = useTemp ? await mkdtemp(join(tmpdir(), 'ldp-run-')) : preferred;
  if (!useTemp) await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700); // mode is ignored when the folder already existed
  const path = join(dir, 'dynalite.sock');
  const inUse = await new Promise<boolean>((resolve) => {
    const probe = createConnection({ path }, () => {
      probe.destroy();
      resolve(true);
    }).once('error', () => resolve(false));
  });
  if (inUse) throw new Error(`Another platform is running on the data folder ${dataDir}; stop it first.`);
  await rm(path, { force: true }); // left by a platform that did not stop cleanly
  return { path, ...(useTemp ? { temporaryDir: dir } : {}) };
}

const listenOnSocket = (server: Server, path: string) =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });

/** An HTTP agent whose every connection goes to one Unix socket (the URL's host and port are ignored). */
function unixSocketAgent(path: string): HttpAgent {
  const agent = new HttpAgent({ keepAlive: true });
  // The agent uses a socket returned synchronously.
  agent.createConnection = () => createConnection({ path });
  return agent;
}

/** Waits (bounded) until dynalite reports the table ACTIVE; creation completes asynchronously. */
async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (out.Table?.TableStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`table ${tableName} did not become active`);
}

/** Creates the single table in dynalite from the shared schema, once. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return waitUntilActive(client, tableName);
  } catch (e) {
    if (!(e instanceof ResourceNotFoundException)) throw e;
  }
  const keys = [TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey];
  const gsis = TABLE_SCHEMA.globalSecondaryIndexes;
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...keys, ...gsis.flatMap((g) => [g.partitionKey, g.sortKey])].map((name) => ({
        AttributeName: name,
        AttributeType: 'S',
      })),
      KeySchema: [
        { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: gsis.map((g) => ({
        IndexName: g.indexName,
        KeySchema: [
          { AttributeName: g.partitionKey, KeyType: 'HASH' },
          { AttributeName: g.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  await waitUntilActive(client, tableName);
}

/**
 * Makes the data folder owner-only whatever modes an earlier run or the operator left: the folder
 * 0700, the administrator files 0600, and the metadata store (it holds the token secret and the
 * flows' masked values) 0700 folders and 0600 files. Symbolic links are left alone (chmod would
 * follow them out of the folder). Bounded in depth and entries.
 */
async function restrictDataDirToOwner(dataDir: string, metadataDir: string): Promise<void> {
  await chmod(dataDir, 0o700);
  for (const name of [ADMIN_TOKEN_FILE, ADMIN_PASSWORD_FILE]) {
    await chmod(join(dataDir, name), 0o600).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
  }
  let budget = 100_000;
  const walk = async (dir: string, depth: number): Promise<void> => {
    await chmod(dir, 0o700);
    if (depth > 8) return;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (--budget < 0) return;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path, depth + 1);
      else if (entry.isFile()) await chmod(path, 0o600);
    }
  };
  await walk(metadataDir, 0);
}

async function writeSecretFile(path: string, content: string): Promise<void> {
  await writeFile(path, `${content}\n`, { mode: 0o600 });
  await chmod(path, 0o600); // the mode option is ignored when the file already exists
}

/**
 * First start: creates the instance administrator and writes its API token (and a generated
 * password) to owner-only files under the data folder. Later starts reuse them; a token file
 * whose token no longer works is replaced.
 */
async function bootstrapAdministrator(
  services: Services,
  dataDir: string,
  apiUrl: string,
  accountName: string,
  password: string | undefined,
): Promise<{ tokenFile: string; passwordFile?: string }> {
  const tokenFile = join(dataDir, ADMIN_TOKEN_FILE);
  const chosen = password ?? services.platform.ids.randomToken(18);
  const { account: admin, created } = await services.accounts.ensureAdministrator(accountName, chosen);
  let passwordFile: string | undefined;
  if (created && password === undefined) {
    passwordFile = join(dataDir, ADMIN_PASSWORD_FILE);
    await writeSecretFile(passwordFile, chosen);
  } else if (!created && password === undefined) {
    const existingFile = join(dataDir, ADMIN_PASSWORD_FILE);
    passwordFile = await readFile(existingFile).then(() => existingFile, () => undefined);
  }
  const existing = await readFile(tokenFile, 'utf8').then((t) => t.trim(), () => '');
  if (existing) {
    const caller = await services.auth
      .authenticate({ method: 'GET', authorization: `Bearer ${existing}`, cookies: {} })
      .catch(() => null);
    if (caller?.uid === admin.uid) return { tokenFile, passwordFile };
  }
  const { token } = await services.auth.issueToken(admin, { description: 'Administrator token written at first start', readOnly: false }, apiUrl);
  await writeSecretFile(tokenFile, token);
  return { tokenFile, passwordFile };
}

/**
 * The embedded platform: dynalite (LevelDB under the data folder) for metadata, and one node:http
 * server mounting every family handler of the shared route table.
 */
export async function startEmbeddedPlatform(options: EmbeddedOptions): Promise<EmbeddedPlatform> {
  const host = options.host ?? '127.0.0.1';
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const metadataDir = join(options.dataDir, 'metadata');
  await mkdir(metadataDir, { recursive: true, mode: 0o700 });
  await restrictDataDirToOwner(options.dataDir, metadataDir);

  const dynamo = dynalite({ path: metadataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  countActiveRequests(dynamo);
  const socket = await metadataSocket(options.dataDir);
  const removeSocket = async () => {
    await rm(socket.path, { force: true });
    if (socket.temporaryDir) await rm(socket.temporaryDir, { recursive: true, force: true });
  };
  await listenOnSocket(dynamo, socket.path).catch(async (e: unknown) => {
    await removeSocket();
    throw e;
  });
  await chmod(socket.path, 0o600);
  const dynamoAgent = unixSocketAgent(socket.path);
  const client = new DynamoDBClient({
    // The host is only for the SDK's URL: every connection goes to the socket.
    endpoint: 'http://localhost',
    requestHandler: { httpAgent: dynamoAgent },
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let server: Server | undefined;
  try {
    await ensureTable(client, LOCAL_TABLE_NAME);
    // Opening LevelDB rewrote some of its files with the process umask: make them owner-only too.
    await restrictDataDirToOwner(options.dataDir, metadataDir);
    const env = options.env ?? process.env;
    const settings = {
      ...settingsFromEnv(env),
      // On a laptop, data on localhost is the common case: allowed unless switched off.
      outbound: { allowPrivateNetworks: env[ENV.outboundAllowPrivateNetworks] !== 'false' },
      ...options.settings,
    };
    const blobsDir = join(options.dataDir, 'blobs');
    // Writes in flight when the process stopped (a killed import's download or graph): never renamed into place.
    for (const bucket of ['data', 'uploads', 'artifacts']) await rm(join(blobsDir, bucket, '.tmp'), { recursive: true, force: true });
    const logger = options.logger ?? createLogger({ level: env[ENV.logLevel] });
    const tasks = new InProcessTaskQueue(logger);
    const flowExecutor = new LocalFlowExecutor(logger);
    // The platform's own back ends, never reached on a user's behalf; Virtuoso hosts add theirs while they run.
    const internalEndpoints = [...internalEndpointsFromEnv(env)];
    const ports = commonPorts(settings, logger, internalEndpoints);
    // `virtuoso` services on their own virtuoso-t process when VIRTUOSO_HOSTS names one (issue 19).
    const serviceHosts = env[ENV.virtuosoHosts]
      ? new VirtuosoServiceHosts({ server: env[ENV.virtuosoHosts]!, dir: join(options.dataDir, 'virtuoso'), logger, settings: virtSettingsFromEnv(env), internalEndpoints })
      : undefined;
    const clock = options.clock ?? ports.clock;
    const scheduler = new CronerScheduler(clock, logger);
    const events = new InProcessUploadEvents(logger);
    const services = createServices({
      flows: cachedFlowStore(new DynamoDbFlowStore(documentClient(client), LOCAL_TABLE_NAME)),
      flowExecutor,
      mailer: new OutboxMailer(join(options.dataDir, 'outbox'), settings.mailFrom),
      events,
      // This process is the only writer of its LevelDB, so an exact in-memory read cache is safe.
      store: cachedMetadataStore(new DynamoDbMetadataStore(documentClient(client), LOCAL_TABLE_NAME)),
      blobs: {
        data: new FsBlobStore(join(blobsDir, 'data')),
        uploads: new FsBlobStore(join(blobsDir, 'uploads')),
        artifacts: new FsBlobStore(join(blobsDir, 'artifacts')),
      },
      tasks,
      // tus keeps its files inside the uploads store, so imports read them as ordinary blobs.
      uploads: new TusUploads(join(blobsDir, 'uploads', TUS_PREFIX), { maxSize: MAX_UPLOAD_BYTES }),
      ...ports,
      clock,
      scheduler,
      serviceHosts,
      // Text search on an OpenSearch cluster when OPENSEARCH_URL names one; else the embedded engine.
      search: openSearchFromEnv(env, logger),
    });
    serviceHosts?.bind({
      run: (...args) => services.sparqlServices.runHost(...args),
      current: (...args) => services.sparqlServices.hostIsCurrent(...args),
      lost: (...args) => services.hostWatchdog.lost(...args),
    });
    tasks.bind({
      runImport: async (datasetId, jobId) => void (await services.imports.run(datasetId, jobId)),
      loadService: (datasetId, serviceId) => services.sparqlServices.prepare(datasetId, serviceId, { warm: true }),
    });
    flowExecutor.bind(services.flowRuntime);
    // Flow hooks and dataset webhooks both hear the upload events.
    const webhooks = new DatasetWebhooks(services.platform, services.access);
    events.bind({
      assetStored: async (e) => {
        await webhooks.assetStored(e).catch((err: Error) => logger.error('dataset webhook delivery failed', { datasetId: e.datasetId, error: err.message }));
        await services.hooks.assetStored(e);
      },
      importStarted: (e) => services.hooks.importStarted(e),
      importFinished: async (e) => {
        await webhooks.importFinished(e).catch((err: Error) => logger.error('dataset webhook delivery failed', { datasetId: e.datasetId, error: err.message }));
        await services.hooks.importFinished(e);
      },
    });
    await services.imports.recoverInterrupted();
    await services.runSettler.recoverInterrupted();
    // Flow removals left unfinished (a flow with more runs than one request removes) go on here,
    // at start and every few minutes, as the watchdog worker does on AWS.
    const finishRemovals = () => services.flows.continueRemovals(null, 60_000).catch((e: Error) => logger.error('flow removals failed', { error: e.message }));
    await finishRemovals();
    const removalSweep = setInterval(() => void finishRemovals(), 5 * 60_000);
    removalSweep.unref();
    // Hosts a killed earlier run left behind end first; recover() launches the services' hosts anew.
    await serviceHosts?.sweep();
    await services.sparqlServices.recover();
    scheduler.load(await services.platform.flows.listAllSchedules());
    const handlers = Object.fromEntries(
      (Object.keys(FAMILIES) as Family[]).map((f) => [f, HANDLER_MODULES[f].mount(services)]),
    ) as Record<Family, FamilyHandler>;
    // Every request's API URL is the one pinned below once the port is known (never the Host header).
    const serverOptions: { origin?: string; logger: ScopedLogger; consoleSite?: ConsoleStatic } = {
      logger,
      consoleSite: consoleStatic(options.consoleDir ?? CONSOLE_BUILD_DIR),
    };
    server = createNodeServer(handlers, serverOptions);
    const port = await listen(server, options.port ?? 8080, host);
    // Pinned here, never from a request's Host header; a wildcard address is reached on loopback.
    const reachableHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    const url = settings.publicApiUrl ?? `http://${reachableHost.includes(':') ? `[${reachableHost}]` : reachableHost}:${port}`;
    serverOptions.origin = url;
    const admin = await bootstrapAdministrator(
      services,
      options.dataDir,
      url,
      options.adminAccount ?? 'admin',
      options.adminPassword,
    );
    // Schedules fire from here on; their runs get this URL as their API URL.
    scheduler.bind((s) => services.schedules.fire(s.blueprintUid, s.id, url));
    const runningServer = server;
    return {
      url,
      services,
      adminTokenFile: admin.tokenFile,
      adminPasswordFile: admin.passwordFile,
      async close() {
        clearInterval(removalSweep);
        await closeServer(runningServer);
        await scheduler.stop();
        await flowExecutor.abortAll();
        await tasks.drain();
        await events.drain();
        await serviceHosts?.close();
        await services.sparqlServices.closeAll();
        client.destroy();
        dynamoAgent.destroy();
        await closeMetadataServer(dynamo);
        await removeSocket();
      },
    };
  } catch (e) {
    if (server) await closeServer(server);
    client.destroy();
    dynamoAgent.destroy();
    await closeServer(dynamo);
    await removeSocket();
    throw e;
  }
}
