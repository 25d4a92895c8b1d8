/**
 * Datasets as stored: the record the MetadataStore port reads and writes. Types only; the view
 * and the access rule live in domain/datasets.
 */

/** `ACCESS_LEVELS` in domain/datasets/datasets.ts lists them. */
export type AccessLevel = 'public' | 'internal' | 'private';

/** `LICENSES` in domain/datasets/datasets.ts lists them. */
export type License =
  | 'CC0 1.0'
  | 'CC BY'
  | 'CC BY-ND'
  | 'CC BY-NC'
  | 'CC BY-NC-ND'
  | 'CC BY-NC-SA'
  | 'CC BY-SA v4.0'
  | 'ODC-By'
  | 'ODC-ODbL'
  | 'PDDL'
  | 'GFDL'
  | 'CC-BY-SA';

export interface Prefix {
  prefixLabel: string;
  iri: string;
}

export interface DatasetRecord {
  id: string;
  ownerUid: string;
  name: string;
  displayName: string;
  description: string;
  accessLevel: AccessLevel;
  license?: License;
  prefixes: Prefix[];
  exampleResources: string[];
  tags: string[];
  createdAt: string;
  updatedAt: string;
  graphCount: number;
  statements: number;
  serviceCount: number;
  assetCount: number;
  /** Blob key of the current graph manifest (see domain/data/graphs.ts); absent while the dataset has no graphs. */
  graphsManifest?: string;
  /**
   * The graph that triples without a graph name go to (imports) and that SPARQL Update's default
   * graph is, fixed when the dataset is made: names taken from the request's host would change
   * with it. Absent on datasets made before it was recorded (see defaultGraphOf).
   */
  defaultGraphName?: string;
  lastGraphsUpdateTime?: string;
  /** When an avatar was last set (its blob is `datasets/<id>/avatar` in the data bucket). */
  avatarUpdatedAt?: string;
  /** Incremented on every write; writes are conditional on it so concurrent changes never interleave. */
  revision: number;
}
