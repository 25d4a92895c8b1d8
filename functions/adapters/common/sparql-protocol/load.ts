/**
 * Loading a snapshot into the external store: N-Quads chunks parsed with oxigraph, statements
 * without blank nodes sent per graph in batches (Graph Store Protocol, else INSERT DATA), those
 * with blank nodes held back and sent whole per connected component (see engine.ts).
 */
import * as oxigraph from 'oxigraph';
import { ntIri, ntQuoted, RDF_DIR_LANG_STRING, RDF_LANG_STRING, XSD_STRING } from '../../../rdf/nt.js';
import type { Endpoints } from './endpoints.js';
import type { SparqlProtocolEngineOptions } from './options.js';
import type { SnapshotNames } from './snapshot-names.js';
import { defaultLogger } from '../powertools-logger.js';

/** A term as N-Triples (also valid in SPARQL INSERT DATA). */
function ntLiteral(value: string, language: string | undefined, datatype: string | undefined): string {
  // RDF 1.2 base directions have no equivalent in the external stores: the direction is dropped.
  if (language) return `${ntQuoted(value)}@${language}`;
  if (!datatype || datatype === XSD_STRING || datatype === RDF_LANG_STRING || datatype === RDF_DIR_LANG_STRING) return ntQuoted(value);
  return `${ntQuoted(value)}^^${ntIri(datatype)}`;
}

/** Union-find over blank node labels (indices). */
class Components {
  private readonly parent: number[] = [];
  add(): number {
    this.parent.push(this.parent.length);
    return this.parent.length - 1;
  }
  find(i: number): number {
    const parent = this.parent;
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[ra] = rb;
  }
}

interface HeldStatement {
  graph: string;
  line: string;
  blank: number;
}

/** Groups (kept whole) into batches of about `limit` statements; a group over the limit goes alone. */
function batches<T>(groups: T[][], limit: number): T[][][] {
  const out: T[][][] = [];
  let current: T[][] = [];
  let size = 0;
  for (const g of groups) {
    if (current.length && size + g.length > limit) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(g);
    size += g.length;
  }
  if (current.length) out.push(current);
  return out;
}

export class Loader {
  private readonly buffers = new Map<string, string[]>();
  private readonly held: HeldStatement[] = [];
  private readonly labels = new Map<string, number>();
  private readonly components = new Components();
  private readonly inFlight = new Set<Promise<void>>();
  private failed: Error | undefined;
  private buffered = 0;
  private gsp: boolean;
  private usedScratch = false;
  statements = 0;

  constructor(
    private readonly endpoints: Endpoints,
    private readonly names: SnapshotNames,
    private readonly options: SparqlProtocolEngineOptions,
  ) {
    this.gsp = Boolean(options.graphStoreEndpoint);
  }

  private get batch(): number {
    return this.gsp ? (this.options.gspBatchStatements ?? 20_000) : (this.options.updateBatchStatements ?? 1000);
  }

  private blank(label: string): number {
    let i = this.labels.get(label);
    if (i === undefined) {
      i = this.components.add();
      this.labels.set(label, i);
    }
    return i;
  }

  private term(t: oxigraph.Quad['subject'] | oxigraph.Quad['predicate'] | oxigraph.Quad['object']): string {
    switch (t.termType) {
      case 'NamedNode':
        return ntIri(t.value);
      case 'BlankNode':
        return `_:b${this.blank(t.value)}`;
      case 'Literal':
        return ntLiteral(t.value, t.language || undefined, t.datatype.value);
      default:
        throw new Error(`statements with ${t.termType} terms (RDF 1.2 triple terms) cannot be loaded into the external SPARQL store`);
    }
  }

  async add(chunk: string): Promise<void> {
    for (const quad of oxigraph.parse(chunk, { format: 'application/n-quads', lenient: true })) {
      let graph: string;
      if (quad.graph.termType === 'DefaultGraph') {
        graph = this.names.defaultBucket;
        this.names.hasDefault = true;
      } else if (quad.graph.termType === 'NamedNode') {
        this.names.graphs.add(quad.graph.value);
        graph = this.names.stored(quad.graph.value);
      } else {
        throw new Error('blank node graph names cannot be loaded into the external SPARQL store');
      }
      const line = `${this.term(quad.subject)} ${this.term(quad.predicate)} ${this.term(quad.object)} .`;
      this.statements++;
      const blank = quad.subject.termType === 'BlankNode' ? this.labels.get(quad.subject.value)! : quad.object.termType === 'BlankNode' ? this.labels.get(quad.object.value)! : -1;
      if (blank >= 0) {
        if (quad.subject.termType === 'BlankNode' && quad.object.termType === 'BlankNode') {
          this.components.union(this.labels.get(quad.subject.value)!, this.labels.get(quad.object.value)!);
        }
        this.held.push({ graph, line, blank });
        continue;
      }
      let buffer = this.buffers.get(graph);
      if (!buffer) this.buffers.set(graph, (buffer = []));
      buffer.push(line);
      if (++this.buffered >= this.batch) await this.flush();
    }
  }

