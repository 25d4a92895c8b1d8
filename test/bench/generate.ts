/**
 * A realistic generated dataset for the import/export benchmark, written as N-Triples and as
 * Turtle (the same statements; blank nodes are `_:addrN` in N-Triples and `[ ... ]` in Turtle).
 *
 * About 10 statements per subject (≈ 97k subjects for 1 M statements): people, organizations and
 * books with rdf:type (sometimes two), labels in two languages, plain names and descriptions
 * (quotes, newlines, non-ASCII), dates, date-times, integers, decimals, links to other subjects,
 * owl:sameAs to Wikidata, homepage URLs, and for one subject in seven a postal address as a blank
 * node. Turtle uses `@prefix`, `a`, `;` and `,` grouping, numeric shorthand and `[ ]`, as Turtle in
 * the wild does. Deterministic (seeded); written streaming.
 *
 * `npx tsx test/bench/generate.ts [statements=BENCH_STATEMENTS|1000000] [dir]`
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface GeneratedDataset {
  dir: string;
  ntriples: string;
  turtle: string;
  statements: number;
  subjects: number;
  ntriplesBytes: number;
  turtleBytes: number;
  /** The Turtle file's prefixes (to give the dataset, so TriG export compacts the same way). */
  prefixes: { prefixLabel: string; iri: string }[];
}

const NS = {
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
  owl: 'http://www.w3.org/2002/07/owl#',
  foaf: 'http://xmlns.com/foaf/0.1/',
  schema: 'https://schema.org/',
  def: 'https://data.example.org/def/',
  per: 'https://data.example.org/id/person/',
  org: 'https://data.example.org/id/organization/',
  book: 'https://data.example.org/id/book/',
} as const;
type Prefix = keyof typeof NS;

type Term =
  | { t: 'iri'; ns: Prefix; local: string }
  | { t: 'full'; iri: string }
  | { t: 'lit'; lex: string; lang?: string; dt?: 'integer' | 'decimal' | 'date' | 'dateTime' };
type Statement = { p: Term; o: Term } | { p: Term; bnode: { p: Term; o: Term }[] };

const iri = (ns: Prefix, local: string): Term => ({ t: 'iri', ns, local });
const RDF_TYPE = iri('rdf', 'type');

const FIRST = ['Anna', 'Bram', 'Chloé', 'Daan', 'Emma', 'Finn', 'Greta', 'Hugo', 'Ilse', 'Jörg', 'Kees', 'Lotte', 'Márton', 'Noor', 'Olaf', 'Pía', 'Quinten', 'Ruth', 'Søren', 'Tess', 'Uma', 'Vera', 'Willem', 'Xiu', 'Yara', 'Zoë'];
const LAST = ['de Vries', 'Jansen', 'van den Berg', 'Bakker', 'Visser', 'Smit', 'Meijer', 'de Boer', 'Mulder', 'Bos', 'Vos', 'Peters', 'Hendriks', 'van Leeuwen', 'Dekker', 'Brouwer', 'Müller', 'Nowak', 'García', 'Øster'];
const CITIES = ['Amsterdam', 'Utrecht', 'Zürich', 'São Paulo', 'Kraków', 'Malmö', '東京', 'Reykjavík', 'Düsseldorf', 'Besançon', 'Łódź', 'Rotterdam'];
const STREETS = ['Hoofdstraat', 'Kerkweg', 'Dorpsstraat', 'Schoolstraat', 'Molenweg', 'Stationsplein', 'Bahnhofstraße', 'Rue de la Paix'];
const WORDS = ['linked', 'data', 'research', 'archive', 'history', 'collection', 'museum', 'library', 'open', 'knowledge', 'graph', 'heritage', 'survey', 'record', 'catalogue', 'index'];
const TITLES = ['The Quiet Archive', 'Notes on Graphs', 'A History of Maps', 'Rivers and Dikes', 'Het Stille Water', 'Über die Brücke', 'La Ville Lumière', 'Data in the Wild'];

