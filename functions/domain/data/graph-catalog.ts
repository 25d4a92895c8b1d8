import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ntIri, ntTextToNq } from '../../rdf/nt.js';
import type { DatasetRecord } from '../datasets/datasets.js';
import type { JobRecord } from './jobs.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { EMPTY_MANIFEST, type GraphManifest, manifestTotals } from './graphs.js';
import type { Platform } from '../shared/platform.js';

const MAX_SWAP_ATTEMPTS = 8;
/** Statuses of an import job whose worker may still be reading graph blobs. */
const RUNNING_JOB_STATUSES: readonly JobRecord['status'][] = ['pending', 'downloading', 'indexing'];
const MANIFEST_CACHE_SIZE = 256;
/** zlib's default 16 KiB output chunks cost a callback each; larger ones read a graph far faster. */
const GUNZIP_CHUNK = 256 * 1024;

export const graphBlobKey = (datasetId: string, blobId: string) => `datasets/${datasetId}/graphs/${blobId}.nt.gz`;
const manifestKey = (datasetId: string, id: string) => `datasets/${datasetId}/manifests/${id}.json`;
const trashPrefix = (datasetId: string) => `datasets/${datasetId}/trash/`;
/** A list of superseded graph blobs; the time (epoch ms, zero-padded) sorts and dates it. */
const trashKey = (datasetId: string, at: number, id: string) => `${trashPrefix(datasetId)}${String(at).padStart(15, '0')}-${id}.json`;

/**
 * Reads and swaps a dataset's graph manifest. Manifests and graph blobs are immutable, so they are
 * cached by key; the swap is a conditional write on the dataset's revision, retried on conflict
 * with the change applied again to the newer manifest (so concurrent imports both land).
 */
export class GraphCatalog {
  private readonly manifests = new Map<string, GraphManifest>();

  constructor(private readonly platform: Platform) {}

  manifest(dataset: DatasetRecord): Promise<GraphManifest> {
    return this.manifestAt(dataset.graphsManifest ?? null);
  }

