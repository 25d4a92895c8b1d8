import { Readable } from 'node:stream';
import N3 from 'n3';
import * as oxigraph from 'oxigraph';
import { describe, expect, it } from 'vitest';
import { isomorphic } from '../../functions/rdf/isomorphic.js';
import {
  anonymousLabel,
  makeN3TermConverter,
  nqLine,
  ntIri,
  ntLine,
  ntLinesToBatches,
  ntLiteral,
  ntLiteralParts,
  ntQuadToRdfJs,
  ntTermToRdfJs,
  ntTextToNq,
  parseNtLine,
  parseNtLines,
  rdfJsQuadToNt,
  rdfJsTermToNt,
  sanitizeBlankLabel,
  type NtQuad,
  type RdfJsFactoryLike,
} from '../../functions/rdf/nt.js';

const n3Factory = N3.DataFactory as unknown as RdfJsFactoryLike<N3.Term, N3.Quad>;
const oxFactory = oxigraph as unknown as RdfJsFactoryLike<oxigraph.Term, oxigraph.Quad>;

describe('canonical terms', () => {
  it('escapes IRIs outside the IRIREF set with \\uXXXX', () => {
    expect(ntIri('http://example.org/a')).toBe('<http://example.org/a>');
    expect(ntIri('http://example.org/a b>c"d{e}|^`\\')).toBe('<http://example.org/a\\u0020b\\u003Ec\\u0022d\\u007Be\\u007D\\u007C\\u005E\\u0060\\u005C>');
    expect(ntIri('http://example.org/ü/日本')).toBe('<http://example.org/ü/日本>');
  });

  it('escapes only \\\\ \\" \\n \\r in literals, omits xsd:string, lower-cases language tags', () => {
    expect(ntLiteral('a "q" \\ b\nc\rd\te é 🎉')).toBe('"a \\"q\\" \\\\ b\\nc\\rd\te é 🎉"');
    expect(ntLiteral('x', undefined, 'http://www.w3.org/2001/XMLSchema#string')).toBe('"x"');
    expect(ntLiteral('x', 'en-GB')).toBe('"x"@en-gb');
    expect(ntLiteral('1', undefined, 'http://www.w3.org/2001/XMLSchema#integer')).toBe('"1"^^<http://www.w3.org/2001/XMLSchema#integer>');
  });

  it('decomposes literals back into value, language, direction and datatype', () => {
    expect(ntLiteralParts('"a \\"q\\" \\\\ b\\nc\\rd"')).toEqual({ value: 'a "q" \\ b\nc\rd', language: '', direction: '', datatype: 'http://www.w3.org/2001/XMLSchema#string' });
    expect(ntLiteralParts('"x"@en-gb')).toMatchObject({ value: 'x', language: 'en-gb', direction: '' });
    expect(ntLiteralParts('"x"@ar--rtl')).toMatchObject({ value: 'x', language: 'ar', direction: 'rtl' });
    expect(ntLiteralParts('"1"^^<http://www.w3.org/2001/XMLSchema#integer>')).toMatchObject({ value: '1', datatype: 'http://www.w3.org/2001/XMLSchema#integer' });
    expect(ntLiteralParts('"\\u00E9\\U0001F389\\t"')).toMatchObject({ value: 'é🎉\t' });
  });

  it('sanitizes blank node labels injectively to [A-Za-z0-9]', () => {
    const labels = ['b0', 'a-b', 'ab', 'a.b', 'a_b', 'x', 'Q', 'Q0051', 'aQ002Db', 'é', 'n3-0', '0', 'Qg0'];
    const out = labels.map(sanitizeBlankLabel);
    for (const o of out) expect(o).toMatch(/^[A-Za-z0-9]+$/);
    expect(new Set(out).size).toBe(labels.length);
    expect(sanitizeBlankLabel('b0')).toBe('b0');
    expect(sanitizeBlankLabel('x')).toBe('x');
    expect(sanitizeBlankLabel('a-b')).toBe('aQ002Db');
    // Parser-generated labels live in their own space.
    expect(anonymousLabel('n3-0')).toBe('Qg0');
    expect(out).not.toContain(anonymousLabel('n3-0'));
  });

  it('converts oxigraph terms (with a blank node prefix)', () => {
    const q = oxigraph.quad(
      oxigraph.blankNode('b0'),
      oxigraph.namedNode('http://example.org/p'),
      oxigraph.literal('é "x"', 'EN'),
      oxigraph.namedNode('http://example.org/g'),
    );
    expect(rdfJsQuadToNt(q, 'imp1')).toEqual({ subject: '_:imp1b0', predicate: '<http://example.org/p>', object: '"é \\"x\\""@en', graph: '<http://example.org/g>' });
    expect(rdfJsTermToNt(oxigraph.literal('5', oxigraph.namedNode('http://www.w3.org/2001/XMLSchema#integer')))).toBe('"5"^^<http://www.w3.org/2001/XMLSchema#integer>');
    expect(rdfJsQuadToNt(oxigraph.quad(oxigraph.namedNode('http://a'), oxigraph.namedNode('http://b'), oxigraph.literal('x'), oxigraph.defaultGraph())).graph).toBeNull();
    expect(() => rdfJsTermToNt(oxigraph.triple(oxigraph.namedNode('http://a'), oxigraph.namedNode('http://b'), oxigraph.namedNode('http://c')) as never)).toThrow(/triple terms/);
  });

  it('converts N3 terms fast, separating file labels from generated ones', () => {
    const convert = makeN3TermConverter('p', '=');
    const { namedNode, blankNode, literal } = N3.DataFactory;
    expect(convert(namedNode('http://example.org/a'))).toBe('<http://example.org/a>');
    expect(convert(blankNode('=b0'))).toBe('_:pb0');
    expect(convert(blankNode('n3-7'))).toBe('_:pQg7');
    expect(convert(literal('a"b\n', 'EN-us'))).toBe('"a\\"b\\n"@en-us');
    expect(convert(literal('1', namedNode('http://www.w3.org/2001/XMLSchema#integer')))).toBe('"1"^^<http://www.w3.org/2001/XMLSchema#integer>');
    expect(() => convert(namedNode('relative'))).toThrow(/relative IRI/);
    expect(() => makeN3TermConverter('bad-prefix', '=')).toThrow(/blankNodePrefix/);
  });

  it('converts canonical terms back to RDF/JS terms of any factory', () => {
    const q: NtQuad = { subject: '_:b1', predicate: '<http://example.org/p>', object: '"a\\"b\\nc"@en', graph: '<http://example.org/g>' };
    const n3q = ntQuadToRdfJs(q, n3Factory);
    expect(n3q.object.value).toBe('a"b\nc');
    expect((n3q.object as N3.Literal).language).toBe('en');
    expect(n3q.subject.termType).toBe('BlankNode');
    const oxq = ntQuadToRdfJs({ ...q, object: '"7"^^<http://www.w3.org/2001/XMLSchema#integer>', graph: null }, oxFactory);
    expect((oxq.object as oxigraph.Literal).datatype.value).toBe('http://www.w3.org/2001/XMLSchema#integer');
    expect(oxq.graph.termType).toBe('DefaultGraph');
    expect(ntTermToRdfJs('<http://a\\u0020b>', n3Factory).value).toBe('http://a b');
    // and round trip through the converters
    expect(rdfJsQuadToNt(oxq)).toEqual({ ...q, object: '"7"^^<http://www.w3.org/2001/XMLSchema#integer>', subject: '_:b1', graph: null });
  });
});

