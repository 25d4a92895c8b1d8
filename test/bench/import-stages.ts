/**
 * The stage shares of an import: one file run through the import's stages in this process, on
 * one thread, each stage timed where it runs (CPU-bound, so wall time per stage is its cost):
 *   parse                 parseRdf (reading the file included) up to canonical terms
 *   canonical N-Triples   the statement lines `s p o .` of each graph, as text
 *   UTF-8 encoding        that text as bytes (what is hashed, compressed and stored)
 *   hashing               the two 32-bit hashes of each line (the same function as LineSet.addBytes)
 *   de-duplication        LineSet.addBytes (hashing and the table) less hashing
 *   gzip                  gzip level 1, as GraphBlobWriter
 *   storage               writing the gzip bytes to a file
 * In the platform, parse to UTF-8 encoding run in the import's parse worker, hashing and
 * de-duplication in its distinct-lines worker, gzip in libuv's thread pool and storage on the main
 * thread, so they overlap; the shares say where the work is.
 */
import { closeSync, createReadStream, openSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, gzipSync } from 'node:zlib';
import type { RdfFormat } from '../../functions/rdf/formats.js';
import { parseRdf } from '../../functions/rdf/parse.js';
import { LineSet } from '../../functions/rdf/parse/line-set.js';

const CHUNK_CHARS = 256 * 1024;

export const STAGES = ['parse', 'canonical N-Triples', 'UTF-8 encoding', 'hashing', 'de-duplication', 'gzip', 'storage'] as const;
export type Stage = (typeof STAGES)[number];

/** LineSet.addBytes' hashing alone (kept in step with functions/rdf/parse/line-set.ts). */
function hashLine(bytes: Uint8Array, view: DataView, start: number, end: number): number {
  let h1 = 0x811c9dc5 ^ (end - start);
  let h2 = 0x9747b28c;
  let i = start;
  for (const last = end - 4; i <= last; i += 4) {
    const w = view.getInt32(i, true);
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h1 ^= h1 >>> 13;
    h2 = Math.imul(h2 ^ w, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  for (; i < end; i++) {
    h1 = Math.imul(h1 ^ bytes[i]!, 0x01000193);
    h2 = Math.imul(h2 ^ bytes[i]!, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  return h1 ^ h2;
}

/** Seconds per stage for one import of `file` (default graph and named graphs alike). */
export async function importStages(file: string, format: RdfFormat): Promise<{ seconds: Record<Stage, number>; statements: number }> {
  const seconds = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  const graphs = new Map<string | null, { pending: string; lines: LineSet }>();
  const encoder = new TextEncoder();
  const out = join(tmpdir(), `import-stages-${process.pid}.gz`);
  const fd = openSync(out, 'w');
  let sink = 0;
  let statements = 0;
  const hand = (graph: { pending: string; lines: LineSet }) => {
    let t = performance.now();
    const bytes = encoder.encode(graph.pending);
    graph.pending = '';
    let now = performance.now();
    seconds['UTF-8 encoding'] += now - t;
    t = now;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let start = 0; start < bytes.length; ) {
      const end = bytes.indexOf(10, start);
      sink ^= hashLine(bytes, view, start, end);
      start = end + 1;
    }
    now = performance.now();
    const hashing = now - t;
    seconds.hashing += hashing;
    t = now;
    for (let start = 0; start < bytes.length; ) {
      const end = bytes.indexOf(10, start);
      graph.lines.addBytes(bytes, view, start, end);
      start = end + 1;
    }
    now = performance.now();
    // addBytes hashes too: what it costs beyond hashing is the set.
    seconds['de-duplication'] += Math.max(0, now - t - hashing);
    t = now;
    const gz = gzipSync(bytes, { level: 1, memLevel: 6, windowBits: 14, strategy: constants.Z_DEFAULT_STRATEGY });
    now = performance.now();
    seconds.gzip += now - t;
    t = now;
    writeSync(fd, gz);
    seconds.storage += performance.now() - t;
  };
  try {
    const batches = parseRdf(createReadStream(file, { highWaterMark: 64 * 1024 }), { format, blankNodePrefix: 'jstagesf0x', baseIRI: 'https://data.example.org/' })[Symbol.asyncIterator]();
    for (;;) {
      let t = performance.now();
      const next = await batches.next();
      seconds.parse += performance.now() - t;
      if (next.done) break;
      t = performance.now();
      let graph: { pending: string; lines: LineSet } | undefined;
      let lastGraph: string | null | undefined;
      const full: { pending: string; lines: LineSet }[] = [];
      for (const q of next.value) {
        if (q.graph !== lastGraph || !graph) {
          graph = graphs.get(q.graph);
          if (!graph) graphs.set(q.graph, (graph = { pending: '', lines: new LineSet() }));
          lastGraph = q.graph;
        }
        graph.pending += `${q.subject} ${q.predicate} ${q.object} .\n`;
        if (graph.pending.length >= CHUNK_CHARS) full.push(graph);
      }
      statements += next.value.length;
      seconds['canonical N-Triples'] += performance.now() - t;
      for (const g of new Set(full)) hand(g);
    }
    for (const g of graphs.values()) if (g.pending) hand(g);
  } finally {
    closeSync(fd);
    unlinkSync(out);
  }
  if (sink === 0.5) console.log(sink); // keeps the hashing from being optimized away
  for (const s of STAGES) seconds[s] /= 1000;
  return { seconds, statements };
}

/** `parse 45%, canonical N-Triples 9%, ...` */
export function formatShares(seconds: Record<Stage, number>): string {
  const total = STAGES.reduce((n, s) => n + seconds[s], 0);
  return STAGES.map((s) => `${s} ${((100 * seconds[s]) / total).toFixed(0)}% (${seconds[s].toFixed(2)} s)`).join(', ');
}
