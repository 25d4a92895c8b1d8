/** GraphLineSorter: what an import's parse worker makes of parsed statements (graphs, distinct lines, the graph limit). */
import { describe, expect, it } from 'vitest';
import type { NtQuad } from '../../functions/rdf/nt.js';
import { GraphLimitError, GraphLineSorter, GraphTextSorter } from '../../functions/rdf/parse/graph-lines.js';

const q = (s: number, graph: string | null = null, o = `"${s} é"`): NtQuad => ({ subject: `<https://e/s${s}>`, predicate: '<https://e/p>', object: o, graph });

function run(batches: NtQuad[][], maxGraphs = 10) {
  const out = new Map<string, { text: string; lines: number }>();
  const decoder = new TextDecoder();
  const sorter = new GraphLineSorter('https://e/default', maxGraphs, (graph, bytes, lines) => {
    const seen = out.get(graph) ?? { text: '', lines: 0 };
    out.set(graph, { text: seen.text + decoder.decode(bytes), lines: seen.lines + lines });
  });
  for (const batch of batches) sorter.add(batch);
  return { counts: sorter.finish(), out };
}

describe('GraphLineSorter', () => {
  it('sorts statements into graphs by name and keeps each graph\'s first occurrence of a line', () => {
    const { counts, out } = run([[q(1), q(2, '<https://e/g>'), q(1), q(3, '_:b')], [q(2, '<https://e/g>'), q(4, '<https://e/default>'), q(1)]]);
    expect([...counts]).toEqual([
      ['https://e/default', 2],
      ['https://e/g', 1],
      ['https://e/default/b', 1],
    ]);
    expect(out.get('https://e/default')).toEqual({ text: '<https://e/s1> <https://e/p> "1 é" .\n<https://e/s4> <https://e/p> "4 é" .\n', lines: 2 });
    expect(out.get('https://e/default/b')?.text).toBe('<https://e/s3> <https://e/p> "3 é" .\n');
  });

  it('drops duplicates across and within the chunks it hands on', () => {
    const many = Array.from({ length: 12_000 }, (_, i) => q(i % 5000, null, `"${'x'.repeat(40)} ${i % 5000}"`));
    const { counts, out } = run([many.slice(0, 7000), many.slice(7000)]);
    expect(counts.get('https://e/default')).toBe(5000);
    const text = out.get('https://e/default')!.text;
    expect(out.get('https://e/default')!.lines).toBe(5000);
    const lines = text.split('\n').filter(Boolean);
    expect(new Set(lines).size).toBe(5000);
    expect(lines[0]).toBe(`<https://e/s0> <https://e/p> "${'x'.repeat(40)} 0" .`);
  });

  it('refuses more graphs than allowed', () => {
    expect(() => run([[q(1, '<https://e/g1>'), q(2, '<https://e/g2>'), q(3, '<https://e/g3>')]], 2)).toThrow(GraphLimitError);
  });

  it('names graphs from byte-string terms (N-Triples and N-Quads read as bytes) by their text', () => {
    const texts: [string, string][] = [];
    const sorter = new GraphTextSorter('https://e/default', 10, (graph, text) => texts.push([graph, text]));
    const bytes = (t: string) => Buffer.from(t, 'utf8').toString('latin1');
    sorter.byteStrings = true;
    sorter.add([{ subject: '<https://e/s>', predicate: '<https://e/p>', object: bytes('"é"'), graph: bytes('<https://e/gé>') }]);
    sorter.flush();
    sorter.byteStrings = false;
    sorter.add([{ subject: '<https://e/s>', predicate: '<https://e/p>', object: '"ü"', graph: '<https://e/gé>' }]);
    expect(sorter.finish()).toEqual(['https://e/gé']);
    expect(texts).toEqual([
      ['https://e/gé', `<https://e/s> <https://e/p> ${bytes('"é"')} .\n`],
      ['https://e/gé', '<https://e/s> <https://e/p> "ü" .\n'],
    ]);
  });
});
