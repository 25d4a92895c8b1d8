/**
 * Streaming RDF serialization from batches of canonical quads ({@link NtQuad}).
 *
 * `serializeRdfChunks` is an async generator of text chunks (about one per input batch);
 * `serializeRdf` wraps it in a byte-mode `Readable` (UTF-8) that pulls batches on demand, so the
 * consumer's backpressure reaches the producer. Nothing is collected: state is the current
 * graph / subject / predicate (plus, for JSON-LD, the predicates of the current node object),
 * so memory stays flat however many quads pass.
 *
 * - N-Triples / N-Quads: canonical lines, passed through (N-Triples drops the graph).
 * - Turtle / TriG: own writer: `@prefix` header from `prefixes`, consecutive quads with the same
 *   subject (and predicate) grouped with `;` (and `,`), `a` for rdf:type, IRIs compacted with the
 *   prefixes when the local name is plainly safe. TriG groups consecutive quads of one graph in a
 *   `<g> { ... }` block; default-graph triples are written outside blocks.
 * - JSON-LD: expanded JSON-LD, a top-level array: default-graph node objects directly, named graphs
 *   as `{"@id": g, "@graph": [ node objects ]}`. One node object per run of one subject; if a
 *   predicate comes back within a run, a new node object with the same `@id` is started (JSON
 *   objects must not repeat keys).
 * Triple-only formats (Turtle, N-Triples) merge all graphs.
 */
import { Readable } from 'node:stream';
import type { RdfFormat } from './formats.js';
import { ntIri, ntIriValue, ntLiteralParts, RDF_TYPE, XSD_STRING, type NtQuad } from './nt.js';

export interface RdfPrefix {
  prefixLabel: string;
  iri: string;
}

export interface SerializeRdfOptions {
  format: RdfFormat;
  /** Used by Turtle and TriG only. Invalid labels/IRIs are skipped. */
  prefixes?: readonly RdfPrefix[];
}

/** A byte stream (UTF-8) of the serialization; pulls `batches` as it is read. */
export function serializeRdf(batches: AsyncIterable<NtQuad[]>, options: SerializeRdfOptions): Readable {
  return Readable.from(serializeRdfChunks(batches, options), { objectMode: false, highWaterMark: 64 * 1024 });
}

/** Text chunks of the serialization (about one per input batch). */
export function serializeRdfChunks(batches: AsyncIterable<NtQuad[]>, options: SerializeRdfOptions): AsyncGenerator<string> {
  switch (options.format.name) {
    case 'ntriples': return writeNTriples(batches);
    case 'nquads': return writeNQuads(batches);
    case 'turtle': return writeTurtle(batches, options.prefixes ?? [], false);
    case 'trig': return writeTurtle(batches, options.prefixes ?? [], true);
    case 'jsonld': return writeJsonLd(batches);
    default: throw new Error(`no serializer for format ${options.format.name}`);
  }
}

// ---------------------------------------------------------------------------------------------
// N-Triples / N-Quads

async function* writeNTriples(batches: AsyncIterable<NtQuad[]>): AsyncGenerator<string> {
  for await (const batch of batches) {
    let out = '';
    for (let i = 0; i < batch.length; i++) {
      const q = batch[i]!;
      out += `${q.subject} ${q.predicate} ${q.object} .\n`;
    }
    if (out) yield out;
  }
}

async function* writeNQuads(batches: AsyncIterable<NtQuad[]>): AsyncGenerator<string> {
  for await (const batch of batches) {
    let out = '';
    for (let i = 0; i < batch.length; i++) {
      const q = batch[i]!;
      out += q.graph === null ? `${q.subject} ${q.predicate} ${q.object} .\n` : `${q.subject} ${q.predicate} ${q.object} ${q.graph} .\n`;
    }
    if (out) yield out;
  }
}

// ---------------------------------------------------------------------------------------------
// Turtle / TriG

const PN_PREFIX = /^(?:[A-Za-z](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)?$/;
/** A conservative subset of PN_LOCAL that needs no escaping. */
const SAFE_LOCAL = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)?$/;
const RDF_TYPE_TERM = `<${RDF_TYPE}>`;

/** Compacts `<iri>` terms with prefixes (longest namespace wins). */
export class PrefixCompactor {
  private readonly byNamespace = new Map<string, string>();
  private readonly sorted: { label: string; ns: string }[];
  private cache = new Map<string, string>();

