import { ValidationError } from '../shared/errors.js';
import type { LevelPlan } from './plan.js';
import type { LanguageRange } from './language.js';
import { byValue, literal, RESULTS_TSV, type ResultRow, type ResultTerm, tsvRows, tsvTerm } from './sparql-text.js';

/**
 * One GraphQL request's reads: the values of (node, property) pairs, one SPARQL query per level
 * of the selection, never one per node. A connection reads its whole plan up-front (`prefetch`,
 * plan.ts) and its field resolvers then answer from memory (`known`). What no plan covered is
 * read lazily: resolvers ask `values(node, property)` and get a promise, and the loader sends what
 * a level asked for as ONE query once the level has finished asking (the microtask queue went
 * quiet; graphql-js resolves a level's fields together). Pairs already read are answered from
 * memory (a selection that comes back to the same nodes costs no query).
 */

/** Subjects one level query names at most; a level over more sends one query per this many. */
export const SUBJECTS_PER_QUERY = 2000;
/** Rows one query may answer; past it the query is refused as too large. */
export const MAX_ROWS_PER_QUERY = 200_000;
/** Microtask rounds without a new request before a level is sent (graphql-js takes a few hops per level). */
const QUIET_ROUNDS = 6;

/** What a loader runs: a SPARQL SELECT, answered in the given results format. */
export type RunSelect = (sparql: string, format: string) => Promise<string>;

/** Values read by one fetch: subject → property → values. */
type Read = Map<string, Map<string, ResultTerm[]>>;

interface Batch {
  pairs: Map<string, Set<string>>;
  done: Promise<Read>;
  resolve: (read: Read) => void;
  reject: (e: unknown) => void;
}

