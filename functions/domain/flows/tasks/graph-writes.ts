/**
 * How flow tasks write graphs: statements are first staged in new graph blobs of the dataset,
 * then one catalog swap replaces each graph (`overwrite`) or adds to it, like an import. A failure
 * anywhere deletes the staged blobs and leaves the dataset exactly as it was.
 */
import type { DatasetRecord } from '../../datasets/datasets.js';
import { graphBlobKey, type GraphCatalog } from '../../data/graph-catalog.js';
import { GraphBlobWriter } from '../../data/graph-writer.js';
import type { GraphEntry } from '../../data/graphs.js';
import type { Platform } from '../../shared/platform.js';

/** A graph's new statements, in a blob nothing references yet. */
export interface StagedGraph {
  graphName: string;
  blobKey: string;
  statements: number;
}

/** Stages canonical N-Triples lines (without newline) per graph name. */
export class GraphStager {
  private readonly writers = new Map<string, GraphBlobWriter>();

  constructor(
    private readonly platform: Platform,
    private readonly datasetId: string,
    private readonly maxGraphs = 5000,
  ) {}

  get graphCount(): number {
    return this.writers.size;
  }

  /** Adds a line to a graph; a promise only when the caller must wait for the writer to drain. */
  add(graphName: string, line: string): Promise<void> | undefined {
    let writer = this.writers.get(graphName);
    if (!writer) {
      if (this.writers.size >= this.maxGraphs) throw new Error(`at most ${this.maxGraphs} graphs can be written at once`);
      writer = new GraphBlobWriter(this.platform.blobs.data, graphBlobKey(this.datasetId, this.platform.ids.newId()));
      this.writers.set(graphName, writer);
    }
    return writer.add(line);
  }

  /** Makes sure a graph is written even without statements (an empty result replaces a graph). */
  touch(graphName: string): void {
    if (!this.writers.has(graphName)) {
      this.writers.set(graphName, new GraphBlobWriter(this.platform.blobs.data, graphBlobKey(this.datasetId, this.platform.ids.newId())));
    }
  }

  async finish(): Promise<StagedGraph[]> {
    const staged: StagedGraph[] = [];
    for (const [graphName, writer] of this.writers) {
      await writer.end();
      staged.push({ graphName, blobKey: writer.blobKey, statements: writer.statements });
    }
    return staged;
  }

  /** After a failure: stops the writers and deletes what they wrote. */
  async discard(): Promise<void> {
    for (const writer of this.writers.values()) {
      writer.abort();
      await this.platform.blobs.data.delete(writer.blobKey).catch(() => {});
    }
  }
}

/**
 * Swaps staged graphs into the dataset: each replaces its graph (`overwrite`) or is merged with
 * it. A graph left without statements is removed. Returns the graphs' new entries (in `staged`
 * order; an entry with 0 statements means the graph is gone). Staged blobs are consumed: kept
 * when they became a graph, deleted otherwise, also on failure.
 */
export async function swapInGraphs(
  platform: Platform,
  catalog: GraphCatalog,
  dataset: DatasetRecord,
  staged: StagedGraph[],
  overwrite: boolean,
): Promise<GraphEntry[]> {
  const merged: string[] = [];
  let entries: GraphEntry[] = [];
  const cleanUp = async (keep: Set<string>) => {
    for (const key of [...staged.map((s) => s.blobKey), ...merged]) {
      if (!keep.has(key)) await platform.blobs.data.delete(key).catch(() => {});
    }
  };
  try {
    const result = await catalog.swap(dataset.id, async (current) => {
      // The change may run again on a newer manifest: merges of an earlier attempt are redone.
      for (const key of merged.splice(0)) await platform.blobs.data.delete(key).catch(() => {});
      const graphs = [...current.graphs];
      const importedAt = platform.clock.now().toISOString();
      entries = [];
      for (const part of staged) {
        const index = graphs.findIndex((g) => g.graphName === part.graphName);
        const old = index >= 0 ? graphs[index] : undefined;
        let blobKey = part.blobKey;
        let statements = part.statements;
        if (old && !overwrite && old.numberOfStatements > 0) {
          const writer = new GraphBlobWriter(platform.blobs.data, graphBlobKey(dataset.id, platform.ids.newId()));
          merged.push(writer.blobKey);
          for (const key of [old.blobKey, part.blobKey]) {
            for await (const line of await catalog.lines(key)) {
              const draining = line ? writer.add(line) : undefined;
              if (draining) await draining;
            }
          }
          await writer.end();
          blobKey = writer.blobKey;
          statements = writer.statements;
        }
        const entry: GraphEntry = { id: old?.id ?? platform.ids.newId(), graphName: part.graphName, numberOfStatements: statements, importedAt, blobKey };
        entries.push(entry);
        if (index >= 0) graphs.splice(index, 1);
        if (statements > 0) graphs.push(entry);
      }
      return { graphs };
    });
    await catalog.collect(dataset.id, result.previous);
    await cleanUp(new Set(result.manifest.graphs.map((g) => g.blobKey)));
    return entries;
  } catch (e) {
    await cleanUp(new Set());
    throw e;
  }
}