  constructor(prefixes: readonly RdfPrefix[]) {
    const seenLabels = new Set<string>();
    const list: { label: string; ns: string }[] = [];
    for (const { prefixLabel, iri } of prefixes) {
      if (!PN_PREFIX.test(prefixLabel) || seenLabels.has(prefixLabel) || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(iri)) continue;
      seenLabels.add(prefixLabel);
      list.push({ label: prefixLabel, ns: iri });
      if (!this.byNamespace.has(iri)) this.byNamespace.set(iri, prefixLabel);
    }
    this.sorted = list.sort((a, b) => b.ns.length - a.ns.length);
  }

  get size(): number {
    return this.sorted.length;
  }

  /** `@prefix` lines. */
  header(): string {
    let out = '';
    for (const { label, ns } of [...this.sorted].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))) {
      out += `@prefix ${label}: ${ntIri(ns)} .\n`;
    }
    return out;
  }

  /** `<iri>` → `label:local`, or the term unchanged. */
  compact(term: string): string {
    if (this.sorted.length === 0 || term.charCodeAt(0) !== 60 || term.includes('\\')) return term;
    const iri = term.slice(1, -1);
    // Most namespaces end in '/' or '#': try that split first.
    const cut = Math.max(iri.lastIndexOf('/'), iri.lastIndexOf('#')) + 1;
    if (cut > 0) {
      const label = this.byNamespace.get(iri.slice(0, cut));
      if (label !== undefined) {
        const local = iri.slice(cut);
        if (SAFE_LOCAL.test(local)) return `${label}:${local}`;
      }
    }
    for (const { label, ns } of this.sorted) {
      if (iri.length >= ns.length && iri.startsWith(ns)) {
        const local = iri.slice(ns.length);
        if (SAFE_LOCAL.test(local)) return `${label}:${local}`;
      }
    }
    return term;
  }

  /** As {@link compact}, with a bounded cache (for predicates, classes, datatypes, graphs). */
  compactCached(term: string): string {
    if (this.sorted.length === 0) return term;
    let out = this.cache.get(term);
    if (out === undefined) {
      out = this.compact(term);
      if (this.cache.size >= 10_000) this.cache = new Map();
      this.cache.set(term, out);
    }
    return out;
  }

  /** Objects: compacts IRIs and literal datatypes. */
  compactObject(term: string): string {
    if (this.sorted.length === 0) return term;
    const c = term.charCodeAt(0);
    if (c === 60) return this.compact(term);
    if (c === 34 && term.charCodeAt(term.length - 1) === 62 /* > */) {
      const end = term.lastIndexOf('"');
      if (term.charCodeAt(end + 1) === 94 /* ^ */) {
        const dt = this.compactCached(term.slice(end + 3));
        return `${term.slice(0, end + 3)}${dt}`;
      }
    }
    return term;
  }
}

/**
 * The Turtle / TriG writer's state: statements go in one at a time (`write`), text comes out in
 * pieces (`take`). Shared by the writer over quad batches and the one over stored canonical lines
 * (serialize-lines.ts), so both write exactly the same text.
 */
export class TurtleTextWriter {
  private readonly compactor: PrefixCompactor;
  private out: string;
  private graph: string | null | undefined; // undefined: nothing written yet
  private subject: string | null = null;
  private predicate: string | null = null;
  private inBlock = false;

  constructor(
    prefixes: readonly RdfPrefix[],
    private readonly trig: boolean,
  ) {
    this.compactor = new PrefixCompactor(prefixes);
    this.out = this.compactor.size > 0 ? `${this.compactor.header()}\n` : '';
  }

  write(s: string, p: string, object: string, g: string | null): void {
    const compactor = this.compactor;
    if (this.trig && g !== this.graph) {
      if (this.subject !== null) this.out += ' .\n';
      if (this.inBlock) this.out += '}\n';
      if (this.graph !== undefined) this.out += '\n';
      this.graph = g;
      this.inBlock = g !== null;
      if (this.inBlock) this.out += `${compactor.compactCached(g!)} {\n`;
      this.subject = this.predicate = null;
    }
    const o = compactor.compactObject(object);
    if (s === this.subject) {
      if (p === this.predicate) {
        this.out += `, ${o}`;
        return;
      }
      this.predicate = p;
      this.out += ` ;\n${this.inBlock ? '  ' : ''}    ${p === RDF_TYPE_TERM ? 'a' : compactor.compactCached(p)} ${o}`;
      return;
    }
    if (this.subject !== null) this.out += ' .\n';
    this.subject = s;
    this.predicate = p;
    this.out += `${this.inBlock ? '  ' : ''}${compactor.compact(s)} ${p === RDF_TYPE_TERM ? 'a' : compactor.compactCached(p)} ${o}`;
  }