/** IRIs taken from the data: they are valid IRIREFs, but a SPARQL text never takes one that is not. */
const SAFE_IRI = /^[^\u0000-\u0020<>"{}|^`\\]+$/;

const tooMany = () => new ValidationError(`The query reads more than ${MAX_ROWS_PER_QUERY} values at one level; ask for fewer nodes (first) or fewer list fields.`);

export class LevelLoader {
  /** SPARQL queries this request sent (extensions.sparqlQueries). */
  queries = 0;
  private readonly knownValues = new Map<string, Map<string, ResultTerm[]>>();
  /** Pairs read only in some languages (a plan's `languages`): subject → property → languages. */
  private readonly partial = new Map<string, Map<string, Set<string>>>();
  private batch: Batch | null = null;
  private asked = 0;

  constructor(private readonly run: RunSelect) {}

  /** Runs one SELECT of this request and counts it. */
  async select(sparql: string): Promise<ResultRow[]> {
    const rows = tsvRows(await this.text(sparql));
    if (rows.length > MAX_ROWS_PER_QUERY) throw tooMany();
    return rows;
  }

  private text(sparql: string): Promise<string> {
    this.queries++;
    return this.run(sparql, RESULTS_TSV);
  }

  /**
   * The (?i ?j ?o) rows of a level query, read straight from the TSV lines: positions as numbers,
   * only ?o as a term (two objects fewer a row than tsvRows).
   */
  private async levelRows(sparql: string): Promise<{ i: number; j: number; o: ResultTerm }[]> {
    const text = await this.text(sparql);
    const lines = text.split('\n');
    if (lines[0]?.trim() !== '?i\t?j\t?o') return tsvRows(text).map((r) => ({ i: Number(r.i?.value), j: Number(r.j?.value), o: r.o! }));
    if (lines.length > MAX_ROWS_PER_QUERY + 2) throw tooMany();
    const rows: { i: number; j: number; o: ResultTerm }[] = [];
    for (let k = 1; k < lines.length; k++) {
      const line = lines[k]!;
      const t1 = line.indexOf('\t');
      const t2 = line.indexOf('\t', t1 + 1);
      if (t1 < 0 || t2 < 0) continue;
      const o = tsvTerm(line.slice(t2 + 1));
      // ?i and ?j are the plain literals "n" the query bound.
      if (o) rows.push({ i: Number(line.slice(1, t1 - 1)), j: Number(line.slice(t1 + 2, t2 - 1)), o });
    }
    return rows;
  }

  /** The values of `property` on `subject` (IRIs and literals), once its level was read. */
  async values(subject: string, property: string): Promise<ResultTerm[]> {
    const cached = this.known(subject, property);
    if (cached) return cached;
    if (!SAFE_IRI.test(subject)) return [];
    const batch = this.batch ?? this.open();
    let properties = batch.pairs.get(subject);
    if (!properties) batch.pairs.set(subject, (properties = new Set()));
    properties.add(property);
    this.asked++;
    // What this batch read, not the shared memory: a concurrent read may have replaced the pair since.
    return (await batch.done).get(subject)?.get(property) ?? [];
  }

  private open(): Batch {
    let resolve!: (read: Read) => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<Read>((res, rej) => {
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

  private send(batch: Batch): Promise<Read> {
    return this.fetch(batch.pairs);
  }

  /**
   * Values already read (synchronously), or undefined when the pair was not read yet. A pair read
   * in some languages only answers a caller whose ranges (of weight above 0, no `*`) are all among them.
   */
  known(subject: string, property: string, ranges?: readonly LanguageRange[]): ResultTerm[] | undefined {
    const values = this.knownValues.get(subject)?.get(property);
    if (!values || this.partial.size === 0) return values;
    const languages = this.partial.get(subject)?.get(property);
    if (!languages) return values;
    let some = false;
    for (const r of ranges ?? []) {
      if (r.q <= 0) continue;
      if (r.range === '*' || !languages.has(r.range)) return undefined;
      some = true;
    }
    return some ? values : undefined;
  }

  /**
   * Reads a whole plan up-front, one query per level: the plan's properties of `subjects`, then
   * the next level's of the nodes its object fields lead to, and so on.
   */
  async prefetch(subjects: string[], plan: LevelPlan): Promise<void> {
    let level: { subjects: string[]; plan: LevelPlan }[] = [{ subjects, plan }];
    for (let depth = 0; depth < 32 && level.length > 0; depth++) {
      const pairs = new Map<string, Set<string>>();
      // A property read in some languages only when every group of the level asks so.
      const languages = new Map<string, Set<string> | null>();
      for (const group of level) {
        for (const p of group.plan.properties) {
          const wanted = group.plan.languages.get(p);
          const sofar = languages.get(p);
          if (sofar === null) continue;
          if (!wanted) languages.set(p, null);
          else languages.set(p, new Set([...(sofar ?? []), ...wanted]));
        }
      }
      for (const group of level) {
        for (const subject of group.subjects) {
          if (!SAFE_IRI.test(subject)) continue;
          for (const p of group.plan.properties) {
            if (this.known(subject, p)) continue;
            let set = pairs.get(subject);
            if (!set) pairs.set(subject, (set = new Set()));
            set.add(p);
          }
        }
      }
      if (pairs.size > 0) await this.fetch(pairs, languages);
      const next: { subjects: string[]; plan: LevelPlan }[] = [];
      for (const group of level) {
        for (const [path, child] of group.plan.children) {
          const ids = new Set<string>();
          for (const subject of group.subjects) for (const t of this.known(subject, path) ?? []) if (t.type === 'uri') ids.add(t.value);
          if (ids.size > 0) next.push({ subjects: [...ids], plan: child });
        }
      }
      level = next;
    }
  }

  /** One query per SUBJECTS_PER_QUERY subjects for the asked (subject, property) pairs. */
  private async fetch(pairs: Map<string, Set<string>>, languages: Map<string, Set<string> | null> = new Map()): Promise<Read> {
    const subjects = [...pairs.keys()];
    const properties = new Set<string>();
    for (const set of pairs.values()) for (const p of set) properties.add(p);
    // VALUES ?p beside VALUES ?s makes oxigraph join the two lists with every statement (measured:
    // 1 s for 1,000 subjects); a FILTER on ?p after the subject's statements: 34 ms.
    const list = [...properties];
    // The answer names subjects and properties by their position (?i, ?j), not their IRIs: a
    // third of the bytes to write, send and parse (most of a level query's time).
    const which = list.length === 1 ? '"0"' : list.slice(0, -1).reduceRight((rest, p, j) => `IF(?p = <${p}>, "${j}", ${rest})`, `"${list.length - 1}"`);
    const some = (p: string) => [...languages.get(p)!].map((r) => `langMatches(lang(?o), ${literal(r)})`).join(' || ');
    const filtered = list.filter((p) => languages.get(p));
    let pattern = list.length === 1 ? `?s <${list[0]}> ?o .` : `?s ?p ?o . FILTER(?p IN (${list.map((p) => `<${p}>`).join(', ')}))`;
    if (list.length === 1 && filtered.length === 1) pattern += ` FILTER(${some(list[0]!)})`;
    else if (filtered.length > 0) pattern += ` FILTER(${filtered.map((p) => `(?p != <${p}> || ${some(p)})`).join(' && ')})`;
    const chunks: string[][] = [];
    for (let i = 0; i < subjects.length; i += SUBJECTS_PER_QUERY) chunks.push(subjects.slice(i, i + SUBJECTS_PER_QUERY));
    const answers = await Promise.all(
      chunks.map((chunk) =>
        this.levelRows(`SELECT ?i ?j ?o WHERE { VALUES (?s ?i) { ${chunk.map((s, i) => `(<${s}> "${i}")`).join(' ')} } ${pattern} BIND(${which} AS ?j) }`),
      ),
    );
    // Every asked pair is known afterwards, with no values when the data has none.
    const read: Read = new Map();
    for (const [subject, asked] of pairs) {
      let byProperty = this.knownValues.get(subject);
      if (!byProperty) this.knownValues.set(subject, (byProperty = new Map()));
      const mine = new Map<string, ResultTerm[]>();
      read.set(subject, mine);
      for (const p of asked) {
        const values: ResultTerm[] = [];
        byProperty.set(p, values);
        mine.set(p, values);
        const wanted = languages.get(p);
        if (wanted) {
          let marks = this.partial.get(subject);
          if (!marks) this.partial.set(subject, (marks = new Map()));
          marks.set(p, wanted);
        } else if (this.partial.size > 0) this.partial.get(subject)?.delete(p);
      }
    }
    answers.forEach((rows, c) => {
      const chunk = chunks[c]!;
      for (const row of rows) {
        const s = chunk[row.i];
        const p = list[row.j];
        const o = row.o;
        if (!s || !p || !pairs.get(s)?.has(p)) continue;
        const values = read.get(s)!.get(p)!;
        // The same statement in several graphs comes once per graph.
        if (values.some((v) => v.value === o.value && v.type === o.type && v.datatype === o.datatype && v['xml:lang'] === o['xml:lang'])) continue;
        values.push(o);
      }
    });
    for (const byProperty of read.values()) for (const values of byProperty.values()) if (values.length > 1) values.sort(byValue);
    return read;
  }
}
