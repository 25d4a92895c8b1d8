/**
 * The external-engine adapter (SPARQL 1.1 Protocol + Graph Store Protocol) against a real
 * Virtuoso 7 started here (Debian package virtuoso-opensource-7), checked against the embedded
 * oxigraph engine on the same snapshot. Without `virtuoso-t` the suite is skipped with a loud
 * message, except under CI=true, where that is a failure.
 */
import { type AddressInfo, createServer } from 'node:net';
import * as oxigraph from 'oxigraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { oxigraphEngine } from '../../functions/adapters/common/oxigraph/oxigraph-engine.js';
import { MAX_GET_URL } from '../../functions/adapters/common/sparql-protocol/endpoints.js';
import { SparqlProtocolEngine } from '../../functions/adapters/common/sparql-protocol/engine.js';
import {
  type EngineQuery,
  EngineOverloadedError,
  EngineQueryError,
  EngineTimeoutError,
  type SnapshotSource,
  type SparqlStore,
} from '../../functions/ports/sparql-engine.js';
import { isomorphic } from '../../functions/rdf/isomorphic.js';
import { type NtQuad, rdfJsQuadToNt } from '../../functions/rdf/nt.js';
import { findVirtuoso, startVirtuoso, VIRTUOSO_PACKAGE, type VirtuosoServer } from '../support/virtuoso.js';

const found = findVirtuoso();
const onCi = process.env.CI === 'true';

if (!found) {
  const line = `external-engine.test.ts: virtuoso-t not found — the Debian package ${VIRTUOSO_PACKAGE} is missing (apt-get install ${VIRTUOSO_PACKAGE}).`;
  console.warn(`\n${'!'.repeat(100)}\n!! ${onCi ? 'FAILING (CI=true)' : 'SKIPPING'}: ${line}\n${'!'.repeat(100)}\n`);
}

describe.runIf(!found && onCi)('external SPARQL engine prerequisites', () => {
  it(`needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE} under CI`, () => {
    throw new Error(`virtuoso-t not found: install the Debian package ${VIRTUOSO_PACKAGE} (.ci/run does).`);
  });
});

const EX = 'http://example.org/';
const PEOPLE = `${EX}graphs/people`;
const PLACES = `${EX}graphs/places`;
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const JSON_RESULTS = 'application/sparql-results+json';
const PREFIXES = `PREFIX ex: <${EX}> PREFIX xsd: <${XSD}> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n`;

const q = (s: string, p: string, o: string, g: string): string => `${s} ${p} ${o} <${g}> .`;
const ex = (local: string): string => `<${EX}${local}>`;

/** Two named graphs; blank nodes within one graph and one shared by both; a statement in both. */
const DATASET = [
  q(ex('alice'), `<${RDF_TYPE}>`, ex('Person'), PEOPLE),
  q(ex('alice'), ex('name'), '"Alice"', PEOPLE),
  q(ex('alice'), ex('name'), '"Alicia"@es', PEOPLE),
  q(ex('alice'), ex('age'), `"30"^^<${XSD}integer>`, PEOPLE),
  q(ex('alice'), ex('height'), `"1.68"^^<${XSD}decimal>`, PEOPLE),
  q(ex('alice'), ex('born'), `"1994-05-01"^^<${XSD}date>`, PEOPLE),
  q(ex('alice'), ex('active'), `"true"^^<${XSD}boolean>`, PEOPLE),
  q(ex('alice'), ex('code'), `"X-1"^^${ex('Code')}`, PEOPLE),
  q(ex('alice'), ex('note'), '"a \\"quoted\\" line\\nsecond\tline, with; é ü 😀"', PEOPLE),
  q(ex('alice'), ex('knows'), ex('bob'), PEOPLE),
  q(ex('alice'), ex('address'), '_:addr1', PEOPLE),
  q('_:addr1', ex('city'), ex('amsterdam'), PEOPLE),
  q('_:addr1', ex('street'), '"Damrak 1"', PEOPLE),
  q(ex('alice'), ex('seenIn'), `<${PLACES}>`, PEOPLE),
  q(ex('bob'), `<${RDF_TYPE}>`, ex('Person'), PEOPLE),
  q(ex('bob'), ex('name'), '"Bob"', PEOPLE),
  q(ex('bob'), ex('age'), `"25"^^<${XSD}integer>`, PEOPLE),
  q(ex('bob'), ex('knows'), ex('carol'), PEOPLE),
  q(ex('carol'), ex('name'), '"Carol"@en', PEOPLE),
  q(ex('shared'), ex('label'), '"in both graphs"', PEOPLE),
  q('_:trip', ex('traveller'), ex('alice'), PEOPLE),
  q(ex('amsterdam'), `<${RDF_TYPE}>`, ex('City'), PLACES),
  q(ex('amsterdam'), ex('name'), '"Amsterdam"@nl', PLACES),
  q(ex('amsterdam'), ex('population'), `"921402"^^<${XSD}integer>`, PLACES),
  q(ex('utrecht'), `<${RDF_TYPE}>`, ex('City'), PLACES),
  q(ex('utrecht'), ex('name'), '"Utrecht"@nl', PLACES),
  q(ex('bob'), ex('livesIn'), ex('utrecht'), PLACES),
  q(ex('shared'), ex('label'), '"in both graphs"', PLACES),
  q('_:trip', ex('to'), ex('utrecht'), PLACES),
  q('_:trip', ex('when'), `"2024-06-01T10:00:00Z"^^<${XSD}dateTime>`, PLACES),
];

