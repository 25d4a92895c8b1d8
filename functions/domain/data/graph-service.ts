import type { AccessService } from '../datasets/access-service.js';
import type { Caller } from '../shared/caller.js';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.js';
import type { GraphCatalog } from './graph-catalog.js';
import type { GraphEntry } from './graphs.js';
import { assertAbsoluteIri } from '../shared/names.js';
import { INVALID_CURSOR, type Page, type PageRequest } from '../shared/paging.js';

/** Graphs of a dataset: list, read, rename, delete. Reads need read access, changes write access. */
export class GraphService {
  constructor(
    private readonly access: AccessService,
    private readonly catalog: GraphCatalog,
  ) {}

  async list(caller: Caller | null, account: string, datasetName: string, page: PageRequest): Promise<Page<GraphEntry>> {
    const { dataset } = await this.access.readableDataset(caller, account, datasetName);
    const { graphs } = await this.catalog.manifest(dataset);
    // The cursor is the position in the dataset's (stable) graph order.
    const start = page.after && /^[0-9a-z]{1,8}$/.test(page.after) ? Number.parseInt(page.after, 36) : page.after ? -1 : 0;
    if (start < 0 || start > graphs.length) throw new ValidationError(INVALID_CURSOR);
    const items = graphs.slice(start, start + page.limit);
    const nextStart = start + items.length;
    return { items, next: nextStart < graphs.length ? nextStart.toString(36) : undefined };
  }

  async get(caller: Caller | null, account: string, datasetName: string, graphId: string): Promise<GraphEntry> {
    const { dataset } = await this.access.readableDataset(caller, account, datasetName);
    const graph = (await this.catalog.manifest(dataset)).graphs.find((g) => g.id === graphId);
    if (!graph) throw new NotFoundError(`Graph "${graphId}" does not exist in ${account}/${datasetName}.`);
    return graph;
  }

  async rename(caller: Caller | null, account: string, datasetName: string, graphId: string, graphName: string): Promise<GraphEntry> {
    assertAbsoluteIri(graphName, 'graphName');
    const { dataset } = await this.access.writableDataset(caller, account, datasetName, 'rename graphs');
    let renamed: GraphEntry | undefined;
    await this.catalog.swap(dataset.id, async (current) => {
      const graph = current.graphs.find((g) => g.id === graphId);
      if (!graph) throw new NotFoundError(`Graph "${graphId}" does not exist in ${account}/${datasetName}.`);
      if (current.graphs.some((g) => g.graphName === graphName && g.id !== graphId)) {
        throw new ConflictError(`A graph named <${graphName}> already exists in ${account}/${datasetName}.`);
      }
      renamed = { ...graph, graphName };
      return { graphs: current.graphs.map((g) => (g.id === graphId ? renamed! : g)) };
    });
    return renamed!;
  }

  async delete(caller: Caller | null, account: string, datasetName: string, graphId: string | null): Promise<void> {
    const { dataset } = await this.access.writableDataset(caller, account, datasetName, 'delete graphs');
    const result = await this.catalog.swap(dataset.id, async (current) => {
      if (graphId === null) return { graphs: [] };
      if (!current.graphs.some((g) => g.id === graphId)) {
        throw new NotFoundError(`Graph "${graphId}" does not exist in ${account}/${datasetName}.`);
      }
      return { graphs: current.graphs.filter((g) => g.id !== graphId) };
    });
    await this.catalog.collect(dataset.id, result.previous);
  }
}
