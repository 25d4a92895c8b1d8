/**
 * Results from the external store, normalised and written in the requested format: SELECT/ASK
 * arrive as SPARQL JSON (blank node labels, xsd:boolean `1`/`0`, Virtuoso's `typed-literal` and
 * `_star_fake` column fixed here), CONSTRUCT/DESCRIBE as N-Triples re-serialised by oxigraph.
 */
import * as oxigraph from 'oxigraph';
import { EngineQueryError } from '../../../ports/sparql-engine.js';
import { RESULT_FORMATS } from '../../../rdf/formats.js';
import { RDF_LANG_STRING, XSD_STRING } from '../../../rdf/nt.js';
import { type Binding, type JsonTerm, N_TRIPLES } from './endpoints.js';
import type { SnapshotNames } from './snapshot-names.js';

const XSD = 'http://www.w3.org/2001/XMLSchema#';
const XSD_BOOLEAN = `${XSD}boolean`;
const XSD_DURATION = `${XSD}duration`;

interface Term {
  type: 'uri' | 'bnode' | 'literal';
  value: string;
  lang?: string;
  datatype?: string;
}

interface Table {
  vars: string[];
  rows: Map<string, Term>[];
}

/** Literal lexical forms Virtuoso writes differently from the stored value's canonical form. */
function literalValue(value: string, datatype: string | undefined): string {
  if (datatype === XSD_BOOLEAN) return value === '1' ? 'true' : value === '0' ? 'false' : value;
  // Virtuoso stores durations as seconds and writes e.g. "86400.0".
  if (datatype === XSD_DURATION && /^-?\d+(\.\d+)?$/.test(value)) return value.startsWith('-') ? `-PT${value.slice(1)}S` : `PT${value}S`;
  return value;
}

class TermMapper {
  private readonly blanks = new Map<string, string>();
  constructor(private readonly names: SnapshotNames) {}

  blank(label: string): string {
    const raw = label.replace(/^nodeID:\/\//, '').replace(/^_:/, '');
    if (/^[A-Za-z0-9]+$/.test(raw)) return raw;
    let mapped = this.blanks.get(raw);
    if (!mapped) this.blanks.set(raw, (mapped = `b${this.blanks.size}x`));
    return mapped;
  }

  fromJson(t: JsonTerm): Term {
    if (t.type === 'uri') return { type: 'uri', value: this.names.unmapIri(t.value) };
    if (t.type === 'bnode') return { type: 'bnode', value: this.blank(t.value) };
    if (t.type === 'triple') throw new EngineQueryError('RDF-star results are not supported by this service.');
    const lang = t['xml:lang'];
    if (lang) return { type: 'literal', value: this.names.unmapText(t.value), lang: lang.toLowerCase() };
    const dt = t.datatype && t.datatype !== XSD_STRING && t.datatype !== RDF_LANG_STRING ? t.datatype : undefined;
    const value = literalValue(this.names.unmapText(t.value), dt);
    return dt ? { type: 'literal', value, datatype: this.names.unmapIri(dt) } : { type: 'literal', value };
  }

  /** A term of Virtuoso's N-Triples, mapped, as an oxigraph term. */
  rdf<T extends oxigraph.Quad['subject'] | oxigraph.Quad['predicate'] | oxigraph.Quad['object']>(t: T): T {
    switch (t.termType) {
      case 'NamedNode':
        return oxigraph.namedNode(this.names.unmapIri(t.value)) as T;
      case 'BlankNode':
        return oxigraph.blankNode(this.blank(t.value)) as T;
      case 'Literal': {
        const value = this.names.unmapText(t.value);
        if (t.language) return oxigraph.literal(value, t.language) as T;
        return oxigraph.literal(literalValue(value, t.datatype.value), oxigraph.namedNode(this.names.unmapIri(t.datatype.value))) as T;
      }
      default:
        return t;
    }
  }
}

const xmlEscape = (s: string): string => s.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));

function jsonTerm(t: Term): Record<string, string> {
  if (t.type !== 'literal') return { type: t.type, value: t.value };
  if (t.lang) return { type: 'literal', value: t.value, 'xml:lang': t.lang };
  if (t.datatype) return { type: 'literal', value: t.value, datatype: t.datatype };
  return { type: 'literal', value: t.value };
}

