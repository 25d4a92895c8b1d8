/**
 * A snapshot's graph names in the external store: every graph `<g>` of a snapshot is stored as
 * `<urn:x-snapshot:ID:g>`, so snapshots live side by side and results map back by the prefix.
 */
import { randomBytes } from 'node:crypto';

/** A snapshot's graph names in the external store. */
export class SnapshotNames {
  readonly id = randomBytes(12).toString('hex');
  /** `urn:x-snapshot:ID` — starts every graph name of this snapshot, and of no other. */
  readonly root = `urn:x-snapshot:${this.id}`;
  readonly prefix = `${this.root}:`;
  readonly defaultBucket = `${this.root}#default`;
  /** Graph names the query dataset uses for "no graph at all". */
  readonly none = `${this.root}#none`;
  /** Holds a marker statement during the load (see Loader.insertWhere). */
  readonly scratch = `${this.root}#load`;
  /** Original names of the loaded graphs. */
  readonly graphs = new Set<string>();
  hasDefault = false;

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
