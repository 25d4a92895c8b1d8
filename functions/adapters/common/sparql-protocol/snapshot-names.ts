/**
 * A snapshot's graph names in the external store: every graph `<g>` of a snapshot is stored as
 * `<urn:x-snapshot:ID:g>`, so snapshots live side by side and results map back by the prefix.
 */
import { randomBytes } from 'node:crypto';

/** A snapshot's graph names in the external store. */
export class SnapshotNames {
  readonly id: string;
  /** `urn:x-snapshot:ID` — starts every graph name of this snapshot, and of no other. */
  readonly root: string;
  readonly prefix: string;
  readonly defaultBucket: string;
  /** Graph names the query dataset uses for "no graph at all". */
  readonly none: string;
  /** Holds a marker statement during the load (see Loader.insertWhere). */
  readonly scratch: string;
  /** Original names of the loaded graphs. */
  readonly graphs = new Set<string>();
  hasDefault = false;

  /** A new snapshot (random id), or, given `loaded`, the names of one another process loaded. */
  constructor(loaded?: { snapshotId: string; graphs: readonly string[]; hasDefault: boolean }) {
    if (loaded && !/^[0-9a-f]{24}$/.test(loaded.snapshotId)) throw new Error(`not a snapshot id: "${loaded.snapshotId}"`);
    this.id = loaded?.snapshotId ?? randomBytes(12).toString('hex');
    this.root = `urn:x-snapshot:${this.id}`;
    this.prefix = `${this.root}:`;
    this.defaultBucket = `${this.root}#default`;
    this.none = `${this.root}#none`;
    this.scratch = `${this.root}#load`;
    for (const g of loaded?.graphs ?? []) this.graphs.add(g);
    this.hasDefault = loaded?.hasDefault ?? false;
  }

  stored(graph: string): string {
    return this.prefix + graph;
  }
  /** Stored names of everything loaded (what close() drops). */
  allStored(): string[] {
    return [...[...this.graphs].map((g) => this.stored(g)), ...(this.hasDefault ? [this.defaultBucket] : [])];
  }
  /** What a failed load may have left behind. */
  allPossiblyStored(): string[] {
    return [...this.allStored(), this.scratch];
  }
  unmapIri(iri: string): string {
    return iri.startsWith(this.prefix) ? iri.slice(this.prefix.length) : iri;
  }
  unmapText(text: string): string {
    return text.includes(this.prefix) ? text.split(this.prefix).join('') : text;
  }
}
