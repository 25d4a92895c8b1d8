/**
 * SearchIndexes on the embedded engine (MiniSearch, see embedded-index.ts). Each index is also
 * saved as one gzip JSON blob (`<key>.json.gz` in the data store), so a restart of the embedded
 * platform, or a cold search function on AWS, loads it instead of indexing again; loaded indexes
 * are kept per process (the last few). The same code runs embedded (filesystem blobs) and on AWS
 * (S3: the import worker builds and saves, the search function loads once per warm function).
 */
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { BlobStore } from '../../../ports/blob-store.js';
import type { Logger } from '../../../ports/logger.js';
import {
  SearchIndexMissingError,
  type FieldValue,
  type QueryNode,
  type SearchDocument,
  type SearchIndexes,
  type SearchMappings,
  type SearchRequest,
  type SearchResult,
  type TermsBuckets,
  type TermsEnumRequest,
} from '../../../ports/search-index.js';
import { dateValue } from '../../../domain/search/documents.js';
import { EmbeddedIndex, type SerializedIndex } from './embedded-index.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export interface MiniSearchIndexesOptions {
  logger: Logger;
  /** Indexes kept loaded per process (default 4). */
  maxLoaded?: number;
  /**
   * Documents all loaded indexes hold together (default 1 million, about 10 million statements and
   * 10 GB less than that in memory): the least recently used go first; the newest always stays.
   */
  maxLoadedDocuments?: number;
  /** Documents one index may hold (default 2 million); a bigger snapshot fails its build with a clear error. */
  maxDocuments?: number;
}

const blobKey = (key: string) => `${key}.json.gz`;

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(parts);
}

export class MiniSearchIndexes implements SearchIndexes {
  private readonly loaded = new Map<string, Promise<EmbeddedIndex>>();

  constructor(
    private readonly blobs: BlobStore,
    private readonly options: MiniSearchIndexesOptions,
  ) {}

  private readonly sizes = new Map<string, number>();

  private remember(key: string, index: Promise<EmbeddedIndex>): void {
    this.loaded.delete(key);
    this.loaded.set(key, index);
    this.evict();
    index.then(
      (loaded) => {
        if (this.loaded.get(key) !== index) return;
        this.sizes.set(key, loaded.size);
        this.evict();
      },
      () => this.loaded.get(key) === index && this.forget(key),
    );
  }

  private forget(key: string): void {
    this.loaded.delete(key);
    this.sizes.delete(key);
  }

  /** Least recently used first, until within both bounds; the newest index always stays. */
  private evict(): void {
    const total = () => [...this.sizes.values()].reduce((a, b) => a + b, 0);
    for (let guard = 0; guard < 1000 && this.loaded.size > 1; guard++) {
      if (this.loaded.size <= (this.options.maxLoaded ?? 4) && total() <= (this.options.maxLoadedDocuments ?? 1_000_000)) return;
      this.forget(this.loaded.keys().next().value as string);
    }
  }

  private index(key: string): Promise<EmbeddedIndex> {
    const cached = this.loaded.get(key);
    if (cached) {
      // Most recently used last.
      this.loaded.delete(key);
      this.loaded.set(key, cached);
      return cached;
    }
    const loading = (async () => {
      const stream = await this.blobs.get(blobKey(key));
      if (!stream) throw new SearchIndexMissingError(key);
      const data = await decode(await gunzipAsync(await readAll(stream)));
      // A blob of another format (an older version of this engine): as if missing, a restart indexes again.
      if (!data) throw new SearchIndexMissingError(key);
      return EmbeddedIndex.load(data);
    })();
    this.remember(key, loading);
    return loading;
  }

  async build(key: string, source: { documents: AsyncIterable<SearchDocument>; mappings: SearchMappings }): Promise<{ documents: number }> {
    const documents: SearchDocument[] = [];
    const max = this.options.maxDocuments ?? 2_000_000;
    for await (const d of source.documents) {
      documents.push(d);
      if (documents.length > max) throw new Error(`the dataset has more than ${max} subjects, more than the embedded search engine indexes; configure Amazon OpenSearch for it.`);
    }
    const index = await EmbeddedIndex.build(documents, source.mappings);
    await this.blobs.put(blobKey(key), await gzipAsync(await encode(index.serialize())), { contentType: 'application/gzip' });
    // Searches load the index from its blob, as a restart or a cold function does: the builder (on
    // AWS the import worker, which never searches) keeps nothing, and the loaded form is compact.
    this.forget(key);
    return { documents: index.size };
  }

  async drop(key: string): Promise<void> {
    this.forget(key);
    await this.blobs.delete(blobKey(key));
  }

  async mappings(key: string): Promise<SearchMappings> {
    return (await this.index(key)).types;
  }

  async count(key: string, request: { query: QueryNode }): Promise<number> {
    return (await this.index(key)).evaluate(request.query).scores.size;
  }

  async termsEnum(key: string, request: TermsEnumRequest): Promise<string[]> {
    const index = await this.index(key);
    const { field } = index.field(request.field);
    const prefix = request.caseInsensitive ? request.string.toLowerCase() : request.string;
    const found = new Set<string>();
    for (const values of index.column(field)) {
      for (const v of values ?? []) {
        const s = String(v);
        if ((request.caseInsensitive ? s.toLowerCase() : s).startsWith(prefix)) found.add(s);
      }
    }
    return [...found].sort().slice(0, request.size);
  }

