/**
 * The oxigraph parsers run in a worker thread: a file that makes the WASM module trap ends that
 * parse with an RdfSyntaxError, the worker is replaced, and the next parse works. The checks made
 * before the parser (entity expansion, nesting depth) are lifted here to reach the trap itself.
 */
import { describe, expect, it } from 'vitest';
import { formatByName } from '../../functions/rdf/formats.js';
import { DEFAULT_PARSE_LIMITS, parseRdf, RdfSyntaxError, type ParseLimits } from '../../functions/rdf/parse.js';

const NO_GUARDS: ParseLimits = {
  maxJsonLdDepth: Number.MAX_SAFE_INTEGER,
  maxXmlDepth: Number.MAX_SAFE_INTEGER,
  maxEntityDeclarationChars: Number.MAX_SAFE_INTEGER,
  maxEntityExpansionChars: Number.MAX_SAFE_INTEGER,
  maxPrologChars: Number.MAX_SAFE_INTEGER,
  entitiesMayReferToEntities: true,
};

export function billionLaughsRdfXml(levels = 9): string {
  let entities = '<!ENTITY lol0 "lol">';
  for (let i = 1; i <= levels; i++) entities += `<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`;
  return (
    `<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [${entities}]>\n` +
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">' +
    `<rdf:Description rdf:about="http://example.org/s"><ex:p>&lol${levels};</ex:p></rdf:Description></rdf:RDF>\n`
  );
}

export function deepJsonLd(depth: number): string {
  let doc = '{"@id":"http://example.org/leaf","http://example.org/p":"v"}';
  for (let i = 0; i < depth; i++) doc = `{"@id":"http://example.org/n${i}","http://example.org/p":${doc}}`;
  return doc;
}

async function count(text: string, format: 'jsonld' | 'rdfxml', limits?: Partial<ParseLimits>): Promise<number> {
  let n = 0;
  const input = (async function* () {
    yield Buffer.from(text);
  })();
  for await (const batch of parseRdf(input, { format: formatByName(format), blankNodePrefix: 'b', fileName: `f.${format}`, limits })) n += batch.length;
  return n;
}

const VALID_JSONLD = '{"@id":"http://example.org/s","http://example.org/p":"o"}';

describe('oxigraph parse worker', () => {
  it('a JSON-LD file that traps the WASM parser fails that parse; the next parse works', async () => {
    const failure = await count(deepJsonLd(1000), 'jsonld', NO_GUARDS).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(RdfSyntaxError);
    expect((failure as Error).message).toMatch(/^f\.jsonld: the JSON-LD parser failed on this file: /);
    expect(await count(VALID_JSONLD, 'jsonld')).toBe(1);
  });

  it('a billion-laughs RDF/XML file that panics the WASM parser fails that parse; the next parse works', async () => {
    const failure = await count(billionLaughsRdfXml(), 'rdfxml', NO_GUARDS).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(RdfSyntaxError);
    expect((failure as Error).message).toMatch(/^f\.rdfxml: the RDF\/XML parser failed on this file: it hit an internal limit \(capacity overflow\)/);
    expect(await count(VALID_JSONLD, 'jsonld')).toBe(1);
  });

  it('with the default limits both files are refused before the parser, naming the limit', async () => {
    await expect(count(deepJsonLd(1000), 'jsonld')).rejects.toThrow(
      `f.jsonld: refused JSON-LD at line 1: objects and arrays are nested more than ${DEFAULT_PARSE_LIMITS.maxJsonLdDepth} levels deep`,
    );
    await expect(count(billionLaughsRdfXml(), 'rdfxml')).rejects.toThrow(/f\.rdfxml: refused RDF\/XML: the entity "lol1" refers to the entity "lol0"/);
  });

  it('RDF/XML entities declared as plain text and used often still parse', async () => {
    const doc =
      '<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [<!ENTITY ex "http://example.org/"> <!ENTITY note "a &amp; b">]>\n' +
      '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">' +
      Array.from({ length: 50 }, (_, i) => `<rdf:Description rdf:about="&ex;s${i}"><ex:p rdf:resource="&ex;o"/></rdf:Description>`).join('') +
      '</rdf:RDF>\n';
    expect(await count(doc, 'rdfxml')).toBe(50);
  });
});
