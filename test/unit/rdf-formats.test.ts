import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EXPORT_FORMATS, formatByName, RDF_FORMATS, type RdfFormat, type RdfFormatName } from '../../functions/rdf/formats.js';
import { isomorphic, sortedNQuads } from '../../functions/rdf/isomorphic.js';
import { formatFromMediaType, formatFromPath, negotiateRdfFormat } from '../../functions/rdf/negotiate.js';
import type { NtQuad } from '../../functions/rdf/nt.js';
import { parseRdf, RdfSyntaxError } from '../../functions/rdf/parse.js';
import { serializeRdf } from '../../functions/rdf/serialize.js';

// ------------------------------------------------------------------------------------------------
// helpers

function chunked(text: string | Buffer, size = 64 * 1024): Readable {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks);
}

async function parse(
  text: string | Buffer,
  format: RdfFormatName,
  options: { baseIRI?: string; blankNodePrefix?: string; fileName?: string; chunkSize?: number } = {},
): Promise<NtQuad[]> {
  const out: NtQuad[] = [];
  for await (const batch of parseRdf(chunked(text, options.chunkSize), {
    format: formatByName(format),
    baseIRI: options.baseIRI,
    blankNodePrefix: options.blankNodePrefix ?? 't',
    fileName: options.fileName,
  })) {
    expect(batch.length).toBeGreaterThan(0);
    out.push(...batch);
  }
  return out;
}

