/** A pipeline ("query job" in TriplyDB): saved CONSTRUCT/DESCRIBE queries whose results become one graph. */
export type PipelineStatus = 'pending' | 'running' | 'finished' | 'error' | 'cancelled';

export interface PipelineQueryRef {
  /** `owner/query`, as the client sends it. */
  name: string;
  version?: number;
  priority?: number;
  variables?: Record<string, string>;
}

export interface PipelineConfig {
  version: 0.2;
  queries: PipelineQueryRef[];
  /** `owner/dataset` the queries run against. */
  sourceDataset: string;
  /** `owner/dataset` the results are written to. */
  targetDataset: string;
  /** The graph that receives the results (replaced as a whole); a name under the target dataset by default. */
  targetGraphName?: string;
}

export interface PipelineJob {
  id: string;
  status: PipelineStatus;
  progress: number;
  query: { owner: string; name: string; version?: number };
  statements: number;
  error?: { message: string };
}

export interface PipelineRecord {
  id: string;
  ownerUid: string;
  ownerName: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  status: PipelineStatus;
  progress: number;
  config: PipelineConfig & { targetGraphName: string };
  jobs: PipelineJob[];
  error?: { message: string };
  /** Statements written to the target graph (when finished). */
  statements?: number;
}

/** Where a pipeline is kept: under `datasets/` (every data bucket grant is held to those keys; no dataset id starts with `_`). */
export const pipelineKey = (ownerUid: string, id: string) => `datasets/_pipelines/${ownerUid}/${id}.json`;

/** At most this many queries per pipeline, and this many statements written (the bound of one function invocation). */
export const MAX_PIPELINE_QUERIES = 20;
export const MAX_PIPELINE_STATEMENTS = 200_000;

/** What the API shows of a pipeline (the shape the official client polls). */
export function pipelineView(p: PipelineRecord) {
  return {
    id: p.id,
    owner: p.ownerName,
    status: p.status,
    progress: p.progress,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    sourceDataset: p.config.sourceDataset,
    targetDataset: p.config.targetDataset,
    targetGraphName: p.config.targetGraphName,
    ...(p.statements !== undefined ? { numberOfStatements: p.statements } : {}),
    ...(p.error ? { error: p.error } : {}),
    jobs: p.jobs,
  };
}