/** Small seeded PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Kind = 'per' | 'org' | 'book';
const kindOf = (i: number): Kind => {
  const k = (Math.imul(i, 2654435761) >>> 0) % 20;
  return k < 12 ? 'per' : k < 17 ? 'org' : 'book';
};
const subjectOf = (i: number): Term => iri(kindOf(i), String(i));

/** The statements of subject `i` (before truncation), links into `[0, estimatedSubjects)`. */
function subjectStatements(i: number, estimatedSubjects: number): Statement[] {
  const r = rng(i * 7919 + 17);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const kind = kindOf(i);
  const out: Statement[] = [];
  const lit = (lex: string, extra: { lang?: string; dt?: 'integer' | 'decimal' | 'date' | 'dateTime' } = {}): Term => ({ t: 'lit', lex, ...extra });
  const date = (fromYear: number, span: number) =>
    `${fromYear + Math.floor(r() * span)}-${String(1 + Math.floor(r() * 12)).padStart(2, '0')}-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}`;

  let name: string;
  if (kind === 'per') {
    name = `${pick(FIRST)} ${pick(LAST)}`;
    out.push({ p: RDF_TYPE, o: iri('schema', 'Person') });
    if (r() < 0.2) out.push({ p: RDF_TYPE, o: iri('foaf', 'Person') });
  } else if (kind === 'org') {
    name = `${pick(WORDS)} ${pick(WORDS)} ${pick(['Foundation', 'B.V.', 'GmbH', 'Institute', 'Society'])}`;
    out.push({ p: RDF_TYPE, o: iri('schema', 'Organization') });
    if (r() < 0.2) out.push({ p: RDF_TYPE, o: iri('foaf', 'Organization') });
  } else {
    name = `${pick(TITLES)}, volume ${1 + Math.floor(r() * 9)}`;
    out.push({ p: RDF_TYPE, o: iri('schema', 'Book') });
    if (r() < 0.2) out.push({ p: RDF_TYPE, o: iri('def', 'Publication') });
  }
  out.push({ p: iri('rdfs', 'label'), o: lit(`${name} (${i})`, { lang: 'en' }) });
  if (r() < 0.5) out.push({ p: iri('rdfs', 'label'), o: lit(`${name} (${i})`, { lang: 'nl' }) });
  out.push({ p: iri('schema', 'name'), o: lit(name) });
  if (r() < 0.5) {
    let text = `${name} is known for ${pick(WORDS)} and ${pick(WORDS)} work in ${pick(CITIES)}`;
    if (r() < 0.3) text += `, often called "the ${pick(WORDS)} ${pick(WORDS)}"`;
    if (r() < 0.2) text += `.\nSee also the ${pick(WORDS)} ${pick(WORDS)} records \\ ${pick(WORDS)}`;
    out.push({ p: iri('schema', 'description'), o: lit(`${text}.`) });
  }
  const dateProperty = kind === 'per' ? 'birthDate' : kind === 'org' ? 'foundingDate' : 'datePublished';
  out.push({ p: iri('schema', dateProperty), o: lit(date(kind === 'per' ? 1930 : 1800, kind === 'per' ? 80 : 220), { dt: 'date' }) });
  out.push({ p: iri('schema', 'dateModified'), o: lit(`${date(2015, 10)}T${String(Math.floor(r() * 24)).padStart(2, '0')}:${String(Math.floor(r() * 60)).padStart(2, '0')}:00Z`, { dt: 'dateTime' }) });
  const intProperty = kind === 'per' ? 'height' : kind === 'org' ? 'numberOfEmployees' : 'numberOfPages';
  out.push({ p: iri('schema', intProperty), o: lit(String(Math.floor(r() * (kind === 'org' ? 5000 : 400)) + 1), { dt: 'integer' }) });
  if (r() < 0.5) out.push({ p: iri('def', 'score'), o: lit(`${Math.floor(r() * 100)}.${String(Math.floor(r() * 100)).padStart(2, '0')}`, { dt: 'decimal' }) });
  // Links: 0-2 distinct targets (grouped with `,` in Turtle).
  const linkProperty = kind === 'per' ? iri('schema', 'knows') : kind === 'org' ? iri('schema', 'member') : iri('schema', 'author');
  const links = new Set<number>();
  const wanted = Math.floor(r() * 3);
  while (links.size < wanted) {
    const j = Math.floor(r() * estimatedSubjects);
    if (j !== i) links.add(j);
  }
  for (const j of links) out.push({ p: linkProperty, o: subjectOf(j) });
  if (r() < 0.4) out.push({ p: iri('owl', 'sameAs'), o: { t: 'full', iri: `http://www.wikidata.org/entity/Q${100000 + i * 13}` } });
  if (r() < 0.3) out.push({ p: iri('schema', 'url'), o: { t: 'full', iri: `https://www.example.com/${kind}/${i}/index.html` } });
  if (r() < 0.15) {
    out.push({
      p: iri('schema', 'address'),
      bnode: [
        { p: RDF_TYPE, o: iri('schema', 'PostalAddress') },
        { p: iri('schema', 'streetAddress'), o: lit(`${pick(STREETS)} ${1 + Math.floor(r() * 200)}`) },
        { p: iri('schema', 'postalCode'), o: lit(`${1000 + Math.floor(r() * 9000)} ${String.fromCharCode(65 + Math.floor(r() * 26), 65 + Math.floor(r() * 26))}`) },
        { p: iri('schema', 'addressLocality'), o: lit(pick(CITIES), { lang: 'nl' }) },
      ],
    });
  }
  return out;
}

const size = (s: Statement): number => ('bnode' in s ? 1 + s.bnode.length : 1);

// ---------------------------------------------------------------------------------------------
// Rendering

const escapeLex = (lex: string): string =>
  /["\\\n\r]/.test(lex) ? lex.replace(/["\\\n\r]/g, (c) => (c === '"' ? '\\"' : c === '\\' ? '\\\\' : c === '\n' ? '\\n' : '\\r')) : lex;

