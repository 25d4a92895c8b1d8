/**
 * The Load from URL task's mappings of CSV/TSV and XML to RDF (lossless: every cell, element,
 * attribute and text as a string literal) and its format detection.
 */
import { describe, expect, it } from 'vitest';
import { Parser } from 'n3';
import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { detectFormat, openDownload, sniffXml } from '../../../functions/domain/flows/tasks/load-file.js';
import { columnProperties, encodeName, TABULAR_NS, TabularSyntaxError, tabularToNt } from '../../../functions/rdf/tabular.js';
import { XML_NS, XmlSyntaxError, xmlToNt } from '../../../functions/rdf/xml-to-rdf.js';

const G = 'https://ex.org/g';
const T = TABULAR_NS;
const X = XML_NS;
const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const INT = 'http://www.w3.org/2001/XMLSchema#integer';

async function collect(gen: AsyncIterable<string[]>): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of gen) out.push(...batch);
  return out;
}

/** The lines as [s, p, o] with literals as their value (strings) and IRIs as `<iri>`. */
function triples(lines: string[]): [string, string, string][] {
  // Every line must be valid N-Triples.
  const quads = new Parser({ format: 'N-Triples' }).parse(`${lines.join('\n')}\n`);
  expect(quads).toHaveLength(lines.length);
  return quads.map((q) => [
    `<${q.subject.value}>`,
    `<${q.predicate.value}>`,
    q.object.termType === 'Literal' ? (q.object.datatype.value === INT ? `${q.object.value}^^int` : q.object.value) : `<${q.object.value}>`,
  ]);
}

const valuesOf = (t: [string, string, string][], s: string, p: string) => t.filter(([ts, tp]) => ts === `<${s}>` && tp === `<${p}>`).map(([, , o]) => o);
const chunks = (text: string, size = 3) => Readable.from(Array.from({ length: Math.ceil(text.length / size) }, (_, i) => Buffer.from(text.slice(i * size, i * size + size))));

describe('CSV and TSV as RDF', () => {
  it('keeps every cell as a string, empty cells as "", with rows and columns described', async () => {
    const csv = 'name,age,note\r\n"Smith, J.",42,\r\nÉmile,007,"says ""hi""\nthen leaves"\r\n\r\n,,\r\n';
    const t = triples(await collect(tabularToNt(chunks(csv), { graph: G, delimiter: ',', batchSize: 4 })));
    const col = (h: string) => `${T}column/${h}`;
    expect(valuesOf(t, `${G}/table`, `${RDF}type`)).toEqual([`<${T}Table>`]);
    expect(valuesOf(t, `${G}/table`, `${T}column`).sort()).toEqual([`<${G}/column/1>`, `<${G}/column/2>`, `<${G}/column/3>`]);
    expect(valuesOf(t, `${G}/column/2`, `${T}header`)).toEqual(['age']);
    expect(valuesOf(t, `${G}/column/2`, `${T}columnNumber`)).toEqual(['2^^int']);
    expect(valuesOf(t, `${G}/column/2`, `${T}property`)).toEqual([`<${col('age')}>`]);
    expect(valuesOf(t, `${G}/row/1`, `${RDF}type`)).toEqual([`<${T}Row>`]);
    expect(valuesOf(t, `${G}/row/1`, `${T}rowNumber`)).toEqual(['1^^int']);
    expect(valuesOf(t, `${G}/row/1`, col('name'))).toEqual(['Smith, J.']);
    expect(valuesOf(t, `${G}/row/1`, col('age'))).toEqual(['42']);
    expect(valuesOf(t, `${G}/row/1`, col('note'))).toEqual(['']);
    expect(valuesOf(t, `${G}/row/2`, col('name'))).toEqual(['Émile']);
    expect(valuesOf(t, `${G}/row/2`, col('age'))).toEqual(['007']);
    expect(valuesOf(t, `${G}/row/2`, col('note'))).toEqual(['says "hi"\nthen leaves']);
    // The blank line is skipped; a line of empty cells is a row.
    expect(valuesOf(t, `${G}/row/3`, col('name'))).toEqual(['']);
    expect(valuesOf(t, `${G}/row/3`, `${T}rowNumber`)).toEqual(['3^^int']);
    expect(valuesOf(t, `${G}/row/4`, `${RDF}type`)).toEqual([]);
    // The table's type and 3 columns, 3 columns × 4, 3 rows × (2 + 3 cells).
    expect(t).toHaveLength(1 + 3 + 12 + 15);
  });

  it('names odd headers without clashes and keeps cells beyond the header', async () => {
    expect(columnProperties(['a b', 'a b', '', 'x~1', 'é/?#'])).toEqual([
      `${T}column/a%20b`,
      `${T}column/a%20b~2`,
      `${T}column/~3`,
      `${T}column/x%7E1`,
      `${T}column/${encodeURIComponent('é/?#')}`,
    ]);
    expect(encodeName('~')).toBe('%7E');
    const t = triples(await collect(tabularToNt(Readable.from(['k,k,\n1,2,3,4\n5\n']), { graph: G, delimiter: ',' })));
    expect(valuesOf(t, `${G}/row/1`, `${T}column/k`)).toEqual(['1']);
    expect(valuesOf(t, `${G}/row/1`, `${T}column/k~2`)).toEqual(['2']);
    expect(valuesOf(t, `${G}/row/1`, `${T}column/~3`)).toEqual(['3']);
    expect(valuesOf(t, `${G}/row/1`, `${T}column/~4`)).toEqual(['4']);
    expect(valuesOf(t, `${G}/row/2`, `${T}column/k`)).toEqual(['5']);
    expect(valuesOf(t, `${G}/row/2`, `${T}column/k~2`)).toEqual([]);
    expect(valuesOf(t, `${G}/column/3`, `${T}header`)).toEqual(['']);
  });

  it('reads TSV without quoting: quotes are data', async () => {
    const t = triples(await collect(tabularToNt(Readable.from(['\uFEFFid\t"title"\n1\t"quoted" text\n2\t\n']), { graph: G, delimiter: '\t' })));
    expect(valuesOf(t, `${G}/column/2`, `${T}header`)).toEqual(['"title"']);
    const title = `${T}column/${encodeURIComponent('"title"')}`;
    expect(valuesOf(t, `${G}/row/1`, `${T}column/id`)).toEqual(['1']);
    expect(valuesOf(t, `${G}/row/1`, title)).toEqual(['"quoted" text']);
    expect(valuesOf(t, `${G}/row/2`, title)).toEqual(['']);
  });

  it('gives a header-only file its columns and no rows, and refuses an unclosed quote', async () => {
    const t = triples(await collect(tabularToNt(Readable.from(['a,b\n']), { graph: G, delimiter: ',' })));
    expect(t.filter(([, p]) => p === `<${T}rowNumber>`)).toHaveLength(0);
    expect(t.filter(([, p]) => p === `<${T}header>`)).toHaveLength(2);
    await expect(collect(tabularToNt(Readable.from(['a,b\n"1,2\n']), { graph: G, delimiter: ',' }))).rejects.toThrow(TabularSyntaxError);
  });
});

