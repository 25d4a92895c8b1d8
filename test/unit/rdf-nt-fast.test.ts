/**
 * The N-Triples / N-Quads fast path (functions/rdf/parse/nt-fast.ts): lines already in canonical
 * form skip N3. Its output must be exactly what N3 plus the converter make of the same lines (the
 * same text parsed as Turtle, which never takes the fast path), and N3 must still see every other
 * line with its right line number, also when a statement N3 began runs over into lines that
 * would be canonical on their own.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatByName, type RdfFormatName } from '../../functions/rdf/formats.js';
import type { NtQuad } from '../../functions/rdf/nt.js';
import { parseRdf, RdfSyntaxError } from '../../functions/rdf/parse.js';
import { makeFastLineReader } from '../../functions/rdf/parse/nt-fast.js';

/** Parses `text` in chunks of `chunk` bytes (split anywhere, also inside characters). */
async function parse(text: string, format: RdfFormatName, chunk = 7, byteStrings = false): Promise<NtQuad[]> {
  const bytes = Buffer.from(text);
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) parts.push(bytes.subarray(i, i + chunk));
  const out: NtQuad[] = [];
  for await (const batch of parseRdf(Readable.from(parts), { format: formatByName(format), blankNodePrefix: 'pfx', batchSize: 3, fileName: 'data.nt', byteStrings })) out.push(...batch);
  if (!byteStrings) return out;
  // Byte strings back to text.
  const text2 = (t: string) => Buffer.from(t, 'latin1').toString('utf8');
  return out.map((q) => ({ subject: text2(q.subject), predicate: text2(q.predicate), object: text2(q.object), graph: q.graph === null ? null : text2(q.graph) }));
}

async function error(text: string, format: RdfFormatName): Promise<RdfSyntaxError> {
  try {
    await parse(text, format, 5);
  } catch (e) {
    expect(e).toBeInstanceOf(RdfSyntaxError);
    return e as RdfSyntaxError;
  }
  throw new Error('no error');
}

const LINES = [
  '<http://e/s> <http://e/p> <http://e/o> .',
  '_:b1 <http://e/p> _:Quux .',
  '_:a-b <http://e/p> "dash label, sanitized by N3\'s path" .',
  '<http://e/s> <http://e/p> "plain \\"quoted\\" \\\\ back\\nnew\\rret\ttab é 日本 🎉" .',
  '<http://e/s> <http://e/p> "lang"@en-gb .',
  '<http://e/s> <http://e/p> "LANG"@EN-GB .',
  '<http://e/s> <http://e/p> "typed"^^<http://www.w3.org/2001/XMLSchema#integer> .',
  '<http://e/s> <http://e/p> "string"^^<http://www.w3.org/2001/XMLSchema#string> .',
  '<http://e/s> <http://e/p> "escaped \\t \\u00E9 \\U0001F389" .',
  '<http://e/s\\u00E9x> <http://e/p> <http://e/o> .',
  '<http://e/s>   <http://e/p>\t<http://e/o>   .   # comment',
  '# a comment line',
  '',
  '<HTTP://E/s> <http://e/p> <urn:x:y> .',
  '<http://e/s> <http://e/p> "" .',
  '<http://e/s> <http://e/p> <http://e/o>.',
];

