import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { ntIriValue, ntLiteralParts, parseNtLine } from '../../rdf/nt.js';
import type { AccessService } from '../datasets/access-service.js';
import type { Caller } from '../shared/caller.js';
import { ValidationError } from '../shared/errors.js';
import type { GraphCatalog } from './graph-catalog.js';

/** A term as TriplyDB's statements route answers it (RDF/JS shape, without `equals`). */
export interface StatementTerm {
  termType: 'NamedNode' | 'BlankNode' | 'Literal';
  value: string;
  language?: string;
  datatype?: string;
}

export interface StatementFilter {
  subject?: string;
  predicate?: string;
  /** An IRI, an N-Triples term (`<iri>`, `"lex"...`, `_:b`), or a literal's lexical form. */
  object?: string;
  graph?: string;
}

export const TERM_POSITIONS = ['subject', 'predicate', 'object', 'graph'] as const;
export type TermPosition = (typeof TERM_POSITIONS)[number];

export interface TermQuery extends StatementFilter {
  q: string;
  pos?: TermPosition;
  limit: number;
  termType?: 'NamedNode' | 'Literal';
  languageTag?: string;
  dataType?: string;
}

export const MAX_STATEMENTS_PAGE = 1000;
/** Values written as they are on a canonical line (printable ASCII that N-Triples never escapes). */
const VERBATIM = /^[\x20-\x7e]+$/;
/** Characters a canonical line may escape (in literals or IRIs): a value holding one is not looked for verbatim. */
const NOT_VERBATIM = /["\\<>{}|^`]/;
export const MAX_TERMS = 100;
/**
 * Autocomplete reads at most this many statements per request (a few seconds of a function):
 * suggestions come from the first part of a larger dataset rather than a request that times out.
 */
export const MAX_TERM_SCAN = 2_000_000;

/** How a term of a canonical line looks to a caller. */
export function termOf(nt: string): StatementTerm {
  const c = nt.charCodeAt(0);
  if (c === 60) return { termType: 'NamedNode', value: ntIriValue(nt) };
  if (c === 95) return { termType: 'BlankNode', value: nt.slice(2) };
  const parts = ntLiteralParts(nt);
  return parts.language ? { termType: 'Literal', value: parts.value, language: parts.language, datatype: parts.datatype } : { termType: 'Literal', value: parts.value, datatype: parts.datatype };
}

/** A filter value against a term: N-Triples terms exactly, otherwise an IRI or a literal's lexical form. */
function matcher(value: string | undefined): ((nt: string) => boolean) | null {
  if (value === undefined) return null;
  if (/^(<.*>|_:.+|".*)$/s.test(value)) return (nt) => nt === value;
  return (nt) => {
    const c = nt.charCodeAt(0);
    if (c === 60) return ntIriValue(nt) === value;
    if (c === 34) return ntLiteralParts(nt).value === value;
    return false;
  };
}

/**
 * Reads a dataset's statements straight from its graph blobs (no service needed): the filtered
 * statements page by page (`GET …/statements`), and terms for autocompletion (`GET …/terms`).
 * A scan reads the graphs in manifest order and stops as soon as the page is full.
 */
export class StatementReader {
  constructor(
    private readonly access: AccessService,
    private readonly catalog: GraphCatalog,
  ) {}

  /** A graph's canonical lines; the blob stream is closed when the reader stops early. */
  private async *graphLines(blobKey: string): AsyncGenerator<string> {
    const raw = await this.catalog.gzipped(blobKey);
    const text = raw.pipe(createGunzip({ chunkSize: 256 * 1024 }));
    const lines = createInterface({ input: text, crlfDelay: Infinity });
    try {
      for await (const line of lines) if (line) yield line;
    } finally {
      lines.close();
      text.destroy();
      raw.destroy();
    }
  }

  /**
   * The matching quads after skipping `skip` of them. `needles`: strings every matching line
   * holds as written (case-insensitive), checked before a line is parsed. Without term filters,
   * whole graphs are skipped by their statement counts and lines are skipped unparsed.
   */
  private async *quads(caller: Caller | null, account: string, datasetName: string, filter: StatementFilter, skip = 0, needles: string[] = []) {
    const { dataset } = await this.access.readableDataset(caller, account, datasetName);
    const manifest = await this.catalog.manifest(dataset);
    const s = matcher(filter.subject);
    const p = matcher(filter.predicate);
    const o = matcher(filter.object);
    const unfiltered = !s && !p && !o;
    const tests = [...needles, ...[filter.subject, filter.predicate, filter.object].filter((v): v is string => v !== undefined)]
      .map((v) => v.replace(/^<(.*)>$/s, '$1'))
      .filter((v) => v !== '' && VERBATIM.test(v) && !NOT_VERBATIM.test(v))
      .map((v) => new RegExp(v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'));
    let toSkip = skip;
    for (const graph of manifest.graphs) {
      if (filter.graph !== undefined && graph.graphName !== filter.graph && `<${graph.graphName}>` !== filter.graph) continue;
      if (unfiltered && toSkip >= graph.numberOfStatements) {
        toSkip -= graph.numberOfStatements;
        continue;
      }
      for await (const line of this.graphLines(graph.blobKey)) {
        if (unfiltered && toSkip > 0) {
          toSkip--;
          continue;
        }
        if (tests.length > 0 && !tests.every((t) => t.test(line))) continue;
        const quad = parseNtLine(line);
        if ((s && !s(quad.subject)) || (p && !p(quad.predicate)) || (o && !o(quad.object))) continue;
        if (toSkip > 0) {
          toSkip--;
          continue;
        }
        yield { quad, graphName: graph.graphName };
      }
    }
  }

  /** Up to `limit` statements after skipping `offset`; `more` when another page exists. */
  async statements(caller: Caller | null, account: string, datasetName: string, filter: StatementFilter, offset: number, limit: number) {
    const items: StatementTerm[][] = [];
    let more = false;
    for await (const { quad, graphName } of this.quads(caller, account, datasetName, filter, offset)) {
      if (items.length === limit) {
        more = true;
        break;
      }
      items.push([termOf(quad.subject), termOf(quad.predicate), termOf(quad.object), { termType: 'NamedNode', value: graphName }]);
    }
    return { items, more };
  }

  /**
   * Distinct terms (their values) containing `q` (case-insensitive), those starting with it first,
   * each group in the dataset's order. Stops once `limit` terms start with `q` (or after
   * MAX_TERM_SCAN matching statements).
   */
  async terms(caller: Caller | null, account: string, datasetName: string, query: TermQuery): Promise<string[]> {
    if (query.limit < 1 || query.limit > MAX_TERMS) throw new ValidationError(`limit: give 1 to ${MAX_TERMS}.`);
    const needle = query.q.toLowerCase();
    const starting = new Set<string>();
    const containing = new Set<string>();
    const positions: readonly TermPosition[] = query.pos ? [query.pos] : ['subject', 'predicate', 'object'];
    const consider = (term: StatementTerm) => {
      if (query.termType && term.termType !== query.termType) return;
      if (query.languageTag !== undefined && term.language !== query.languageTag.toLowerCase()) return;
      if (query.dataType !== undefined && term.datatype !== query.dataType) return;
      const value = term.value.toLowerCase();
      if (value.startsWith(needle)) starting.add(term.value);
      else if (containing.size < query.limit && value.includes(needle)) containing.add(term.value);
    };
    let scanned = 0;
    // A term holding `q` is on a line holding it (graph names are not on the lines).
    const needles = query.pos === 'graph' ? [] : [query.q];
    for await (const { quad, graphName } of this.quads(caller, account, datasetName, query, 0, needles)) {
      if (++scanned > MAX_TERM_SCAN) break;
      for (const pos of positions) {
        if (pos === 'graph') consider({ termType: 'NamedNode', value: graphName });
        else consider(termOf(quad[pos]));
      }
      if (starting.size >= query.limit) break;
    }
    return [...starting, ...containing].slice(0, query.limit);
  }
}
