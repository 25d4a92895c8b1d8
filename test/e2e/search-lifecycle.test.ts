/**
 * Text search services (issue 15): lifecycle and access through HTTP on the embedded platform.
 * outOfSync after an import and sync (the new index built beside the old one), stop and start,
 * rename, delete (the index blobs go), a restart of the platform that does not index again, and
 * who may search (the dataset's access level) and who may manage the service.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { startService, waitForService } from '../support/services.js';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { EX, F, searchDataset } from '../support/search-data.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let carol: string;
let dataDir: string;

const hitIds = (res: { body: any }) => res.body.hits.hits.map((h: any) => h._id);

/** Index blobs of a dataset's search services, in the embedded data store. */
async function indexBlobs(datasetId: string): Promise<string[]> {
  const dir = join(p.dataDir, 'blobs', 'data', 'datasets', datasetId, 'search');
  const out: string[] = [];
  for (const service of await readdir(dir).catch(() => [] as string[])) {
    for (const file of await readdir(join(dir, service)).catch(() => [] as string[])) out.push(`${service}/${file}`);
  }
  return out;
}

beforeAll(async () => {
  p = await TestPlatform.start();
  dataDir = p.dataDir;
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  carol = await p.createUser('carol');
  await p.createOrg('acme', alice);
  await p.addMember('acme', 'carol', 'member', alice);
  for (const [name, level] of [['open', 'public'], ['inside', 'internal'], ['secret', 'private']] as const) {
    await p.createDataset('acme', name, level, alice);
    const job = await importFiles(p, alice, `acme/${name}`, [{ name: 'data.nt', content: searchDataset(200) }]);
    expect(job.status).toBe('finished');
    const service = await startService(p, alice, `acme/${name}`, { name: 'text', type: 'elasticSearch' });
    expect(service.status, JSON.stringify(service.error)).toBe('running');
  }
}, 120_000);
afterAll(async () => {
  await p?.stop();
  // The restarted platform (last test) runs on the first one's folder, which it does not own.
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('search service access', () => {
  it('follows the dataset: public to anyone, internal to signed-in users, private to members', async () => {
    const path = (ds: string) => `/datasets/acme/${ds}/services/text/search?query=pikachu`;
    const matrix: [string, string | undefined, number][] = [
      ['open', undefined, 200],
      ['open', bob, 200],
      ['inside', undefined, 404],
      ['inside', bob, 200],
      ['secret', undefined, 404],
      ['secret', bob, 404],
      ['secret', carol, 200],
      ['secret', alice, 200],
    ];
    for (const [ds, token, status] of matrix) {
      const res = await p.request('GET', path(ds), { token });
      expect(res.status, `${ds} as ${token === bob ? 'bob' : token === carol ? 'carol' : token ? 'alice' : 'anonymous'}`).toBe(status);
      if (status === 200) expect(hitIds(res)[0]).toBe(`${EX}id/pikachu`);
      else expect(res.body.message).toMatch(/does not exist/);
    }
    for (const route of ['_search', '_count', '_msearch', '_terms_enum']) {
      const res = await p.request('POST', `/datasets/acme/secret/services/text/${route}`, { token: bob, body: {} });
      expect(res.status, route).toBe(404);
    }
    expect((await p.request('GET', '/datasets/acme/secret/services/text/mappings', { token: bob })).status).toBe(404);
  });

  it('lets only those who may write the dataset create, stop, sync or delete a search service', async () => {
    const create = await p.request('POST', '/datasets/acme/open/services', { token: bob, body: { name: 'mine', type: 'elasticSearch' } });
    expect(create.status).toBe(403);
    expect((await p.request('POST', '/datasets/acme/open/services/text', { token: bob, body: { stop: true } })).status).toBe(403);
    expect((await p.request('DELETE', '/datasets/acme/open/services/text')).status).toBe(401);
    expect((await p.request('GET', '/datasets/acme/open/services/text')).body.status).toBe('running');
  });
});

describe('search service lifecycle', () => {
  it('is outOfSync after an import, keeps answering from the old index, and syncs to a new one', async () => {
    const dataset = (await p.request('GET', '/datasets/acme/open', { token: alice })).body;
    const before = await indexBlobs(dataset.id);
    expect(before).toHaveLength(1);
    const job = await importFiles(p, alice, 'acme/open', [{ name: 'more.nt', content: `<${EX}id/raichu> <https://schema.org/name> "Raichu"@en .\n` }]);
    expect(job.status).toBe('finished');
    const stale = (await p.request('GET', '/datasets/acme/open/services/text')).body;
    expect(stale.outOfSync).toBe(true);
    expect(hitIds(await p.request('GET', '/datasets/acme/open/services/text/search?query=raichu'))).toEqual([]);
    const sync = await p.request('POST', '/datasets/acme/open/services/text', { token: alice, body: { sync: true } });
    expect(sync.status).toBe(200);
    const synced = await waitForService(p, alice, 'acme/open', 'text');
    expect(synced).toMatchObject({ status: 'running', outOfSync: false });
    expect(hitIds(await p.request('GET', '/datasets/acme/open/services/text/search?query=raichu'))).toEqual([`${EX}id/raichu`]);
    const after = await indexBlobs(dataset.id);
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
    // In sync: nothing to sync.
    expect((await p.request('POST', '/datasets/acme/open/services/text', { token: alice, body: { sync: true } })).status).toBe(400);
  });

  it('stops (503 while stopped), starts again, renames and deletes (its index goes)', async () => {
    const dataset = (await p.request('GET', '/datasets/acme/inside', { token: alice })).body;
    const base = '/datasets/acme/inside/services';
    expect((await p.request('POST', `${base}/text`, { token: alice, body: { stop: true } })).body.status).toBe('stopped');
    const stopped = await p.request('POST', `${base}/text/_search`, { token: alice, body: {} });
    expect(stopped.status).toBe(503);
    expect(stopped.body.message).toMatch(/stopped; it answers searches once it is running/);
    expect(await indexBlobs(dataset.id)).toEqual([]);
    await p.request('POST', `${base}/text`, { token: alice, body: { start: true } });
    expect((await waitForService(p, alice, 'acme/inside', 'text')).status).toBe('running');
    expect((await p.request('POST', `${base}/text/_count`, { token: alice, body: {} })).body.count).toBe(206);
    const renamed = await p.request('PATCH', `${base}/text`, { token: alice, body: { name: 'words' } });
    expect(renamed.body.name).toBe('words');
    expect((await p.request('POST', `${base}/words/_count`, { token: alice, body: {} })).body.count).toBe(206);
    expect((await p.request('POST', `${base}/text/_count`, { token: alice, body: {} })).status).toBe(404);
    expect((await p.request('DELETE', `${base}/words`, { token: alice })).status).toBe(204);
    expect(await indexBlobs(dataset.id)).toEqual([]);
  });

  it('a SPARQL service has no search routes', async () => {
    await startService(p, alice, 'acme/secret', { name: 'sparql' });
    const res = await p.request('GET', '/datasets/acme/secret/services/sparql/search?query=x', { token: alice });
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/SPARQL service/);
  });

  it("flows' serviceAction task starts (creating it) and syncs a textSearch service", async () => {
    await enableFlows(p);
    const session = await consoleSession(p, 'alice');
    const runAction = async (id: string, action: string) => {
      await createFlow(p, 'alice', session, {
        id,
        name: id,
        accessLevel: 'Private',
        connections: [],
        tasks: [{ id: 'task', label: 'search', type: 'serviceAction', settings: { dataset: { account: 'acme', dataset: 'open' }, service: 'flowtext', action, serviceType: 'textSearch' } }],
      });
      const started = await startRun(p, `/flows/blueprints/alice/${id}/run`, alice);
      expect(started.status, started.text).toBe(201);
      return waitForRun(p, started.body.id, alice, 60_000);
    };
    const start = await runAction('search-start', 'start');
    expect(start.status, JSON.stringify(start.error)).toBe('finished');
    expect((await p.request('GET', '/datasets/acme/open/services/flowtext')).body).toMatchObject({ type: 'elasticSearch', status: 'running' });
    const job = await importFiles(p, alice, 'acme/open', [{ name: 'pichu.nt', content: `<${EX}id/pichu> <https://schema.org/name> "Pichu"@en .\n` }]);
    expect(job.status).toBe('finished');
    expect((await p.request('GET', '/datasets/acme/open/services/flowtext')).body.outOfSync).toBe(true);
    const sync = await runAction('search-sync', 'sync');
    expect(sync.status, JSON.stringify(sync.error)).toBe('finished');
    expect((await p.request('GET', '/datasets/acme/open/services/flowtext')).body).toMatchObject({ status: 'running', outOfSync: false });
    expect(hitIds(await p.request('GET', '/datasets/acme/open/services/flowtext/search?query=pichu'))).toEqual([`${EX}id/pichu`]);
  });

  it('survives a restart of the platform without indexing again', async () => {
    const before = (await p.request('GET', '/datasets/acme/secret/services/text', { token: alice })).body;
    await p.stop({ keepData: true });
    p = await TestPlatform.start({ dataDir: p.dataDir });
    const after = (await p.request('GET', '/datasets/acme/secret/services/text', { token: alice })).body;
    expect(after.status).toBe('running');
    // Not indexed again: the same load, the index read from its blob on the first search.
    expect(after.loadedAt).toBe(before.loadedAt);
    const res = await p.request('POST', '/datasets/acme/secret/services/text/_search', { token: alice, body: { query: { match: { [F.name]: 'pikachu' } } } });
    expect(hitIds(res)).toEqual([`${EX}id/pikachu`]);
  });
});