function xmlTerm(t: Term): string {
  if (t.type === 'uri') return `<uri>${xmlEscape(t.value)}</uri>`;
  if (t.type === 'bnode') return `<bnode>${xmlEscape(t.value)}</bnode>`;
  if (t.lang) return `<literal xml:lang="${xmlEscape(t.lang)}">${xmlEscape(t.value)}</literal>`;
  if (t.datatype) return `<literal datatype="${xmlEscape(t.datatype)}">${xmlEscape(t.value)}</literal>`;
  return `<literal>${xmlEscape(t.value)}</literal>`;
}

function csvField(t: Term | undefined): string {
  if (!t) return '';
  const s = t.type === 'bnode' ? `_:${t.value}` : t.value;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const tsvString = (s: string): string => `"${s.replace(/[\\"\n\r\t]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]!)}"`;

function tsvTerm(t: Term | undefined): string {
  if (!t) return '';
  if (t.type === 'uri') return `<${t.value}>`;
  if (t.type === 'bnode') return `_:${t.value}`;
  if (t.lang) return `${tsvString(t.value)}@${t.lang}`;
  if (!t.datatype) return tsvString(t.value);
  // Turtle's short forms, as oxigraph writes them.
  if (t.datatype === `${XSD}integer` && /^[+-]?\d+$/.test(t.value)) return t.value;
  if (t.datatype === `${XSD}decimal` && /^[+-]?\d*\.\d+$/.test(t.value)) return t.value;
  if (t.datatype === XSD_BOOLEAN && (t.value === 'true' || t.value === 'false')) return t.value;
  return `${tsvString(t.value)}^^<${t.datatype}>`;
}

function writeTable(table: Table, format: string): string {
  const { vars, rows } = table;
  switch (format) {
    case 'application/sparql-results+json':
    case 'application/json':
      return JSON.stringify({
        head: { vars },
        results: { bindings: rows.map((r) => Object.fromEntries([...r].map(([k, t]) => [k, jsonTerm(t)]))) },
      });
    case 'application/sparql-results+xml': {
      const head = vars.map((v) => `<variable name="${xmlEscape(v)}"/>`).join('');
      const results = rows
        .map((r) => `<result>${vars.filter((v) => r.has(v)).map((v) => `<binding name="${xmlEscape(v)}">${xmlTerm(r.get(v)!)}</binding>`).join('')}</result>`)
        .join('');
      return `<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head>${head}</head><results>${results}</results></sparql>`;
    }
    case 'text/csv':
      return [vars.join(','), ...rows.map((r) => vars.map((v) => csvField(r.get(v))).join(','))].map((l) => `${l}\r\n`).join('');
    case 'text/tab-separated-values':
      return [vars.map((v) => `?${v}`).join('\t'), ...rows.map((r) => vars.map((v) => tsvTerm(r.get(v))).join('\t'))].map((l) => `${l}\n`).join('');
    default:
      throw new EngineQueryError(`SELECT results cannot be written as ${format}.`);
  }
}

function writeBoolean(value: boolean, format: string): string {
  switch (format) {
    case 'application/sparql-results+json':
    case 'application/json':
      return JSON.stringify({ head: {}, boolean: value });
    case 'application/sparql-results+xml':
      return `<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head></head><boolean>${value}</boolean></sparql>`;
    case 'text/csv':
    case 'text/tab-separated-values':
      return String(value);
    default:
      throw new EngineQueryError(`ASK results cannot be written as ${format}.`);
  }
}

/** Media types SELECT/ASK results are written in (those of the format table's tabular formats). */
export const TABULAR_FORMATS = new Set(RESULT_FORMATS.filter((f) => f.forms.includes('select')).map((f) => f.mediaTypes[0]!));

export function convertTabular(body: string, format: string, names: SnapshotNames): string {
  let json: { head?: { vars?: string[] }; boolean?: boolean; results?: { bindings?: Binding[] } };
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`the SPARQL store sent unreadable JSON results: ${body.slice(0, 200)}`);
  }
  if (typeof json.boolean === 'boolean') return writeBoolean(json.boolean, format);
  const mapper = new TermMapper(names);
  // Virtuoso answers `SELECT * {}` with a made-up column.
  const vars = (json.head?.vars ?? []).filter((v) => v !== '_star_fake');
  const rows = (json.results?.bindings ?? []).map((b) => {
    const row = new Map<string, Term>();
    for (const v of vars) if (b[v]) row.set(v, mapper.fromJson(b[v]!));
    return row;
  });
  return writeTable({ vars, rows }, format);
}