  /** Sends the buffered statements without blank nodes (one GSP POST per graph, or INSERT DATA batches). */
  private async flush(): Promise<void> {
    const entries = [...this.buffers];
    this.buffers.clear();
    this.buffered = 0;
    if (!entries.length) return;
    if (this.gsp) {
      for (const [graph, lines] of entries) await this.schedule(() => this.sendGraph(graph, lines));
    } else {
      await this.schedule(() => this.insertData(entries));
    }
  }

  async finish(): Promise<void> {
    await this.flush();
    await this.drain();
    // Statements with blank nodes: whole connected components per request.
    const byComponent = new Map<number, HeldStatement[]>();
    for (const h of this.held) {
      const root = this.components.find(h.blank);
      let list = byComponent.get(root);
      if (!list) byComponent.set(root, (list = []));
      list.push(h);
    }
    this.held.length = 0;
    const single = new Map<string, HeldStatement[][]>();
    const multi: HeldStatement[][] = [];
    for (const component of byComponent.values()) {
      const graph = component[0]!.graph;
      if (component.every((h) => h.graph === graph)) {
        let list = single.get(graph);
        if (!list) single.set(graph, (list = []));
        list.push(component);
      } else {
        multi.push(component);
      }
    }
    for (const [graph, components] of single) {
      for (const batch of batches(components, this.batch)) await this.schedule(() => this.sendComponents(graph, batch));
    }
    for (const batch of batches(multi, this.blankLimit)) await this.schedule(() => this.insertWhere(batch.flat()));
    await this.drain();
    if (this.usedScratch) await this.endpoints.update(`DROP SILENT GRAPH ${ntIri(this.names.scratch)}`);
  }

  private get blankLimit(): number {
    return this.options.blankNodeBatchStatements ?? 400;
  }

  private async schedule(task: () => Promise<void>): Promise<void> {
    if (this.failed) throw this.failed;
    while (this.inFlight.size >= Math.max(1, this.options.loadConcurrency ?? 2)) await Promise.race(this.inFlight);
    if (this.failed) throw this.failed;
    const p: Promise<void> = task()
      .catch((e: Error) => {
        this.failed ??= e;
      })
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async drain(): Promise<void> {
    await Promise.all(this.inFlight);
    if (this.failed) throw this.failed;
  }

  /** POSTs to the Graph Store Protocol endpoint; false once it has refused (then SPARQL Update is used). */
  private async tryGraphStore(graph: string, lines: string[]): Promise<boolean> {
    if (!this.gsp) return false;
    if ((await this.endpoints.graphStorePost(graph, `${lines.join('\n')}\n`)) === 'ok') return true;
    if (this.gsp) (this.options.logger ?? defaultLogger).warn('The Graph Store Protocol endpoint refused the load; loading with SPARQL Update instead.', { endpoint: this.options.graphStoreEndpoint });
    this.gsp = false;
    return false;
  }

  /** Statements without blank nodes of one graph: a GSP POST, or INSERT DATA batches. */
  private async sendGraph(graph: string, lines: string[]): Promise<void> {
    if (await this.tryGraphStore(graph, lines)) return;
    await this.insertData([[graph, lines]]);
  }

  /** INSERT DATA requests of at most `updateBatchStatements` statements, several graphs per request. */
  private async insertData(entries: [string, string[]][]): Promise<void> {
    const size = Math.max(1, this.options.updateBatchStatements ?? 1000);
    let blocks: string[] = [];
    let count = 0;
    const send = async (): Promise<void> => {
      if (blocks.length) await this.endpoints.update(`INSERT DATA {\n${blocks.join('\n')}\n}`);
      blocks = [];
      count = 0;
    };
    for (const [graph, lines] of entries) {
      for (let i = 0; i < lines.length; ) {
        const piece = lines.slice(i, i + size - count);
        blocks.push(`GRAPH ${ntIri(graph)} {\n${piece.join('\n')}\n}`);
        count += piece.length;
        i += piece.length;
        if (count >= size) await send();
      }
    }
    await send();
  }

  /** Blank-node components within one graph: a GSP POST (one document), or INSERT..WHERE batches. */
  private async sendComponents(graph: string, components: HeldStatement[][]): Promise<void> {
    if (await this.tryGraphStore(graph, components.flat().map((h) => h.line))) return;
    for (const batch of batches(components, this.blankLimit)) await this.insertWhere(batch.flat());
  }

  /** Statements with blank nodes shared across graphs: one request, so the blank nodes stay one. */
  private async insertWhere(statements: HeldStatement[]): Promise<void> {
    this.usedScratch = true;
    const byGraph = new Map<string, string[]>();
    for (const s of statements) {
      let list = byGraph.get(s.graph);
      if (!list) byGraph.set(s.graph, (list = []));
      list.push(s.line);
    }
    const blocks = [...byGraph].map(([g, lines]) => `GRAPH ${ntIri(g)} {\n${lines.join('\n')}\n}`);
    // Virtuoso 7.2 fails a template made only of blank-node statements (after inserting part of
    // it: "string_output_string needs a string output"); one constant statement, in a scratch
    // graph dropped after the load, avoids that.
    const marker = ntIri(this.names.scratch);
    await this.endpoints.update(`INSERT {\nGRAPH ${marker} { ${marker} ${marker} "load" }\n${blocks.join('\n')}\n} WHERE {}`);
  }
}
