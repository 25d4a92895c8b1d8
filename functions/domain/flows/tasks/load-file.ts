/**
 * Reading a file fetched by a flow task: telling its format (given, or from the file name and
 * content type, XML sniffed for RDF/XML), decompressing gzip, and turning it into canonical
 * N-Triples lines per graph: RDF through the import parsers, CSV/TSV and XML through the
 * lossless mappings of `rdf/tabular.ts` and `rdf/xml-to-rdf.ts`.
 */
import { Readable } from 'node:stream';
import { formatByName, type RdfFormat, type RdfFormatName } from '../../../rdf/formats.js';
import { formatFromMediaType, formatFromPath } from '../../../rdf/negotiate.js';
import { ntIriValue, sanitizeBlankLabel } from '../../../rdf/nt.js';
import { parseRdf } from '../../../rdf/parse.js';
import { tabularToNt } from '../../../rdf/tabular.js';
import { xmlToNt } from '../../../rdf/xml-to-rdf.js';
import { gunzipChecked, startsLikeGzip } from '../../data/gunzip.js';

/** What a loaded file is read as. */
export type LoadFormat = { kind: 'rdf'; format: RdfFormat } | { kind: 'csv' } | { kind: 'tsv' } | { kind: 'xml' };

/** The `format` setting's names of RDF serializations. */
const RDF_SETTING: Record<string, RdfFormatName> = {
  turtle: 'turtle',
  trig: 'trig',
  'n-triples': 'ntriples',
  'n-quads': 'nquads',
  'rdf-xml': 'rdfxml',
  'json-ld': 'jsonld',
};

export const describeFormat = (f: LoadFormat): string =>
  f.kind === 'rdf' ? ({ turtle: 'Turtle', trig: 'TriG', ntriples: 'N-Triples', nquads: 'N-Quads', rdfxml: 'RDF/XML', jsonld: 'JSON-LD' } as const)[f.format.name] : f.kind.toUpperCase();

/** The format a setting names; `null` for `auto` (or none). */
export function formatOfSetting(setting: string | undefined): LoadFormat | null {
  if (!setting || setting === 'auto') return null;
  if (setting === 'csv' || setting === 'tsv' || setting === 'xml') return { kind: setting };
  const rdf = RDF_SETTING[setting];
  if (!rdf) throw new Error(`unknown format "${setting}"`);
  return { kind: 'rdf', format: formatByName(rdf) };
}

/** Bytes looked at to tell RDF/XML from other XML. */
const SNIFF_BYTES = 64 * 1024;

/**
 * The bytes of a download, decompressed when gzip (by name or by its first bytes), with its
 * first bytes at hand for sniffing.
 */
export async function openDownload(body: Readable, fileName: string): Promise<{ head: Buffer; body: AsyncIterable<Buffer> }> {
  const raw = await peek(body, 2);
  const gzipped = /\.gz$/i.test(fileName) || startsLikeGzip(raw.head);
  if (!gzipped) return peek(Readable.from(raw.body), SNIFF_BYTES);
  return peek(Readable.from(gunzipChecked(raw.body, fileName)), SNIFF_BYTES);
}

/** Reads at least `bytes` (or to the end) and gives them with a replay of the whole stream. */
async function peek(stream: Readable, bytes: number): Promise<{ head: Buffer; body: AsyncIterable<Buffer> }> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const first: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : Buffer.from(next.value);
    first.push(chunk);
    size += chunk.length;
  }
  const head = Buffer.concat(first);
  async function* replay(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    if (done) return;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) yield typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
  }
  return { head, body: replay() };
}

const XML_TYPES = new Set(['application/xml', 'text/xml']);

/**
 * Tells the format of a download: first by its file name's extension, then by its content type.
 * `.xml` and generic XML content types are RDF/XML when the root element is `rdf:RDF`.
 */
export function detectFormat(fileName: string, contentType: string | undefined, head: Buffer): LoadFormat | null {
  const name = fileName.toLowerCase().replace(/\.gz$/, '');
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : '';
  if (ext === 'csv') return { kind: 'csv' };
  if (ext === 'tsv' || ext === 'tab') return { kind: 'tsv' };
  if (ext === 'xml') return sniffXml(head);
  const byName = formatFromPath(name);
  if (byName) return { kind: 'rdf', format: byName.format };
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'text/csv' || type === 'application/csv') return { kind: 'csv' };
  if (type === 'text/tab-separated-values') return { kind: 'tsv' };
  if (type !== 'application/rdf+xml' && (XML_TYPES.has(type) || type.endsWith('+xml'))) return sniffXml(head);
  const byType = type ? formatFromMediaType(type) : null;
  return byType ? { kind: 'rdf', format: byType } : null;
}

const RDF_NS = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';

/** RDF/XML when the first element is `RDF` in the RDF namespace (as far as the head shows), else XML. */
export function sniffXml(head: Buffer): LoadFormat {
  const text = head.toString('utf8');
  // Skip the declaration, comments, processing instructions and the DOCTYPE.
  const root = /^(?:\uFEFF)?(?:\s|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE(?:[^[>]|\[[\s\S]*?\])*>)*<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)([^>]*)>/.exec(text);
  if (root && root[2] === 'RDF') {
    const prefix = root[1] ? root[1].slice(0, -1) : '';
    const declaration = new RegExp(`xmlns${prefix ? `:${prefix}` : ''}\\s*=\\s*["']${RDF_NS.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}["']`);
    if (declaration.test(root[3] ?? '')) return { kind: 'rdf', format: formatByName('rdfxml') };
  }
  return { kind: 'xml' };
}

/** One graph's share of the lines: `graph` null for the target graph. */
export interface LineBatch {
  graph: string | null;
  lines: string[];
}

/**
 * The file's statements as canonical N-Triples lines. Quads of RDF formats with named graphs
 * keep their graph (a blank-node graph becomes `<target>/<label>`); everything else goes to the
 * target graph.
 */
export async function* readAsLines(
  body: AsyncIterable<Buffer>,
  format: LoadFormat,
  options: { graph: string; baseIRI: string; blankNodePrefix: string; fileName: string },
): AsyncGenerator<LineBatch> {
  if (format.kind === 'csv' || format.kind === 'tsv') {
    for await (const lines of tabularToNt(body, { graph: options.graph, delimiter: format.kind === 'csv' ? ',' : '\t' })) yield { graph: null, lines };
    return;
  }
  if (format.kind === 'xml') {
    for await (const lines of xmlToNt(body, { graph: options.graph, fileName: options.fileName })) yield { graph: null, lines };
    return;
  }
  const prefix = sanitizeBlankLabel(options.blankNodePrefix);
  const batches = parseRdf(Readable.from(body), { format: format.format, baseIRI: options.baseIRI, blankNodePrefix: prefix, fileName: options.fileName });
  for await (const batch of batches) {
    let current: LineBatch | null = null;
    for (const q of batch) {
      const graph = q.graph === null ? null : q.graph.startsWith('<') ? ntIriValue(q.graph) : `${options.graph}/${q.graph.slice(2 + prefix.length)}`;
      if (!current || current.graph !== graph) {
        if (current) yield current;
        current = { graph, lines: [] };
      }
      current.lines.push(`${q.subject} ${q.predicate} ${q.object} .`);
    }
    if (current) yield current;
  }
}
