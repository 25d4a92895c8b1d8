/** What a caller tells the RDF parser: the format, base IRI, blank node prefix, batch size and limits. */
import type { RdfFormat } from '../formats.js';
import type { ParseLimits } from './guards.js';

export interface ParseRdfOptions {
  format: RdfFormat;
  /** Resolves relative IRIs (Turtle/TriG `@base` overrides it; N-Triples/N-Quads ignore it). */
  baseIRI?: string;
  /** [A-Za-z0-9]*; use a unique, fixed-length value per imported file (e.g. 10 random base36 chars). */
  blankNodePrefix: string;
  /** Only used in error messages. */
  fileName?: string;
  /** Maximum quads per yielded batch (default 1000). */
  batchSize?: number;
  /**
   * N-Triples and N-Quads only (ignored for other formats): the yielded terms are byte strings,
   * one character per UTF-8 byte (`Buffer.from(term, 'latin1')` gives the UTF-8 bytes), which
   * spares decoding and encoding again for a caller that only wants bytes (the import). Input is
   * still checked to be UTF-8.
   */
  byteStrings?: boolean;
  /** Checks made before the JSON-LD and RDF/XML parsers read the input (DEFAULT_PARSE_LIMITS). */
  limits?: Partial<ParseLimits>;
}

/** Quads per yielded batch when the caller does not say. */
export const DEFAULT_BATCH = 1000;
