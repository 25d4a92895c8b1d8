import type { BlobStore } from '../../ports/blob-store.js';
import type { FlowExecutor } from '../../ports/flow-executor.js';
import type { FlowScheduler } from '../../ports/flow-scheduler.js';
import type { FlowStore } from '../../ports/flow-store.js';
import type { Mailer } from '../../ports/mailer.js';
import type { UploadEvents } from '../../ports/upload-events.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { Ids } from '../../ports/ids.js';
import type { PasswordHasher } from '../../ports/password-hasher.js';
import type { ResumableUploads } from '../../ports/resumable-uploads.js';
import type { SparqlEngine } from '../../ports/sparql-engine.js';
import type { ServiceHosts } from '../../ports/service-hosts.js';
import type { SearchIndexes } from '../../ports/search-index.js';
import type { TaskQueue } from '../../ports/task-queue.js';
import type { TokenCodec } from '../../ports/token-codec.js';
import type { UrlFetcher } from '../../ports/url-fetcher.js';

/** Instance settings the domain needs; read from the environment by the composition root. */
export interface PlatformSettings {
  /** Fixed public API URL; when absent the URL the request came in on is used. */
  publicApiUrl?: string;
  consoleUrl?: string;
  /** Sender address of the platform's email. */
  mailFrom: string;
  /** Where requests on a user's behalf may go (URL imports, flow tasks). */
  outbound: { allowPrivateNetworks: boolean };
  version: string;
  enabledServices: string[];
  featureToggles: Record<string, boolean>;
  /**
   * Embedded SPARQL engine limits; snapshots beyond `maxStatements` go to the external engine
   * (Amazon Neptune or Virtuoso over the SPARQL 1.1 Protocol) when one is configured.
   */
  /**
   * Import limits where the worker has a hard time limit (AWS Lambda: 15 minutes). Absent (the
   * embedded platform): downloads of up to 20 GiB and 30 minutes, and no watchdog (a restart
   * recovers interrupted jobs instead).
   */
  imports?: {
    maxDownloadBytes: number;
    downloadTimeoutMs: number;
    /** A job not yet ended that has not reported for this long has lost its worker: it ends in error. */
    stalledAfterMs: number;
    /**
     * Graph blobs a swap superseded are deleted only this long after (a reader that took the old
     * manifest just before, such as an export or a cold SPARQL load in another function, may
     * still be reading them). Absent: deleted at once, as the single embedded process does.
     */
    supersededGraphGraceMs?: number;
  };
  sparql: {
    queryTimeoutMs: number;
    maxStatements: number;
    replicas: number;
    external?: { queryEndpoint: string; updateEndpoint?: string; graphStoreEndpoint?: string };
  };
}

/** The ports every use case may use, wired once by `functions/composition/{aws,local}.ts`. */
/** The three buckets: graphs and assets, temporary uploads, flow artifacts and large exports. */
export interface Blobs {
  data: BlobStore;
  uploads: BlobStore;
  artifacts: BlobStore;
}

export interface Platform {
  store: MetadataStore;
  /** Flows, their versions, runs and task instances (same table, own port). */
  flows: FlowStore;
  /** Runs compiled flows: Step Functions on AWS, aws-local-stepfunctions embedded. */
  flowExecutor: FlowExecutor;
  /** Fires flow schedules: EventBridge Scheduler on AWS, croner embedded. */
  scheduler: FlowScheduler;
  blobs: Blobs;
  /** Outgoing email (failure emails, Send email tasks). */
  mailer: Mailer;
  /** Asset and import events (flow hooks listen to them). */
  events: UploadEvents;
  clock: Clock;
  /** Structured logs (JSON lines); never give it headers, bodies or secrets. */
  logger: Logger;
  ids: Ids;
  passwords: PasswordHasher;
  tokens: TokenCodec;
  tasks: TaskQueue;
  fetcher: UrlFetcher;
  uploads: ResumableUploads;
  engine: SparqlEngine;
  /** For snapshots too large for the embedded engine. */
  externalEngine?: SparqlEngine;
  /** Compute that keeps a service's snapshot loaded (issue 19): Fargate tasks on AWS, virtuoso-t processes embedded when configured. */
  serviceHosts?: ServiceHosts;
  /** Text search indexes (issue 15): the embedded engine with its indexes as blobs, or Amazon OpenSearch. */
  search: SearchIndexes;
  settings: PlatformSettings;
}
