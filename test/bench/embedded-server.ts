import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface RunningPlatform {
  url: string;
  adminToken: string;
  adminPassword: string;
  pid: number;
  /** The platform's data directory (DATA_DIR). */
  dataDir: string;
  stop(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });

/**
 * Starts `npm start`'s entry point (bin/local.ts) in its own process, so the load generator and
 * the platform do not share an event loop.
 */
export async function startPlatformProcess(options: { env?: Record<string, string> } = {}): Promise<RunningPlatform> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ldp-bench-'));
  const port = await freePort();
  const root = resolve(import.meta.dirname, '../..');
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(root, 'bin/local.ts')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, ADMIN_PASSWORD: 'bench-admin-password', ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('platform did not start within 60 s')), 60_000);
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk;
      const m = /API: (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        // From here on its log lines are dropped unread: a reader that kept them (and searched
        // them) would fall behind, and the platform's synchronous writes to a full pipe block its
        // event loop (issue 18: that was part of the GET p99).
        child.stdout!.off('data', onData);
        child.stdout!.on('data', () => {});
        out = '';
        ok(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => fail(new Error(`platform exited with ${code}`)));
  });
  const adminToken = (await readFile(join(dataDir, 'admin-token'), 'utf8')).trim();
  return {
    url,
    adminToken,
    adminPassword: 'bench-admin-password',
    pid: child.pid!,
    dataDir,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
