/**
 * A throwaway Virtuoso 7 (Debian's `virtuoso-opensource-7`) for tests: its own database in a
 * temporary directory, HTTP and SQL ports on 127.0.0.1 only, raised row/thread/time limits, and
 * the anonymous `SPARQL` user allowed to update (SPARQL Update and the Graph Store Protocol).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../functions/adapters/local/virtuoso-service-hosts.js';

export const VIRTUOSO_PACKAGE = 'virtuoso-opensource-7';

export interface VirtuosoServer {
  /** SPARQL 1.1 Protocol endpoint (queries and updates). */
  sparqlEndpoint: string;
  /** SPARQL 1.1 Graph Store Protocol endpoint. */
  graphStoreEndpoint: string;
  httpPort: number;
  sqlPort: number;
  dir: string;
  /** The server's console output so far (for failure messages). */
  log(): string;
  /** Runs SQL as dba through isql. */
  sql(statement: string): Promise<string>;
  stop(): Promise<void>;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

/** `virtuoso-t` and `isql-vt` (env VIRTUOSO_T / VIRTUOSO_ISQL, else PATH, else /usr/bin), or null. */
export function findVirtuoso(): { server: string; isql: string } | null {
  const find = (override: string | undefined, name: string): string | null => {
    if (override) return executable(override) ? override : null;
    return onPath(name) ?? (executable(`/usr/bin/${name}`) ? `/usr/bin/${name}` : null);
  };
  const server = find(process.env.VIRTUOSO_T, 'virtuoso-t');
  const isql = find(process.env.VIRTUOSO_ISQL, 'isql-vt');
  return server && isql ? { server, isql } : null;
}


function ini(dir: string, httpPort: number, sqlPort: number): string {
  const f = (name: string): string => path.join(dir, name);
  return `[Database]
DatabaseFile       = ${f('virtuoso.db')}
ErrorLogFile       = ${f('virtuoso.log')}
LockFile           = ${f('virtuoso.lck')}
TransactionFile    = ${f('virtuoso.trx')}
xa_persistent_file = ${f('virtuoso.pxa')}
ErrorLogLevel      = 7
FileExtend         = 200
MaxCheckpointRemap = 2000
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = ${f('virtuoso-temp.db')}
TransactionFile    = ${f('virtuoso-temp.trx')}
MaxCheckpointRemap = 2000
Striping           = 0

[Parameters]
ServerPort           = 127.0.0.1:${sqlPort}
DisableUnixSocket    = 1
DisableTcpSocket     = 0
ServerThreads        = 32
MaxClientConnections = 32
CheckpointInterval   = 60
CaseMode             = 2
; only the scratch directory: loading goes over HTTP, no file access is needed
DirsAllowed          = ., ${dir}
NumberOfBuffers      = 20000
MaxDirtyBuffers      = 15000
MaxQueryMem          = 512M
ThreadsPerQuery      = 2
AsyncQueueMaxThreads = 10

[HTTPServer]
ServerPort                  = 127.0.0.1:${httpPort}
ServerRoot                  = ${dir}
ServerThreads               = 32
MaxClientConnections        = 32
MaxKeepAlives               = 32
KeepAliveTimeout            = 10
EnabledDavVSP               = 0
HTTPProxyEnabled            = 0
Charset                     = UTF-8
EnabledGzipContent          = 0

[SPARQL]
ResultSetMaxRows           = 1000000
MaxQueryCostEstimationTime = 0
MaxQueryExecutionTime      = 300
`;
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts Virtuoso in the foreground; resolves once /sparql answers and updates are granted. */
export async function startVirtuoso(options: { startTimeoutMs?: number } = {}): Promise<VirtuosoServer> {
  const found = findVirtuoso();
  if (!found) throw new Error(`virtuoso-t / isql-vt not found: install the Debian package ${VIRTUOSO_PACKAGE}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'virtuoso-test-'));
  const httpPort = await freePort();
  let sqlPort = await freePort();
  while (sqlPort === httpPort) sqlPort = await freePort();
  const configFile = path.join(dir, 'virtuoso.ini');
  await writeFile(configFile, ini(dir, httpPort, sqlPort));

  let output = '';
  const child: ChildProcess = spawn(found.server, ['+foreground', '+configfile', configFile], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (b: Buffer): void => {
    output = (output + b.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    }),
  );
  // Never leave a server behind if the test process ends abruptly.
  const killOnExit = (): void => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const base = `http://127.0.0.1:${httpPort}`;
  const sql = (statement: string): Promise<string> =>
    new Promise((resolve, reject) => {
      execFile(found.isql, [`127.0.0.1:${sqlPort}`, 'dba', 'dba', `exec=${statement}`], { timeout: 30_000 }, (error, stdout, stderr) => {
        const text = `${stdout}${stderr}`;
        if (error || /\*\*\* Error/.test(text)) reject(new Error(`isql ${statement}: ${error?.message ?? ''} ${text}`));
        else resolve(text);
      });
    });

  const stop = async (): Promise<void> => {
    if (!exited) {
      child.kill('SIGTERM');
      await Promise.race([exit, delay(15_000)]);
      if (!exited) {
        child.kill('SIGKILL');
        await Promise.race([exit, delay(5_000)]);
      }
    }
    process.removeListener('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 90_000);
    for (;;) {
      if (exited) throw new Error(`virtuoso-t exited (${JSON.stringify(exited)}) during start-up:\n${output}`);
      if (Date.now() > deadline) throw new Error(`virtuoso-t did not answer on ${base}/sparql within ${options.startTimeoutMs ?? 90_000} ms:\n${output}`);
      try {
        const res = await fetch(`${base}/sparql`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
          body: new URLSearchParams({ query: 'ASK {}' }),
          signal: AbortSignal.timeout(2000),
        });
        await res.text();
        if (res.ok) break;
      } catch {
        // not listening yet
      }
      await delay(250);
    }
    await sql('GRANT SPARQL_UPDATE TO "SPARQL";');
  } catch (e) {
    await stop();
    throw e;
  }

  return {
    sparqlEndpoint: `${base}/sparql`,
    graphStoreEndpoint: `${base}/sparql-graph-crud`,
    httpPort,
    sqlPort,
    dir,
    log: () => output,
    sql,
    stop,
  };
}
