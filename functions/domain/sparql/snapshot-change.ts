/**
 * A sync that costs what changed (issue 18). Graph blobs are immutable and content-addressed, so
 * the change from the snapshot a store holds to the dataset's newer one follows from the two
 * manifests: graphs whose blob is the same stay, graphs that went are dropped, new graphs are
 * added whole, and a graph whose blob changed (a merge, an update) is compared line by line; the
 * common start of the two blobs (a merge writes the old lines first) costs a string compare per
 * line, the rest a set. The store applies the change in place (SparqlStore.apply).
 *
 * Loaded whole instead (null): a change with blank nodes (their labels are scoped to one load of
 * the whole snapshot, so a separate load would split a node that two graphs share), a change of
 * more than `maxLines` statements (then a reload costs about the same), reasoning (the inferred
 * graph would need recomputing), and stores that cannot apply changes (external engines).
 */
import type { Logger } from '../../ports/logger.js';
import type { SnapshotChange, SparqlStore } from '../../ports/sparql-engine.js';
import { ntIri, ntTextToNq } from '../../rdf/nt.js';
import type { GraphCatalog } from '../data/graph-catalog.js';
import { type GraphManifest, manifestTotals } from '../data/graphs.js';

/** Statements a change may hold at most: a tenth of the snapshot, at least this many, at most the cap. */
const MIN_CHANGE_LINES = 10_000;
const MAX_CHANGE_LINES = 500_000;

/** Blank node labels start with `_:` (a literal holding the text only sends the change down the safe path). */
const hasBlank = (line: string): boolean => line.includes('_:');

class TooLarge extends Error {}

class Collector {
  readonly added: string[] = [];
  readonly removed: string[] = [];
  private count = 0;
  constructor(private readonly maxLines: number) {}

  take(into: string[], lines: string[], graph: string): void {
    if (!lines.length) return;
    this.count += lines.length;
    if (this.count > this.maxLines) throw new TooLarge();
    into.push(ntTextToNq(`${lines.join('\n')}\n`, graph));
  }
}

/** All lines of a blob into `out` (in pieces), refusing blank nodes and more than the budget. */
async function wholeGraph(catalog: GraphCatalog, blobKey: string, graph: string, into: 'added' | 'removed', c: Collector): Promise<void> {
  let piece: string[] = [];
  for await (const line of await catalog.lines(blobKey)) {
    if (!line) continue;
    if (hasBlank(line)) throw new TooLarge();
    piece.push(line);
    if (piece.length >= 10_000) {
      c.take(c[into], piece, graph);
      piece = [];
    }
  }
  c.take(c[into], piece, graph);
}

/**
 * The text `newKey` holds after the whole of `oldKey`'s, when `oldKey`'s text is where `newKey`'s
 * starts (a merge appends), else null. Compares decompressed bytes, chunk by chunk: no lines, no
 * strings, until the appended rest.
 */
async function appendedText(catalog: GraphCatalog, oldKey: string, newKey: string, maxBytes: number): Promise<string | null> {
  const olds = (await catalog.text(oldKey))[Symbol.asyncIterator]();
  const news = (await catalog.text(newKey))[Symbol.asyncIterator]();
  try {
    let a: Buffer = Buffer.alloc(0);
    let b: Buffer = Buffer.alloc(0);
    for (;;) {
      if (!a.length) {
        const next = await olds.next();
        if (next.done) break;
        a = next.value as Buffer;
        continue;
      }
      if (!b.length) {
        const next = await news.next();
        if (next.done) return null;
        b = next.value as Buffer;
        continue;
      }
      const n = Math.min(a.length, b.length);
      if (a.compare(b, 0, n, 0, n) !== 0) return null;
      a = a.subarray(n);
      b = b.subarray(n);
    }
    const rest: Buffer[] = [b];
    let size = b.length;
    for (let next = await news.next(); !next.done; next = await news.next()) {
      rest.push(next.value as Buffer);
      size += (next.value as Buffer).length;
      if (size > maxBytes) throw new TooLarge();
    }
    return Buffer.concat(rest).toString('utf8');
  } finally {
    await olds.return?.();
    await news.return?.();
  }
}