describe('XML as RDF', () => {
  const doc = `<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<catalog xmlns="urn:cat" xmlns:dc="http://purl.org/dc/elements/1.1/" version="2">
  <item id="a1" dc:lang="en">
    <dc:title>Night &amp; Day</dc:title>
    <price currency="EUR"> 12.50 </price>
    <empty/>
    <p>Hello <b>bold</b> world<![CDATA[ <raw> ]]></p>
  </item>
</catalog>`;

  it('keeps every element, attribute and text, in order, as strings', async () => {
    const t = triples(await collect(xmlToNt(chunks(doc, 7), { graph: G, batchSize: 5 })));
    const el = (k: number) => `${G}/element/${k}`;
    const attr = (n: string) => `${X}attribute/${encodeURIComponent(n)}`;
    expect(valuesOf(t, `${G}/document`, `${RDF}type`)).toEqual([`<${X}Document>`]);
    expect(valuesOf(t, `${G}/document`, `${X}child`)).toEqual([`<${el(1)}>`]);
    // Elements in document order.
    const names = [1, 2, 3, 4, 5, 6, 7].map((k) => valuesOf(t, el(k), `${X}name`)[0]);
    expect(names).toEqual(['catalog', 'item', 'dc:title', 'price', 'empty', 'p', 'b']);
    expect(valuesOf(t, el(1), `${X}namespace`)).toEqual(['urn:cat']);
    expect(valuesOf(t, el(3), `${X}namespace`)).toEqual(['http://purl.org/dc/elements/1.1/']);
    expect(valuesOf(t, el(1), `${X}position`)).toEqual(['1^^int']);
    // Attributes, namespace declarations included.
    expect(valuesOf(t, el(1), attr('version'))).toEqual(['2']);
    expect(valuesOf(t, el(1), attr('xmlns'))).toEqual(['urn:cat']);
    expect(valuesOf(t, el(1), attr('xmlns:dc'))).toEqual(['http://purl.org/dc/elements/1.1/']);
    expect(valuesOf(t, el(2), attr('id'))).toEqual(['a1']);
    expect(valuesOf(t, el(2), attr('dc:lang'))).toEqual(['en']);
    expect(valuesOf(t, el(4), attr('currency'))).toEqual(['EUR']);
    // Children and their positions.
    expect(valuesOf(t, el(2), `${X}child`).sort()).toEqual([el(3), el(4), el(5), el(6)].map((s) => `<${s}>`).sort());
    expect([3, 4, 5, 6].map((k) => valuesOf(t, el(k), `${X}position`)[0])).toEqual(['1^^int', '2^^int', '3^^int', '4^^int']);
    // Text: exactly as written, entities resolved; layout whitespace between elements dropped.
    expect(valuesOf(t, el(3), `${RDF}value`)).toEqual(['Night & Day']);
    expect(valuesOf(t, el(4), `${RDF}value`)).toEqual([' 12.50 ']);
    expect(valuesOf(t, el(5), `${RDF}value`)).toEqual([]);
    expect(valuesOf(t, el(2), `${RDF}value`)).toEqual([]);
    // Mixed content: text nodes and elements in order.
    const pChildren = valuesOf(t, el(6), `${X}child`).map((o) => o.slice(1, -1));
    const ordered = pChildren.sort((a, b) => parseInt(valuesOf(t, a, `${X}position`)[0]!, 10) - parseInt(valuesOf(t, b, `${X}position`)[0]!, 10));
    expect(ordered).toEqual([`${G}/text/1`, el(7), `${G}/text/2`]);
    expect(valuesOf(t, `${G}/text/1`, `${RDF}type`)).toEqual([`<${X}Text>`]);
    expect(valuesOf(t, `${G}/text/1`, `${RDF}value`)).toEqual(['Hello ']);
    expect(valuesOf(t, `${G}/text/2`, `${RDF}value`)).toEqual([' world <raw> ']);
    expect(valuesOf(t, el(7), `${RDF}value`)).toEqual(['bold']);
    // Nothing else: no statement for the comment or the declaration.
    expect(t.filter(([, , o]) => o.includes('comment'))).toEqual([]);
  });

  it('refuses XML that is not well-formed', async () => {
    await expect(collect(xmlToNt(Readable.from(['<a><b></a>']), { graph: G }))).rejects.toThrow(XmlSyntaxError);
    await expect(collect(xmlToNt(Readable.from(['<a>']), { graph: G }))).rejects.toThrow(XmlSyntaxError);
  });
});

