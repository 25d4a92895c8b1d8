/**
 * Builds the console (console/, issue 17) with Vite when its build is missing or stale: `npm start`,
 * the browser tests and the bench call `ensureConsoleBuild()`; `npx tsx bin/console-build.ts` runs it
 * by hand (`--force` rebuilds). Stale means the hash of console/'s sources, its config and the
 * lock file differs from the one the last build wrote beside it. Builds go to a fresh folder that
 * replaces dist/ at the end, under a lock folder, so two processes never build over each other.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
export const CONSOLE_DIR = join(ROOT, 'console');
export const CONSOLE_DIST = join(CONSOLE_DIR, 'dist');
const STAMP = '.build-hash';
const LOCK = join(CONSOLE_DIR, '.build-lock');
const SKIP = new Set(['dist', 'docs', 'node_modules', '.build-lock']);

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.startsWith('dist.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else out.push(path);
  }
  return out.sort();
}

/** The hash of what the build is made from. */
export async function consoleSourceHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of [...(await sourceFiles(CONSOLE_DIR)), join(ROOT, 'package-lock.json')]) {
    hash.update(relative(ROOT, file)).update('\0').update(await readFile(file)).update('\0');
  }
  return hash.digest('hex');
}

async function builtHash(): Promise<string | undefined> {
  return readFile(join(CONSOLE_DIST, STAMP), 'utf8').then((s) => s.trim(), () => undefined);
}

/** Takes the lock folder, waiting (bounded) for another builder; a lock older than 5 minutes is stale. */
async function withLock<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch {
      const age = await stat(LOCK).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > 300_000) await rm(LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`Another process holds ${LOCK} for more than 3 minutes; remove it if no build runs.`);
      else await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await work();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

/** Builds when missing or stale; answers whether it built. */
export async function ensureConsoleBuild(options: { force?: boolean; log?: (line: string) => void } = {}): Promise<boolean> {
  const log = options.log ?? (() => {});
  const wanted = await consoleSourceHash();
  if (!options.force && (await builtHash()) === wanted) return false;
  return withLock(async () => {
    // Someone else may have built it while we waited.
    if (!options.force && (await builtHash()) === wanted) return false;
    log('Building the console (console/ → console/dist)…');
    const { build } = await import('vite');
    const outDir = join(CONSOLE_DIR, `dist.${process.pid}`);
    // Vite takes NODE_ENV from the environment (vitest sets "test"): the build is always the production one.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({ configFile: join(CONSOLE_DIR, 'vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir, emptyOutDir: true } });
    } finally {
      if (nodeEnv === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = nodeEnv;
    }
    await writeFile(join(outDir, STAMP), `${wanted}\n`);
    await rm(CONSOLE_DIST, { recursive: true, force: true });
    await rename(outDir, CONSOLE_DIST);
    log('Console built.');
    return true;
  });
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  await ensureConsoleBuild({ force: process.argv.includes('--force'), log: (line) => console.log(line) });
}
