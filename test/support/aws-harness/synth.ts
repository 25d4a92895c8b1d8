/**
 * Synthesizes the CDK app as `bin/platform.ts` does (both stacks, real esbuild bundles) into a
 * cache folder keyed by a hash of everything that goes into the templates and the bundles, so a
 * test run synthesizes once and every harness (and every later run with unchanged sources) reuses it.
 * Concurrent callers are safe: each synthesizes into its own temp folder and renames it into place.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const STATEFUL_STACK = 'LinkedDataPlatform-Stateful';
export const STATELESS_STACK = 'LinkedDataPlatform-Stateless';

/** Sources whose change changes the synthesized app. */
const INPUTS = ['functions', 'lib', 'statemachines', 'bin/platform.ts', 'package-lock.json', 'cdk.json', 'test/support/aws-harness/synth.ts'];

function filesUnder(path: string): string[] {
  const full = join(REPO_ROOT, path);
  if (!existsSync(full)) return [];
  if (statSync(full).isFile()) return [full];
  return readdirSync(full, { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.') && e.name !== 'node_modules')
    .flatMap((e) => filesUnder(join(path, e.name)))
    .sort();
}

export function sourceHash(): string {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(filesUnder)) {
    hash.update(relative(REPO_ROOT, file));
    hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

/** The cloud assembly folder (templates and asset folders) of the current sources; synthesizes it if missing. */
export async function synthesizedApp(): Promise<string> {
  const root = join(tmpdir(), 'ldp-aws-harness');
  const dir = join(root, sourceHash());
  if (existsSync(join(dir, 'manifest.json'))) return dir;
  mkdirSync(root, { recursive: true });
  // One synth per source hash at a time: test files starting together wait for the first (bounded).
  const lock = `${dir}.lock`;
  let locked = false;
  for (let i = 0; i < 600 && !locked; i++) {
    try {
      mkdirSync(lock);
      locked = true;
    } catch {
      if (existsSync(join(dir, 'manifest.json'))) return dir;
      // A lock older than ten minutes belongs to a run that died: take it over.
      if ((statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0) < Date.now() - 600_000) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  if (!locked) throw new Error(`harness: another process has been synthesizing ${dir} for ten minutes`);
  try {
    if (existsSync(join(dir, 'manifest.json'))) return dir;
    return await synthesize(root, dir);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

async function synthesize(root: string, dir: string): Promise<string> {
  const staging = `${dir}.tmp-${process.pid}-${Date.now()}`;
  // Bundling must use the local esbuild: any attempt to bundle in Docker fails at once.
  process.env.CDK_DOCKER = '/bin/false';
  const [{ App }, { StatefulStack }, { StatelessStack }] = await Promise.all([
    import('aws-cdk-lib'),
    import('../../../lib/stateful-stack.js'),
    import('../../../lib/stateless-stack.js'),
  ]);
  const { context } = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8'));
  const app = new App({ outdir: staging, context: { ...context, 'aws:cdk:enable-asset-metadata': true } });
  // As bin/platform.ts, environment-agnostic (no CDK_DEFAULT_ACCOUNT/REGION in tests).
  const stateful = new StatefulStack(app, STATEFUL_STACK);
  new StatelessStack(app, STATELESS_STACK, {
    table: stateful.table,
    dataBucket: stateful.dataBucket,
    uploadsBucket: stateful.uploadsBucket,
    artifactsBucket: stateful.artifactsBucket,
    mailFrom: app.node.tryGetContext('mailFrom'),
  });
  app.synth();
  // Older synths (other sources) go once nobody can still be using them (an hour old).
  for (const old of readdirSync(root)) {
    const path = join(root, old);
    if (path !== staging && (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < Date.now() - 3_600_000) rmSync(path, { recursive: true, force: true });
  }
  try {
    renameSync(staging, dir);
  } catch (e) {
    // Another worker got there first: use its copy.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(dir, 'manifest.json'))) throw e;
  }
  return dir;
}
