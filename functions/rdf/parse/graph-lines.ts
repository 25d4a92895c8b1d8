/**
 * What an import makes of parsed statements: per graph name, its distinct canonical N-Triples
 * lines (`s p o .\n`), handed on in chunks as UTF-8 bytes. Two stages, so that they can run in
 * two threads (import-worker.ts): GraphTextSorter sorts statements into graphs as text (which the
 * caller encodes), DistinctLines drops the lines a graph already holds.
 * GraphLineSorter is both in one. Pure computation.
 */
import { ntIriValue, type NtQuad } from '../nt.js';
import { LineSet } from './line-set.js';

/** Lines are handed on in chunks of about this many characters (big enough that per-chunk costs vanish). */
const CHUNK_CHARS = 256 * 1024;

/** An import would add more graphs than allowed; `limit` is the allowed number. */
export class GraphLimitError extends Error {
  constructor(readonly limit: number) {
    super(`An import may add at most ${limit} graphs; split the files into several jobs.`);
    this.name = 'GraphLimitError';
  }
}

interface GraphText {
  readonly name: string;
  pending: string;
}

/**
 * Stage one: sorts statements into their graphs as canonical lines of text, handed on per graph
 * in chunks of about CHUNK_CHARS. `defaultGraphName` names the graph of default-graph statements
 * and is the base of graphs named by blank nodes (`<default>/<label>`).
 */
export class GraphTextSorter {
  private readonly graphs = new Map<string, GraphText>();
  private lastTerm: string | null | undefined;
  private last: GraphText | undefined;

  constructor(
    private readonly defaultGraphName: string,
    private readonly maxGraphs: number,
    private readonly emit: (graphName: string, text: string) => void,
  ) {}

  /** Whether the terms added are byte strings (parseRdf's `byteStrings`); flush() before changing it. */
  byteStrings = false;

  /** The graph name statements with graph term `term` go to. */
  graphNameOf(term: string | null): string {
    if (term === null) return this.defaultGraphName;
    const text = this.byteStrings ? Buffer.from(term, 'latin1').toString('utf8') : term;
    return text.startsWith('<') ? ntIriValue(text) : `${this.defaultGraphName}/${text.slice(2)}`;
  }

  private graphFor(term: string | null): GraphText {
    // Quads of one graph usually come in runs: keep the last graph at hand.
    if (term === this.lastTerm && this.last) return this.last;
    this.lastTerm = undefined;
    const name = this.graphNameOf(term);
    let graph = this.graphs.get(name);
    if (!graph) {
      if (this.graphs.size >= this.maxGraphs) throw new GraphLimitError(this.maxGraphs);
      graph = { name, pending: '' };
      this.graphs.set(name, graph);
    }
    this.lastTerm = term;
    this.last = graph;
    return graph;
  }

  add(batch: readonly NtQuad[]): void {
    for (let i = 0; i < batch.length; i++) {
      const q = batch[i]!;
      const graph = this.graphFor(q.graph);
      graph.pending += `${q.subject} ${q.predicate} ${q.object} .\n`;
      if (graph.pending.length >= CHUNK_CHARS) this.hand(graph);
    }
  }

  private hand(graph: GraphText): void {
    if (graph.pending.length === 0) return;
    const text = graph.pending;
    graph.pending = '';
    this.emit(graph.name, text);
  }

  /** Hands on every graph's pending text. */
  flush(): void {
    for (const graph of this.graphs.values()) this.hand(graph);
    this.lastTerm = undefined;
    this.last = undefined;
  }

  /** Hands on every graph's remaining text; the graph names in the order they first appeared. */
  finish(): string[] {
    this.flush();
    return [...this.graphs.keys()];
  }
}

/** Stage two: each graph's lines (UTF-8 bytes of complete lines), less those the graph already holds. */
export class DistinctLines {
  private readonly graphs = new Map<string, LineSet>();

  constructor(private readonly emit: (graphName: string, bytes: Uint8Array, lines: number) => void) {}

  push(graphName: string, bytes: Uint8Array): void {
    let lineSet = this.graphs.get(graphName);
    if (!lineSet) this.graphs.set(graphName, (lineSet = new LineSet()));
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // Kept ranges; one range (the whole chunk) unless there were duplicates.
    const kept: [number, number][] = [];
    let keptFrom = 0;
    let lines = 0;
    for (let start = 0; start < bytes.length; ) {
      const end = bytes.indexOf(10, start);
      if (lineSet.addBytes(bytes, view, start, end)) lines++;
      else {
        if (start > keptFrom) kept.push([keptFrom, start]);
        keptFrom = end + 1;
      }
      start = end + 1;
    }
    if (lines === 0) return;
    if (keptFrom === 0) return this.emit(graphName, bytes, lines);
    if (keptFrom < bytes.length) kept.push([keptFrom, bytes.length]);
    const out = new Uint8Array(kept.reduce((n, [from, to]) => n + to - from, 0));
    let at = 0;
    for (const [from, to] of kept) {
      out.set(bytes.subarray(from, to), at);
      at += to - from;
    }
    this.emit(graphName, out, lines);
  }

  /** The distinct statements of each graph of `order` (the graph names in their order). */
  counts(order: readonly string[]): Map<string, number> {
    return new Map(order.map((name) => [name, this.graphs.get(name)?.size ?? 0]));
  }
}

/** Both stages in one thread. */
export class GraphLineSorter {
  private readonly distinct: DistinctLines;
  private readonly sorter: GraphTextSorter;

  constructor(defaultGraphName: string, maxGraphs: number, emit: (graphName: string, bytes: Uint8Array, lines: number) => void) {
    this.distinct = new DistinctLines(emit);
    const encoder = new TextEncoder();
    this.sorter = new GraphTextSorter(defaultGraphName, maxGraphs, (graphName, text) => this.distinct.push(graphName, encoder.encode(text)));
  }

  add(batch: readonly NtQuad[]): void {
    this.sorter.add(batch);
  }

  /** Hands on every graph's remaining lines; the distinct statements per graph, in order of appearance. */
  finish(): Map<string, number> {
    return this.distinct.counts(this.sorter.finish());
  }
}