/** What in Virtuoso's N-Triples the term mapping would change: snapshot graph names, booleans, durations. */
function needsMapping(body: string, names: SnapshotNames): boolean {
  return body.includes(names.root) || body.includes(`${XSD_BOOLEAN}>`) || body.includes(`${XSD_DURATION}>`) || body.includes('nodeID://');
}

/** One line of Virtuoso's N-Triples: subject, predicate and object separated by tabs. */
const NT_LINE = /^(?:<[^<>"\s]*>|_:[A-Za-z0-9]+)\t<[^<>"\s]*>\t(?:<[^<>"\s]*>|_:[A-Za-z0-9]+|"(?:[^"\\\n\r\t]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^<[^<>"\s]*>)?) \.$/;
const XSD_STRING_SUFFIX = `"^^<${XSD_STRING}> .`;

/** `\uXXXX` / `\UXXXXXXXX` of a character N-Triples may hold as it is (not a control, quote, backslash, bracket, surrogate). */
function unescapeNt(text: string): string {
  if (!text.includes('\\u') && !text.includes('\\U')) return text;
  return text.replace(/\\(\\)|\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})/g, (whole, backslash?: string, u?: string, U?: string) => {
    if (backslash) return whole;
    const code = parseInt(u ?? U!, 16);
    if (code <= 0x20 || code === 0x7f || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) || '"<>\\{}|^`'.includes(String.fromCharCode(code))) return whole;
    return String.fromCodePoint(code);
  });
}

/**
 * Virtuoso's N-Triples written as N-Triples without a round trip through oxigraph (which costs
 * about 6 µs a triple, 8 ms on a 1,500-triple CONSTRUCT): every line checked to be one plain
 * triple, duplicates dropped, `\u` escapes of ordinary characters decoded, `^^xsd:string`
 * dropped and tabs between terms made spaces, as oxigraph writes them. Null when a line is not
 * of that shape (then the caller converts through oxigraph).
 */
function passThroughNTriples(body: string): string | null {
  const out = new Set<string>();
  for (const line of body.split('\n')) {
    if (line === '') continue;
    if (!NT_LINE.test(line)) return null;
    // Virtuoso escapes tabs inside literals (\t): a tab character only separates terms.
    let triple = unescapeNt(line).replaceAll('\t', ' ');
    if (triple.endsWith(XSD_STRING_SUFFIX)) triple = `${triple.slice(0, -XSD_STRING_SUFFIX.length)}" .`;
    out.add(triple);
  }
  let text = '';
  for (const triple of out) text += `${triple}\n`;
  return text;
}

export function convertGraph(body: string, format: string, names: SnapshotNames): string {
  if (format === N_TRIPLES && !needsMapping(body, names)) {
    const text = passThroughNTriples(body);
    if (text !== null) return text;
  }
  const store = new oxigraph.Store();
  if (!needsMapping(body, names)) {
    // Nothing to map: parsed and loaded inside oxigraph (no term crosses into JavaScript; about
    // ten times faster on large results).
    store.load(body, { format: N_TRIPLES, lenient: true, to_graph_name: oxigraph.defaultGraph() });
  } else {
    const mapper = new TermMapper(names);
    for (const q of oxigraph.parse(body, { format: N_TRIPLES, lenient: true })) {
      store.add(oxigraph.quad(mapper.rdf(q.subject), mapper.rdf(q.predicate), mapper.rdf(q.object), oxigraph.defaultGraph()));
    }
  }
  try {
    return store.query('CONSTRUCT WHERE { ?s ?p ?o }', { results_format: format }) as string;
  } catch (e) {
    throw new EngineQueryError(`CONSTRUCT/DESCRIBE results cannot be written as ${format}: ${(e as Error).message}`);
  }
}
