/**
 * Graphs of a dataset. Graph contents are immutable blobs (canonical N-Triples, gzip); a dataset
 * version is a manifest blob listing its graphs, and the dataset record points to the current
 * manifest. Changing the graphs writes a new manifest and swaps the pointer with one conditional
 * write, so readers see the old graphs or the new ones, never a mix.
 */
export interface GraphEntry {
  id: string;
  graphName: string;
  numberOfStatements: number;
  importedAt: string;
  /** Blob key of the graph's N-Triples (gzip) in the data bucket. */
  blobKey: string;
  /** Set when the graph came from another dataset (`PATCH …/imports`): which one, and its graph's name there. */
  importedFrom?: { datasetId: string; ownerName: string; datasetName: string; graphName: string };
}

export interface GraphManifest {
  graphs: GraphEntry[];
}

export const EMPTY_MANIFEST: GraphManifest = { graphs: [] };

export const graphView = (g: GraphEntry): Record<string, unknown> => ({
  id: g.id,
  graphName: g.graphName,
  numberOfStatements: g.numberOfStatements,
  importedAt: g.importedAt,
  uploadedAt: g.importedAt,
});

export const manifestTotals = (m: GraphManifest) => ({
  graphCount: m.graphs.length,
  statements: m.graphs.reduce((n, g) => n + g.numberOfStatements, 0),
});

/** A free name for a graph whose name is taken: `<name>-1`, `<name>-2`, ... (rename mode). */
export function freeGraphName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let i = 1; i < 100_000; i++) {
    const candidate = `${name}-${i}`;
    if (!taken.has(candidate)) return candidate;
  }
  throw new Error('no free graph name');
}