describe('the N-Triples fast path', () => {
  it('gives what N3 gives for every kind of line, canonical or not', async () => {
    const text = `${LINES.join('\n')}\n`;
    for (const chunk of [1, 7, 64 * 1024]) {
      const fast = await parse(text, 'ntriples', chunk);
      const n3 = await parse(text, 'turtle', chunk);
      expect(fast).toEqual(n3);
      // As byte strings (the import's way), the same statements.
      expect(await parse(text, 'ntriples', chunk, true)).toEqual(n3);
      expect(fast.length).toBe(LINES.filter((l) => l && !l.startsWith('#')).length);
    }
    // The last line may lack its newline; CRLF line ends are fine.
    expect(await parse(LINES.join('\r\n'), 'ntriples')).toEqual(await parse(LINES.join('\r\n'), 'turtle'));
    expect(await parse(LINES.join('\n'), 'ntriples')).toEqual(await parse(LINES.join('\n'), 'turtle'));
  });

  it('keeps statement order when canonical and other lines alternate', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? `<http://e/s${i}> <http://e/p> "x\\t${i}" .` : `<http://e/s${i}> <http://e/p> "${i}" .`));
    const quads = await parse(`${lines.join('\n')}\n`, 'ntriples');
    expect(quads.map((q) => q.subject)).toEqual(lines.map((_, i) => `<http://e/s${i}>`));
  });

  it('reads N-Quads graphs, and refuses a graph in N-Triples as N3 does', async () => {
    const text = '<http://e/s> <http://e/p> <http://e/o> <http://e/g> .\n_:x <http://e/p> "v" _:g .\n<http://e/s> <http://e/p> <http://e/o> .\n';
    expect(await parse(text, 'nquads')).toEqual([
      { subject: '<http://e/s>', predicate: '<http://e/p>', object: '<http://e/o>', graph: '<http://e/g>' },
      { subject: '_:pfxx', predicate: '<http://e/p>', object: '"v"', graph: '_:pfxg' },
      { subject: '<http://e/s>', predicate: '<http://e/p>', object: '<http://e/o>', graph: null },
    ]);
    const e = await error(text, 'ntriples');
    expect(e.line).toBe(1);
  });

  it('reports errors at their line after many canonical lines', async () => {
    const good = Array.from({ length: 1000 }, (_, i) => `<http://e/s${i}> <http://e/p> <http://e/o> .`);
    const bad = [...good, '<http://e/s> <http://e/p> <http://e/o d> .', ...good].join('\n');
    const e = await error(bad, 'ntriples');
    expect(e.line).toBe(1001);
    expect(e.column).toBe(27);
    expect(e.message).toMatch(/^data\.nt: syntax error at line 1001, column 27: /);
  });

  it('reports invalid UTF-8 at its line and column after canonical lines, for any chunking', async () => {
    const good = Array.from({ length: 300 }, (_, i) => `<http://e/s${i}> <http://e/p> "é${i}" .\n`).join('');
    const bytes = Buffer.concat([Buffer.from(good), Buffer.from('<http://e/s> <http://e/p> "ab'), Buffer.from([0xff]), Buffer.from('" .\n')]);
    for (const size of [3, 100, 1 << 20]) {
      const parts: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
      for (const byteStrings of [false, true]) {
        let error: unknown;
        try {
          for await (const _ of parseRdf(Readable.from(parts), { format: formatByName('ntriples'), blankNodePrefix: 'p', fileName: 'data.nt', byteStrings })) void _;
        } catch (caught) {
          error = caught;
        }
        expect((error as Error).message).toBe('data.nt: syntax error at line 301, column 30: invalid UTF-8 byte sequence');
      }
    }
  });

  it('leaves a statement N3 began to N3, even where the next line is canonical alone', async () => {
    // Line 2 lacks its final dot; line 3 is canonical on its own but continues line 2's statement.
    const text = '<http://e/s> <http://e/p> <http://e/o> .\n<http://e/s> <http://e/p> "a"\n<http://e/s> <http://e/p> <http://e/o> .\n';
    const fast = await error(text, 'ntriples');
    expect(fast.line).toBe(3);
    expect(fast.column).toBe(1);
    // An unfinished statement at the end is reported at the end, after skipped lines too.
    const unfinished = await error('<http://e/s> <http://e/p> <http://e/o> .\n<http://e/s> <http://e/p>\n', 'ntriples');
    expect(unfinished.line).toBeGreaterThanOrEqual(2);
  });

  it('the reader accepts only the simple canonical form', () => {
    const read = makeFastLineReader('p', true);
    const one = (line: string) => read(line, 0, line.length);
    expect(one('<http://e/s> <http://e/p> "x"^^<http://www.w3.org/2001/XMLSchema#string> .')?.object).toBe('"x"');
    expect(one('<http://e/s> <http://e/p> "x"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .')).toBeNull();
    expect(one('<http://e/s> <http://e/p> "x"@en--ltr .')).toBeNull();
    expect(one('<http://e/s> <http://e/p> "x"@EN .')).toBeNull();
    expect(one('<s> <http://e/p> <http://e/o> .')).toBeNull();
    expect(one('_:Q1 <http://e/p> <http://e/o> .')).toBeNull();
    expect(one('<http://e/s> <http://e/p> <http://e/o> . ')).toBeNull();
    expect(one('<http://e/s> <http://e/p> "a\\tb" .')).toBeNull();
    expect(one('<http://e/s> <http://e/p> _:b9 _:g .')).toEqual({ subject: '<http://e/s>', predicate: '<http://e/p>', object: '_:pb9', graph: '_:pg' });
  });

  it('as byte strings: a character split over chunks is whole, one cut off at the end is an error', async () => {
    const line = '<http://e/s> <http://e/p> "é 日本 🎉" .\n';
    for (const chunk of [1, 2, 3, 5]) {
      const [q] = await parse(line, 'ntriples', chunk, true);
      expect(q!.object).toBe('"é 日本 🎉"');
    }
    const cut = Buffer.from(line.slice(0, -4)).subarray(0, -1);
    let error: unknown;
    try {
      for await (const _ of parseRdf(Readable.from([cut]), { format: formatByName('ntriples'), blankNodePrefix: 'p', fileName: 'data.nt', byteStrings: true })) void _;
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).toMatch(/invalid UTF-8/);
  });
});