async function serialize(quads: NtQuad[], format: RdfFormat, batchSize = 3): Promise<string> {
  async function* batches(): AsyncGenerator<NtQuad[]> {
    for (let i = 0; i < quads.length; i += batchSize) yield quads.slice(i, i + batchSize);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of serializeRdf(batches(), { format, prefixes: PREFIXES })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function parseError(text: string | Buffer, format: RdfFormatName, fileName = `data.${formatByName(format).extensions[0]}`, chunkSize?: number): Promise<RdfSyntaxError> {
  try {
    await parse(text, format, { fileName, chunkSize });
  } catch (e) {
    expect(e).toBeInstanceOf(RdfSyntaxError);
    return e as RdfSyntaxError;
  }
  throw new Error(`expected ${format} input to fail:\n${text}`);
}

const dropGraphs = (quads: NtQuad[]): NtQuad[] => quads.map((q) => ({ ...q, graph: null }));

function expectIsomorphic(actual: NtQuad[], expected: NtQuad[]): void {
  if (!isomorphic(actual, expected)) expect(sortedNQuads(actual)).toEqual(sortedNQuads(expected));
}

const PREFIXES = [
  { prefixLabel: 'ex', iri: 'http://example.org/' },
  { prefixLabel: 'xsd', iri: 'http://www.w3.org/2001/XMLSchema#' },
  { prefixLabel: 'rdf', iri: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#' },
  { prefixLabel: '', iri: 'http://example.org/empty#' },
  { prefixLabel: 'bad label', iri: 'http://example.org/ignored/' },
];

// ------------------------------------------------------------------------------------------------
// samples: the same data (escapes, languages, datatypes, blank nodes, lists, unicode) per format

const TURTLE = String.raw`@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:s ex:p "plain", "with \"quotes\" and \\ backslash", "line1\nline2\r\nend", "tab	here", "unicode é 日本 🎉 \u00E9",
    "hi"@en-GB, "42"^^xsd:integer, "x"^^xsd:string, """long
string with "quotes" """ ;
  ex:q _:b0, [ ex:r ex:o ], ( 1 2 ) ;
  a ex:Class .
_:b0 ex:p "b0" .
<http://example.org/with%20space?q=1#frag> ex:p <http://example.org/ü/日本> .
`;

const TRIG = String.raw`@prefix ex: <http://example.org/> .
ex:s ex:p "default graph" .
ex:g1 { ex:s ex:p "in g1 \"q\"\n", _:b0 . _:b0 ex:p "shared label" }
GRAPH ex:g2 { ex:s ex:p "in g2"@de ; ex:q [ ex:r 1 ] }
_:gb { ex:s ex:p ex:o }
`;

const NTRIPLES = String.raw`<http://example.org/s> <http://example.org/p> "a \"b\" \\ c\nd\re" .
<http://example.org/s> <http://example.org/p> "é\u00E9\U0001F389"@en-us .
_:b0 <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/s> <http://example.org/q> _:b0 .
<http://example.org/s> <http://example.org/r> "x"^^<http://www.w3.org/2001/XMLSchema#string> .
`;

const NQUADS = String.raw`<http://example.org/s> <http://example.org/p> "in default" .
<http://example.org/s> <http://example.org/p> "in g \"q\"" <http://example.org/g> .
_:b0 <http://example.org/p> _:b1 <http://example.org/g> .
_:b1 <http://example.org/p> "x"@fr _:g .
<http://example.org/s> <http://example.org/p> <http://example.org/o> _:g .
`;

const JSONLD = JSON.stringify({
  '@context': { ex: 'http://example.org/', xsd: 'http://www.w3.org/2001/XMLSchema#' },
  '@graph': [
    { '@id': 'ex:s', 'ex:p': ['plain', 'with "quotes" \\ and\nnewline', { '@value': 'hi', '@language': 'en-GB' }, { '@value': '42', '@type': 'xsd:integer' }], 'ex:q': { '@id': '_:b0' } },
    { '@id': '_:b0', 'ex:p': 'b0', 'ex:list': { '@list': [1, 2] } },
    { '@id': 'ex:g', '@graph': [{ '@id': 'ex:s', 'ex:p': 'in named graph' }] },
  ],
});

const RDFXML = `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">
  <ex:Class rdf:about="http://example.org/s">
    <ex:p>with "quotes" &amp; &lt;tags&gt;
and a newline</ex:p>
    <ex:p xml:lang="en-GB">hi</ex:p>
    <ex:p rdf:datatype="http://www.w3.org/2001/XMLSchema#integer">42</ex:p>
    <ex:q rdf:nodeID="b0"/>
    <ex:r><rdf:Description><ex:p>nested</ex:p></rdf:Description></ex:r>
  </ex:Class>
  <rdf:Description rdf:nodeID="b0"><ex:p>b0</ex:p></rdf:Description>
</rdf:RDF>
`;

const SAMPLES: Record<RdfFormatName, string> = { turtle: TURTLE, trig: TRIG, ntriples: NTRIPLES, nquads: NQUADS, jsonld: JSONLD, rdfxml: RDFXML };

// ------------------------------------------------------------------------------------------------

describe('round trips: every input format through every export format', () => {
  for (const input of RDF_FORMATS) {
    describe(`${input.name} input`, () => {
      for (const output of EXPORT_FORMATS) {
        it(`→ ${output.name} → back`, async () => {
          const original = await parse(SAMPLES[input.name], input.name, { baseIRI: 'http://example.org/base/' });
          expect(original.length).toBeGreaterThan(3);
          if (input.quads && input.name !== 'jsonld') expect(original.some((q) => q.graph !== null)).toBe(true);
          const text = await serialize(original, output);
          const again = await parse(text, output.name, { blankNodePrefix: 'again' });
          expectIsomorphic(again, output.quads ? original : dropGraphs(original));
        });
      }
    });
  }

  it('survives byte-sized input chunks (multi-byte characters split) for every format', async () => {
    for (const format of RDF_FORMATS) {
      const whole = await parse(SAMPLES[format.name], format.name, { baseIRI: 'http://example.org/base/' });
      const tiny = await parse(SAMPLES[format.name], format.name, { baseIRI: 'http://example.org/base/', chunkSize: 1 });
      expectIsomorphic(tiny, whole);
    }
  });

  it('yields batches of at most batchSize quads', async () => {
    const text = Array.from({ length: 2500 }, (_, i) => `<http://example.org/s${i}> <http://example.org/p> "${i}" .\n`).join('');
    const sizes: number[] = [];
    for await (const b of parseRdf(chunked(text), { format: formatByName('ntriples'), blankNodePrefix: 'x', batchSize: 1000 })) sizes.push(b.length);
    expect(sizes).toEqual([1000, 1000, 500]);
  });
});

describe('escapes and literal forms', () => {
  it('parses into canonical N-Triples terms', async () => {
    const quads = await parse(TURTLE, 'turtle');
    const objects = quads.filter((q) => q.subject === '<http://example.org/s>' && q.predicate === '<http://example.org/p>').map((q) => q.object);
    expect(objects).toEqual([
      '"plain"',
      '"with \\"quotes\\" and \\\\ backslash"',
      '"line1\\nline2\\r\\nend"',
      '"tab\there"',
      '"unicode é 日本 🎉 é"',
      '"hi"@en-gb',
      '"42"^^<http://www.w3.org/2001/XMLSchema#integer>',
      '"x"',
      '"long\\nstring with \\"quotes\\" "',
    ]);
    expect(quads).toContainEqual({ subject: '<http://example.org/with%20space?q=1#frag>', predicate: '<http://example.org/p>', object: '<http://example.org/ü/日本>', graph: null });
  });

  it('writes the same escapes in every export format', async () => {
    const quads = await parse(NTRIPLES, 'ntriples');
    const nt = await serialize(quads, formatByName('ntriples'));
    expect(nt).toContain('<http://example.org/s> <http://example.org/p> "a \\"b\\" \\\\ c\\nd\\re" .\n');
    expect(nt).toContain('"éé🎉"@en-us');
    expect(nt).toContain('<http://example.org/r> "x" .');
    const ttl = await serialize(quads, formatByName('turtle'));
    expect(ttl).toContain('@prefix ex: <http://example.org/> .');
    expect(ttl).toContain('ex:s ex:p "a \\"b\\" \\\\ c\\nd\\re", "éé🎉"@en-us .');
    expect(ttl).toContain('"1"^^xsd:integer');
    expect(ttl).not.toContain('bad label');
    const jsonld = JSON.parse(await serialize(quads, formatByName('jsonld'))) as unknown[];
    expect(jsonld).toEqual([
      { '@id': 'http://example.org/s', 'http://example.org/p': [{ '@value': 'a "b" \\ c\nd\re' }, { '@value': 'éé🎉', '@language': 'en-us' }] },
      { '@id': '_:tb0', 'http://example.org/p': [{ '@value': '1', '@type': 'http://www.w3.org/2001/XMLSchema#integer' }] },
      { '@id': 'http://example.org/s', 'http://example.org/q': [{ '@id': '_:tb0' }], 'http://example.org/r': [{ '@value': 'x' }] },
    ]);
  });

  it('writes rdf:type as `a`, groups subjects and objects, and groups TriG graphs in blocks', async () => {
    const quads = await parse(TRIG, 'trig');
    const trig = await serialize(quads, formatByName('trig'));
    expect(trig).toContain('ex:g1 {\n');
    expect(trig).toContain('ex:g2 {\n');
    expect(trig.match(/\{/g)?.length).toBe(3);
    const ttl = await serialize(await parse(TURTLE, 'turtle'), formatByName('turtle'));
    expect(ttl).toMatch(/ a ex:Class/);
    expect(ttl).toMatch(/ex:p "plain", "with/);
  });

  it('keeps JSON-LD node objects free of repeated keys when a predicate comes back', async () => {
    const quads: NtQuad[] = [
      { subject: '<http://e/s>', predicate: '<http://e/p>', object: '"1"', graph: null },
      { subject: '<http://e/s>', predicate: '<http://e/q>', object: '"2"', graph: null },
      { subject: '<http://e/s>', predicate: '<http://e/p>', object: '"3"', graph: null },
    ];
    const text = await serialize(quads, formatByName('jsonld'));
    const doc = JSON.parse(text) as Record<string, unknown>[];
    expect(doc).toHaveLength(2);
    expectIsomorphic(await parse(text, 'jsonld'), quads);
  });

  it('writes an empty dataset as valid documents', async () => {
    for (const format of EXPORT_FORMATS) {
      const text = await serialize([], format);
      expect(await parse(text, format.name)).toEqual([]);
    }
    expect(JSON.parse(await serialize([], formatByName('jsonld')))).toEqual([]);
  });
});

describe('blank nodes', () => {
  it('prefixes labels so that two files using _:b0 stay distinct', async () => {
    const file = '_:b0 <http://example.org/p> _:b1 .\n_:b1 <http://example.org/p> _:b0 .\n';
    const a = await parse(file, 'ntriples', { blankNodePrefix: 'fileA' });
    const b = await parse(file, 'ntriples', { blankNodePrefix: 'fileB' });
    expect(a[0]).toEqual({ subject: '_:fileAb0', predicate: '<http://example.org/p>', object: '_:fileAb1', graph: null });
    expect(a[1]!.subject).toBe(a[0]!.object); // same label, same node
    const labels = new Set([...a, ...b].flatMap((q) => [q.subject, q.object]));
    expect(labels.size).toBe(4);
    for (const l of labels) expect(l).toMatch(/^_:[A-Za-z0-9]+$/);
  });

  it('keeps file labels, odd labels and parser-generated nodes apart', async () => {
    const ttl = '_:n3-0 <http://e/p> [ <http://e/p> _:Qg0 ] .\n_:a-b <http://e/p> _:ab .\n_:a.b <http://e/p> ( "x" ) .\n';
    const quads = await parse(ttl, 'turtle', { blankNodePrefix: 'p' });
    const nodes = new Set(quads.flatMap((q) => [q.subject, q.object]).filter((t) => t.startsWith('_:')));
    expect(nodes.size).toBe(7); // n3-0, [], Qg0, a-b, ab, a.b, list node
  });

  it('prefixes labels from JSON-LD, RDF/XML and TriG graph names too', async () => {
    const json = await parse('{"@id":"_:a","http://e/p":{"@id":"_:b1"}}', 'jsonld', { blankNodePrefix: 'J' });
    expect(json).toEqual([{ subject: '_:Ja', predicate: '<http://e/p>', object: '_:Jb1', graph: null }]);
    const xml = await parse(RDFXML, 'rdfxml', { blankNodePrefix: 'X' });
    expect(xml.some((q) => q.subject === '_:Xb0')).toBe(true);
    const trig = await parse('_:g { _:s <http://e/p> "v" }', 'trig', { blankNodePrefix: 'T' });
    expect(trig).toEqual([{ subject: '_:Ts', predicate: '<http://e/p>', object: '"v"', graph: '_:Tg' }]);
  });

  it('rejects blank node prefixes outside [A-Za-z0-9]', () => {
    expect(() => parseRdf(chunked(''), { format: formatByName('turtle'), blankNodePrefix: 'a_b' })).toThrow(/blankNodePrefix/);
  });
});

describe('base IRI', () => {
  it('resolves relative IRIs against baseIRI, and @base overrides it', async () => {
    const ttl = '<a> <#p> <../c> .\n@base <http://other.org/x/> .\n<a> <b> <> .\n';
    expect(await parse(ttl, 'turtle', { baseIRI: 'http://example.org/dir/file.ttl' })).toEqual([
      { subject: '<http://example.org/dir/a>', predicate: '<http://example.org/dir/file.ttl#p>', object: '<http://example.org/c>', graph: null },
      { subject: '<http://other.org/x/a>', predicate: '<http://other.org/x/b>', object: '<http://other.org/x/>', graph: null },
    ]);
    const trig = await parse('<g> { <s> <p> <o> }', 'trig', { baseIRI: 'http://example.org/' });
    expect(trig[0]!.graph).toBe('<http://example.org/g>');
  });

  it('resolves JSON-LD and RDF/XML relative IRIs too', async () => {
    const json = await parse('{"@id":"a","http://e/p":{"@id":"../b"}}', 'jsonld', { baseIRI: 'http://example.org/dir/x.jsonld' });
    expect(json).toEqual([{ subject: '<http://example.org/dir/a>', predicate: '<http://e/p>', object: '<http://example.org/b>', graph: null }]);
    const xml = await parse(
      '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/"><rdf:Description rdf:about="a"><e:p rdf:resource="#b"/></rdf:Description></rdf:RDF>',
      'rdfxml',
      { baseIRI: 'http://example.org/dir/x.rdf' },
    );
    expect(xml).toEqual([{ subject: '<http://example.org/dir/a>', predicate: '<http://e/p>', object: '<http://example.org/dir/x.rdf#b>', graph: null }]);
  });

  it('fails on relative IRIs that cannot be resolved', async () => {
    expect((await parseError('<a> <http://e/p> <http://e/o> .', 'turtle')).message).toMatch(/^data\.ttl: syntax error at line 1.*relative IRI <a>/);
    expect((await parseError('<a> <http://e/p> <http://e/o> .\n', 'ntriples')).line).toBe(1);
  });
});

describe('syntax errors', () => {
  const cases: { format: RdfFormatName; text: string; line: number; column: number; detail: RegExp }[] = [
    { format: 'turtle', text: '@prefix ex: <http://e/> .\nex:a ex:b ex:c .\nex:a ex:b   ex:c ex:d .\n', line: 3, column: 18, detail: /Expected punctuation/ },
    { format: 'turtle', text: '@prefix ex: <http://e/> .\nex:a ex:b ex:c .\nex:a ex:b  $ .\n', line: 3, column: 12, detail: /Unexpected "\$"/ },
    { format: 'turtle', text: '@prefix ex: <http://e/> .\n\nex:a nope:b ex:c .\n', line: 3, column: 6, detail: /Undefined prefix "nope:"/ },
    { format: 'turtle', text: '<http://a> <http://b> "x\\q" .', line: 1, column: 23, detail: /Unexpected/ },
    { format: 'trig', text: '<http://g> {\n  <http://a> <http://b> <http://c> .\n', line: 3, column: 1, detail: /Unclosed graph/ },
    { format: 'trig', text: '<http://g> { <http://a> <http://b> <http://c> . }\n<http://h> { <http://a> <http://b> ; }', line: 2, column: 36, detail: /Expected entity/ },
    { format: 'ntriples', text: '<http://a> <http://b> <http://c> .\n<http://a> <http://b> <http://c d> .\n', line: 2, column: 23, detail: /Invalid IRI code point ' '/ },
    { format: 'ntriples', text: '<http://a> <http://b> <http://c> .\n<http://a> <http://b> "open .\n', line: 2, column: 23, detail: /Unexpected/ },
    { format: 'ntriples', text: '<http://a> <http://b> <http://c> .\n<http://a> ex:b <http://c> .\n', line: 2, column: 12, detail: /./ },
    { format: 'nquads', text: '<http://a> <http://b> <http://c> <http://g> <http://h> .\n', line: 1, column: 45, detail: /Expected dot/ },
    { format: 'nquads', text: '\n\n<http://a> <http://b> <http://c> "g" .\n', line: 3, column: 34, detail: /Expected entity/ },
    { format: 'jsonld', text: '{\n  "@id": "http://a",\n  "http://p": [ {"@id": "http://x"} \n', line: 4, column: 1, detail: /Array values must be followed by a comma/ },
    // oxigraph reports no position for this one: it is where its streaming parser noticed (the end)
    { format: 'jsonld', text: '{\n  "@context": {"@vocab": 5},\n  "name": "x"\n}', line: 4, column: 1, detail: /@vocab value must be a string/ },
    { format: 'rdfxml', text: '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n<rdf:Description rdf:about="http://a">\n', line: 3, column: 1, detail: /element <rdf:Description> is not closed/ },
    { format: 'rdfxml', text: '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n<rdf:Description rdf:about="http://a">\n  <rdf:value>x</rdf:valu>\n</rdf:Description></rdf:RDF>', line: 3, column: 15, detail: /expected `<\/rdf:value>`/ },
    { format: 'rdfxml', text: '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n\n<rdf:Description rdf:about="http://a b"/>\n</rdf:RDF>', line: 3, column: 1, detail: /Invalid IRI code point/ },
  ];
  for (const c of cases) {
    it(`${c.format}: line ${c.line}, column ${c.column}: ${c.detail.source}`, async () => {
      const fileName = `pets.${formatByName(c.format).extensions[0]}`;
      for (const chunkSize of [64 * 1024, 3]) {
        const e = await parseError(c.text, c.format, fileName, chunkSize);
        expect({ line: e.line, column: e.column }).toEqual({ line: c.line, column: c.column });
        expect(e.fileName).toBe(fileName);
        expect(e.detail).toMatch(c.detail);
        expect(e.message).toBe(`${fileName}: syntax error at line ${c.line}, column ${c.column}: ${e.detail}`);
      }
    });
  }

  it('reports invalid UTF-8 with its position', async () => {
    const bytes = Buffer.concat([Buffer.from('<http://a> <http://b> "ok" .\n<http://a> <http://b> "a'), Buffer.from([0xff, 0xfe]), Buffer.from('" .\n')]);
    const e = await parseError(bytes, 'ntriples', 'bytes.nt');
    expect(e.message).toBe('bytes.nt: syntax error at line 2, column 25: invalid UTF-8 byte sequence');
  });

  it('refuses remote JSON-LD contexts with a clear message (no network)', async () => {
    const e = await parseError('{"@context": "http://schema.org/", "@id": "http://a", "name": "x"}', 'jsonld', 'remote.jsonld');
    expect(e.message).toMatch(/^remote\.jsonld: unsupported JSON-LD.*remote JSON-LD contexts are not supported/);
  });

  it('rejects RDF 1.2 triple terms, which storage cannot hold', async () => {
    const e = await parseError('<http://a> <http://b> <<( <http://a> <http://b> <http://c> )>> .\n', 'turtle', 'star.ttl');
    expect(e.message).toMatch(/^star\.ttl: syntax error at line 1: RDF 1\.2 triple terms are not supported/);
  });

  it('fails on malformed input in every format', async () => {
    const bad: Record<RdfFormatName, string> = {
      turtle: '<http://a> <http://b> .',
      trig: '<http://g> { <http://a> <http://b> <http://c> . ',
      ntriples: '<http://a> <http://b> <http://c>',
      nquads: '<http://a> <http://b> <http://c> <http://g>',
      jsonld: '{"@id": ',
      rdfxml: '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description>',
    };
    for (const format of RDF_FORMATS) await parseError(bad[format.name], format.name);
    // RDF/XML: no root element, truncated inside a literal, a comment, a CDATA section
    const rdf = '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/"><rdf:Description rdf:about="http://a">';
    expect((await parseError('', 'rdfxml')).detail).toMatch(/no root element/);
    expect((await parseError('<?xml version="1.0"?>\n<!-- nothing -->\n', 'rdfxml')).detail).toMatch(/no root element/);
    expect((await parseError(`${rdf}<e:p>text`, 'rdfxml')).detail).toMatch(/<e:p> is not closed/);
    await parseError(`${rdf}<e:p><![CDATA[ x `, 'rdfxml');
    await parseError(`${rdf}<!-- x `, 'rdfxml');
    // ... while complete documents with comments, CDATA, DOCTYPE, '>' in attributes pass
    const ok = `<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [ <!ENTITY e "http://e/"> ]>\n<!-- <not a tag> -->\n${rdf}<e:p><![CDATA[ <b> ]]></e:p><e:q/></rdf:Description><rdf:Description rdf:about="http://b" xmlns:a="http://a/" a:x="1 > 0"/></rdf:RDF>\n`;
    for (const chunkSize of [1, 7, 1024]) {
      expect(await parse(ok, 'rdfxml', { chunkSize })).toEqual([
        { subject: '<http://a>', predicate: '<http://e/p>', object: '" <b> "', graph: null },
        { subject: '<http://a>', predicate: '<http://e/q>', object: '""', graph: null },
        { subject: '<http://b>', predicate: '<http://a/x>', object: '"1 > 0"', graph: null },
      ]);
    }
    // N-Triples and N-Quads have no prefixes, relative IRIs or Turtle abbreviations.
    await parseError('<http://a> a <http://c> .\n', 'ntriples');
    await parseError('<http://a> <http://b> <http://c> <http://g> .\n', 'ntriples');
    // language tag and datatype together, bad language tag
    await parseError('<http://a> <http://b> "x"@en^^<http://d> .\n', 'ntriples');
    await parseError('<http://a> <http://b> "x"@1bad .\n', 'turtle');
    await parseError('{"@id": 5, "http://p": "x"}', 'jsonld');
    await parseError('{"@id":"http://a","http://p":{"@value":"x","@type":"http://t","@language":"en"}}', 'jsonld');
    expect((await parseError('{"@id":"http://a","http://p":"x"} trailing', 'jsonld')).column).toBe(35);
  });

  it('passes errors of the input stream through unchanged', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('<http://a> <http://b> <http://c> .\n');
      throw new Error('unexpected end of gzip stream');
    }
    async function* failingJson(): AsyncGenerator<Buffer> {
      yield Buffer.from('{"@id": "http://a", ');
      throw new Error('unexpected end of gzip stream');
    }
    for (const format of ['ntriples', 'jsonld'] as const) {
      await expect(async () => {
        for await (const _ of parseRdf(format === 'jsonld' ? failingJson() : failing(), { format: formatByName(format), blankNodePrefix: 'x' })) void _;
      }).rejects.toThrow(/^unexpected end of gzip stream$/);
    }
  });
});

describe('negotiateRdfFormat', () => {
  const offered = EXPORT_FORMATS;
  const name = (accept: string | undefined, list: readonly RdfFormat[] = offered) => negotiateRdfFormat(accept, list)?.name ?? null;

  it('gives the first offered format without a preference', () => {
    expect(name(undefined)).toBe(offered[0]!.name);
    expect(name('')).toBe(offered[0]!.name);
    expect(name('*/*')).toBe(offered[0]!.name);
    expect(name('*/*', [formatByName('jsonld'), formatByName('turtle')])).toBe('jsonld');
  });

  it('honours exact types, aliases, parameters and q-values', () => {
    expect(name('text/turtle')).toBe('turtle');
    expect(name('application/n-triples')).toBe('ntriples');
    expect(name('text/plain')).toBe('ntriples');
    expect(name('application/x-trig')).toBe('trig');
    expect(name('application/ld+json;profile="http://www.w3.org/ns/json-ld#expanded"')).toBe('jsonld');
    expect(name('text/turtle; charset=utf-8')).toBe('turtle');
    expect(name('text/turtle;q=0.5, application/n-quads')).toBe('nquads');
    expect(name('application/n-quads;q=0.1, text/turtle;q=0.9, */*;q=0.01')).toBe('turtle');
    expect(name('application/ld+json;q=0, */*')).toBe(offered[0]!.name);
  });

  it('handles wildcards, preferring canonical media types', () => {
    expect(name('text/*')).toBe('turtle');
    expect(name('application/*', [formatByName('turtle'), formatByName('nquads')])).toBe('nquads');
    expect(name('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(offered[0]!.name);
  });

  it('returns null when nothing offered is acceptable', () => {
    expect(name('image/png')).toBeNull();
    expect(name('text/html')).toBeNull();
    expect(name('application/rdf+xml')).toBeNull(); // not exportable
    expect(name('text/turtle;q=0')).toBeNull();
    expect(name('text/turtle', [])).toBeNull();
  });
});

describe('formatFromPath and formatFromMediaType', () => {
  it('maps file names (extension aliases, .gz, any case) to formats', () => {
    const f = (n: string) => {
      const r = formatFromPath(n);
      return r ? `${r.format.name}${r.gzip ? '+gz' : ''}` : null;
    };
    expect(f('download.trig')).toBe('trig');
    expect(f('download.nt.gz')).toBe('ntriples+gz');
    expect(f('data.ttl.gz')).toBe('turtle+gz');
    expect(f('data.turtle')).toBe('turtle');
    expect(f('x.rdf')).toBe('rdfxml');
    expect(f('ONTOLOGY.OWL')).toBe('rdfxml');
    expect(f('x.xml')).toBe('rdfxml');
    expect(f('x.nq')).toBe('nquads');
    expect(f('context.jsonld')).toBe('jsonld');
    expect(f('data.json.GZ')).toBe('jsonld+gz');
    expect(f('dir.v2/file.ttl')).toBe('turtle');
    expect(f('download')).toBeNull();
    expect(f('archive.gz')).toBeNull();
    expect(f('notes.txt')).toBeNull();
    expect(f('x.csv.gz')).toBeNull();
  });

  it('maps media types, ignoring parameters and case', () => {
    expect(formatFromMediaType('text/turtle; charset=utf-8')?.name).toBe('turtle');
    expect(formatFromMediaType('Application/LD+JSON')?.name).toBe('jsonld');
    expect(formatFromMediaType('application/x-trig')?.name).toBe('trig');
    expect(formatFromMediaType('text/plain')?.name).toBe('ntriples');
    expect(formatFromMediaType('application/xml')?.name).toBe('rdfxml');
    expect(formatFromMediaType('application/octet-stream')).toBeNull();
    expect(formatFromMediaType('')).toBeNull();
  });
});

describe('early exit', () => {
  it('closes the input when the consumer stops early', async () => {
    for (const format of RDF_FORMATS) {
      let closed = false;
      async function* input(): AsyncGenerator<Buffer> {
        try {
          // The sample, then (never read) more of it: the consumer stops after the first batch.
          for (let i = 0; i < 100; i++) yield Buffer.from(SAMPLES[format.name]);
        } finally {
          closed = true;
        }
      }
      for await (const batch of parseRdf(input(), { format, blankNodePrefix: 'e', baseIRI: 'http://example.org/', batchSize: 1 })) {
        expect(batch.length).toBe(1);
        break;
      }
      expect(closed).toBe(true);
    }
  });
});