  /** The text written since the last call. */
  take(): string {
    const out = this.out;
    this.out = '';
    return out;
  }

  /** The closing text. */
  end(): string {
    if (this.subject !== null) this.out += ' .\n';
    if (this.inBlock) this.out += '}\n';
    this.subject = null;
    this.inBlock = false;
    return this.take();
  }
}

async function* writeTurtle(batches: AsyncIterable<NtQuad[]>, prefixes: readonly RdfPrefix[], trig: boolean): AsyncGenerator<string> {
  const writer = new TurtleTextWriter(prefixes, trig);
  for await (const batch of batches) {
    for (let i = 0; i < batch.length; i++) {
      const q = batch[i]!;
      writer.write(q.subject, q.predicate, q.object, q.graph);
    }
    const out = writer.take();
    if (out) yield out;
  }
  const out = writer.end();
  if (out) yield out;
}

// ---------------------------------------------------------------------------------------------
// JSON-LD (expanded)

const json = JSON.stringify;

/** `<iri>` / `_:b` → JSON string of the IRI / blank node identifier. */
function jsonId(term: string): string {
  return term.charCodeAt(0) === 60 ? json(ntIriValue(term)) : json(term);
}

function jsonObject(term: string): string {
  const c = term.charCodeAt(0);
  if (c !== 34) return `{"@id":${jsonId(term)}}`;
  const { value, language, direction, datatype } = ntLiteralParts(term);
  if (language) {
    return direction
      ? `{"@value":${json(value)},"@language":${json(language)},"@direction":${json(direction)}}`
      : `{"@value":${json(value)},"@language":${json(language)}}`;
  }
  if (datatype === XSD_STRING) return `{"@value":${json(value)}}`;
  return `{"@value":${json(value)},"@type":${json(datatype)}}`;
}

async function* writeJsonLd(batches: AsyncIterable<NtQuad[]>): AsyncGenerator<string> {
  let out = '[';
  let topItems = 0; // entries of the top-level array
  let graphItems = 0; // node objects in the current named graph
  let graph: string | null | undefined;
  let subject: string | null = null;
  let predicate: string | null = null;
  const predicates = new Set<string>();
  let predicateKey = '';

  const closeNode = (): void => {
    if (subject !== null) out += ']}';
    subject = predicate = null;
  };

  for await (const batch of batches) {
    for (let i = 0; i < batch.length; i++) {
      const q = batch[i]!;
      if (q.graph !== graph) {
        closeNode();
        if (graph !== undefined && graph !== null) out += '\n]}';
        graph = q.graph;
        if (graph !== null) {
          out += `${topItems++ > 0 ? ',' : ''}\n{"@id":${jsonId(graph)},"@graph":[`;
          graphItems = 0;
        }
      }
      if (q.subject !== subject || (q.predicate !== predicate && predicates.has(q.predicate))) {
        closeNode();
        const first = graph === null ? topItems++ === 0 : graphItems++ === 0;
        subject = q.subject;
        predicate = q.predicate;
        predicates.clear();
        predicates.add(predicate);
        predicateKey = json(ntIriValue(predicate));
        out += `${first ? '' : ','}\n${graph === null ? '' : '  '}{"@id":${jsonId(subject)},${predicateKey}:[${jsonObject(q.object)}`;
        continue;
      }
      if (q.predicate !== predicate) {
        predicate = q.predicate;
        predicates.add(predicate);
        predicateKey = json(ntIriValue(predicate));
        out += `],${predicateKey}:[${jsonObject(q.object)}`;
        continue;
      }
      out += `,${jsonObject(q.object)}`;
    }
    if (out) {
      yield out;
      out = '';
    }
  }
  closeNode();
  if (graph !== undefined && graph !== null) out += '\n]}';
  out += '\n]\n';
  yield out;
}