/** N-Quads in chunks of `per` lines (several chunks, like a real snapshot). */
function source(lines: string[], per = 7): SnapshotSource {
  return {
    statements: lines.length,
    async *chunks() {
      for (let i = 0; i < lines.length; i += per) yield `${lines.slice(i, i + per).join('\n')}\n`;
    },
  };
}

const ask = (store: SparqlStore, query: string, more: Partial<EngineQuery> = {}): Promise<string> =>
  store.query({ query: PREFIXES + query, format: JSON_RESULTS, timeoutMs: 20_000, ...more });

type Row = Record<string, string>;

/** SPARQL JSON bindings as `var=term` strings; blank nodes as `_:` (labels differ per engine). */
function rows(json: string): Row[] {
  const parsed = JSON.parse(json) as { results: { bindings: Record<string, { type: string; value: string; 'xml:lang'?: string; datatype?: string }>[] } };
  return parsed.results.bindings.map((b) =>
    Object.fromEntries(
      Object.entries(b).map(([k, t]) => [k, t.type === 'bnode' ? '_:' : t.type === 'uri' ? `<${t.value}>` : `"${t.value}"${t['xml:lang'] ? `@${t['xml:lang']}` : t.datatype ? `^^<${t.datatype}>` : ''}`]),
    ),
  );
}
const canonical = (rs: Row[]): string[] =>
  rs.map((r) =>
    Object.keys(r)
      .sort()
      .map((k) => `${k}=${r[k]}`)
      .join(' '),
  ).sort();

function quads(text: string, format: string): NtQuad[] {
  return oxigraph.parse(text, { format }).map((x) => rdfJsQuadToNt(x as never));
}

const sortedLines = (text: string): string[] => {
  const [head, ...rest] = text.split(/\r?\n/).filter((l) => l !== '');
  return [head ?? '', ...rest.sort()];
};

/** Snapshot graphs present in Virtuoso (any snapshot), straight from its endpoint. */
async function storedSnapshotGraphs(server: VirtuosoServer): Promise<string[]> {
  const res = await fetch(server.sparqlEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: JSON_RESULTS },
    body: new URLSearchParams({ query: 'SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } FILTER(STRSTARTS(STR(?g), "urn:x-snapshot:")) }' }),
  });
  const json = (await res.json()) as { results: { bindings: { g: { value: string } }[] } };
  return json.results.bindings.map((b) => b.g.value).sort();
}

