/**
 * Any XML document as RDF: a lossless, documented mapping (statemachines/README.md, "Load from
 * URL: tables and XML as RDF") of every element, attribute and piece of text, values as plain
 * string literals.
 *
 * For the graph `G`, with `x:` = `https://w3id.org/linked-data-platform/xml#`:
 *
 * - `<G/document>` a `x:Document`; `x:child` the root element.
 * - Element `k` in document order (1-based): `<G/element/k>` a `x:Element`; `x:name "<name as
 *   written, prefix included>"`; `x:namespace "<namespace URI>"` when it has one;
 *   `x:position n` (1-based place among its parent's children); its parent `x:child` it.
 * - Each attribute (namespace declarations included): `<G/element/k> <x:attribute/<name>> "<value>"`,
 *   the name as written, percent-encoded (as table headers are).
 * - Text: an element without element children gets its whole text as `rdf:value "<text>"` (exactly
 *   as written, whitespace kept; CDATA is text). In an element with element children (mixed
 *   content) each run of text between them becomes `<G/text/m>` a `x:Text`; `rdf:value`;
 *   `x:position n`; and its parent `x:child` it, so text and elements keep their order. Runs of
 *   only whitespace between elements are layout and are dropped.
 * - Comments, processing instructions and the DOCTYPE are not kept. Positions are xsd:integer.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { ntIri, ntLiteral, RDF_TYPE } from './nt.js';
import { encodeName, XSD_INTEGER } from './tabular.js';

export const XML_NS = 'https://w3id.org/linked-data-platform/xml#';
const RDF_VALUE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#value';

export interface XmlToRdfOptions {
  /** The graph name the node IRIs derive from (an absolute IRI). */
  graph: string;
  /** Lines per yielded batch, roughly (default 2000). */
  batchSize?: number;
  /** Only used in error messages. */
  fileName?: string;
}

/** Not well-formed XML; the message names the line and column. */
export class XmlSyntaxError extends Error {
  override name = 'XmlSyntaxError';
}

interface Open {
  node: string;
  /** Children (elements and text nodes) so far. */
  children: number;
  hasElements: boolean;
  text: string;
}

const WHITESPACE = /^[ \t\r\n]*$/;

/** Streams an XML document (UTF-8) as canonical N-Triples lines (without newline), in batches. */
export async function* xmlToNt(input: AsyncIterable<Buffer | Uint8Array | string>, options: XmlToRdfOptions): AsyncGenerator<string[]> {
  const batchSize = options.batchSize ?? 2000;
  const g = options.graph;
  const a = ntIri(RDF_TYPE);
  const x = (local: string) => ntIri(`${XML_NS}${local}`);
  const [pChild, pName, pNamespace, pPosition] = ['child', 'name', 'namespace', 'position'].map(x) as [string, string, string, string];
  const pValue = ntIri(RDF_VALUE);
  const integer = (n: number) => ntLiteral(String(n), undefined, XSD_INTEGER);

  let out: string[] = [];
  const document: Open = { node: ntIri(`${g}/document`), children: 0, hasElements: true, text: '' };
  out.push(`${document.node} ${a} ${x('Document')} .`);
  const stack: Open[] = [document];
  let elements = 0;
  let texts = 0;

  const addChild = (parent: Open, node: string) => {
    parent.children++;
    out.push(`${parent.node} ${pChild} ${node} .`, `${node} ${pPosition} ${integer(parent.children)} .`);
  };
  /** Text before an element child, or at the end of an element with element children. */
  const flushMixedText = (parent: Open) => {
    const text = parent.text;
    parent.text = '';
    if (parent === document || WHITESPACE.test(text)) return;
    const node = ntIri(`${g}/text/${++texts}`);
    out.push(`${node} ${a} ${x('Text')} .`, `${node} ${pValue} ${ntLiteral(text)} .`);
    addChild(parent, node);
  };

  const parser = new SaxesParser({ xmlns: true, position: true, ...(options.fileName ? { fileName: options.fileName } : {}) });
  parser.on('opentag', (tag: SaxesTagNS) => {
    const parent = stack[stack.length - 1]!;
    flushMixedText(parent);
    parent.hasElements = true;
    const node = ntIri(`${g}/element/${++elements}`);
    out.push(`${node} ${a} ${x('Element')} .`, `${node} ${pName} ${ntLiteral(tag.name)} .`);
    if (tag.uri) out.push(`${node} ${pNamespace} ${ntLiteral(tag.uri)} .`);
    addChild(parent, node);
    for (const attribute of Object.values(tag.attributes)) {
      out.push(`${node} ${ntIri(`${XML_NS}attribute/${encodeName(attribute.name)}`)} ${ntLiteral(attribute.value)} .`);
    }
    stack.push({ node, children: 0, hasElements: false, text: '' });
  });
  const onText = (text: string) => {
    const current = stack[stack.length - 1]!;
    if (current !== document) current.text += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    const element = stack.pop()!;
    if (element.hasElements) flushMixedText(element);
    else if (element.text !== '') out.push(`${element.node} ${pValue} ${ntLiteral(element.text)} .`);
  });

  const decoder = new TextDecoder('utf-8');
  const write = (text: string) => {
    try {
      parser.write(text);
    } catch (e) {
      throw new XmlSyntaxError((e as Error).message);
    }
  };
  for await (const chunk of input) {
    write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    if (out.length >= batchSize) {
      yield out;
      out = [];
    }
  }
  const rest = decoder.decode();
  if (rest) write(rest);
  try {
    parser.close();
  } catch (e) {
    throw new XmlSyntaxError((e as Error).message);
  }
  if (out.length > 0) yield out;
}
