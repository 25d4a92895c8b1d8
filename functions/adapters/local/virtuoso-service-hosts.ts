/**
 * ServiceHosts on the embedded platform (issue 19), when configured (env VIRTUOSO_HOSTS = the
 * path of `virtuoso-t`; default off): every running `virtuoso` service gets its own `virtuoso-t`
 * process (a database in a scratch directory under the platform's data directory, HTTP and SQL on
 * free 127.0.0.1 ports), loaded from the snapshot's blobs the way the Fargate host's loader loads
 * it (adapters/common/sparql-protocol/host-loader.ts). Queries attach to the loaded snapshot.
 * `jena` services (reasoning) stay on the embedded engine.
 *
 * Virtuoso's settings come as `VIRT_<Section>_<Key>` values, the way the openlink image's
 * entrypoint reads them from its environment (virtuosoIni); the SPARQL user is granted
 * SPARQL_UPDATE through `isql-vt` (the loader writes with SPARQL Update and the Graph Store
 * Protocol), as the image's `/initdb.d` script does on AWS.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../../ports/logger.js';
import type { HostLaunch, HostReporter, ServiceHost, ServiceHosts } from '../../ports/service-hosts.js';
import type { ServiceType } from '../../ports/records/sparql.js';
import type { SparqlStore } from '../../ports/sparql-engine.js';
import type { InternalEndpoint } from '../common/outbound-guard.js';
import { SparqlProtocolEngine } from '../common/sparql-protocol/engine.js';
import { hostLoad, virtuosoEndpoints, waitForSparql } from '../common/sparql-protocol/host-loader.js';

/** `[Section] Key = value` settings of virtuoso.ini, by section. */
export type VirtuosoSettings = Record<string, Record<string, string | number>>;

/** The settings in `VIRT_<Section>_<Key>` variables (the openlink image's convention). */
export function virtSettingsFromEnv(env: Record<string, string | undefined>): VirtuosoSettings {
  const out: VirtuosoSettings = {};
  for (const [name, value] of Object.entries(env)) {
    const m = /^VIRT_([A-Za-z]+)_([A-Za-z0-9]+)$/.exec(name);
    if (!m || value === undefined) continue;
    (out[m[1]!] ??= {})[m[2]!] = value;
  }
  return out;
}

/**
 * A virtuoso.ini for a database in `dir`, SQL and HTTP on 127.0.0.1 `sqlPort`/`httpPort`, with
 * `settings` over the defaults (the image's defaults where they matter: 4 threads per query,
 * result rows and execution time raised so the platform's own limits apply first).
 */
export function virtuosoIni(dir: string, ports: { sql: number; http: number; host?: string }, settings: VirtuosoSettings = {}): string {
  const f = (name: string): string => path.join(dir, name);
  const host = ports.host ?? '127.0.0.1';
  const sections: VirtuosoSettings = {
    Database: {
      DatabaseFile: f('virtuoso.db'),
      ErrorLogFile: f('virtuoso.log'),
      LockFile: f('virtuoso.lck'),
      TransactionFile: f('virtuoso.trx'),
      xa_persistent_file: f('virtuoso.pxa'),
      ErrorLogLevel: 7,
      FileExtend: 200,
      MaxCheckpointRemap: 2000,
      Striping: 0,
      TempStorage: 'TempDatabase',
    },
    TempDatabase: { DatabaseFile: f('virtuoso-temp.db'), TransactionFile: f('virtuoso-temp.trx'), MaxCheckpointRemap: 2000, Striping: 0 },
    Parameters: {
      ServerPort: `${host}:${ports.sql}`,
      DisableUnixSocket: 1,
      DisableTcpSocket: 0,
      ServerThreads: 32,
      MaxClientConnections: 32,
      CheckpointInterval: 60,
      CaseMode: 2,
      DirsAllowed: `., ${dir}`,
      NumberOfBuffers: 100_000,
      MaxDirtyBuffers: 75_000,
      MaxQueryMem: '1G',
      ThreadsPerQuery: 4,
      AsyncQueueMaxThreads: 10,
    },
    HTTPServer: {
      ServerPort: `${host}:${ports.http}`,
      ServerRoot: dir,
      ServerThreads: 32,
      MaxClientConnections: 32,
      MaxKeepAlives: 32,
      KeepAliveTimeout: 10,
      EnabledDavVSP: 0,
      HTTPProxyEnabled: 0,
      Charset: 'UTF-8',
      EnabledGzipContent: 0,
    },
    SPARQL: { ResultSetMaxRows: 1_000_000, MaxQueryCostEstimationTime: 0, MaxQueryExecutionTime: 300 },
  };
  for (const [section, values] of Object.entries(settings)) {
    // The ports and files are this host's; the rest may be set.
    const fixed = new Set(['ServerPort', 'DatabaseFile', 'TransactionFile', 'ErrorLogFile', 'LockFile', 'ServerRoot']);
    for (const [key, value] of Object.entries(values)) if (!fixed.has(key)) (sections[section] ??= {})[key] = value;
  }
  return Object.entries(sections)
    .map(([section, values]) => `[${section}]\n${Object.entries(values).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`)
    .join('\n');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `isql-vt` next to `virtuoso-t`, else on PATH, else /usr/bin. */
export function isqlBeside(server: string): string | null {
  const candidates = [path.join(path.dirname(server), 'isql-vt'), ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((d) => path.join(d, 'isql-vt')), '/usr/bin/isql-vt'];
  return candidates.find(executable) ?? null;
}

/** Runs SQL through isql as dba. */
export function isql(isqlPath: string, sqlPort: number, password: string, statement: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(isqlPath, [`127.0.0.1:${sqlPort}`, 'dba', password, `exec=${statement}`], { timeout: 60_000 }, (error, stdout, stderr) => {
      const text = `${stdout}${stderr}`;
      // The password is an argument of isql, never part of what is reported.
      if (error || /\*\*\* Error/.test(text)) reject(new Error(`isql failed: ${text.split(password).join('***').trim().slice(0, 500) || error?.message}`));
      else resolve(text);
    });
  });
}

