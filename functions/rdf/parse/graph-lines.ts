/**
 * What an import makes of parsed statements: per graph name, its distinct canonical N-Triples
 * lines (`s p o .\n`), handed on in chunks of about CHUNK_CHARS as UTF-8 bytes. Runs in the
 * import's parse worker (import-worker.ts); pure computation.
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

interface GraphLines {
  readonly name: string;
  readonly lines: LineSet;
  pending: string;
}

/**
 * Sorts statements into their graphs, drops the lines a graph already holds and hands on each
 * graph's new lines. `defaultGraphName` names the graph of default-graph statements and is the
 * base of graphs named by blank nodes (`<default>/<label>`).
 */
export class GraphLineSorter {
  private readonly graphs = new Map<string, GraphLines>();
  private readonly encoder = new TextEncoder();
  private lastTerm: string | null | undefined;
  private last: GraphLines | undefined;

  constructor(
    private readonly defaultGraphName: string,
    private readonly maxGraphs: number,
    private readonly emit: (graphName: string, bytes: Uint8Array, lines: number) => void,
  ) {}

  /** The graph name statements with graph term `term` go to. */
  graphNameOf(term: string | null): string {
    if (term === null) return this.defaultGraphName;
    return term.startsWith('<') ? ntIriValue(term) : `${this.defaultGraphName}/${term.slice(2)}`;
  }

  private graphFor(term: string | null): GraphLines {
    // Quads of one graph usually come in runs: keep the last graph at hand.
    if (term === this.lastTerm && this.last) return this.last;
    const name = this.graphNameOf(term);
    let graph = this.graphs.get(name);
    if (!graph) {
      if (this.graphs.size >= this.maxGraphs) throw new GraphLimitError(this.maxGraphs);
      graph = { name, lines: new LineSet(), pending: '' };
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
      // Lines are collected as text and checked for duplicates as UTF-8 bytes, a chunk at a time.
      graph.pending += `${q.subject} ${q.predicate} ${q.object} .\n`;
      if (graph.pending.length >= CHUNK_CHARS) this.hand(graph);
    }
  }

  /** Encodes the graph's pending lines, drops those it already holds, hands on the rest. */
  private hand(graph: GraphLines): void {
    if (graph.pending.length === 0) return;
    const bytes = this.encoder.encode(graph.pending);
    graph.pending = '';
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // Kept ranges; one range (the whole chunk) unless there were duplicates.
    const kept: [number, number][] = [];
    let keptFrom = 0;
    let lines = 0;
    for (let start = 0; start < bytes.length; ) {
      const end = bytes.indexOf(10, start);
      if (graph.lines.addBytes(bytes, view, start, end)) lines++;
      else {
        if (start > keptFrom) kept.push([keptFrom, start]);
        keptFrom = end + 1;
      }
      start = end + 1;
    }
    if (lines === 0) return;
    if (keptFrom === 0) return this.emit(graph.name, bytes, lines);
    if (keptFrom < bytes.length) kept.push([keptFrom, bytes.length]);
    const out = new Uint8Array(kept.reduce((n, [from, to]) => n + to - from, 0));
    let at = 0;
    for (const [from, to] of kept) {
      out.set(bytes.subarray(from, to), at);
      at += to - from;
    }
    this.emit(graph.name, out, lines);
  }

  /** Hands on every graph's remaining lines; the distinct statements of each graph. */
  finish(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const graph of this.graphs.values()) {
      this.hand(graph);
      counts.set(graph.name, graph.lines.size);
    }
    return counts;
  }
}
