import type { AccessService } from '../datasets/access-service.js';
import type { DatasetService } from '../datasets/dataset-service.js';
import type { DatasetRecord } from '../datasets/datasets.js';
import type { Caller } from '../shared/caller.js';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.js';
import { assertAbsoluteIri } from '../shared/names.js';
import type { Platform } from '../shared/platform.js';
import { graphBlobKey, type GraphCatalog } from './graph-catalog.js';
import type { GraphEntry, GraphManifest } from './graphs.js';
import { MAX_GRAPHS_PER_IMPORT } from './import-service.js';

export interface GraphImportRequest {
  dataset: { ownerName: string; datasetName: string };
  graphs: { from: string; to?: string; overwrite?: boolean }[];
}

export interface GraphImportView {
  dataset: { ownerName: string; datasetName: string };
  graphs: { id: string; from: string; to: string; numberOfStatements: number }[];
}

/**
 * Graphs that move between datasets: a dataset copied to an account (`POST …/copy`) and graphs
 * imported from another dataset (`PATCH …/imports`). Graph blobs are immutable, but every blob
 * lives under its dataset's prefix, which the dataset's collection, trash and deletion treat as its
 * own: sharing a blob across datasets would let one dataset's collect delete what another still
 * lists. So the graphs' gzip bytes are copied (as stored, no re-parsing) under the new dataset.
 */
