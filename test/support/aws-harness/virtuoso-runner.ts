/**
 * The AWS harness's image runner for the SPARQL host task's `virtuoso` container (issue 19,
 * lib/constructs/sparql-hosts.ts), registered for `openlink/virtuoso-opensource-7` with the fake
 * ECS's registry (ecs.ts): Debian's `virtuoso-t` started the way the image's entrypoint starts
 * its server: a virtuoso.ini made from the container's `VIRT_<Section>_<Key>` environment over the
 * defaults, the HTTP port the task definition names (VIRTUOSO_HTTP_PORT, remapped by the harness
 * to a free loopback port), the dba password set from DBA_PASSWORD (its Secrets Manager secret,
 * resolved by the harness), then every `*.sql` script of its `/initdb.d` mount run with isql as
 * dba, in name order. The database lives in the container's root folder. Without virtuoso-t the
 * container cannot start (CannotPullContainerError-like), so the task fails to start.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitForSparql } from '../../../functions/adapters/common/sparql-protocol/host-loader.js';
import { freePort, isqlBeside, virtSettingsFromEnv, virtuosoIni } from '../../../functions/adapters/local/virtuoso-service-hosts.js';
import { findVirtuoso, VIRTUOSO_PACKAGE } from '../virtuoso.js';
import { processContainer, registerImageRunner, type ContainerStart, type RunningContainer } from './ecs.js';

export const VIRTUOSO_IMAGE_PREFIX = 'openlink/virtuoso-opensource-7';

function isql(isqlPath: string, sqlPort: number, password: string, args: string[], secrets: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(isqlPath, [`127.0.0.1:${sqlPort}`, 'dba', password, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      let text = `${stdout}${stderr}`;
      // Never echo a password (the one it connects with, or one it sets).
      for (const secret of [password, ...secrets]) text = text.split(secret).join('***');
      if (error || /\*\*\* Error/.test(text)) reject(new Error(`isql: ${text.trim().slice(0, 500) || error?.message}`));
      else resolve(text);
    });
  });
}

/** The openlink image, on Debian's virtuoso-t (see the module comment). */
export async function runVirtuoso(start: ContainerStart): Promise<RunningContainer> {
  const found = findVirtuoso();
  if (!found) throw new Error(`CannotPullContainerError: harness: ${VIRTUOSO_IMAGE_PREFIX} runs on virtuoso-t; install the Debian package ${VIRTUOSO_PACKAGE}`);
  const isqlPath = isqlBeside(found.server) ?? found.isql;
  const env = start.env;
  const http = Number(env.VIRTUOSO_HTTP_PORT ?? env.VIRT_HTTPServer_ServerPort ?? 8890);
  let sql = await freePort();
  while (sql === http) sql = await freePort();
  const dir = join(start.rootDir, 'database');
  await mkdir(dir, { recursive: true });
  const configFile = join(dir, 'virtuoso.ini');
  await writeFile(configFile, virtuosoIni(dir, { sql, http }, virtSettingsFromEnv(env)));
  const child = spawn(found.server, ['+foreground', '+configfile', configFile], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const running = processContainer(child, start);
  let gone: string | null = null;
  void running.exited.then((c) => (gone = `virtuoso-t exited with ${c}`));
  // The entrypoint's first start: the dba password, then the initdb scripts; the server stays up.
  void (async () => {
    try {
      await waitForSparql(`http://127.0.0.1:${http}/sparql`, { timeoutMs: 120_000, gone: () => gone });
      let password = 'dba';
      if (env.DBA_PASSWORD) {
        // As the image's entrypoint does it: the password is an SQL identifier here.
        await isql(isqlPath, sql, password, [`exec=SET PASSWORD dba ${env.DBA_PASSWORD};`], [env.DBA_PASSWORD]);
        password = env.DBA_PASSWORD;
      }
      const initdb = start.mounts.find((m) => m.containerPath === '/initdb.d')?.hostPath;
      const scripts = initdb ? (await readdir(initdb)).filter((f) => f.endsWith('.sql')).sort() : [];
      for (const script of scripts) {
        start.log(`initdb: running ${script}\n`);
        await isql(isqlPath, sql, password, [join(initdb!, script)]);
      }
      start.log('virtuoso: ready\n');
    } catch (e) {
      start.log(`virtuoso start-up failed: ${(e as Error).message}\n`);
      await running.stop(5000);
    }
  })();
  return running;
}

registerImageRunner(VIRTUOSO_IMAGE_PREFIX, runVirtuoso);