/** The statement the SPARQL host's initdb script runs: the anonymous SPARQL user may load (update). */
export const GRANT_SPARQL_UPDATE = 'GRANT SPARQL_UPDATE TO "SPARQL";';

interface Host {
  ref: string;
  target: HostLaunch;
  dir: string;
  child: ChildProcess;
  exited: string | null;
  output: string;
  /** Its ports in the outbound guard's list, removed when it stops. */
  guarded: InternalEndpoint[];
}

const ENV_NAME = 'VIRTUOSO_HOSTS';

export interface VirtuosoServiceHostsOptions {
  /** Path of `virtuoso-t`. */
  server: string;
  /** Path of `isql-vt` (default: beside the server, else on PATH). */
  isql?: string;
  /** Where the hosts' databases go (one directory each, removed when the host stops). */
  dir: string;
  logger: Logger;
  /** Virtuoso settings over the defaults (VIRT_* of the environment). */
  settings?: VirtuosoSettings;
  /** How long a host may take to answer after its start (default 120 s). */
  startTimeoutMs?: number;
  /**
   * The outbound guard's list of the platform's own back ends (shared, live): each host's ports
   * are added while it runs, so a URL import or flow task never reaches a host's Virtuoso (which
   * takes anonymous updates on loopback) even where private networks are allowed.
   */
  internalEndpoints?: InternalEndpoint[];
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** See the module comment. */
export class VirtuosoServiceHosts implements ServiceHosts {
  private readonly hosts = new Map<string, Host>();
  private readonly loads = new Set<Promise<void>>();
  private reporter?: HostReporter;
  private readonly isqlPath: string;

  constructor(private readonly options: VirtuosoServiceHostsOptions) {
    if (!executable(options.server)) throw new Error(`VIRTUOSO_HOSTS: "${options.server}" is not an executable virtuoso-t`);
    const found = options.isql ?? isqlBeside(options.server);
    if (!found) throw new Error('VIRTUOSO_HOSTS: isql-vt (from the same Virtuoso installation) was not found');
    this.isqlPath = found;
  }

