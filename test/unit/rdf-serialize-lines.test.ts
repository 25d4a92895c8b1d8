/**
 * Turtle and TriG written straight from stored canonical lines (serialize-lines.ts) are exactly
 * what serializeRdf writes for the same statements, however the stored text is chunked; the TriG
 * export's graph blocks of stored lines hold exactly the stored statements.
 */
import { describe, expect, it } from 'vitest';
import { formatByName } from '../../functions/rdf/formats.js';
import { type NtQuad, parseNtLines } from '../../functions/rdf/nt.js';
import { serializeRdfChunks } from '../../functions/rdf/serialize.js';
import { trigFromCanonicalLines, turtleFromCanonicalLines } from '../../functions/rdf/serialize-lines.js';
import { parseRdf } from '../../functions/rdf/parse.js';
import { Readable } from 'node:stream';

const prefixes = [
  { prefixLabel: 'ex', iri: 'https://e/' },
  { prefixLabel: 'xsd', iri: 'http://www.w3.org/2001/XMLSchema#' },
];

const GRAPHS: { graph: string | null; lines: string }[] = [
  {
    graph: '<https://e/g1>',
    lines: [
      '<https://e/s1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://e/C> .',
      '<https://e/s1> <https://e/p> "a b . c" .',
      '<https://e/s1> <https://e/p> "x \\" y"@en .',
      '<https://e/s1> <https://e/q> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .',
      '_:b1 <https://e/p> <https://e/s1> .',
      '<https://e/s2> <https://e/p> "é 日本 🎉" .',
      '',
    ].join('\n'),
  },
  { graph: '<https://e/g2>', lines: '<https://e/s1> <https://e/p> <https://e/o> .\n<https://e/s1> <https://e/p> <https://e/o2> .\n' },
  { graph: '<https://e/empty>', lines: '' },
];

async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const c of chunks) out += c;
  return out;
}

async function* bytesIn(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('Turtle and TriG from canonical lines', () => {
  for (const name of ['trig', 'turtle'] as const) {
    it(`${name}: the same text as serializeRdf, for any chunking`, async () => {
      const quads: NtQuad[] = GRAPHS.flatMap((g) => parseNtLines(g.lines, g.graph));
      async function* batches() {
        yield quads;
      }
      const expected = await collect(serializeRdfChunks(batches(), { format: formatByName(name), prefixes }));
      expect(expected).toContain('ex:s1');
      for (const size of [1, 5, 64 * 1024]) {
        const graphs = GRAPHS.map((g) => ({ graph: g.graph, text: bytesIn(g.lines, size) }));
        expect(await collect(turtleFromCanonicalLines(graphs, { prefixes, trig: name === 'trig' }))).toBe(expected);
      }
    });
  }

  it('writes only the prefixes for no statements', async () => {
    expect(await collect(turtleFromCanonicalLines([], { prefixes, trig: true }))).toBe('@prefix ex: <https://e/> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\n');
  });

  it('TriG as graph blocks of the stored lines: every statement in its graph, prefixes declared', async () => {
    const chunks: Uint8Array[] = [];
    const encoder = new TextEncoder();
    for await (const c of trigFromCanonicalLines(
      GRAPHS.map((g) => ({ graph: g.graph, text: bytesIn(g.lines, 7) })),
      { prefixes },
    )) chunks.push(typeof c === 'string' ? encoder.encode(c) : c);
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text.startsWith('@prefix ex: <https://e/> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\n<https://e/g1> {\n<https://e/s1> ')).toBe(true);
    const parsed: NtQuad[] = [];
    for await (const batch of parseRdf(Readable.from([text]), { format: formatByName('trig'), blankNodePrefix: '' })) parsed.push(...batch);
    // Blank node labels of the stored lines come back as they are (empty prefix, plain labels).
    expect(parsed).toEqual(GRAPHS.flatMap((g) => parseNtLines(g.lines, g.graph)));
  });
});
