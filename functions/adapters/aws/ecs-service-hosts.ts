import type { HostLaunch, ServiceHost, ServiceHosts } from '../../ports/service-hosts.js';
import type { ServiceType } from '../../ports/records/sparql.js';
import type { SparqlStore } from '../../ports/sparql-engine.js';
import type { Logger } from '../../ports/logger.js';
import { ENV } from '../../env-names.js';
import { SparqlProtocolEngine } from '../common/sparql-protocol/engine.js';
import { EcsError, type EcsApi } from './ecs-api.js';

/**
 * Where the SPARQL hosts run and what this function may do with them (the stack sets it as one
 * JSON env var, SPARQL_HOSTS; see lib/constructs/sparql-hosts.ts):
 * - `query` (the functions that query services: in the VPC, with the security group the hosts'
 *   Virtuoso admits): attach only;
 * - `describe` adds the cluster (the watchdog, asking whether services' host tasks still run);
 * - `stop` adds the cluster (the loader, stopping the host it replaced);
 * - `manage` adds the task definition, its loader container and the network (RunTask).
 */
export interface SparqlHostsSettings {
  use: 'query' | 'describe' | 'stop' | 'manage';
  cluster?: string;
  taskDefinition?: string;
  /** The loader container's name (RunTask overrides its environment). */
  container?: string;
  subnets?: string[];
  securityGroups?: string[];
}

/** Reads SPARQL_HOSTS (see SparqlHostsSettings), failing with what is wrong. */
export function sparqlHostsSettings(raw: string): SparqlHostsSettings {
  let value: Partial<SparqlHostsSettings>;
  try {
    value = JSON.parse(raw) as Partial<SparqlHostsSettings>;
  } catch {
    throw new Error(`${ENV.sparqlHosts} must be JSON`);
  }
  const text = (v: unknown) => typeof v === 'string' && v.length > 0;
  const list = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every(text);
  if (value.use !== 'query' && value.use !== 'describe' && value.use !== 'stop' && value.use !== 'manage') {
    throw new Error(`${ENV.sparqlHosts}.use must be query, describe, stop or manage`);
  }
  if (value.use !== 'query' && !text(value.cluster)) throw new Error(`${ENV.sparqlHosts}.cluster is required for ${value.use}`);
  if (value.use === 'manage' && (!text(value.taskDefinition) || !text(value.container) || !list(value.subnets) || !list(value.securityGroups))) {
    throw new Error(`${ENV.sparqlHosts} must hold taskDefinition, container, subnets and securityGroups for manage`);
  }
  return value as SparqlHostsSettings;
}

interface DescribeTasksOutput {
  tasks?: { taskArn?: string; lastStatus?: string; stoppedReason?: string; containers?: { name?: string; exitCode?: number; reason?: string }[] }[];
  failures?: { arn?: string; reason?: string }[];
}

interface RunTaskOutput {
  tasks?: { taskArn?: string }[];
  failures?: { arn?: string; reason?: string; detail?: string }[];
}

/**
 * SPARQL services on ECS Fargate (issue 19): one task per running service (and a second while a
 * sync loads), the sparql host task definition (Virtuoso plus the `sparql-loader` container,
 * functions/containers/sparql-loader.ts). `launch` is a RunTask whose overrides name the
 * service and snapshot; the loader loads it and records the host on the service itself. `stop` is
 * a StopTask. `attach` is a SPARQL-protocol store over the host's Virtuoso (reached inside the
 * VPC at the task's private IP): nothing is loaded per request.
 */
export class EcsServiceHosts implements ServiceHosts {
  constructor(
    private readonly ecs: EcsApi,
    private readonly settings: SparqlHostsSettings,
    private readonly logger?: Logger,
  ) {}

  serves(_type: ServiceType): boolean {
    // jena's reasoning is materialised into the snapshot by the loader (the adapter's rules).
    return true;
  }

