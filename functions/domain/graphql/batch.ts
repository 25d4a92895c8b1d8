import { ValidationError } from '../shared/errors.js';
import { resultRows, type ResultRow, type ResultTerm } from './sparql-text.js';

/**
 * One GraphQL request's reads: the values of (node, property) pairs, batched per level of the
 * selection. graphql-js resolves a level's fields together (every node of a list, as soon as the
 * list's own values arrived); the resolvers ask `values(node, property)` and get a promise, and
 * the loader sends what a level asked for as ONE query once the level has finished asking (the
 * microtask queue went quiet), never one query per node. Pairs already read are answered from
 * memory (a selection that comes back to the same nodes costs no query).
 */

/** Subjects one level query names at most; a level over more sends one query per this many. */
export const SUBJECTS_PER_QUERY = 2000;
/** Rows one query may answer; past it the query is refused as too large. */
export const MAX_ROWS_PER_QUERY = 200_000;
/** Microtask rounds without a new request before a level is sent (graphql-js takes a few hops per level). */
const QUIET_ROUNDS = 6;

/** What a loader runs: a SPARQL SELECT, answered as SPARQL JSON results. */
export type RunSelect = (sparql: string) => Promise<string>;

interface Batch {
  pairs: Map<string, Set<string>>;
  done: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** IRIs taken from the data: they are valid IRIREFs, but a SPARQL text never takes one that is not. */
const SAFE_IRI = /^[^\u0000-\u0020<>"{}|^`\\]+$/;

export class LevelLoader {
  /** SPARQL queries this request sent (extensions.sparqlQueries). */
  queries = 0;
  private readonly known = new Map<string, Map<string, ResultTerm[]>>();
  private batch: Batch | null = null;
  private asked = 0;

  constructor(private readonly run: RunSelect) {}

  /** Runs one SELECT of this request and counts it. */
  async select(sparql: string): Promise<ResultRow[]> {
    this.queries++;
    const rows = resultRows(await this.run(sparql));
    if (rows.length > MAX_ROWS_PER_QUERY) throw new ValidationError(`The query reads more than ${MAX_ROWS_PER_QUERY} values at one level; ask for fewer nodes (first) or fewer list fields.`);
    return rows;
  }

  /** The values of `property` on `subject` (IRIs and literals), once its level was read. */
  async values(subject: string, property: string): Promise<ResultTerm[]> {
    const cached = this.known.get(subject)?.get(property);
    if (cached) return cached;
    if (!SAFE_IRI.test(subject)) return [];
    const batch = this.batch ?? this.open();
    let properties = batch.pairs.get(subject);
    if (!properties) batch.pairs.set(subject, (properties = new Set()));
    properties.add(property);
    this.asked++;
    await batch.done;
    return this.known.get(subject)?.get(property) ?? [];
  }

  private open(): Batch {
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const batch: Batch = { pairs: new Map(), done, resolve, reject };
    this.batch = batch;
    let seen = -1;
    let quiet = 0;
    const tick = () => {
      if (this.asked !== seen) {
        seen = this.asked;
        quiet = 0;
      } else quiet++;
      if (quiet < QUIET_ROUNDS) return queueMicrotask(tick);
      this.batch = null;
      this.send(batch).then(batch.resolve, batch.reject);
    };
    queueMicrotask(tick);
    return batch;
  }

  private async send(batch: Batch): Promise<void> {
    const subjects = [...batch.pairs.keys()];
    const properties = new Set<string>();
    for (const set of batch.pairs.values()) for (const p of set) properties.add(p);
    const propertyList = [...properties].map((p) => `<${p}>`).join(' ');
    const chunks: string[][] = [];
    for (let i = 0; i < subjects.length; i += SUBJECTS_PER_QUERY) chunks.push(subjects.slice(i, i + SUBJECTS_PER_QUERY));
    const answers = await Promise.all(
      chunks.map((chunk) =>
        this.select(`SELECT ?s ?p ?o WHERE { VALUES ?s { ${chunk.map((s) => `<${s}>`).join(' ')} } VALUES ?p { ${propertyList} } ?s ?p ?o }`),
      ),
    );
    // Every asked pair is known afterwards, with no values when the data has none.
    for (const [subject, asked] of batch.pairs) {
      let byProperty = this.known.get(subject);
      if (!byProperty) this.known.set(subject, (byProperty = new Map()));
      for (const p of asked) if (!byProperty.has(p)) byProperty.set(p, []);
    }
    for (const rows of answers) {
      for (const row of rows) {
        const s = row.s?.value;
        const p = row.p?.value;
        if (!s || !p || !row.o || !batch.pairs.get(s)?.has(p)) continue;
        const values = this.known.get(s)!.get(p)!;
        const o = row.o;
        if (!values.some((v) => v.type === o.type && v.value === o.value && v.datatype === o.datatype && v['xml:lang'] === o['xml:lang'])) values.push(o);
      }
    }
  }
}
