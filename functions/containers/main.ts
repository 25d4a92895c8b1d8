/**
 * The one entry module of our Node containers on ECS Fargate (bundled to `index.mjs` in the
 * container bundle, see lib/constructs/container-platform.ts). The task definition starts it as
 * `node /app/index.mjs <role> [args]`; the role picks the module that runs:
 *
 * - `upload-host`: the tus upload host (functions/containers/upload-host.ts)
 * - `worker`: one long job run to the end (functions/containers/worker.ts)
 * - `sparql-loader`: fills a SPARQL host's Virtuoso from a snapshot (functions/containers/sparql-loader.ts)
 * - `version`: prints the platform version and exits (proves the bundle loads)
 *
 * A role's `run` resolves when its work is done (exit 0) or rejects (exit 1, the message on stderr,
 * so ECS records the task as failed). Role modules are imported only when chosen.
 */
import { PLATFORM_VERSION } from '../version.js';
import type { ContainerRole } from './container-table.js';

/** What every role module exports. */
export interface RoleModule {
  run(args: string[]): Promise<void>;
}

const ROLES: Record<ContainerRole, () => Promise<RoleModule>> = {
  'upload-host': () => import('./upload-host.js'),
  worker: () => import('./worker.js'),
  'sparql-loader': () => import('./sparql-loader.js'),
};

const USAGE = `usage: node index.mjs <role> [args]\nroles: ${Object.keys(ROLES).join(', ')}, version`;

async function main(argv: string[]): Promise<number> {
  const [role, ...args] = argv;
  if (role === 'version') {
    process.stdout.write(`${JSON.stringify({ version: PLATFORM_VERSION, node: process.version })}\n`);
    return 0;
  }
  if (role === '--help' || role === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const load = role !== undefined && Object.hasOwn(ROLES, role) ? ROLES[role as ContainerRole] : undefined;
  if (!load) {
    process.stderr.write(`unknown role ${JSON.stringify(role ?? '')}\n${USAGE}\n`);
    return 2;
  }
  try {
    await (await load()).run(args);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${JSON.stringify({ level: 'ERROR', role, message })}\n`);
    return 1;
  }
}

// Exit explicitly: a role is done when `run` settles, whatever sockets (SDK keep-alive) remain.
// stdout/stderr are pipes or files in a container, written synchronously on Linux, so nothing is lost.
process.exit(await main(process.argv.slice(2)));
