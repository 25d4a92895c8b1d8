/**
 * GraphQL (issue 16): a 1,000-node connection query with two nested levels (books → authors →
 * birth places) through `GET …/graphql`, next to the equivalent hand-written SPARQL sent to the
 * same service's endpoint through HTTP, interleaved over one keep-alive connection. Generated
 * library: BOOKS books (title en/nl, isbn, pages, 1–3 authors), AUTHORS authors (name, birth place),
 * PLACES places, with the SHACL shapes the schema is made from. Prints both medians, the ratio
 * (aim ≤ 1.5×) and the number of SPARQL queries one GraphQL query sent (its `extensions`).
 * Asserts nothing but that both answers hold the same books, authors and places.
 */
import { loadavg } from 'node:os';
import { aimText, apiFor, int, ms, multipartImport, ratioFixed, sleep, stats, TimedClient } from './bench-http.js';
import type { RunningPlatform } from './embedded-server.js';

const AIM = 1.5;
const BOOKS = 3000;
const AUTHORS = 600;
const PLACES = 100;
const PAGE = 1000;
const WARMUP = 5;
const ROUNDS = Number(process.env.BENCH_GRAPHQL_RUNS ?? 30);
const ACCOUNT = 'bench-graphql';
const DATASET = 'library';
const SERVICE = 'sparql';

const EX = 'https://example.org/def/';
const ID = 'https://example.org/id/';

function library(): string {
  const lines: string[] = [
    `@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .`,
    `@prefix ex: <${EX}> . @prefix id: <${ID}> .`,
    `ex:BookShape a sh:NodeShape ; sh:targetClass ex:Book ; sh:property [ sh:path ex:title ; sh:datatype rdf:langString ] , [ sh:path ex:isbn ; sh:datatype xsd:string ; sh:minCount 1 ; sh:maxCount 1 ] , [ sh:path ex:pages ; sh:datatype xsd:integer ; sh:maxCount 1 ] , [ sh:path ex:author ; sh:class ex:Person ] .`,
    `ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person ; sh:property [ sh:path ex:name ; sh:datatype rdf:langString ] , [ sh:path ex:birth-place ; sh:class ex:Place ; sh:maxCount 1 ] .`,
    `ex:PlaceShape a sh:NodeShape ; sh:targetClass ex:Place ; sh:property [ sh:path ex:name ; sh:datatype rdf:langString ] .`,
  ];
  for (let p = 0; p < PLACES; p++) lines.push(`id:place-${p} a ex:Place ; ex:name "Place ${p}"@en , "Plaats ${p}"@nl .`);
  for (let a = 0; a < AUTHORS; a++) lines.push(`id:author-${a} a ex:Person ; ex:name "Author ${a}"@en ; ex:birth-place id:place-${(a * 7) % PLACES} .`);
  for (let b = 0; b < BOOKS; b++) {
    const authors = Array.from({ length: 1 + (b % 3) }, (_, k) => `id:author-${(b * 13 + k * 101) % AUTHORS}`).join(' , ');
    lines.push(`id:book-${String(b).padStart(5, '0')} a ex:Book ; ex:title "Book ${b}"@en , "Boek ${b}"@nl ; ex:isbn "isbn-${b}" ; ex:pages ${100 + (b % 900)} ; ex:author ${authors} .`);
  }
  return `${lines.join('\n')}\n`;
}

const GRAPHQL = `{ BookConnection(first: ${PAGE}) { edges { node { id isbn pages title(language: "en") { value }
  author { id name(language: "en") { value } birthPlace { id name(language: "en") { value } } } } } } }`;

const SPARQL = `PREFIX ex: <${EX}>
SELECT ?book ?isbn ?pages ?title ?author ?name ?place ?placeName WHERE {
  { SELECT ?book WHERE { ?book a ex:Book } ORDER BY ?book LIMIT ${PAGE} }
  OPTIONAL { ?book ex:isbn ?isbn } OPTIONAL { ?book ex:pages ?pages }
  OPTIONAL { ?book ex:title ?title FILTER(lang(?title) = "en") }
  OPTIONAL { ?book ex:author ?author
    OPTIONAL { ?author ex:name ?name FILTER(lang(?name) = "en") }
    OPTIONAL { ?author ex:birth-place ?place OPTIONAL { ?place ex:name ?placeName FILTER(lang(?placeName) = "en") } } }
}`;

/** books, (book, author) pairs and (author, place) pairs of an answer, to check both say the same. */
interface Shape {
  books: number;
  bookAuthors: number;
  authorPlaces: number;
}

