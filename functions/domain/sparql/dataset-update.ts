/**
 * SPARQL Update on a dataset's own endpoint, used by ServiceLifecycle.updateDataset after its
 * access and size checks.
 */
import type { AccountRecord } from '../../ports/records/accounts.js';
import { defaultGraphOf, type DatasetRecord } from '../datasets/datasets.js';
import { graphBlobKey, type GraphCatalog } from '../data/graph-catalog.js';
import { GraphBlobWriter } from '../data/graph-writer.js';
import type { GraphEntry } from '../data/graphs.js';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.js';
import type { Platform } from '../shared/platform.js';
import { withLoadsCarriedOut } from './sparql-load.js';

/** Updates of one dataset waiting in this process, so that they run one after the other. */
const queues = new Map<string, Promise<unknown>>();
/** Attempts of one update when other processes change the dataset meanwhile (AWS: other functions). */
const MAX_ATTEMPTS = 8;

/** The dataset changed between reading its graphs and writing the update's result. */
class DatasetChangedError extends ConflictError {}

/**
 * SPARQL Update on the dataset's own endpoint: applied to a private copy of the current graphs,
 * whose result becomes a new dataset version exactly like an import (graph ids kept by name).
 * Updates of one dataset queue: in this process they run one after the other, and one that finds
 * the dataset changed by another process when it writes runs again on the new graphs (bounded),
 * so concurrent updates all apply, in some order, as SPARQL's sequential semantics need.
 */
export async function applyDatasetUpdate(
  platform: Platform,
  catalog: GraphCatalog,
  target: { dataset: DatasetRecord; owner: AccountRecord },
  request: { update: string; baseUrl: string; baseIri?: string },
): Promise<{ graphCount: number; statements: number }> {
  const id = target.dataset.id;
  // Once, before the queue: a LOAD's download must not hold the queue or a store meanwhile.
  const update = { ...request, update: await withLoadsCarriedOut(platform, request.update, request.baseIri) };
  const previous = queues.get(id) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(async () => {
    for (let attempt = 1; ; attempt++) {
      // The dataset as it is now: the updates queued before this one changed it, and the graph
      // blobs of the version read when the request came may already be collected.
      const dataset = await platform.store.getDatasetById(id);
      if (!dataset) throw new NotFoundError('The dataset was deleted while the update waited.');
      try {
        return await applyOnce(platform, catalog, { dataset, owner: target.owner }, update);
      } catch (e) {
        if (!(e instanceof DatasetChangedError) || attempt >= MAX_ATTEMPTS) throw e;
        await platform.clock.sleep(20 * attempt + Math.floor(Math.random() * 50));
      }
    }
  });
  queues.set(id, run);
  try {
    return await run;
  } finally {
    if (queues.get(id) === run) queues.delete(id);
  }
}

async function applyOnce(
  platform: Platform,
  catalog: GraphCatalog,
  { dataset, owner }: { dataset: DatasetRecord; owner: AccountRecord },
  { update, baseUrl, baseIri }: { update: string; baseUrl: string; baseIri?: string },
): Promise<{ graphCount: number; statements: number }> {
  const baseKey = dataset.graphsManifest ?? null;
  const base = await catalog.manifestAt(baseKey);
  const defaultGraph = defaultGraphOf(dataset, owner, baseUrl);
  // The dataset's default graph is the update's default graph (what INSERT DATA without GRAPH
  // writes and DELETE WHERE without GRAPH reads); every other graph keeps its name.
  const store = await platform.engine.open(
    { statements: dataset.statements, chunks: () => catalog.nquads(base, { asDefaultGraph: defaultGraph }) },
    { reasoner: 'None', replicas: 1 },
  );
  let graphs: Map<string, string>;
  try {
    if (!store.update) throw new ValidationError('This engine does not take updates.');
    graphs = await store.update(update, baseIri);
  } finally {
    await store.close();
  }
  const written: string[] = [];
  const entries: GraphEntry[] = [];
  const now = platform.clock.now().toISOString();
  try {
    const byName = new Map<string, string[]>();
    for (const [name, text] of graphs) {
      const graphName = name === '' ? defaultGraph : name;
      byName.set(graphName, [...(byName.get(graphName) ?? []), text]);
    }
    for (const [graphName, texts] of byName) {
      const writer = new GraphBlobWriter(platform.blobs.data, graphBlobKey(dataset.id, platform.ids.newId()));
      written.push(writer.blobKey);
      for (const text of texts) {
        for (const line of text.split('\n')) {
          const draining = line ? writer.add(line) : undefined;
          if (draining) await draining;
        }
      }
      await writer.end();
      if (writer.statements === 0) continue;
      const old = base.graphs.find((g) => g.graphName === graphName);
      entries.push({
        id: old?.id ?? platform.ids.newId(),
        graphName,
        numberOfStatements: writer.statements,
        importedAt: old?.importedAt ?? now,
        blobKey: writer.blobKey,
      });
    }
    const result = await catalog.swap(dataset.id, async (_current, latest) => {
      if ((latest.graphsManifest ?? null) !== baseKey) throw new DatasetChangedError('The dataset changed again and again while the update ran; nothing was written. Send the update again.');
      return { graphs: entries };
    });
    await catalog.collect(dataset.id, result.previous);
    const kept = new Set(entries.map((e) => e.blobKey));
    for (const key of written) if (!kept.has(key)) await platform.blobs.data.delete(key).catch(() => {});
    return { graphCount: result.dataset.graphCount, statements: result.dataset.statements };
  } catch (e) {
    for (const key of written) await platform.blobs.data.delete(key).catch(() => {});
    throw e;
  }
}
