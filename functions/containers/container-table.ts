import type { FamilySpec } from '../http/route-table.js';

/**
 * The container table: what runs on ECS Fargate instead of Lambda (issue 19). Pure data, like
 * `functions/http/route-table.ts`: `lib/constructs/container-platform.ts` turns each entry into a
 * Fargate task definition whose task role is granted exactly the entry's `grants` (the same bind
 * helpers as the Lambda functions). Every Node container runs our one bundle
 * (`functions/containers/main.ts`) with the entry's `role` as its first argument.
 *
 * Fargate sizes come in fixed pairs: cpu 256 → 512-2048 MB, 512 → 1-4 GB, 1024 → 2-8 GB,
 * 2048 → 4-16 GB, 4096 → 8-30 GB (1 GB steps above 512 MB).
 */

/** First argument of `functions/containers/main.ts`: which role module the container runs. */
export type ContainerRole = 'upload-host' | 'worker' | 'sparql-loader';

export interface ContainerSpec {
  /** The role module the Node container runs (`functions/containers/<role>.ts`). */
  role: ContainerRole;
  /** What the task role may touch; the stack grants exactly this, nothing more (see FamilySpec). */
  grants: FamilySpec['grants'];
  /** Fargate task CPU units (1024 = one vCPU). */
  cpu: number;
  /** Fargate task memory (MiB), shared by the task's containers. */
  memoryMb: number;
  /**
   * The Node container's port (env PORT) when the role serves HTTP; unset for roles that serve
   * nothing.
   */
  port?: number;
  /** Tasks an ECS service keeps running (roles run as a service, e.g. the upload host). */
  desiredCount?: number;
}

/** Virtuoso's settings in the SPARQL host task (the openlink image reads them from `VIRT_*` env). */
export interface VirtuosoSpec {
  /** Memory (MiB) of the `virtuoso` container; the rest of the task's memory is the loader's. */
  memoryMb: number;
  /** `[Parameters] NumberOfBuffers`: 8 KiB pages cached (about 2/3 of the container's memory). */
  numberOfBuffers: number;
  /** `[Parameters] MaxDirtyBuffers`: about 3/4 of NumberOfBuffers. */
  maxDirtyBuffers: number;
  /** Virtuoso's SPARQL/HTTP port. */
  httpPort: number;
}

export interface SparqlHostSpec extends ContainerSpec {
  virtuoso: VirtuosoSpec;
}

/** The port Node containers that serve listen on (env PORT). */
export const NODE_CONTAINER_PORT = 8080;

/** Initial entries: their owners (upload host, long work, SPARQL hosts) refine grants and sizes. */
export const CONTAINERS = {
  /**
   * The tus upload host behind the API's `…/add` routes (a Fargate service, two tasks: one per AZ,
   * and any task resumes any upload). Grants: what the tus routes touch. The table (tokens, jobs,
   * assets), the uploads bucket (tus' objects and multipart uploads under `tus/`, their parts
   * listed: tusUploads; the finished file read and removed), the data bucket (a finished asset is
   * stored there). No upload events: only starting a job puts them, on the imports function.
   */
  uploadHost: {
    role: 'upload-host',
    grants: { table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', tusUploads: true },
    cpu: 512,
    memoryMb: 1024,
    port: NODE_CONTAINER_PORT,
    desiredCount: 2,
  },
  /**
   * One import job or URL load, or one long flow task, run to the end (RunTask; no 15-minute
   * limit; functions/containers/worker.ts). Imports: the table, the data bucket (graphs), the
   * uploads bucket (the job's files), upload events. Long flow tasks (Load from URL, SPARQL query
   * and update, SHACL validation): also the artifacts bucket (the staged task, its artifacts) and
   * the task token's release and heartbeat. 1 vCPU, 4 GiB: parsing is one thread; memory holds
   * the parser's batches and, for a SPARQL task, the engine's snapshot.
   */
  worker: {
    role: 'worker',
    grants: { table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', artifactsBucket: 'RW', uploadEvents: true, flowExecutions: ['release', 'heartbeat'] },
    cpu: 1024,
    memoryMb: 4096,
  },
  /**
   * One running SPARQL service (lib/constructs/sparql-hosts.ts): Virtuoso plus the loader that
   * fills it from the snapshot. Grants: the table (the service record: the host, the swap), the
   * data bucket (the snapshot's graphs; RW: a swap collects the old snapshot's graphs as the
   * embedded platform does), serviceHosts 'stop' (the host a sync replaced). 2 vCPU, 8 GiB:
   * 6 GiB Virtuoso (NumberOfBuffers ≈ 2/3 of it in 8 KiB pages, MaxDirtyBuffers 3/4 of those, as
   * Virtuoso's guide sizes them), the rest the loader (it holds blank-node statements until the
   * end of a load). An operator scales hosts by changing cpu, memoryMb and virtuoso here and
   * deploying (new hosts get the new size; running ones keep theirs until restarted).
   */
  sparqlHost: {
    role: 'sparql-loader',
    grants: { table: 'RW', dataBucket: 'RW', serviceHosts: 'stop' },
    cpu: 2048,
    memoryMb: 8192,
    virtuoso: { memoryMb: 6144, numberOfBuffers: 510000, maxDirtyBuffers: 375000, httpPort: 8890 },
  },
} as const satisfies { uploadHost: ContainerSpec; worker: ContainerSpec; sparqlHost: SparqlHostSpec };

export type ContainerName = keyof typeof CONTAINERS;