/** The lines of `newKey` that `oldKey` lacks (added) and the other way round (removed). */
async function changedGraph(catalog: GraphCatalog, oldKey: string, newKey: string, graph: string, c: Collector, maxLines: number): Promise<void> {
  // The common case (a merge: the old lines, then the new ones) without splitting lines.
  const appended = await appendedText(catalog, oldKey, newKey, maxLines * 1024);
  if (appended !== null) {
    const lines = appended.split('\n').filter(Boolean);
    if (lines.some(hasBlank)) throw new TooLarge();
    c.take(c.added, lines, graph);
    return;
  }
  const olds = (await catalog.lines(oldKey))[Symbol.asyncIterator]();
  const news = (await catalog.lines(newKey))[Symbol.asyncIterator]();
  try {
    let o = await olds.next();
    let n = await news.next();
    while (!o.done && !n.done && o.value === n.value) {
      o = await olds.next();
      n = await news.next();
    }
    const rest = new Set<string>();
    for (; !o.done; o = await olds.next()) {
      if (!o.value) continue;
      rest.add(o.value);
      if (rest.size > maxLines) throw new TooLarge();
    }
    let added: string[] = [];
    for (; !n.done; n = await news.next()) {
      if (!n.value || rest.delete(n.value)) continue;
      added.push(n.value);
      if (added.length >= 10_000) {
        if (added.some(hasBlank)) throw new TooLarge();
        c.take(c.added, added, graph);
        added = [];
      }
    }
    const removed = [...rest];
    if (added.some(hasBlank) || removed.some(hasBlank)) throw new TooLarge();
    c.take(c.added, added, graph);
    c.take(c.removed, removed, graph);
  } finally {
    await olds.return?.();
    await news.return?.();
  }
}

/** The change from manifest `from` to `to`, or null when the store should load `to` whole (see above). */
export async function snapshotChange(catalog: GraphCatalog, from: GraphManifest, to: GraphManifest): Promise<SnapshotChange | null> {
  const maxLines = Math.min(MAX_CHANGE_LINES, Math.max(MIN_CHANGE_LINES, Math.floor(manifestTotals(to).statements / 10)));
  const c = new Collector(maxLines);
  const before = new Map(from.graphs.map((g) => [g.graphName, g]));
  const after = new Set(to.graphs.map((g) => g.graphName));
  const dropGraphs = from.graphs.filter((g) => !after.has(g.graphName)).map((g) => g.graphName);
  try {
    for (const g of to.graphs) {
      const old = before.get(g.graphName);
      if (old?.blobKey === g.blobKey) continue;
      if (old) await changedGraph(catalog, old.blobKey, g.blobKey, ntIri(g.graphName), c, maxLines);
      else await wholeGraph(catalog, g.blobKey, ntIri(g.graphName), 'added', c);
    }
  } catch (e) {
    if (e instanceof TooLarge) return null;
    throw e;
  }
  return { dropGraphs, removed: c.removed.join(''), added: c.added.join('') };
}

/**
 * The service's loaded store (`loaded`, if it holds the service's current snapshot) moved to
 * manifest `toKey` in place, or null when the caller should load `toKey` whole (see above; also
 * when `toKey` is over `maxStatements`, which another engine serves, or when applying failed: the
 * store then stays on the old snapshot and is closed by the caller as before).
 */
export async function changedInPlace(
  catalog: GraphCatalog,
  loaded: { manifestKey: string | null; store: Promise<SparqlStore> } | undefined,
  service: { snapshot: { manifestKey: string | null }; reasoner: string },
  toKey: string | null,
  maxStatements: number,
  logger: Logger,
): Promise<SparqlStore | null> {
  if (!loaded || loaded.manifestKey !== service.snapshot.manifestKey || loaded.manifestKey === toKey || service.reasoner !== 'None') return null;
  const store = await loaded.store.catch(() => null);
  if (!store?.apply) return null;
  try {
    const [from, to] = await Promise.all([catalog.manifestAt(loaded.manifestKey), catalog.manifestAt(toKey)]);
    const statements = manifestTotals(to).statements;
    if (statements > maxStatements) return null;
    const change = await snapshotChange(catalog, from, to);
    if (!change) return null;
    await store.apply(change, { statements, chunks: () => catalog.nquads(to) });
    logger.info('sync applied in place', { graphsDropped: change.dropGraphs.length, removedBytes: change.removed.length, addedBytes: change.added.length });
    return store;
  } catch (e) {
    logger.warn('applying a sync in place failed; loading the snapshot whole', { error: (e as Error).message });
    return null;
  }
}

/**
 * The store for a service's current snapshot in a process whose store (`loaded`) holds an older
 * one or none: the loaded store moved on in place when it can, else `open()` (a whole load).
 */
export async function changedOrOpened(
  catalog: GraphCatalog,
  loaded: { manifestKey: string | null; store: Promise<SparqlStore> } | undefined,
  service: { snapshot: { manifestKey: string | null }; reasoner: string },
  maxStatements: number,
  logger: Logger,
  open: () => Promise<SparqlStore>,
): Promise<SparqlStore> {
  const from = { snapshot: { manifestKey: loaded?.manifestKey ?? null }, reasoner: service.reasoner };
  return (await changedInPlace(catalog, loaded, from, service.snapshot.manifestKey, maxStatements, logger)) ?? open();
}