export class DatasetCopier {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
    private readonly datasets: DatasetService,
    private readonly catalog: GraphCatalog,
  ) {}

  /** Copies the graphs' blobs under `datasetId`; `written` collects the new keys (to remove on failure). */
  private async copyBlobs(datasetId: string, graphs: GraphEntry[], written: string[]): Promise<Map<string, string>> {
    const keys = new Map<string, string>();
    for (const g of graphs) {
      if (keys.has(g.blobKey)) continue;
      const key = graphBlobKey(datasetId, this.platform.ids.newId());
      written.push(key);
      const store = this.platform.blobs.data;
      // Within the store where it can (S3 CopyObject: the bytes never pass through the function).
      const copied = store.copy ? await store.copy(g.blobKey, key) : await store.put(key, await this.catalog.gzipped(g.blobKey), { contentType: 'application/gzip' });
      if (!copied) throw new Error(`graph blob ${g.blobKey} is missing`);
      keys.set(g.blobKey, key);
    }
    return keys;
  }

  /** A new dataset in `toAccount` (caller may create datasets there) with the source's metadata and graphs. */
  async copy(caller: Caller | null, account: string, datasetName: string, toAccount: string, name: string | undefined, apiUrl: string) {
    const { dataset: source } = await this.access.readableDataset(caller, account, datasetName);
    const manifest = await this.catalog.manifest(source);
    const created = await this.datasets.create(
      caller,
      toAccount,
      {
        name: name ?? source.name,
        displayName: source.displayName,
        description: source.description,
        accessLevel: source.accessLevel,
        license: source.license,
        prefixes: source.prefixes,
      },
      apiUrl,
    );
    const written: string[] = [];
    try {
      if (manifest.graphs.length === 0) return created;
      const keys = await this.copyBlobs(created.dataset.id, manifest.graphs, written);
      const now = this.platform.clock.now().toISOString();
      const graphs = manifest.graphs.map((g) => ({ ...g, id: this.platform.ids.newId(), blobKey: keys.get(g.blobKey)!, importedAt: now }));
      const { dataset } = await this.catalog.swap(created.dataset.id, async () => ({ graphs }));
      return { dataset, owner: created.owner };
    } catch (e) {
      // Nothing half copied stays behind: the new dataset goes with its blobs.
      await this.platform.store.deleteDataset(created.dataset).catch(() => {});
      for (const key of written) await this.platform.blobs.data.delete(key).catch(() => {});
      throw e;
    }
  }

  /** The graphs of the dataset that came from other datasets, grouped by source dataset. */
  async imports(caller: Caller | null, account: string, datasetName: string): Promise<GraphImportView[]> {
    const { dataset } = await this.access.readableDataset(caller, account, datasetName);
    return this.view(await this.catalog.manifest(dataset));
  }

  private async view(manifest: GraphManifest): Promise<GraphImportView[]> {
    const bySource = new Map<string, GraphImportView>();
    for (const g of manifest.graphs) {
      const from = g.importedFrom;
      if (!from) continue;
      let entry = bySource.get(from.datasetId);
      if (!entry) {
        // The source's current names (it may have been renamed), or the recorded ones when it is gone.
        const source = await this.platform.store.getDatasetById(from.datasetId);
        const owner = source ? await this.platform.store.getAccount(source.ownerUid) : null;
        entry = { dataset: { ownerName: owner?.accountName ?? from.ownerName, datasetName: source?.name ?? from.datasetName }, graphs: [] };
        bySource.set(from.datasetId, entry);
      }
      entry.graphs.push({ id: g.id, from: from.graphName, to: g.graphName, numberOfStatements: g.numberOfStatements });
    }
    return [...bySource.values()];
  }

  /**
   * Adds graphs of other datasets the caller may read to this one (which it may write): `to`
   * (default: the same name) must be free unless `overwrite`. One swap: all land, or none.
   */
  async addImports(caller: Caller | null, account: string, datasetName: string, requests: GraphImportRequest[]): Promise<GraphImportView[]> {
    const { dataset } = await this.access.writableDataset(caller, account, datasetName, 'import graphs');
    const planned: { entry: GraphEntry; overwrite: boolean }[] = [];
    const targets = new Set<string>();
    for (const [i, request] of requests.entries()) {
      const { dataset: source, owner } = await this.access.readableDataset(caller, request.dataset.ownerName, request.dataset.datasetName);
      const sourceGraphs = (await this.catalog.manifest(source)).graphs;
      for (const [j, g] of request.graphs.entries()) {
        const found = sourceGraphs.find((s) => s.graphName === g.from);
        if (!found) throw new NotFoundError(`[${i}].graphs[${j}].from: ${owner.accountName}/${source.name} has no graph <${g.from}>.`);
        const to = g.to ?? g.from;
        assertAbsoluteIri(to, `[${i}].graphs[${j}].to`);
        if (targets.has(to)) throw new ValidationError(`[${i}].graphs[${j}].to: <${to}> is the target of two graphs in this request.`);
        targets.add(to);
        const importedFrom = { datasetId: source.id, ownerName: owner.accountName, datasetName: source.name, graphName: found.graphName };
        planned.push({ entry: { ...found, graphName: to, importedFrom }, overwrite: g.overwrite === true });
      }
    }
    if (planned.length > MAX_GRAPHS_PER_IMPORT) throw new ValidationError(`At most ${MAX_GRAPHS_PER_IMPORT} graphs can be imported at once.`);
    const written: string[] = [];
    try {
      const keys = await this.copyBlobs(dataset.id, planned.map((p) => p.entry), written);
      const importedAt = this.platform.clock.now().toISOString();
      const result = await this.catalog.swap(dataset.id, async (current) => this.apply(current, planned, keys, importedAt, dataset));
      await this.catalog.collect(dataset.id, result.previous);
      return this.view(result.manifest);
    } catch (e) {
      for (const key of written) await this.platform.blobs.data.delete(key).catch(() => {});
      throw e;
    }
  }

  private async apply(current: GraphManifest, planned: { entry: GraphEntry; overwrite: boolean }[], keys: Map<string, string>, importedAt: string, dataset: DatasetRecord) {
    const graphs = [...current.graphs];
    for (const { entry, overwrite } of planned) {
      const fresh: GraphEntry = { ...entry, id: this.platform.ids.newId(), blobKey: keys.get(entry.blobKey)!, importedAt };
      const existing = graphs.findIndex((g) => g.graphName === entry.graphName);
      if (existing < 0) graphs.push(fresh);
      else if (overwrite) graphs[existing] = fresh;
      else throw new ConflictError(`${dataset.name} already has a graph <${entry.graphName}>; set "overwrite": true to replace it, or import it under another name ("to").`);
    }
    return { graphs };
  }
}