describe.skipIf(!found)('SparqlProtocolEngine against Virtuoso (virtuoso-opensource-7)', () => {
  let server: VirtuosoServer;
  let engine: SparqlProtocolEngine;
  let store: SparqlStore;
  let reference: SparqlStore;

  beforeAll(async () => {
    const started = Date.now();
    server = await startVirtuoso();
    console.info(`Virtuoso up in ${Date.now() - started} ms at ${server.sparqlEndpoint}`);
    engine = new SparqlProtocolEngine({ queryEndpoint: server.sparqlEndpoint, graphStoreEndpoint: server.graphStoreEndpoint });
    store = await engine.open(source(DATASET), { reasoner: 'None' });
    // One chunk for oxigraph: its store.load() scopes blank node labels to each chunk, while a
    // snapshot's labels are global (canonical, prefixed per import), as this adapter treats them.
    reference = await oxigraphEngine.open(source(DATASET, DATASET.length), { reasoner: 'None', replicas: 1 });
  });

  afterAll(async () => {
    await store?.close().catch(() => undefined);
    await reference?.close().catch(() => undefined);
    await server?.stop();
  });

  it('loads a snapshot of two named graphs and counts its statements like oxigraph', () => {
    expect(store.statements).toBe(DATASET.length);
    expect(store.statements).toBe(reference.statements);
  });

  it('answers SELECT over the union of the graphs as default graph', async () => {
    const names = rows(await ask(store, 'SELECT ?name WHERE { ?p a ex:Person ; ex:name ?name }'));
    expect(names.map((r) => r.name).sort()).toEqual(['"Alice"', '"Alicia"@es', '"Bob"']);
    // Statements from both graphs join.
    const lives = rows(await ask(store, 'SELECT ?city WHERE { ex:alice ex:knows ?b . ?b ex:livesIn ?city }'));
    expect(lives).toEqual([{ city: `<${EX}utrecht>` }]);
  });

  it('honours default-graph-uri / named-graph-uri (request graphs) and the query\'s FROM / FROM NAMED, like oxigraph', async () => {
    const people = rows(await ask(store, 'SELECT DISTINCT ?t WHERE { ?s a ?t }', { defaultGraphs: [PEOPLE] }));
    expect(people).toEqual([{ t: `<${EX}Person>` }]);
    const places = rows(await ask(store, 'SELECT DISTINCT ?t WHERE { ?s a ?t }', { defaultGraphs: [PLACES] }));
    expect(places).toEqual([{ t: `<${EX}City>` }]);
    const named = rows(await ask(store, 'SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }', { namedGraphs: [PLACES] }));
    expect(named).toEqual([{ g: `<${PLACES}>` }]);
    // The request's dataset is the whole dataset: only named graphs given means an empty default graph.
    expect(rows(await ask(store, 'SELECT * WHERE { ?s ?p ?o }', { namedGraphs: [PLACES] }))).toEqual([]);
    expect(rows(await ask(store, 'SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }', { defaultGraphs: [PLACES] }))).toEqual([]);
    // A graph that is not in the snapshot is empty.
    expect(rows(await ask(store, 'SELECT * WHERE { ?s ?p ?o }', { defaultGraphs: [`${EX}graphs/none`] }))).toEqual([]);
    // The query's own dataset, when the request gives none (SPARQL 1.1 §13.2).
    expect(rows(await ask(store, `SELECT DISTINCT ?t FROM <${PLACES}> WHERE { ?s a ?t }`))).toEqual([{ t: `<${EX}City>` }]);
    expect(rows(await ask(store, `SELECT DISTINCT ?g FROM NAMED <${PEOPLE}> WHERE { GRAPH ?g { ?s ?p ?o } }`))).toEqual([{ g: `<${PEOPLE}>` }]);
    expect(rows(await ask(store, `SELECT ?s FROM <${PLACES}> WHERE { GRAPH ?g { ?s ?p ?o } }`))).toEqual([]);
    // The request's graphs override the query's.
    expect(rows(await ask(store, `SELECT DISTINCT ?t FROM <${PLACES}> WHERE { ?s a ?t }`, { defaultGraphs: [PEOPLE] }))).toEqual([{ t: `<${EX}Person>` }]);

    const union = '{ ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } }';
    const cases: [string, Partial<EngineQuery>][] = [
      [`SELECT * WHERE { ${union} }`, {}],
      [`SELECT * WHERE { ${union} }`, { defaultGraphs: [PEOPLE] }],
      [`SELECT * WHERE { ${union} }`, { namedGraphs: [PLACES] }],
      [`SELECT * WHERE { ${union} }`, { defaultGraphs: [PEOPLE, PLACES], namedGraphs: [PEOPLE] }],
      [`SELECT * WHERE { ${union} }`, { defaultGraphs: [], namedGraphs: [] }],
      [`SELECT * FROM <${PLACES}> WHERE { ${union} }`, {}],
      [`SELECT * FROM NAMED <${PEOPLE}> WHERE { ${union} }`, {}],
      [`SELECT * FROM <${PEOPLE}> FROM NAMED <${PLACES}> WHERE { ${union} }`, {}],
      [`SELECT * FROM <${PEOPLE}> WHERE { ${union} }`, { namedGraphs: [PEOPLE] }],
      [`SELECT ?s WHERE { GRAPH <${PEOPLE}> { ?s a ?t } }`, { namedGraphs: [PLACES] }],
    ];
    for (const [query, dataset] of cases) {
      // The embedded engine is told whether the query has FROM (the HTTP layer does that); this adapter reads the query.
      const theirs = await ask(reference, query, { ...dataset, queryDefinesDataset: /\bFROM\b/.test(query) });
      expect(canonical(rows(await ask(store, query, dataset))), `${query} ${JSON.stringify(dataset)}`).toEqual(canonical(rows(theirs)));
    }
  });

  it('returns the original graph IRIs for GRAPH ?g, STR(?g) and CONSTRUCT, and finds GRAPH <iri>', async () => {
    const graphs = rows(await ask(store, 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g'));
    expect(graphs).toEqual([
      { g: `<${PEOPLE}>`, n: `"21"^^<${XSD}integer>` },
      { g: `<${PLACES}>`, n: `"9"^^<${XSD}integer>` },
    ]);
    expect(rows(await ask(store, 'SELECT DISTINCT (STR(?g) AS ?name) WHERE { GRAPH ?g { ?s a ex:City } }'))).toEqual([{ name: `"${PLACES}"` }]);
    expect(rows(await ask(store, `SELECT ?s WHERE { GRAPH <${PLACES}> { ?s ex:livesIn ?c } }`))).toEqual([{ s: `<${EX}bob>` }]);
    const ttl = await store.query({ query: PREFIXES + 'CONSTRUCT { ?s ex:inGraph ?g } WHERE { GRAPH ?g { ?s a ?t } }', format: 'text/turtle', timeoutMs: 20_000 });
    expect(ttl).not.toContain('urn:x-snapshot');
    expect(quads(ttl, 'text/turtle').map((x) => `${x.subject} ${x.object}`).sort()).toEqual([
      `<${EX}alice> <${PEOPLE}>`,
      `<${EX}amsterdam> <${PLACES}>`,
      `<${EX}bob> <${PEOPLE}>`,
      `<${EX}utrecht> <${PLACES}>`,
    ]);
  });

  it('keeps blank nodes whole: within a graph and shared across graphs', async () => {
    const trip = rows(await ask(store, 'SELECT ?who ?where ?when WHERE { ?trip ex:traveller ?who ; ex:to ?where ; ex:when ?when }'));
    expect(trip).toEqual([{ who: `<${EX}alice>`, where: `<${EX}utrecht>`, when: `"2024-06-01T10:00:00Z"^^<${XSD}dateTime>` }]);
    const address = rows(await ask(store, 'SELECT ?city ?street WHERE { ex:alice ex:address ?a . ?a ex:city ?city ; ex:street ?street }'));
    expect(address).toEqual([{ city: `<${EX}amsterdam>`, street: '"Damrak 1"' }]);
    expect(rows(await ask(store, 'SELECT (COUNT(DISTINCT ?b) AS ?n) WHERE { ?b ?p ?o FILTER(isBlank(?b)) }'))).toEqual([{ n: `"2"^^<${XSD}integer>` }]);
  });

  it('answers CONSTRUCT in Turtle and N-Triples, the same graph as oxigraph', async () => {
    for (const query of ['CONSTRUCT WHERE { ?s ?p ?o }', 'CONSTRUCT { ?p ex:friendOf ?q . ?q ex:at [ ex:place ?c ] } WHERE { ?p ex:knows ?q OPTIONAL { ?q ex:livesIn ?c } }']) {
      for (const format of ['text/turtle', 'application/n-triples']) {
        const got = await store.query({ query: PREFIXES + query, format, timeoutMs: 20_000 });
        const want = await reference.query({ query: PREFIXES + query, format, timeoutMs: 20_000 });
        const a = quads(got, format);
        expect(a.length).toBeGreaterThan(0);
        expect(isomorphic(a, quads(want, format)), `${query} as ${format}:\n${got}\n---\n${want}`).toBe(true);
      }
    }
  });

  it('writes CONSTRUCT as N-Triples text identical to oxigraph\'s (escapes, xsd:string, duplicates), without blank nodes', async () => {
    const g = `${EX}graphs/text`;
    const lines = [
      q(`<${EX}t1>`, `<${EX}says>`, '"\u00fcn\u00ef \\"q\\" \\n line\\t tab \\\\ bs \\\\u0041 not an escape"@en', g),
      q(`<${EX}t1>`, `<${EX}says>`, `"x"^^<${XSD}string>`, g),
      q(`<${EX}t1>`, `<${EX}says>`, '"emoji \u{1F600} and <brackets> {braces}"', g),
      q(`<${EX}t1>`, `<${EX}count>`, `"5"^^<${XSD}integer>`, g),
      q(`<${EX}t1>`, `<${EX}at>`, `<${EX}caf\u00e9>`, g),
      q(`<${EX}t2>`, `<${EX}says>`, '"plain"', g),
    ];
    const ours = await engine.open(source(lines), { reasoner: 'None' });
    const theirs = await oxigraphEngine.open(source(lines, lines.length), { reasoner: 'None', replicas: 1 });
    try {
      // The second pattern repeats every triple of the first: a graph holds each once.
      for (const query of ['CONSTRUCT WHERE { ?s ?p ?o }', 'CONSTRUCT { ?s ?p ?o . ?t ?p2 ?o2 } WHERE { ?s ?p ?o . ?t ?p2 ?o2 }']) {
        const got = await ours.query({ query, format: 'application/n-triples', timeoutMs: 20_000 });
        const want = await theirs.query({ query, format: 'application/n-triples', timeoutMs: 20_000 });
        expect(got.split('\n').sort(), `${got}\n---\n${want}`).toEqual(want.split('\n').sort());
      }
    } finally {
      await ours.close();
      await theirs.close();
    }
  });

  it('writes CONSTRUCT in the other RDF formats like oxigraph, and answers DESCRIBE', async () => {
    const query = PREFIXES + 'CONSTRUCT { ?s ex:name ?n ; ex:where ?c } WHERE { ?s ex:name ?n OPTIONAL { ?s ex:address/ex:city ?c } }';
    for (const format of ['application/n-quads', 'application/trig', 'application/ld+json', 'application/rdf+xml']) {
      const got = await store.query({ query, format, timeoutMs: 20_000 });
      const want = await reference.query({ query, format, timeoutMs: 20_000 });
      expect(isomorphic(quads(got, format), quads(want, format)), `${format}:\n${got}`).toBe(true);
    }
    const described = quads(await store.query({ query: PREFIXES + 'DESCRIBE ex:utrecht', format: 'text/turtle', timeoutMs: 20_000 }), 'text/turtle');
    expect(described.map((x) => `${x.subject} ${x.predicate} ${x.object}`)).toEqual(expect.arrayContaining([`<${EX}utrecht> <${EX}name> "Utrecht"@nl`, `<${EX}utrecht> <${RDF_TYPE}> <${EX}City>`]));
  });

  it('serves an empty snapshot, and default-graph statements in the union default graph only', async () => {
    const empty = await engine.open(source([]), { reasoner: 'None' });
    try {
      expect(empty.statements).toBe(0);
      expect(rows(await ask(empty, 'SELECT * WHERE { ?s ?p ?o }'))).toEqual([]);
      expect(rows(await ask(empty, 'SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }'))).toEqual([]);
      expect(JSON.parse(await ask(empty, 'ASK { ?s ?p ?o }')).boolean).toBe(false);
    } finally {
      await empty.close();
    }
    const lines = [`<${EX}d> <${EX}p> "in the default graph" .`, q(ex('n'), ex('p'), '"named"', PEOPLE)];
    const mixed = await engine.open(source(lines), { reasoner: 'None' });
    const theirs = await oxigraphEngine.open(source(lines), { reasoner: 'None', replicas: 1 });
    try {
      expect(mixed.statements).toBe(2);
      for (const query of ['SELECT * WHERE { ?s ?p ?o }', 'SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }']) {
        expect(canonical(rows(await ask(mixed, query))), query).toEqual(canonical(rows(await ask(theirs, query))));
      }
    } finally {
      await mixed.close();
      await theirs.close();
    }
  });

  it('answers ASK in JSON and XML', async () => {
    expect(JSON.parse(await ask(store, 'ASK { ex:alice ex:knows ex:bob }'))).toEqual({ head: {}, boolean: true });
    expect(JSON.parse(await ask(store, 'ASK { ex:bob ex:knows ex:alice }'))).toEqual({ head: {}, boolean: false });
    const xml = await store.query({ query: PREFIXES + 'ASK { ?s ex:livesIn ex:utrecht }', format: 'application/sparql-results+xml', timeoutMs: 20_000 });
    expect(xml).toBe(await reference.query({ query: PREFIXES + 'ASK { ?s ex:livesIn ex:utrecht }', format: 'application/sparql-results+xml', timeoutMs: 20_000 }));
    expect(xml).toContain('<boolean>true</boolean>');
  });

  it('writes CSV, TSV and XML results exactly as oxigraph does', async () => {
    const queries = [
      'SELECT ?s ?name ?age WHERE { ?s ex:name ?name OPTIONAL { ?s ex:age ?age } }',
      'SELECT ?s ?v WHERE { ?s ex:note|ex:active|ex:code|ex:born|ex:height|ex:population ?v }',
      'SELECT ?g ?s WHERE { GRAPH ?g { ?s ex:label ?l } }',
    ];
    for (const query of queries) {
      for (const format of ['text/csv', 'text/tab-separated-values']) {
        const got = await store.query({ query: PREFIXES + query, format, timeoutMs: 20_000 });
        const want = await reference.query({ query: PREFIXES + query, format, timeoutMs: 20_000 });
        expect(sortedLines(got), `${query} as ${format}`).toEqual(sortedLines(want));
      }
    }
    const one = 'SELECT ?c ?pop ?name WHERE { ?c ex:population ?pop ; ex:name ?name }';
    const xml = await store.query({ query: PREFIXES + one, format: 'application/sparql-results+xml', timeoutMs: 20_000 });
    expect(xml).toBe(await reference.query({ query: PREFIXES + one, format: 'application/sparql-results+xml', timeoutMs: 20_000 }));
    const csv = await store.query({ query: PREFIXES + 'SELECT ?n WHERE { ex:alice ex:note ?n }', format: 'text/csv', timeoutMs: 20_000 });
    expect(csv).toBe('n\r\n"a ""quoted"" line\nsecond\tline, with; é ü 😀"\r\n');
  });

  it('gives the same SELECT results as oxigraph for a range of queries', async () => {
    const queries = [
      'SELECT ?s ?p ?o WHERE { ?s ?p ?o }',
      'SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }',
      'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g',
      'SELECT ?p ?age WHERE { ?p ex:age ?age FILTER(?age > 26) }',
      'SELECT ?person ?city WHERE { ?person ex:address/ex:city ?city }',
      'SELECT ?y WHERE { ex:alice ex:knows+ ?y }',
      'SELECT ?x WHERE { ?x ex:knows* ex:carol }',
      'SELECT ?s (MIN(STR(?n)) AS ?first) (COUNT(?n) AS ?c) WHERE { ?s ex:name ?n } GROUP BY ?s HAVING (COUNT(?n) > 1)',
      'SELECT ?s ?city WHERE { ?s a ex:Person OPTIONAL { ?s ex:livesIn ?city } }',
      'SELECT * WHERE { { ?s a ex:City } UNION { ?s a ex:Person } }',
      'SELECT ?s ?upper WHERE { ?s ex:name ?n BIND(UCASE(STR(?n)) AS ?upper) FILTER(STRSTARTS(?upper, "A")) }',
      'SELECT ?g ?s WHERE { VALUES ?s { ex:alice ex:amsterdam } GRAPH ?g { ?s a ?type } }',
      'SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER NOT EXISTS { ?s a ex:Person } }',
      'SELECT (COUNT(DISTINCT ?s) AS ?n) (COUNT(*) AS ?all) WHERE { ?s ?p ?o }',
      'SELECT ?trip ?who ?where WHERE { ?trip ex:traveller ?who ; ex:to ?where }',
      'SELECT ?g WHERE { GRAPH ?g { ex:shared ex:label ?l } }',
      'SELECT ?o WHERE { ex:alice ex:note ?o }',
      'SELECT ?s ?v WHERE { ?s ex:active|ex:code|ex:born|ex:height ?v }',
      'SELECT ?name (LANG(?name) AS ?lang) WHERE { ?s ex:name ?name FILTER(LANGMATCHES(LANG(?name), "*")) }',
      'SELECT ?s ?older WHERE { ?s ex:age ?a BIND(?a + 10 AS ?older) }',
      'SELECT ?n WHERE { { SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s } FILTER(?n > 3) }',
      'SELECT ?s WHERE { ?s ex:born ?d FILTER(?d < "2000-01-01"^^xsd:date) }',
      'SELECT ?s ?name WHERE { ?s ex:name ?name FILTER(LANG(?name) = "") } ORDER BY DESC(?name) LIMIT 2 OFFSET 1',
      'SELECT ?s WHERE { GRAPH ?g { ?s ex:knows ?o } FILTER(?g = ?g) MINUS { ?s ex:age 25 } }',
    ];
    for (const query of queries) {
      const got = canonical(rows(await ask(store, query)));
      const want = canonical(rows(await ask(reference, query)));
      expect(got, query).toEqual(want);
    }
    // \\u escapes inside IRIs (sparqljs alone does not read them).
    expect(rows(await ask(store, 'SELECT ?n WHERE { <http://example.org/\\u0061lice> ex:name ?n FILTER(LANG(?n) = "") }'))).toEqual([{ n: '"Alice"' }]);
    const asks = ['ASK { ?s ex:population ?p FILTER(?p > 900000) }', 'ASK { GRAPH ?g { ex:bob ex:livesIn ex:amsterdam } }'];
    for (const query of asks) expect(await ask(store, query), query).toBe(await ask(reference, query));
  });

  it('turns syntax errors and server-side query errors into EngineQueryError', async () => {
    await expect(ask(store, 'SELECT * WHERE { ?s ?p ')).rejects.toBeInstanceOf(EngineQueryError);
    await expect(ask(store, 'SELECT * WHERE { ?s ?p ')).rejects.toThrow(/parse/i);
    // Parses as SPARQL 1.1, but Virtuoso 7 does not implement BNODE(): its message comes through.
    const refused = ask(store, 'SELECT (BNODE() AS ?b) WHERE { }');
    await expect(refused).rejects.toBeInstanceOf(EngineQueryError);
    await expect(ask(store, 'SELECT (BNODE() AS ?b) WHERE { }')).rejects.toThrow(/Virtuoso 37000/);
    await expect(ask(store, 'SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }')).rejects.toBeInstanceOf(EngineQueryError);
    await expect(ask(store, 'SELECT (<http://www.openlinksw.com/schemas/bif#sys_stat>("st_dbms_ver") AS ?v) WHERE { }')).rejects.toBeInstanceOf(EngineQueryError);
    await expect(ask(store, 'INSERT DATA { ex:a ex:b ex:c }')).rejects.toBeInstanceOf(EngineQueryError);
    await expect(store.query({ query: 'SELECT * WHERE { ?s ?p ?o }', format: 'text/turtle', timeoutMs: 5000 })).rejects.toBeInstanceOf(EngineQueryError);
  });

  it('stops a slow query at its timeout with EngineTimeoutError, and keeps answering', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => q(`<${EX}s${i}>`, `<${EX}p${i % 7}>`, `"${i}"`, `${EX}graphs/big`));
    const big = await engine.open(source(lines, 1000), { reasoner: 'None' });
    try {
      expect(big.statements).toBe(3000);
      const started = Date.now();
      const slow = big.query({ query: 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }', format: JSON_RESULTS, timeoutMs: 1500 });
      await expect(slow).rejects.toBeInstanceOf(EngineTimeoutError);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(1000);
      expect(took).toBeLessThan(6000);
      expect(rows(await big.query({ query: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', format: JSON_RESULTS, timeoutMs: 20_000 }))).toEqual([{ n: `"3000"^^<${XSD}integer>` }]);
      // Closing waits for the queries already running, then drops the graphs.
      const running = big.query({ query: 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }', format: JSON_RESULTS, timeoutMs: 1000 });
      const closing = big.close();
      await expect(running).rejects.toBeInstanceOf(EngineTimeoutError);
      await closing;
      expect((await storedSnapshotGraphs(server)).filter((g) => g.endsWith(':http://example.org/graphs/big'))).toEqual([]);
    } finally {
      await big.close();
    }
  });

  it('answers a query too long for a GET URL (sent as a POST) as it answers a short one, and the same query again the same', async () => {
    const short = 'SELECT ?name WHERE { ?p a ex:Person ; ex:name ?name }';
    const long = `SELECT ?name WHERE { ?p a ex:Person ; ex:name ?name FILTER(?name != "${'x'.repeat(MAX_GET_URL)}") }`;
    const expected = canonical(rows(await ask(store, short)));
    expect(expected).toHaveLength(3);
    expect(canonical(rows(await ask(store, long)))).toEqual(expected);
    // Rewritten once per store and reused: the second answer is the first.
    expect(canonical(rows(await ask(store, short)))).toEqual(expected);
    expect(canonical(rows(await ask(store, long)))).toEqual(expected);
  });

  it('reports a store it cannot reach as EngineOverloadedError saying so', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const gone = new SparqlProtocolEngine({ queryEndpoint: `http://127.0.0.1:${closed}/sparql` }).attach({ snapshotId: 'a'.repeat(24), graphs: [PEOPLE], hasDefault: false, statements: 1 });
    const failed = gone.query({ query: 'ASK { ?s ?p ?o }', format: JSON_RESULTS, timeoutMs: 5000 });
    await expect(failed).rejects.toBeInstanceOf(EngineOverloadedError);
    await expect(failed).rejects.toThrow(/unreachable/);
  });

  it('serves two snapshots side by side: the old one answers while the new one loads, and closing drops only its graphs', async () => {
    const version = (v: string): string[] => [q(ex('dataset'), ex('version'), `"${v}"`, `${EX}graphs/meta`), ...Array.from({ length: 2000 }, (_, i) => q(`<${EX}item${i}>`, ex('version'), `"${v}"`, `${EX}graphs/items`))];
    const before = await storedSnapshotGraphs(server);
    const first = await engine.open(source(version('1'), 500), { reasoner: 'None' });
    const versionOf = async (s: SparqlStore): Promise<string[]> =>
      rows(await ask(s, 'SELECT DISTINCT ?v WHERE { ?x ex:version ?v }')).map((r) => r.v!);
    expect(await versionOf(first)).toEqual(['"1"']);

    // Query the first snapshot continuously while the second one loads.
    let loading = true;
    const seen = new Set<string>();
    let answers = 0;
    const poll = (async () => {
      while (loading) {
        for (const v of await versionOf(first)) seen.add(v);
        answers++;
      }
    })();
    const second = await engine.open(source(version('2'), 500), { reasoner: 'None' });
    loading = false;
    await poll;
    expect(answers).toBeGreaterThan(0);
    expect([...seen]).toEqual(['"1"']);

    expect(await versionOf(second)).toEqual(['"2"']);
    expect(await versionOf(first)).toEqual(['"1"']);
    expect(first.statements).toBe(2001);
    expect(second.statements).toBe(2001);
    const during = await storedSnapshotGraphs(server);
    expect(during.length).toBe(before.length + 4);

    await first.close();
    await expect(versionOf(first)).rejects.toBeInstanceOf(EngineOverloadedError);
    const after = await storedSnapshotGraphs(server);
    expect(after.length).toBe(before.length + 2);
    expect(await versionOf(second)).toEqual(['"2"']);
    await second.close();
    expect(await storedSnapshotGraphs(server)).toEqual(before);
  });

  it('loads with SPARQL Update when no usable Graph Store Protocol endpoint is given', async () => {
    for (const options of [{}, { graphStoreEndpoint: server.sparqlEndpoint.replace(/\/sparql$/, '/no-such-graph-store') }]) {
      const updateOnly = new SparqlProtocolEngine({ queryEndpoint: server.sparqlEndpoint, updateBatchStatements: 7, blankNodeBatchStatements: 3, ...options });
      const loaded = await updateOnly.open(source(DATASET, 4), { reasoner: 'None' });
      try {
        expect(loaded.statements).toBe(DATASET.length);
        const all = 'CONSTRUCT WHERE { ?s ?p ?o }';
        const want = await reference.query({ query: all, format: 'application/n-triples', timeoutMs: 20_000 });
        // Per graph too: GRAPH ?g statements as quads, compared with oxigraph's.
        for (const g of [PEOPLE, PLACES]) {
          const perGraph = `CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <${g}> { ?s ?p ?o } }`;
          const a = await loaded.query({ query: perGraph, format: 'application/n-triples', timeoutMs: 20_000 });
          const b = await reference.query({ query: perGraph, format: 'application/n-triples', timeoutMs: 20_000 });
          expect(isomorphic(quads(a, 'application/n-triples'), quads(b, 'application/n-triples')), g).toBe(true);
        }
        const got = await loaded.query({ query: all, format: 'application/n-triples', timeoutMs: 20_000 });
        expect(isomorphic(quads(got, 'application/n-triples'), quads(want, 'application/n-triples'))).toBe(true);
      } finally {
        await loaded.close();
      }
    }
  });

  it('materialises RDFS like the embedded engine', async () => {
    const G = `${EX}graphs/onto`;
    const D = `${EX}graphs/data`;
    const RDFS = 'http://www.w3.org/2000/01/rdf-schema#';
    const lines = [
      q(ex('Dog'), `<${RDFS}subClassOf>`, ex('Mammal'), G),
      q(ex('Mammal'), `<${RDFS}subClassOf>`, ex('Animal'), G),
      q(ex('owns'), `<${RDFS}domain>`, ex('Person'), G),
      q(ex('owns'), `<${RDFS}range>`, ex('Animal'), G),
      q(ex('owns'), `<${RDFS}subPropertyOf>`, ex('caresFor'), G),
      q(ex('rex'), `<${RDF_TYPE}>`, ex('Dog'), D),
      q(ex('ann'), ex('owns'), ex('felix'), D),
    ];
    const ours = await engine.open(source(lines), { reasoner: 'RDFS' });
    const theirs = await oxigraphEngine.open(source(lines), { reasoner: 'RDFS', replicas: 1 });
    try {
      expect(ours.statements).toBe(theirs.statements);
      for (const query of ['SELECT ?x ?t WHERE { ?x a ?t }', 'SELECT ?x ?y WHERE { ?x ex:caresFor ?y }', 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g']) {
        expect(canonical(rows(await ask(ours, query))), query).toEqual(canonical(rows(await ask(theirs, query))));
      }
    } finally {
      await ours.close();
      await theirs.close();
    }
  });
});