  async launch(target: HostLaunch): Promise<string> {
    const { cluster, taskDefinition, container, subnets, securityGroups } = this.settings;
    if (this.settings.use !== 'manage' || !cluster || !taskDefinition || !container || !subnets || !securityGroups) {
      throw new Error('this function may not start SPARQL hosts');
    }
    let out: RunTaskOutput;
    try {
      out = await this.ecs.send<RunTaskOutput>('RunTask', {
        cluster,
        taskDefinition,
        launchType: 'FARGATE',
        count: 1,
        // Letters, digits, - and _, at most 36: shows in the console and ListTasks.
        startedBy: `service-${target.serviceId}`.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 36),
        networkConfiguration: { awsvpcConfiguration: { subnets, securityGroups, assignPublicIp: 'ENABLED' } },
        overrides: {
          containerOverrides: [
            {
              name: container,
              environment: [
                { name: ENV.sparqlHostDatasetId, value: target.datasetId },
                { name: ENV.sparqlHostServiceId, value: target.serviceId },
                { name: ENV.sparqlHostManifestKey, value: target.manifestKey ?? '' },
              ],
            },
          ],
        },
      });
    } catch (e) {
      throw new Error(`the SPARQL host could not be started (${(e as Error).message})`);
    }
    const arn = out.tasks?.[0]?.taskArn;
    if (!arn) {
      const reasons = (out.failures ?? []).map((f) => [f.reason, f.detail].filter(Boolean).join(': ')).filter(Boolean);
      throw new Error(`the SPARQL host could not be started (${reasons.join('; ') || 'ECS started no task'})`);
    }
    return arn;
  }

  /** A host task that ECS reports STOPPED, or no longer knows, has stopped: why (DescribeTasks). */
  async stopped(ref: string): Promise<string | undefined> {
    if (this.settings.use === 'query' || !this.settings.cluster) throw new Error('this function may not ask about SPARQL hosts');
    const out = await this.ecs.send<DescribeTasksOutput>('DescribeTasks', { cluster: this.settings.cluster, tasks: [ref] });
    const task = out.tasks?.find((t) => t.taskArn === ref);
    if (!task) {
      const failure = out.failures?.find((f) => f.arn === ref);
      if (failure?.reason === 'MISSING') return 'ECS no longer knows its host task';
      throw new Error(`ECS DescribeTasks did not describe ${ref}${failure?.reason ? ` (${failure.reason})` : ''}`);
    }
    if (task.lastStatus !== 'STOPPED') return undefined;
    // The container that ended it: a non-zero exit first (the loader's failure, Virtuoso's crash).
    const ended = task.containers?.find((c) => c.exitCode !== undefined && c.exitCode !== 0) ?? task.containers?.find((c) => c.exitCode !== undefined || c.reason);
    const exit = ended ? [ended.name, ended.exitCode !== undefined ? `exit code ${ended.exitCode}` : ended.reason].filter(Boolean).join(' ') : undefined;
    return ['its host task stopped', exit, task.stoppedReason].filter(Boolean).join(': ');
  }

  async stop(ref: string): Promise<void> {
    if (this.settings.use === 'query' || this.settings.use === 'describe' || !this.settings.cluster) throw new Error('this function may not stop SPARQL hosts');
    try {
      await this.ecs.send('StopTask', { cluster: this.settings.cluster, task: ref, reason: 'The SPARQL service stopped, restarted, synced or was deleted' });
    } catch (e) {
      // Already gone: what stop wanted.
      if (e instanceof EcsError && /not found|MISSING/i.test(e.message)) {
        this.logger?.info('the SPARQL host was already gone', { ref });
        return;
      }
      throw e;
    }
  }

  async attach(host: ServiceHost): Promise<SparqlStore> {
    return new SparqlProtocolEngine({ queryEndpoint: host.endpoint, logger: this.logger }).attach(host);
  }
}