function nt(term: Term): string {
  switch (term.t) {
    case 'iri': return `<${NS[term.ns]}${term.local}>`;
    case 'full': return `<${term.iri}>`;
    case 'lit': return `"${escapeLex(term.lex)}"${term.lang ? `@${term.lang}` : term.dt ? `^^<${NS.xsd}${term.dt}>` : ''}`;
  }
}

function ttl(term: Term): string {
  switch (term.t) {
    case 'iri': return term === RDF_TYPE ? 'a' : `${term.ns}:${term.local}`;
    case 'full': return `<${term.iri}>`;
    case 'lit':
      if (term.lang) return `"${escapeLex(term.lex)}"@${term.lang}`;
      // Numeric shorthand, as hand-written Turtle has it.
      if (term.dt === 'integer' || term.dt === 'decimal') return term.lex;
      if (term.dt) return `"${term.lex}"^^xsd:${term.dt}`;
      return `"${escapeLex(term.lex)}"`;
  }
}

/** Appends to a file in ~256 KiB writes, honouring backpressure. */
class Out {
  private parts: string[] = [];
  private chars = 0;
  constructor(private readonly stream: WriteStream) {}
  async write(s: string): Promise<void> {
    this.parts.push(s);
    this.chars += s.length;
    if (this.chars >= 256 * 1024) await this.flush();
  }
  async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const chunk = this.parts.join('');
    this.parts = [];
    this.chars = 0;
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }
  async end(): Promise<void> {
    await this.flush();
    this.stream.end();
    await once(this.stream, 'finish');
  }
}

function ntSubject(subject: string, statements: Statement[], bnodeLabel: string): string {
  let out = '';
  for (const s of statements) {
    if ('bnode' in s) {
      out += `${subject} ${nt(s.p)} ${bnodeLabel} .\n`;
      for (const b of s.bnode) out += `${bnodeLabel} ${nt(b.p)} ${nt(b.o)} .\n`;
    } else out += `${subject} ${nt(s.p)} ${nt(s.o)} .\n`;
  }
  return out;
}

function ttlPredicateList(statements: (Statement | { p: Term; o: Term })[], indent: string): string {
  let out = '';
  let previous: Term | null = null;
  for (const s of statements) {
    const object = 'bnode' in s ? `[\n${indent}    ${ttlPredicateList(s.bnode, `${indent}    `)}\n${indent}]` : ttl(s.o);
    const samePredicate = previous !== null && previous.t === 'iri' && s.p.t === 'iri' && previous.ns === s.p.ns && previous.local === s.p.local;
    if (samePredicate) out += `, ${object}`;
    else out += `${previous === null ? '' : ` ;\n${indent}`}${ttl(s.p)} ${object}`;
    previous = s.p;
  }
  return out;
}

/** Writes `n` statements as N-Triples and Turtle into `dir` (a new temp folder by default). */
export async function generateDataset(n: number, dir?: string): Promise<GeneratedDataset> {
  const folder = dir ?? (await mkdtemp(join(tmpdir(), 'ldp-bench-data-')));
  const ntriples = join(folder, `bench-${n}.nt`);
  const turtle = join(folder, `bench-${n}.ttl`);
  const ntOut = new Out(createWriteStream(ntriples));
  const ttlOut = new Out(createWriteStream(turtle));
  const prefixes = Object.entries(NS).map(([prefixLabel, ns]) => ({ prefixLabel, iri: ns }));
  await ttlOut.write(`${prefixes.map((p) => `@prefix ${p.prefixLabel}: <${p.iri}> .`).join('\n')}\n\n`);
  const estimatedSubjects = Math.max(1, Math.round(n / 10.3));
  let written = 0;
  let subjects = 0;
  for (let i = 0; written < n; i++) {
    const statements = subjectStatements(i, estimatedSubjects);
    let count = statements.reduce((sum, s) => sum + size(s), 0);
    while (count > n - written) count -= size(statements.pop()!);
    if (count === 0) continue;
    const subject = subjectOf(i);
    await ntOut.write(ntSubject(nt(subject), statements, `_:addr${i}`));
    await ttlOut.write(`${ttl(subject)} ${ttlPredicateList(statements, '    ')} .\n\n`);
    written += count;
    subjects++;
  }
  await Promise.all([ntOut.end(), ttlOut.end()]);
  return {
    dir: folder,
    ntriples,
    turtle,
    statements: written,
    subjects,
    ntriplesBytes: (await stat(ntriples)).size,
    turtleBytes: (await stat(turtle)).size,
    prefixes,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Number(process.argv[2] ?? process.env.BENCH_STATEMENTS ?? 1_000_000);
  const start = performance.now();
  const d = await generateDataset(n, process.argv[3]);
  console.log(
    `${d.statements.toLocaleString('en')} statements, ${d.subjects.toLocaleString('en')} subjects in ${((performance.now() - start) / 1000).toFixed(1)} s:\n` +
      `  ${d.ntriples} (${(d.ntriplesBytes / 2 ** 20).toFixed(1)} MiB)\n  ${d.turtle} (${(d.turtleBytes / 2 ** 20).toFixed(1)} MiB)`,
  );
}
