/**
 * A sync on AWS (issue 18): the SPARQL function that already holds a service's snapshot (a warm
 * instance) takes the change to the newer snapshot in place on its next query instead of loading
 * the whole snapshot again; its answers must be exactly those of a service loaded whole. Runs the
 * real bundles through the harness (API Gateway, the sparql function, the service-load worker).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import { importFiles } from '../support/imports.js';
import type { TestPlatform } from '../support/platform.js';
import { select, startService, waitForService } from '../support/services.js';

let aws: AwsTestPlatform;
let p: TestPlatform;
let alice: string;

const DATASET = 'alice/synced';
const NAMES = 'SELECT ?g ?name WHERE { GRAPH ?g { ?s <https://example.org/name> ?name } } ORDER BY ?g ?name';
const PEOPLE = Array.from({ length: 30 }, (_, i) => `<https://example.org/p${i}> <https://example.org/name> "Person ${i}" .`).join('\n');

beforeAll(async () => {
  aws = await AwsTestPlatform.start();
  p = aws as unknown as TestPlatform;
  alice = await aws.createUser('alice');
  await aws.createDataset('alice', 'synced', 'public', alice);
}, 300_000);
afterAll(async () => {
  await aws?.stop();
});

describe('on AWS: a service sync', () => {
  it('a warm SPARQL function answers the synced snapshot exactly as a service loaded whole', async () => {
    expect((await importFiles(p, alice, DATASET, [{ name: 'people.nt', content: PEOPLE }], { defaultGraphName: 'https://example.org/people' })).status).toBe('finished');
    expect((await startService(p, alice, DATASET, { name: 'main' })).status).toBe('running');
    const endpoint = (name: string) => `/datasets/${DATASET}/services/${name}/sparql`;
    expect(await select(p, undefined, endpoint('main'), NAMES)).toHaveLength(30);

    // More statements merged into the graph, and a new graph.
    const more = '<https://example.org/p100> <https://example.org/name> "Person 100" .\n';
    expect((await importFiles(p, alice, DATASET, [{ name: 'more.nt', content: more }], { defaultGraphName: 'https://example.org/people', mergeGraphs: 'true' })).status).toBe('finished');
    expect((await importFiles(p, alice, DATASET, [{ name: 'pets.nt', content: '<https://example.org/rex> <https://example.org/name> "Rex" .\n' }], { defaultGraphName: 'https://example.org/pets' })).status).toBe('finished');
    // Until the sync, the old snapshot.
    expect(await select(p, undefined, endpoint('main'), NAMES)).toHaveLength(30);
    const synced = await p.request('POST', `/datasets/${DATASET}/services/main`, { token: alice, body: { sync: true } });
    expect(synced.status).toBe(200);
    expect(await waitForService(p, alice, DATASET, 'main')).toMatchObject({ status: 'running', outOfSync: false, numberOfLoadedStatements: 32 });

    const before = aws.aws.runtime.invocations.length;
    const after = await select(p, undefined, endpoint('main'), NAMES);
    expect(after).toHaveLength(32);
    expect(after).toContainEqual({ g: 'https://example.org/pets', name: 'Rex' });
    expect(after).toContainEqual({ g: 'https://example.org/people', name: 'Person 100' });
    // That query ran in a warm instance of the SPARQL function (the one that held the old snapshot).
    const query = aws.aws.runtime.invocations.slice(before).filter((i) => i.ok);
    expect(query.length).toBeGreaterThan(0);
    expect(query.every((i) => !i.coldStart)).toBe(true);

    expect((await startService(p, alice, DATASET, { name: 'fresh' })).status).toBe('running');
    expect(await select(p, undefined, endpoint('fresh'), NAMES)).toEqual(after);
    expect(aws.aws.refusals()).toEqual([]);
  }, 300_000);
});
