/**
 * `npm start`: the embedded platform on a laptop. Metadata in dynalite (LevelDB) and blobs on the
 * filesystem, both under DATA_DIR; data survives restarts.
 */
import { resolve } from 'node:path';

// The SDK warns on Node 20 about releases from 2027; our versions are pinned, so the warning is noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { startEmbeddedPlatform } = await import('../functions/composition/local.js');
const { createLogger } = await import('../functions/adapters/common/powertools-logger.js');
// Operational logs are JSON lines (level from POWERTOOLS_LOG_LEVEL); the banner below is for the person at the terminal.
const logger = createLogger();

const port = Number(process.env.PORT ?? 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, got "${process.env.PORT}"`);
  process.exit(1);
}
const dataDir = resolve(process.env.DATA_DIR ?? '.data');

// The console (issue 17) is served at /console: build it when its build is missing or stale.
const { ensureConsoleBuild } = await import('./console-build.js');
await ensureConsoleBuild({ log: (line) => console.log(line) }).catch((e: Error) => {
  logger.error(`Could not build the console (the API still starts): ${e.message}`, { error: e });
});

const platform = await startEmbeddedPlatform({
  dataDir,
  host: process.env.HOST ?? '127.0.0.1',
  port,
  adminAccount: process.env.ADMIN_ACCOUNT ?? 'admin',
  adminPassword: process.env.ADMIN_PASSWORD || undefined,
  logger,
}).catch((e: Error) => {
  logger.error(`Could not start the platform: ${e.message}`, { error: e });
  process.exit(1);
});

console.log(`Linked-data platform API: ${platform.url}`);
console.log(`Console: ${platform.url}/console/`);
console.log(`Data folder: ${dataDir}`);
console.log(`Administrator API token: in ${platform.adminTokenFile} (readable only by you)`);
if (platform.adminPasswordFile) console.log(`Administrator password (generated): in ${platform.adminPasswordFile}`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  logger.info('stopping the platform');
  await platform.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
