/**
 * Container role `upload-host` (see main.ts): the platform's HTTP API on a Fargate service, with
 * the AWS composition and tus over the uploads bucket (UPLOAD_HOST=true on its task definition
 * only). The API routes only the tus routes (`…/jobs/{jobId}/add[/{uploadId}]`,
 * `…/assets/add[/{uploadId}]`, `host: 'uploads'` in the route table) here over a VPC link, because
 * a Lambda event cannot carry the client's 5 MiB chunks; every other route answers as it would on
 * Lambda (same handlers, same composition), so nothing depends on which routes reach it.
 *
 * Listens on env PORT (the task definition sets 8080) on every interface (awsvpc: the task's own
 * address); logs through the Powertools logger, one line per request as on Lambda. On SIGTERM
 * (ECS stopping the task: a deployment, scale-in) it stops accepting connections and lets the
 * requests in flight finish, then resolves; a PATCH cut off by the stop timeout is resumed by the
 * client from the offset S3 holds, on any other task.
 */
import type { AddressInfo } from 'node:net';
import { awsLogger, awsServices } from '../composition/aws.js';
import { ENV } from '../env-names.js';
import { HANDLER_MODULES } from '../handlers/index.js';
import { createNodeServer } from '../http/node-server.js';
import { FAMILIES, type Family } from '../http/route-table.js';
import { NODE_CONTAINER_PORT } from './container-table.js';

/** Within ECS's default stop timeout (30 s): after this, connections still open are cut. */
const DRAIN_MS = 25_000;

export async function run(_args: string[]): Promise<void> {
  if (process.env[ENV.uploadHost] !== 'true') throw new Error(`${ENV.uploadHost} is not "true": this task definition is not the upload host's`);
  const portText = process.env[ENV.port] ?? String(NODE_CONTAINER_PORT);
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`${ENV.port} must be a port number, got "${portText}"`);
  const services = await awsServices();
  const handlers = Object.fromEntries((Object.keys(FAMILIES) as Family[]).map((f) => [f, HANDLER_MODULES[f].mount(services)])) as Parameters<typeof createNodeServer>[0];
  const server = createNodeServer(handlers, { logger: awsLogger });
  // Large PATCH bodies arrive slowly: no whole-request timeout (API Gateway bounds a request to 30 s).
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  awsLogger.info('upload host listening', { port: (server.address() as AddressInfo).port });

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      awsLogger.info('upload host stopping: draining requests in flight', { signal });
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      const cut = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
      cut.unref();
      server.close(() => {
        clearTimeout(cut);
        resolve();
      });
      // Keep-alive connections with no request in flight would hold close() open: end them now.
      server.closeIdleConnections();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  awsLogger.info('upload host stopped');
}