describe('format detection', () => {
  const head = (s: string) => Buffer.from(s);
  it('uses the extension first, then the content type, and sniffs XML for RDF/XML', () => {
    expect(detectFormat('data.csv', 'text/plain', head(''))).toEqual({ kind: 'csv' });
    expect(detectFormat('data.tsv.gz', undefined, head(''))).toEqual({ kind: 'tsv' });
    expect(detectFormat('data.ttl', 'text/plain', head(''))).toMatchObject({ kind: 'rdf', format: { name: 'turtle' } });
    expect(detectFormat('export', 'text/turtle; charset=utf-8', head(''))).toMatchObject({ kind: 'rdf', format: { name: 'turtle' } });
    expect(detectFormat('export', 'application/n-triples', head(''))).toMatchObject({ kind: 'rdf', format: { name: 'ntriples' } });
    expect(detectFormat('export', 'text/csv', head(''))).toEqual({ kind: 'csv' });
    expect(detectFormat('export', 'text/tab-separated-values', head(''))).toEqual({ kind: 'tsv' });
    expect(detectFormat('export', 'application/octet-stream', head(''))).toBeNull();
    expect(detectFormat('export', 'application/rdf+xml', head('<x/>'))).toMatchObject({ kind: 'rdf', format: { name: 'rdfxml' } });
    const rdfXml = '<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [<!ENTITY x "y">]>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"></rdf:RDF>';
    expect(detectFormat('data.xml', undefined, head(rdfXml))).toMatchObject({ kind: 'rdf', format: { name: 'rdfxml' } });
    expect(detectFormat('export', 'application/xml', head(rdfXml))).toMatchObject({ kind: 'rdf', format: { name: 'rdfxml' } });
    expect(detectFormat('data.xml', undefined, head('<catalog><RDF/></catalog>'))).toEqual({ kind: 'xml' });
    expect(detectFormat('export', 'application/atom+xml', head('<feed/>'))).toEqual({ kind: 'xml' });
    expect(sniffXml(head('<RDF xmlns="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>'))).toMatchObject({ kind: 'rdf' });
    expect(sniffXml(head('<x:RDF xmlns:x="urn:other"/>'))).toEqual({ kind: 'xml' });
  });

  it('decompresses gzip by its first bytes', async () => {
    const file = await openDownload(Readable.from([gzipSync(Buffer.from('a,b\n1,2\n'))]), 'download');
    expect(file.head.toString()).toBe('a,b\n1,2\n');
    const all: Buffer[] = [];
    for await (const c of file.body) all.push(c);
    expect(Buffer.concat(all).toString()).toBe('a,b\n1,2\n');
  });
});
