/**
 * Image runners of the AWS harness for the SPARQL host task (issue 19, lib/constructs/sparql-hosts.ts):
 *
 * - `openlink/virtuoso-opensource-7`: Debian's `virtuoso-t` started the way the image's entrypoint
 *   starts its server: a virtuoso.ini made from the container's `VIRT_<Section>_<Key>` environment
 *   over the defaults, the HTTP port the task definition names (VIRTUOSO_HTTP_PORT, which the
 *   harness maps to a free loopback port), the dba password set from DBA_PASSWORD (resolved from
 *   its Secrets Manager secret), then every `*.sql` script of its `/initdb.d` mount run with isql
 *   as dba, in name order. The database lives in the container's scratch directory.
 * - `busybox` (the `initdb` init container): its `sh -c` script, run by the local `sh` with the
 *   container's mount paths replaced by their host directories.
 *
 * Both are plain functions of a container description (ImageRunContext); `register` hands them to
 * the harness's image runner registry.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GRANT_SPARQL_UPDATE, freePort, isqlBeside, virtSettingsFromEnv, virtuosoIni } from '../../../functions/adapters/local/virtuoso-service-hosts.js';
import { waitForSparql } from '../../../functions/adapters/common/sparql-protocol/host-loader.js';
import { writeFile } from 'node:fs/promises';
import { findVirtuoso, VIRTUOSO_PACKAGE } from '../virtuoso.js';

export const VIRTUOSO_IMAGE_PREFIX = 'openlink/virtuoso-opensource-7';
export const BUSYBOX_IMAGE_PREFIX = 'public.ecr.aws/docker/library/busybox';

/** One container to run: what the task definition and RunTask say, with the harness's mapping. */
export interface ImageRunContext {
  name: string;
  image: string;
  command?: string[];
  /** The container's environment: task definition, overrides, resolved secrets, mapped ports. */
  environment: Record<string, string>;
  /** Mounted volumes: container path → host directory (shared by the task's containers). */
  mounts: Record<string, string>;
  /** A scratch directory of this container (removed by the harness after the task). */
  dir: string;
  /** Output lines (the container's log). */
  log(line: string): void;
}

/** A started container: resolves `exited` with its exit code; `stop` is SIGTERM, then SIGKILL. */
export interface RunningImage {
  exited: Promise<number>;
  stop(): Promise<void>;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function supervise(child: ChildProcess, log: (line: string) => void): RunningImage {
  let code: number | null = null;
  const exited = new Promise<number>((resolve) => {
    child.once('exit', (c, signal) => {
      code = c ?? (signal ? 128 + 15 : 1);
      resolve(code);
    });
    child.once('error', (e) => {
      log(e.message);
      code = 127;
      resolve(127);
    });
  });
  const keep = (b: Buffer) => {
    for (const line of b.toString('utf8').split('\n')) if (line.trim()) log(line);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return {
    exited,
    async stop() {
      if (code !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, delay(15_000)]);
      if (code === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

function isql(isqlPath: string, sqlPort: number, password: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(isqlPath, [`127.0.0.1:${sqlPort}`, 'dba', password, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      const text = `${stdout}${stderr}`;
      if (error || /\*\*\* Error/.test(text)) reject(new Error(`isql: ${text.split(password).join('***').trim().slice(0, 500) || error?.message}`));
      else resolve(text);
    });
  });
}

/** The openlink image, on Debian's virtuoso-t (see the module comment). */
export async function runVirtuoso(ctx: ImageRunContext): Promise<RunningImage> {
  const found = findVirtuoso();
  if (!found) throw new Error(`the harness runs ${VIRTUOSO_IMAGE_PREFIX} on virtuoso-t: install the Debian package ${VIRTUOSO_PACKAGE}`);
  const isqlPath = isqlBeside(found.server) ?? found.isql;
  const env = ctx.environment;
  const http = Number(env.VIRTUOSO_HTTP_PORT ?? env.VIRT_HTTPServer_ServerPort ?? 8890);
  let sql = await freePort();
  while (sql === http) sql = await freePort();
  const configFile = join(ctx.dir, 'virtuoso.ini');
  await writeFile(configFile, virtuosoIni(ctx.dir, { sql, http }, virtSettingsFromEnv(env)));
  const child = spawn(found.server, ['+foreground', '+configfile', configFile], { cwd: ctx.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const running = supervise(child, ctx.log);
  let gone: string | null = null;
  void running.exited.then((c) => (gone = `virtuoso-t exited with ${c}`));
  // The entrypoint's first start: password, then the initdb scripts; the server stays up.
  void (async () => {
    try {
      await waitForSparql(`http://127.0.0.1:${http}/sparql`, { timeoutMs: 120_000, gone: () => gone });
      let password = 'dba';
      if (env.DBA_PASSWORD) {
        await isql(isqlPath, sql, password, [`exec=SET PASSWORD dba ${JSON.stringify(env.DBA_PASSWORD).slice(1, -1)};`]);
        password = env.DBA_PASSWORD;
      }
      const initdb = ctx.mounts['/initdb.d'];
      const scripts = initdb ? (await readdir(initdb)).filter((f) => f.endsWith('.sql')).sort() : [];
      for (const script of scripts) {
        ctx.log(`initdb: running ${script}`);
        await isql(isqlPath, sql, password, [join(initdb!, script)]);
      }
      ctx.log('virtuoso: ready');
    } catch (e) {
      ctx.log(`virtuoso start-up failed: ${(e as Error).message}`);
      await running.stop();
    }
  })();
  return running;
}

/** busybox `sh -c <script>`: the local sh, mount paths replaced by their host directories. */
export async function runBusybox(ctx: ImageRunContext): Promise<RunningImage> {
  const command = ctx.command ?? [];
  if (command[0] !== 'sh' || command[1] !== '-c' || command.length < 3) throw new Error(`${ctx.name}: the harness runs busybox only as sh -c <script>`);
  let script = command[2]!;
  for (const [containerPath, hostDir] of Object.entries(ctx.mounts)) script = script.split(containerPath).join(hostDir);
  const child = spawn('sh', ['-c', script, ...command.slice(3)], { cwd: ctx.dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...ctx.environment }, stdio: ['ignore', 'pipe', 'pipe'] });
  return supervise(child, ctx.log);
}

/** The statement the task definition's initdb script holds (checked by the harness test). */
export const EXPECTED_INITDB_STATEMENT = GRANT_SPARQL_UPDATE;