  /**
   * Ends hosts a previous run of the platform left behind (it was killed, or crashed: its
   * virtuoso-t children outlive it) and removes their databases. Run before the services are
   * recovered (which launches their hosts anew). A host's process is found by the PID in its
   * database's lock file, and ended only when its command line names that host's own ini.
   */
  async sweep(): Promise<void> {
    const entries = await readdir(this.options.dir).catch(() => [] as string[]);
    for (const entry of entries) {
      if (!entry.startsWith('virtuoso-t-')) continue;
      const dir = path.join(this.options.dir, entry);
      const pid = Number(/VIRT_PID=(\d+)/.exec(await readFile(path.join(dir, 'virtuoso.lck'), 'utf8').catch(() => ''))?.[1]);
      if (pid > 0) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (cmdline.includes(path.join(dir, 'virtuoso.ini'))) {
          this.options.logger.warn('ending a virtuoso host left behind by an earlier run', { pid, dir: entry });
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
          for (let i = 0; i < 100 && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')); i++) await delay(50);
        }
      }
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Wires the lifecycle once the services exist (they need the hosts, the hosts report to them). */
  bind(reporter: HostReporter): void {
    this.reporter = reporter;
  }

  serves(type: ServiceType): boolean {
    return type === 'virtuoso';
  }

  async launch(target: HostLaunch): Promise<string> {
    if (!this.reporter) throw new Error('the virtuoso hosts are not bound to the services yet');
    const ref = `virtuoso-t:${randomBytes(8).toString('hex')}`;
    const dir = path.join(this.options.dir, ref.replace(':', '-'));
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const http = await freePort();
    let sql = await freePort();
    while (sql === http) sql = await freePort();
    const guarded: InternalEndpoint[] = [http, sql].map((port) => ({ name: `${ENV_NAME} (a SPARQL service host)`, host: '127.0.0.1', port }));
    this.options.internalEndpoints?.push(...guarded);
    const configFile = path.join(dir, 'virtuoso.ini');
    await writeFile(configFile, virtuosoIni(dir, { sql, http }, this.options.settings), { mode: 0o600 });
    const child = spawn(this.options.server, ['+foreground', '+configfile', configFile], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const host: Host = { ref, target, dir, child, exited: null, output: '', guarded };
    const keep = (b: Buffer): void => {
      host.output = (host.output + b.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', (code, signal) => {
      host.exited = `exit ${code ?? signal}`;
      this.ended(host);
    });
    child.once('error', (e) => {
      host.exited = e.message;
    });
    this.hosts.set(ref, host);
    const { queryEndpoint, graphStoreEndpoint } = virtuosoEndpoints(`http://127.0.0.1:${http}`);
    try {
      await waitForSparql(queryEndpoint, { timeoutMs: this.options.startTimeoutMs ?? 120_000, gone: () => host.exited && `${host.exited}: ${host.output.trim().slice(-500)}` });
      // A fresh database's dba password is "dba"; the server listens on loopback only.
      await isql(this.isqlPath, sql, 'dba', GRANT_SPARQL_UPDATE);
    } catch (e) {
      await this.stop(ref);
      throw e;
    }
    // Loads in the background; the lifecycle records the host when it is loaded.
    const reporter = this.reporter;
    const load = reporter
      .run(target.datasetId, target.serviceId, ref, queryEndpoint, hostLoad({ queryEndpoint, graphStoreEndpoint, logger: this.options.logger }))
      .then(async (current) => {
        if (!current) await this.stop(ref);
      })
      .catch(async (e: unknown) => {
        this.options.logger.error('a virtuoso host failed to load', { ref, error: e });
        await this.stop(ref);
      })
      .finally(() => this.loads.delete(load));
    this.loads.add(load);
    return ref;
  }

  /**
   * A host's virtuoso-t exited. Unless it was stopped (stop() forgets it first), it ended on its
   * own (crashed, killed): the service is told, so it does not claim to run on it, and the
   * host's database is removed.
   */
  private ended(host: Host): void {
    if (this.hosts.get(host.ref) !== host || !this.reporter) return;
    const reason = `its virtuoso-t ended (${host.exited})`;
    this.options.logger.error('a virtuoso host ended on its own', { ref: host.ref, serviceId: host.target.serviceId, reason, output: host.output.trim().slice(-500) });
    const { datasetId, serviceId } = host.target;
    const told = this.reporter
      .lost(datasetId, serviceId, host.ref, reason)
      .catch((e: unknown) => this.options.logger.error('recording a lost virtuoso host failed', { ref: host.ref, error: e }))
      .then(() => this.stop(host.ref))
      .finally(() => this.loads.delete(told));
    this.loads.add(told);
  }

  async stopped(ref: string): Promise<string | undefined> {
    const host = this.hosts.get(ref);
    if (!host) return 'this platform runs no such virtuoso-t host';
    return host.exited ? `its virtuoso-t ended (${host.exited})` : undefined;
  }

  async stop(ref: string): Promise<void> {
    const host = this.hosts.get(ref);
    if (!host) return;
    this.hosts.delete(ref);
    if (!host.exited) {
      const exit = new Promise<void>((resolve) => (host.exited ? resolve() : host.child.once('exit', () => resolve())));
      host.child.kill('SIGTERM');
      await Promise.race([exit, delay(15_000)]);
      if (!host.exited) {
        host.child.kill('SIGKILL');
        await Promise.race([exit, delay(5_000)]);
      }
    }
    const list = this.options.internalEndpoints;
    for (const endpoint of host.guarded) if (list?.includes(endpoint)) list.splice(list.indexOf(endpoint), 1);
    await rm(host.dir, { recursive: true, force: true });
  }

  async attach(host: ServiceHost): Promise<SparqlStore> {
    return new SparqlProtocolEngine({ queryEndpoint: host.endpoint, logger: this.options.logger }).attach(host);
  }

  /**
   * Stops every host (the platform is stopping; its restart launches them again). A load cut off
   * here is recorded as failed: that service is in error after the restart until started again.
   */
  async close(): Promise<void> {
    await Promise.allSettled([...this.hosts.keys()].map((ref) => this.stop(ref)));
    await Promise.allSettled([...this.loads]);
  }
}