function graphqlShape(body: any): Shape {
  const books = body.data.BookConnection.edges.map((e: any) => e.node);
  const authorPlaces = new Set<string>();
  let bookAuthors = 0;
  for (const b of books) {
    for (const a of b.author) {
      bookAuthors++;
      if (a.birthPlace) authorPlaces.add(`${a.id} ${a.birthPlace.id}`);
    }
  }
  return { books: books.length, bookAuthors, authorPlaces: authorPlaces.size };
}

function sparqlShape(body: any): Shape {
  const rows: Record<string, { value: string }>[] = body.results.bindings;
  return {
    books: new Set(rows.map((r) => r.book!.value)).size,
    bookAuthors: new Set(rows.filter((r) => r.author).map((r) => `${r.book!.value} ${r.author!.value}`)).size,
    authorPlaces: new Set(rows.filter((r) => r.place).map((r) => `${r.author!.value} ${r.place!.value}`)).size,
  };
}

export async function benchGraphql(platform: RunningPlatform, options: { log?: (line: string) => void } = {}): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const api = apiFor(platform);
  const client = new TimedClient();
  const dataset = `${ACCOUNT}/${DATASET}`;
  try {
    await api.json('POST', '/accounts', { type: 'org', accountName: ACCOUNT });
    await api.json('POST', `/datasets/${ACCOUNT}`, { name: DATASET, accessLevel: 'public' });
    const job = await multipartImport(api, dataset, 'library.ttl', library());
    await api.json('POST', `/datasets/${dataset}/services`, { name: SERVICE, type: 'virtuoso' });
    for (let i = 0; i < 2400; i++) {
      const s = await api.json('GET', `/datasets/${dataset}/services/${SERVICE}`);
      if (s.status === 'running') break;
      if (s.status === 'error' || i === 2399) throw new Error(`service: ${s.status} ${JSON.stringify(s.error ?? {})}`);
      await sleep(50);
    }
    const graphqlUrl = `${platform.url}/datasets/${dataset}/graphql?${new URLSearchParams({ query: GRAPHQL })}`;
    const sparqlUrl = `${platform.url}/datasets/${dataset}/services/${SERVICE}/sparql?${new URLSearchParams({ query: SPARQL })}`;
    const variants = [
      { name: 'GraphQL GET …/graphql', get: () => client.get(graphqlUrl, { accept: 'application/json' }) },
      { name: 'hand-written SPARQL GET …/services/sparql/sparql', get: () => client.get(sparqlUrl, { accept: 'application/sparql-results+json' }) },
    ];
    const samples: number[][] = [[], []];
    let queriesSent = 0;
    let bytes = [0, 0];
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (let j = 0; j < variants.length; j++) {
        const v = (round + j) % variants.length;
        const res = await variants[v]!.get();
        if (res.status !== 200) throw new Error(`${variants[v]!.name}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
        if (round < WARMUP) {
          bytes[v] = res.bytes;
          continue;
        }
        samples[v]!.push(res.ms);
      }
      if (round === 0) {
        const g = JSON.parse((await variants[0]!.get()).body.toString('utf8'));
        const s = JSON.parse((await variants[1]!.get()).body.toString('utf8'));
        queriesSent = g.extensions.sparqlQueries;
        const [gs, ss] = [graphqlShape(g), sparqlShape(s)];
        if (JSON.stringify(gs) !== JSON.stringify(ss)) throw new Error(`the answers differ: GraphQL ${JSON.stringify(gs)}, SPARQL ${JSON.stringify(ss)}`);
        log(
          `# GraphQL (${platform.url}): ${int(job.numberOfStatements)} statements (${int(BOOKS)} books, ${int(AUTHORS)} authors, ${int(PLACES)} places, SHACL shapes), ` +
            `one page of ${gs.books} books with ${gs.bookAuthors} authors and their birth places (two nested levels), through service "${SERVICE}" (embedded engine); ` +
            `${ROUNDS} rounds after ${WARMUP} warm-up, interleaved; request → last byte; load average ${loadavg()[0]!.toFixed(1)}. Aim: GraphQL median ≤ ${AIM}× the hand-written SPARQL`,
        );
      }
    }
    bytes = bytes.map((b) => b);
    const [g, s] = [stats(samples[0]!), stats(samples[1]!)];
    const ratio = g.median / s.median;
    log(`${variants[1]!.name}: median ${ms(s.median)}, p99 ${ms(s.p99)}, min ${ms(s.min)} (${int(bytes[1]!)} bytes)`);
    log(`${variants[0]!.name}: median ${ms(g.median)}, p99 ${ms(g.p99)}, min ${ms(g.min)} (${int(bytes[0]!)} bytes)`);
    log(`GraphQL / SPARQL median: ${ratioFixed(ratio, AIM)}× (${aimText(ratio <= AIM)}); SPARQL queries one GraphQL query sent: ${queriesSent} (the page, then one per nested level)`);
  } finally {
    client.close();
  }
}
