/**
 * Exports straight from stored canonical N-Triples text (graph blobs), one graph after the other:
 *
 * - TriG (`trigFromCanonicalLines`): the dataset's `@prefix` lines, then each graph as a block
 *   `<g> { ... }` holding its stored lines byte for byte (a canonical N-Triples line is a valid
 *   TriG statement), so the export costs little more than decompressing the blobs.
 * - Turtle (`turtleFromCanonicalLines`): each line cut at its first two spaces (subject and
 *   predicate never contain one; the object is the rest before ` .`), with no statement objects
 *   in between, and written by the same writer as serialize.ts (TurtleTextWriter: subjects and
 *   predicates grouped, prefixes applied), so the text is exactly what serializeRdf writes.
 */
import type { RdfPrefix } from './serialize.js';
import { PrefixCompactor, TurtleTextWriter } from './serialize.js';

export interface CanonicalGraphText {
  /** The graph term (`<iri>`), or null for the default graph. */
  graph: string | null;
  /** Its canonical lines (`s p o .\n`), in chunks of any size (UTF-8 bytes or text). */
  text: AsyncIterable<Uint8Array | string>;
}

/** Text chunks of the Turtle (`trig` false: graphs merged) or TriG serialization. */
export async function* turtleFromCanonicalLines(graphs: AsyncIterable<CanonicalGraphText> | Iterable<CanonicalGraphText>, options: { prefixes?: readonly RdfPrefix[]; trig: boolean }): AsyncGenerator<string> {
  const writer = new TurtleTextWriter(options.prefixes ?? [], options.trig);
  for await (const { graph, text } of graphs) {
    const decoder = new TextDecoder('utf-8');
    let rest = '';
    const lines = (chunk: string, end: number) => {
      for (let pos = 0; pos < end; ) {
        let nl = chunk.indexOf('\n', pos);
        if (nl < 0) nl = end;
        if (nl > pos) {
          const s = chunk.indexOf(' ', pos);
          const p = chunk.indexOf(' ', s + 1);
          // `s p o .`: the object ends two characters before the line does.
          writer.write(chunk.slice(pos, s), chunk.slice(s + 1, p), chunk.slice(p + 1, nl - 2), graph);
        }
        pos = nl + 1;
      }
    };
    for await (const chunk of text) {
      const decoded = rest + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
      const cut = decoded.lastIndexOf('\n') + 1;
      rest = decoded.slice(cut);
      lines(decoded, cut);
      const out = writer.take();
      if (out) yield out;
    }
    rest += decoder.decode();
    if (rest) lines(rest, rest.length);
  }
  const out = writer.end();
  if (out) yield out;
}

/** TriG: `@prefix` lines, then one `<g> { ... }` block per graph with its lines as stored (bytes pass through). */
export async function* trigFromCanonicalLines(graphs: AsyncIterable<CanonicalGraphText> | Iterable<CanonicalGraphText>, options: { prefixes?: readonly RdfPrefix[] }): AsyncGenerator<Uint8Array | string> {
  const compactor = new PrefixCompactor(options.prefixes ?? []);
  if (compactor.size > 0) yield `${compactor.header()}\n`;
  let first = true;
  for await (const { graph, text } of graphs) {
    yield `${first ? '' : '\n'}${graph === null ? '' : `${graph} {\n`}`;
    first = false;
    let last = 10;
    for await (const chunk of text) {
      if (chunk.length === 0) continue;
      last = typeof chunk === 'string' ? chunk.charCodeAt(chunk.length - 1) : chunk[chunk.length - 1]!;
      yield chunk;
    }
    // Stored text ends with a newline; a block closes on a line of its own anyway.
    yield `${last === 10 ? '' : '\n'}${graph === null ? '' : '}\n'}`;
  }
}