  /** The manifest stored under `key` (null: the empty dataset). */
  async manifestAt(key: string | null): Promise<GraphManifest> {
    if (!key) return EMPTY_MANIFEST;
    const cached = this.manifests.get(key);
    if (cached) return cached;
    const stream = await this.platform.blobs.data.get(key);
    if (!stream) throw new Error(`graph manifest ${key} is missing`);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk));
    const manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as GraphManifest;
    if (this.manifests.size >= MANIFEST_CACHE_SIZE) this.manifests.clear();
    this.manifests.set(key, manifest);
    return manifest;
  }

  /**
   * Applies `change` to the current manifest and swaps it in. `change` may run more than once (on
   * a concurrent change it is applied again to the newer manifest), so it must not have effects
   * other than the blobs it writes; `onSuperseded` lets it clean those up.
   */
  async swap(
    datasetId: string,
    change: (current: GraphManifest, dataset: DatasetRecord) => Promise<GraphManifest>,
  ): Promise<{ dataset: DatasetRecord; manifest: GraphManifest; previous: GraphManifest }> {
    for (let attempt = 0; attempt < MAX_SWAP_ATTEMPTS; attempt++) {
      const dataset = await this.platform.store.getDatasetById(datasetId);
      if (!dataset) throw new NotFoundError('The dataset was deleted meanwhile.');
      const previous = await this.manifest(dataset);
      const manifest = await change(previous, dataset);
      const key = manifestKey(datasetId, this.platform.ids.newId());
      await this.platform.blobs.data.put(key, JSON.stringify(manifest), { contentType: 'application/json' });
      this.manifests.set(key, manifest);
      const now = this.platform.clock.now().toISOString();
      const next: DatasetRecord = {
        ...dataset,
        ...manifestTotals(manifest),
        graphsManifest: key,
        lastGraphsUpdateTime: now,
        updatedAt: now,
        revision: dataset.revision + 1,
      };
      try {
        await this.platform.store.updateDataset(next);
        return { dataset: next, manifest, previous };
      } catch (e) {
        await this.platform.blobs.data.delete(key);
        if (!(e instanceof ConflictError)) throw e;
      }
    }
    throw new ConflictError('The dataset is changing too often right now; retry the request.');
  }

  /** The graph's canonical N-Triples lines. */
  async lines(blobKey: string): Promise<AsyncIterable<string>> {
    const stream = await this.platform.blobs.data.get(blobKey);
    if (!stream) throw new Error(`graph blob ${blobKey} is missing`);
    return createInterface({ input: stream.pipe(createGunzip({ chunkSize: GUNZIP_CHUNK })) as Readable, crlfDelay: Infinity });
  }

  /** The graph's canonical N-Triples text, in large chunks (for fast pass-through and batching). */
  async text(blobKey: string): Promise<Readable> {
    const stream = await this.platform.blobs.data.get(blobKey);
    if (!stream) throw new Error(`graph blob ${blobKey} is missing`);
    return stream.pipe(createGunzip({ chunkSize: GUNZIP_CHUNK }));
  }

  /** The graph's gzip bytes as stored. */
  async gzipped(blobKey: string): Promise<Readable> {
    const stream = await this.platform.blobs.data.get(blobKey);
    if (!stream) throw new Error(`graph blob ${blobKey} is missing`);
    return stream;
  }

  /**
   * Deletes the graph blobs of `candidates` that nothing references any more: not the dataset's
   * current manifest (read by key, consistently), nor the snapshot a service of the dataset serves
   * or is loading. Best effort. With a grace period (AWS, where other functions may be reading a
   * manifest taken just before the swap) they are listed in the dataset's trash instead, and
   * deleted by a later collect once the grace has passed and they are still unreferenced.
   */
  async collect(datasetId: string, candidates: GraphManifest): Promise<void> {
    const grace = this.platform.settings.imports?.supersededGraphGraceMs;
    const kept = await this.referencedBlobs(datasetId);
    const doomed = candidates.graphs.map((g) => g.blobKey).filter((key) => !kept.has(key));
    if (grace === undefined) {
      for (const key of doomed) await this.platform.blobs.data.delete(key).catch(() => {});
      return;
    }
    if (doomed.length > 0) {
      const at = this.platform.clock.now().getTime();
      await this.platform.blobs.data.put(trashKey(datasetId, at, this.platform.ids.newId()), JSON.stringify({ blobKeys: doomed }), { contentType: 'application/json' });
    }
    await this.emptyTrash(datasetId).catch((e: unknown) => this.platform.logger.warn('emptying the graph trash failed', { datasetId, error: (e as Error)?.message }));
  }

  /**
   * Deletes the blobs of trash lists older than the grace period that are still unreferenced.
   * Long work first: an import job of the dataset that was created before a list was written and
   * is still running (for hours, on a worker task) may still read blobs of the manifest it
   * started from (a merge in its swap), so that list waits until the job has ended.
   */
  async emptyTrash(datasetId: string): Promise<void> {
    const grace = this.platform.settings.imports?.supersededGraphGraceMs;
    if (grace === undefined) return;
    let cutoff = this.platform.clock.now().getTime() - grace;
    const lists: { key: string; at: number }[] = [];
    for await (const blob of this.platform.blobs.data.list(trashPrefix(datasetId))) {
      const at = Number(/\/(\d+)-[^/]*\.json$/.exec(blob.key)?.[1]);
      if (Number.isFinite(at) && at <= cutoff) lists.push({ key: blob.key, at });
      if (lists.length >= 100) break;
    }
    if (lists.length === 0) return;
    for (const job of await this.platform.store.listJobs(datasetId)) {
      if (RUNNING_JOB_STATUSES.includes(job.status)) cutoff = Math.min(cutoff, Date.parse(job.createdAt) - 1);
    }
    const due = lists.filter((l) => l.at <= cutoff).map((l) => l.key);
    if (due.length === 0) return;
    const kept = await this.referencedBlobs(datasetId);
    for (const listKey of due) {
      const stream = await this.platform.blobs.data.get(listKey);
      if (stream) {
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(Buffer.from(chunk));
        const { blobKeys } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { blobKeys: string[] };
        for (const key of blobKeys) if (!kept.has(key)) await this.platform.blobs.data.delete(key).catch(() => {});
      }
      await this.platform.blobs.data.delete(listKey);
    }
  }

  /** Every graph blob the dataset's current manifest or one of its services' snapshots lists. */
  private async referencedBlobs(datasetId: string): Promise<Set<string>> {
    const kept = new Set<string>();
    const dataset = await this.platform.store.getDatasetById(datasetId);
    const keys = new Set<string | null>([dataset?.graphsManifest ?? null]);
    for (const service of await this.platform.store.listServices(datasetId)) {
      keys.add(service.snapshot.manifestKey);
      if (service.pendingSnapshot) keys.add(service.pendingSnapshot.manifestKey);
    }
    for (const key of keys) for (const g of (await this.manifestAt(key)).graphs) kept.add(g.blobKey);
    return kept;
  }

  /** The N-Quads of a manifest's graphs, in chunks of about `chunkChars`, for loading an engine. */
  async *nquads(manifest: GraphManifest, options: { asDefaultGraph?: string } = {}): AsyncGenerator<string> {
    for (const g of manifest.graphs) {
      // Lines of the graph named `asDefaultGraph` stay triples: they load into the default graph.
      const graph = g.graphName === options.asDefaultGraph ? null : ntIri(g.graphName);
      const decoder = new TextDecoder('utf-8');
      let rest = '';
      for await (const chunk of await this.text(g.blobKey)) {
        const text = rest + decoder.decode(chunk as Buffer, { stream: true });
        const cut = text.lastIndexOf('\n') + 1;
        rest = text.slice(cut);
        if (cut > 0) yield ntTextToNq(text.slice(0, cut), graph);
      }
      rest += decoder.decode();
      if (rest) yield ntTextToNq(`${rest}\n`, graph);
    }
  }

}