  async search(key: string, request: SearchRequest): Promise<SearchResult> {
    const index = await this.index(key);
    const ev = index.evaluate(request.query);
    let matched = [...ev.scores];
    if (request.minScore !== undefined) matched = matched.filter(([, s]) => s >= request.minScore!);
    const byScore = request.sort.length === 0 || request.sort.some((s) => s.field === '_score');
    const sortKeys = request.sort.map((s) => ({ ...s, field: s.field === '_score' || s.field === '_id' ? s.field : index.field(s.field).field }));
    const valueOf = (i: number, score: number, field: string, order: 'asc' | 'desc'): FieldValue | null => {
      if (field === '_score') return score;
      if (field === '_id') return index.ids[i]!;
      const values = index.column(field)[i] ?? [];
      if (values.length === 0) return null;
      const type = index.typeOf(field);
      const keyed = values.map((v) => (type === 'date' ? dateValue(v) : v));
      // Elasticsearch's default sort mode: the smallest value ascending, the largest descending.
      return keyed.reduce((a, b) => ((order === 'asc' ? b < a : b > a) ? b : a));
    };
    const withKeys = matched.map(([i, score]) => ({ i, score, keys: sortKeys.map((s) => valueOf(i, score, s.field, s.order)) }));
    if (sortKeys.length === 0) withKeys.sort((a, b) => b.score - a.score || a.i - b.i);
    else {
      withKeys.sort((a, b) => {
        for (let k = 0; k < sortKeys.length; k++) {
          const x = a.keys[k];
          const y = b.keys[k];
          if (x === y) continue;
          // Documents without the field sort last, either way.
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          const c = x < y ? -1 : 1;
          return sortKeys[k]!.order === 'asc' ? c : -c;
        }
        return a.i - b.i;
      });
    }
    const page = withKeys.slice(request.from, request.from + request.size);
    const highlight = request.highlight;
    return {
      total: withKeys.length,
      maxScore: byScore ? (withKeys.length > 0 ? Math.max(...withKeys.map((w) => w.score)) : null) : null,
      hits: page.map((w) => ({
        _id: index.ids[w.i]!,
        _score: byScore ? w.score : null,
        _source: index.docs[w.i]!,
        ...(highlight ? { highlight: index.highlight(w.i, highlight.fields, ev, highlight.preTag, highlight.postTag, highlight.numberOfFragments) } : {}),
        ...(sortKeys.length > 0 ? { sort: w.keys } : {}),
      })),
      ...(request.aggregations.length > 0 ? { aggregations: aggregate(index, withKeys.map((w) => w.i), request.aggregations) } : {}),
    };
  }
}

/** Lets the event loop turn between chunks of a long piece of work (the embedded platform keeps answering). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const CHUNK = 5000;

/**
 * The blob's text: JSON lines, written and read in chunks. Line 1 `{v: 2, types, textFields,
 * documents}`, line 2 MiniSearch's index, then one `[id, fields]` line per document.
 */
async function encode(index: SerializedIndex): Promise<Buffer> {
  const parts = [JSON.stringify({ v: 2, types: index.types, textFields: index.textFields, documents: index.ids.length }), JSON.stringify(index.mini)];
  await turn();
  for (let i = 0; i < index.ids.length; i += CHUNK) {
    const lines: string[] = [];
    for (let j = i; j < Math.min(index.ids.length, i + CHUNK); j++) lines.push(JSON.stringify([index.ids[j], index.docs[j]]));
    parts.push(lines.join('\n'));
    await turn();
  }
  return Buffer.from(parts.join('\n'));
}

async function decode(buffer: Buffer): Promise<SerializedIndex | null> {
  const text = buffer.toString('utf8');
  let pos = 0;
  const line = (): string => {
    const nl = text.indexOf('\n', pos);
    const out = text.slice(pos, nl < 0 ? text.length : nl);
    pos = nl < 0 ? text.length : nl + 1;
    return out;
  };
  const header = JSON.parse(line()) as { v: number; types: SearchMappings; textFields: string[]; documents: number };
  if (header.v !== 2) return null;
  const mini = JSON.parse(line()) as unknown;
  const ids: string[] = [];
  const docs: Record<string, FieldValue[]>[] = [];
  for (let i = 0; i < header.documents; i++) {
    const [id, fields] = JSON.parse(line()) as [string, Record<string, FieldValue[]>];
    ids.push(id);
    docs.push(fields);
    if (i % CHUNK === CHUNK - 1) await turn();
  }
  return { types: header.types, textFields: header.textFields, ids, docs, mini };
}

function aggregate(index: EmbeddedIndex, docs: number[], aggregations: SearchRequest['aggregations']): Record<string, TermsBuckets> {
  const out: Record<string, TermsBuckets> = {};
  for (const agg of aggregations) {
    const { field } = index.field(agg.field);
    const counts = new Map<FieldValue, number>();
    const column = index.column(field);
    for (const i of docs) for (const v of new Set(column[i] ?? [])) counts.set(v, (counts.get(v) ?? 0) + 1);
    const sorted = [...counts].sort((a, b) => b[1] - a[1] || (String(a[0]) < String(b[0]) ? -1 : 1));
    const kept = sorted.slice(0, agg.size);
    out[agg.name] = {
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: sorted.slice(agg.size).reduce((n, [, c]) => n + c, 0),
      buckets: kept.map(([key, doc_count]) => ({ key, doc_count })),
    };
  }
  return out;
}