describe('canonical lines', () => {
  const quads: NtQuad[] = [
    { subject: '<http://a>', predicate: '<http://p>', object: '<http://o>', graph: null },
    { subject: '_:b0', predicate: '<http://p>', object: '"with spaces . and \\" quote \\\\ and a dot"', graph: '<http://g>' },
    { subject: '<http://a>', predicate: '<http://p>', object: '"ends with backslash \\\\"', graph: '_:g1' },
    { subject: '<http://a>', predicate: '<http://p>', object: '"x y"@en-gb', graph: null },
    { subject: '<http://a>', predicate: '<http://p>', object: '"1 2"^^<http://www.w3.org/2001/XMLSchema#string2>', graph: '<http://g>' },
    { subject: '<http://a>', predicate: '<http://p>', object: '""', graph: null },
  ];

  it('writes and splits lines back into the same terms', () => {
    for (const q of quads) {
      expect(parseNtLine(nqLine(q))).toEqual(q);
      expect(parseNtLine(ntLine(q))).toEqual({ ...q, graph: null });
    }
    expect(ntLine(quads[0]!)).toBe('<http://a> <http://p> <http://o> .\n');
    expect(nqLine(quads[1]!)).toBe('_:b0 <http://p> "with spaces . and \\" quote \\\\ and a dot" <http://g> .\n');
  });

  it('rejects malformed lines', () => {
    for (const bad of ['', '<http://a> <http://p> <http://o>', '<http://a> <http://p> "open .', 'junk', '<http://a> <http://p> <http://o> <http://g> <http://h> .', '<http://a> "p" <http://o> .']) {
      expect(() => parseNtLine(bad)).toThrow(/malformed/);
    }
  });

  it('splits text and streams of lines into batches, across chunk and UTF-8 boundaries', async () => {
    const text = quads.map(ntLine).join('') + '<http://a> <http://p> "é 日本 🎉" .\n';
    expect(parseNtLines(text).length).toBe(quads.length + 1);
    expect(parseNtLines(text, '<http://g2>').every((q) => q.graph === '<http://g2>')).toBe(true);
    const bytes = Buffer.from(text);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 5) chunks.push(bytes.subarray(i, i + 5));
    const batches: NtQuad[][] = [];
    for await (const b of ntLinesToBatches(Readable.from(chunks), null, 3)) batches.push(b);
    expect(batches.map((b) => b.length)).toEqual([3, 3, 1]);
    expect(batches.flat().at(-1)!.object).toBe('"é 日本 🎉"');
  });

  it('turns N-Triples text into N-Quads text for a graph', () => {
    const text = quads.map(ntLine).join('');
    const nq = ntTextToNq(text, '<http://g>');
    expect(parseNtLines(nq)).toEqual(quads.map((q) => ({ ...q, graph: '<http://g>' })));
    expect(ntTextToNq(text, null)).toBe(text);
  });
});

describe('isomorphism helper', () => {
  it('matches datasets up to blank node renaming only', () => {
    const a: NtQuad[] = [
      { subject: '_:a', predicate: '<http://p>', object: '_:b', graph: null },
      { subject: '_:b', predicate: '<http://p>', object: '_:a', graph: null },
      { subject: '_:a', predicate: '<http://q>', object: '"1"', graph: '_:g' },
    ];
    const b: NtQuad[] = [
      { subject: '_:y', predicate: '<http://p>', object: '_:x', graph: null },
      { subject: '_:x', predicate: '<http://p>', object: '_:y', graph: null },
      { subject: '_:y', predicate: '<http://q>', object: '"1"', graph: '_:h' },
    ];
    expect(isomorphic(a, b)).toBe(true);
    expect(isomorphic(a, [...b.slice(0, 2), { ...b[2]!, object: '"2"' }])).toBe(false);
    expect(isomorphic(a, [...b.slice(0, 2), { ...b[2]!, subject: '_:x' }])).toBe(true); // symmetric cycle
    expect(isomorphic(a, [...b.slice(0, 2), { ...b[2]!, graph: null }])).toBe(false);
  });
});
