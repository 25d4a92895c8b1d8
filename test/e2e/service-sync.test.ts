/**
 * A sync that costs what changed (issue 18): the loaded store takes the change from its snapshot
 * to the dataset's newer one in place (graphs dropped, statements removed and added). What it then
 * answers must be exactly what a service loaded whole from the new snapshot answers; changes with
 * blank nodes are loaded whole (their labels are scoped to one load), and give the same answers too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../functions/adapters/common/powertools-logger.js';
import { graphsOf, importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { select, startService, waitForService } from '../support/services.js';

let p: TestPlatform;
let alice: string;
const logs: string[] = [];

const DATA = `@prefix ex: <https://example.org/> .
<https://example.org/g1> { ex:tom a ex:Cat ; ex:name "Tom" . ex:jerry a ex:Mouse ; ex:name "Jerry" . }
<https://example.org/g2> { ex:spike a ex:Dog ; ex:name "Spike" ; ex:chases ex:tom . }
`;
const DATASET = 'alice/sync';
const endpointOf = (service: string) => `/datasets/${DATASET}/services/${service}/sparql`;
const ALL = 'SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }';
const CITIES = 'SELECT ?who ?city WHERE { ?who <https://example.org/address> ?a . ?a <https://example.org/city> ?city }';

/** The answer as sorted lines, blank node labels replaced (they differ between loads). */
async function answer(service: string, query: string): Promise<string[]> {
  const rows = await select(p, undefined, endpointOf(service), query);
  return rows.map((r) => JSON.stringify(Object.entries(r).map(([k, v]) => [k, /^[0-9a-f]{16,}$/.test(v) ? '_' : v]))).sort();
}

/** Answers of `service` next to those of a service started from the same snapshot now. */
async function sameAsFresh(service: string, fresh: string): Promise<void> {
  await startService(p, alice, DATASET, { name: fresh });
  for (const query of [ALL, CITIES, 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }', 'SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }']) {
    expect(await answer(service, query)).toEqual(await answer(fresh, query));
  }
  const [synced, loaded] = await Promise.all([service, fresh].map(async (s) => (await p.request('GET', `/datasets/${DATASET}/services/${s}`)).body));
  expect(synced).toMatchObject({ status: 'running', outOfSync: false, numberOfLoadedStatements: loaded.numberOfLoadedStatements });
}

async function sync(service: string): Promise<void> {
  const res = await p.request('POST', `/datasets/${DATASET}/services/${service}`, { token: alice, body: { sync: true } });
  expect(res.status).toBe(200);
  expect(await waitForService(p, alice, DATASET, service)).toMatchObject({ status: 'running', outOfSync: false });
}

const inPlace = () => logs.filter((l) => l.includes('sync applied in place')).length;

beforeAll(async () => {
  p = await TestPlatform.start({
    settings: { sparql: { queryTimeoutMs: 5000, maxStatements: 10_000, replicas: 2 } },
    logger: createLogger({ level: 'INFO', write: (line) => logs.push(line) }),
  });
  alice = await p.createUser('alice');
  await p.createDataset('alice', 'sync', 'public', alice);
  expect((await importFiles(p, alice, DATASET, [{ name: 'zoo.trig', content: DATA }])).status).toBe('finished');
  await startService(p, alice, DATASET, { name: 'main' });
});
afterAll(async () => {
  await p?.stop();
});

describe('a sync applies what changed', () => {
  it('merged statements, a dropped graph and a new graph: the same answers as a service loaded whole', async () => {
    const merged = await importFiles(p, alice, DATASET, [{ name: 'more.nt', content: '<https://example.org/nibbles> <https://example.org/name> "Nibbles" .\n<https://example.org/tom> <https://example.org/age> "7" .\n' }], {
      defaultGraphName: 'https://example.org/g1',
      mergeGraphs: 'true',
    });
    expect(merged.status).toBe('finished');
    const g2 = (await graphsOf(p, alice, DATASET)).find((g) => g.graphName === 'https://example.org/g2');
    expect((await p.request('DELETE', `/datasets/${DATASET}/graphs/${g2.id}`, { token: alice })).status).toBe(204);
    await importFiles(p, alice, DATASET, [{ name: 'g4.nt', content: '<https://example.org/felix> <https://example.org/name> "Felix" .\n' }], { defaultGraphName: 'https://example.org/g4' });

    // Still the old snapshot until the sync.
    expect(await answer('main', 'SELECT ?n WHERE { ?x <https://example.org/name> ?n }')).toEqual(['[["n","Jerry"]]', '[["n","Spike"]]', '[["n","Tom"]]']);
    const before = inPlace();
    // Queries keep being answered while the sync runs.
    let stop = false;
    const statuses: number[] = [];
    const querying = (async () => {
      for (let i = 0; i < 2000 && !stop; i++) {
        const res = await p.request('GET', `${endpointOf('main')}?query=${encodeURIComponent('ASK { ?s ?p ?o }')}`);
        statuses.push(res.status);
      }
    })();
    await sync('main');
    stop = true;
    await querying;
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(inPlace()).toBe(before + 1);
    expect(await answer('main', 'SELECT ?n WHERE { ?x <https://example.org/name> ?n }')).toEqual(['[["n","Felix"]]', '[["n","Jerry"]]', '[["n","Nibbles"]]', '[["n","Tom"]]']);
    await sameAsFresh('main', 'fresh1');
  });

  it('statements removed and added by SPARQL Update, after an in-place sync: in place again, on every query thread', async () => {
    const update =
      'DELETE DATA { GRAPH <https://example.org/g1> { <https://example.org/jerry> <https://example.org/name> "Jerry" } } ; ' +
      'INSERT DATA { GRAPH <https://example.org/g4> { <https://example.org/felix> a <https://example.org/Cat> } }';
    expect((await p.request('POST', `/datasets/${DATASET}/sparql`, { token: alice, rawBody: update, headers: { 'content-type': 'application/sparql-update' } })).status).toBe(200);
    const before = inPlace();
    await sync('main');
    expect(inPlace()).toBe(before + 1);
    // Both threads answer from the new snapshot (queries sent together go to both).
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 4 }, () => answer('main', 'SELECT ?c WHERE { <https://example.org/felix> a ?c }')));
      for (const a of answers) expect(a).toEqual(['[["c","https://example.org/Cat"]]']);
    }
    await sameAsFresh('main', 'fresh2');
  });

  it('a change with blank nodes is loaded whole, and its blank nodes join', async () => {
    const addresses =
      '<https://example.org/tom> <https://example.org/address> [ <https://example.org/city> "Springfield" ; <https://example.org/zip> "1234" ] .\n' +
      '<https://example.org/felix> <https://example.org/address> [ <https://example.org/city> "Ogdenville" ] .\n';
    await importFiles(p, alice, DATASET, [{ name: 'more.ttl', content: addresses }], { defaultGraphName: 'https://example.org/g3' });
    const before = inPlace();
    await sync('main');
    expect(inPlace()).toBe(before);
    expect((await answer('main', CITIES)).length).toBe(2);
    await sameAsFresh('main', 'fresh3');
  });
});
