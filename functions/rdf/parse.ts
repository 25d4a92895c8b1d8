/**
 * Streaming RDF parsing into canonical N-Triples terms ({@link NtQuad}) in batches.
 *
 * - Turtle, TriG, N-Triples, N-Quads: N3's push parser, fed chunk by chunk (memory stays flat:
 *   at most one ~64 KiB slice of text plus the quads it produced are held at a time).
 * - JSON-LD, RDF/XML: oxigraph's streaming parser (`lenient: false`), no remote contexts, in a
 *   worker thread (a hostile file can make the WASM module trap: that ends the parse, not the
 *   process), after linear checks that refuse what would make it explode (entity expansion,
 *   nesting depth).
 *
 * Every blank node label becomes `_:<blankNodePrefix><label sanitized to [A-Za-z0-9]>`
 * (see nt.ts), so labels of different files never collide while the same label in one file
 * stays the same node.
 *
 * The parts live in parse/: n3-stream.ts, oxigraph-stream.ts (with guards.ts and the parse
 * workers of worker-pool.ts), errors.ts and options.ts.
 */
import type { Readable } from 'node:stream';
import type { RdfFormat } from './formats.js';
import { assertBlankNodePrefix, type NtQuad } from './nt.js';
import { parseWithN3 } from './parse/n3-stream.js';
import type { ParseRdfOptions } from './parse/options.js';
import { parseWithOxigraph } from './parse/oxigraph-stream.js';

export { RdfSyntaxError } from './parse/errors.js';
export { DEFAULT_PARSE_LIMITS, type ParseLimits } from './parse/guards.js';
export type { ParseRdfOptions } from './parse/options.js';

/** Parse `input` (already decompressed bytes or text) into batches of canonical quads. */
export function parseRdf(input: Readable | AsyncIterable<Buffer | Uint8Array | string>, options: ParseRdfOptions): AsyncIterable<NtQuad[]> {
  assertBlankNodePrefix(options.blankNodePrefix);
  switch (options.format.name) {
    case 'turtle':
    case 'trig':
    case 'ntriples':
    case 'nquads':
      return parseWithN3(input as AsyncIterable<Buffer | Uint8Array | string>, options);
    case 'jsonld':
    case 'rdfxml':
      return parseWithOxigraph(input as AsyncIterable<Buffer | Uint8Array | string>, options);
    default:
      throw new Error(`no parser for format ${(options.format as RdfFormat).name}`);
  }
}
