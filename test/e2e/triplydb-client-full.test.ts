/**
 * The official client's full method list (../shared/reference/triplydb-client-contract.md, §3)
 * against the embedded platform: every public method of App, User, Org, Dataset, Graph, Asset,
 * Service, Query and Story that speaks HTTP, one test each, with the unmodified `@triply/triplydb`
 * 8.2.10. Shared data is made over HTTP first, so one failing method does not fail the others.
 */
import App from '@triply/triplydb';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataFactory, Store } from 'n3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { waitForService } from '../support/services.js';
import { TestPlatform } from '../support/platform.js';
import { OpenApiChecker, startCheckingProxy } from '../support/openapi.js';
import { ONE_PIXEL_PNG as PNG } from '../support/images.js';

let p: TestPlatform;
let token: string;
let dir: string;
let app: ReturnType<typeof App.get>;
/** Every answer the client gets passes a proxy that checks it against /openapi.json. */
let proxy: Awaited<ReturnType<typeof startCheckingProxy>>;
const DATA = '<https://example.org/a> <https://example.org/name> "A" .\n<https://example.org/b> <https://example.org/name> "B" .\n';
const GRAPH = 'https://example.org/graphs/main';

beforeAll(async () => {
  p = await TestPlatform.start();
  token = await p.createUser('carol');
  await p.createUser('dave');
  dir = await mkdtemp(join(tmpdir(), 'ldp-client-full-'));
  const ds = await p.createDataset('carol', 'base', 'public', token);
  const job = await importFiles(p, token, 'carol/base', [{ name: 'base.nt', content: DATA }], { defaultGraphName: GRAPH });
  if (job.status !== 'finished') throw new Error(`import: ${JSON.stringify(job)}`);
  const service = await p.request('POST', '/datasets/carol/base/services', { token, body: { name: 'sparql', type: 'virtuoso' } });
  if (service.status >= 300) throw new Error(`service: ${service.status} ${service.text}`);
  await waitForService(p, token, 'carol/base', 'sparql');
  const query = await p.request('POST', '/queries/carol', {
    token,
    body: { name: 'names', accessLevel: 'public', dataset: ds.id, serviceConfig: { type: 'speedy' }, requestConfig: { payload: { query: 'SELECT ?s ?name WHERE { ?s <https://example.org/name> ?name } ORDER BY ?s' } } },
  });
  if (query.status !== 201) throw new Error(`query: ${query.status} ${query.text}`);
  const org = await p.request('POST', '/accounts', { token, body: { type: 'org', accountName: 'carols' } });
  if (org.status !== 201) throw new Error(`org: ${org.status} ${org.text}`);
  proxy = await startCheckingProxy(p.url, await OpenApiChecker.load(p));
  app = App.get({ url: proxy.url, token });
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  await p?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const carol = () => app.getUser();
const base = async () => (await carol()).getDataset('base');
const file = async (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
};
const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('App', () => {
  it('getInfo, isCompatible', async () => {
    expect((await app.getInfo()).apiUrl).toBe(p.url); // the platform's own URL: the client reaches it through the checking proxy
    expect(await app.isCompatible('23.09.0')).toBe(true);
  });
  it('getAccount, getUser (self and by name), getOrganization', async () => {
    expect((await (await app.getAccount()).getInfo()).accountName).toBe('carol');
    expect((await (await app.getUser('dave')).getInfo()).accountName).toBe('dave');
    expect((await (await app.getOrganization('carols')).getInfo()).type).toBe('org');
  });
  it('getAccounts', async () => {
    const names = (await collect(app.getAccounts())).length;
    expect(names).toBeGreaterThanOrEqual(3);
  });
});

describe('User and Org', () => {
  it('update', async () => {
    const user = await carol();
    await user.update({ name: 'Carol C.' });
    expect((await user.getInfo(true)).name).toBe('Carol C.');
  });
  it('setAvatar', async () => {
    const user = await carol();
    await user.setAvatar(PNG);
    expect((await user.getInfo(true)).avatarUrl).toMatch(/imgs\/avatars\/a\//);
  });
  it('pinItems, getPinnedItems', async () => {
    const user = await carol();
    await user.pinItems([await base()]);
    const pinned = await user.getPinnedItems();
    expect(pinned).toHaveLength(1);
  });
  it('createOrganization, getOrganizations, getOrganization, ensureOrganization', async () => {
    const user = await carol();
    await user.createOrganization('carol-org', { name: 'Carol org' });
    expect((await user.getOrganizations()).map((o) => o.slug)).toContain('carol-org');
    expect((await (await user.getOrganization('carol-org')).getInfo()).accountName).toBe('carol-org');
    expect((await (await user.ensureOrganization('carol-org')).getInfo()).accountName).toBe('carol-org');
  });
  it('Org: addMember, getMembers, changeRole, removeMember, delete', async () => {
    const org = await (await carol()).createOrganization('carol-org-2');
    const dave = await app.getUser('dave');
    await org.addMember(dave, 'member');
    expect((await org.getMembers()).map((m) => m.user.accountName).sort()).toEqual(['carol', 'dave']);
    const members = await org.changeRole(dave, 'owner');
    expect(members.find((m) => m.user.accountName === 'dave')?.role).toBe('owner');
    await org.removeMember(dave);
    await org.delete();
    await expect(app.getOrganization('carol-org-2')).rejects.toThrow(/does not exist/);
  });
  it('asUser, asOrganization', async () => {
    expect((await (await app.getAccount('carol')).asUser()).slug).toBe('carol');
    expect((await (await app.getAccount('carols')).asOrganization()).slug).toBe('carols');
  });
});

describe('Account: datasets, queries, stories', () => {
  it('addDataset (with prefixes), getDataset, hasDataset, ensureDataset, getDatasets', async () => {
    const user = await carol();
    await user.addDataset('made', { accessLevel: 'internal', prefixes: { ex: 'https://example.org/' } });
    expect(await user.hasDataset('made')).toBe(true);
    expect((await (await user.ensureDataset('made')).getInfo()).accessLevel).toBe('internal');
    expect((await collect(user.getDatasets())).length).toBeGreaterThanOrEqual(2);
  });
  it('addQuery, getQuery, hasQuery, getQueries', async () => {
    const user = await carol();
    const q = await user.addQuery('by-client', { dataset: await base(), queryString: 'SELECT * WHERE { ?s ?p ?o }', serviceType: 'speedy' });
    expect((await q.getInfo()).numberOfVersions).toBe(1);
    expect(await user.hasQuery('by-client')).toBe(true);
    expect((await (await user.getQuery('by-client')).getInfo()).name).toBe('by-client');
    expect((await collect(user.getQueries())).length).toBeGreaterThanOrEqual(2);
  });
  it('addStory, getStory, hasStory, ensureStory, getStories', async () => {
    const user = await carol();
    const query = await user.getQuery('names');
    await user.addStory('story', { content: [{ type: 'paragraph', paragraph: 'Hello' }, { type: 'query', query, caption: 'names' }] } as never);
    expect(await user.hasStory('story')).toBe(true);
    const story = await user.getStory('story');
    expect((await story.getInfo()).content).toHaveLength(2);
    expect((await (await user.ensureStory('story')).getInfo()).name).toBe('story');
    expect((await collect(user.getStories())).length).toBe(1);
  });
  it('Story: setBanner, getContent, delete', async () => {
    const user = await carol();
    const story = await user.addStory('story-2');
    await story.setBanner(PNG);
    expect((await story.getInfo(true)).bannerUrl).toMatch(/story-2\/banner\.webp/);
    expect(Array.isArray(await story.getContent())).toBe(true);
    await story.delete();
    expect(await user.hasStory('story-2')).toBe(false);
  });
  it('importDataset, importQuery, importStory (from "another instance": the same one under another URL)', async () => {
    // The client imports only between instances whose URLs differ: 127.1 is 127.0.0.1 written otherwise.
    const source = await App.get({ url: p.url.replace('127.0.0.1', '127.1'), token }).getUser('carol');
    const query = await source.addQuery('to-import', { dataset: await source.getDataset('base'), queryString: 'SELECT * WHERE { ?s ?p ?o }', serviceType: 'speedy' });
    const sourceStory = await source.addStory('to-import', { content: [{ type: 'paragraph', paragraph: 'Imported' }] } as never);
    const org = await app.getOrganization('carols');
    const copied = await org.importDataset(await source.getDataset('base'), { overwrite: true });
    expect((await copied.getInfo(true)).statements).toBe(2);
    const imported = await org.importQuery(query, { overwrite: true, fallbackDataset: async () => copied });
    expect((await imported.getInfo()).name).toBe('to-import');
    const story = await org.importStory(sourceStory, { overwrite: true, fallbackQuery: async () => imported });
    expect((await story.getInfo()).name).toBe('to-import');
  });
});

describe('Dataset', () => {
  it('getInfo, update, setAvatar', async () => {
    const ds = await (await carol()).addDataset('updated');
    await ds.update({ description: 'changed', license: 'CC0 1.0' });
    expect((await ds.getInfo(true)).description).toBe('changed');
    await ds.setAvatar(PNG);
    expect((await ds.getInfo(true)).avatarUrl).toMatch(/imgs\/avatars\/d\//);
  });
  it('getPrefixes, addPrefixes, removePrefixes', async () => {
    const ds = await (await carol()).addDataset('prefixed');
    await ds.addPrefixes({ ex: 'https://example.org/' });
    expect((await ds.getPrefixes()).ex).toBe('https://example.org/');
    await ds.removePrefixes(['ex']);
    expect((await ds.getPrefixes()).ex).toBeUndefined();
  });
  it('copy', async () => {
    const copy = await (await base()).copy('carols', 'copied');
    expect((await copy.getInfo(true)).name).toBe('copied');
  });
  it('importFromDataset', async () => {
    const target = await (await carol()).addDataset('from-dataset');
    const imports = await target.importFromDataset(await base(), { graphMap: { [GRAPH]: 'https://example.org/graphs/copy' } } as never);
    expect(imports.length).toBeGreaterThanOrEqual(0);
    expect((await target.getInfo(true)).statements).toBe(2);
  });
  it('describe', async () => {
    const quads = await (await base()).describe('https://example.org/a');
    expect(quads.length).toBe(1);
  });
  it('getStatements', async () => {
    const statements = await collect((await base()).getStatements({ predicate: 'https://example.org/name' }));
    expect(statements).toHaveLength(2);
  });
  it('importFromFiles, importFromStore, importFromUrls', async () => {
    const ds = await (await carol()).addDataset('imports');
    await ds.importFromFiles([await file('f.nt', DATA)], { defaultGraphName: 'https://example.org/graphs/files' });
    const store = new Store();
    store.addQuad(DataFactory.quad(DataFactory.namedNode('https://example.org/c'), DataFactory.namedNode('https://example.org/name'), DataFactory.literal('C')));
    await ds.importFromStore(store as never, { defaultGraphName: 'https://example.org/graphs/store' });
    expect((await ds.getInfo(true)).statements).toBe(3);
    await ds.importFromUrls([`${p.url}/datasets/carol/base/download.nt`], { defaultGraphName: 'https://example.org/graphs/url' });
    expect((await ds.getInfo(true)).statements).toBe(5);
  });
  it('getGraphs, getGraph, renameGraph, deleteGraph', async () => {
    const ds = await (await carol()).addDataset('graphs');
    await ds.importFromFiles([await file('g.nt', DATA)], { defaultGraphName: 'https://example.org/graphs/one' });
    expect(await collect(ds.getGraphs())).toHaveLength(1);
    expect((await (await ds.getGraph('https://example.org/graphs/one')).getInfo()).numberOfStatements).toBe(2);
    await ds.renameGraph('https://example.org/graphs/one', 'https://example.org/graphs/two');
    await ds.deleteGraph('https://example.org/graphs/two');
    expect(await collect(ds.getGraphs())).toHaveLength(0);
  });
  it('graphsToFile, graphsToStream, graphsToStore', async () => {
    const ds = await base();
    const out = join(dir, 'all.nq');
    await ds.graphsToFile(out);
    expect((await readFile(out, 'utf8')).trim().split('\n')).toHaveLength(2);
    const stream = await ds.graphsToStream('rdf-js');
    let n = 0;
    for await (const _ of stream as AsyncIterable<unknown>) n++;
    expect(n).toBe(2);
    expect((await ds.graphsToStore()).size).toBe(2);
  });
  it('Graph: getInfo, toFile, toStream, toStore, rename, delete', async () => {
    const ds = await (await carol()).addDataset('graph-methods');
    await ds.importFromFiles([await file('h.nt', DATA)], { defaultGraphName: 'https://example.org/graphs/h' });
    const graph = await ds.getGraph('https://example.org/graphs/h');
    expect((await graph.getInfo(true)).graphName).toBe('https://example.org/graphs/h');
    const out = join(dir, 'h.ttl');
    await graph.toFile(out);
    expect(await readFile(out, 'utf8')).toMatch(/"A"/);
    expect((await graph.toStore()).size).toBe(2);
    let n = 0;
    for await (const _ of (await graph.toStream('rdf-js')) as AsyncIterable<unknown>) n++;
    expect(n).toBe(2);
    await graph.rename('https://example.org/graphs/h2');
    expect((await graph.getInfo(true)).graphName).toBe('https://example.org/graphs/h2');
    await graph.delete();
    expect(await collect(ds.getGraphs())).toHaveLength(0);
  });
  it('uploadAsset, getAsset, getAssets, Asset: addVersion, getInfo, getVersionInfo, selectVersion, toFile, toStream, delete', async () => {
    const ds = await (await carol()).addDataset('assets');
    const asset = await ds.uploadAsset(await file('a.txt', 'one'), 'a.txt');
    await asset.addVersion(await file('a.txt', 'two'));
    expect(asset.getInfo().versions).toHaveLength(2);
    expect(asset.getVersionInfo(0).fileSize).toBe(3);
    const out = join(dir, 'a-out.txt');
    await asset.selectVersion(0).toFile(out);
    expect(await readFile(out, 'utf8')).toBe('one');
    const chunks: Buffer[] = [];
    for await (const c of (await (await ds.getAsset('a.txt')).toStream()) as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
    expect(Buffer.concat(chunks).toString()).toBe('two');
    expect(await collect(ds.getAssets())).toHaveLength(1);
    await (await ds.getAsset('a.txt')).delete(0);
    expect((await ds.getAsset('a.txt')).getInfo().versions).toHaveLength(1);
    await (await ds.getAsset('a.txt')).delete();
    expect(await collect(ds.getAssets())).toHaveLength(0);
  });
  it('addService, getService, ensureService, getServices, Service: getInfo, waitUntilRunning, isUpToDate, getGraphs, rename, update, delete', async () => {
    const ds = await (await carol()).addDataset('services');
    await ds.importFromFiles([await file('s.nt', DATA)], { defaultGraphName: 'https://example.org/graphs/s' });
    const service = await ds.addService('svc');
    await service.waitUntilRunning();
    expect((await service.getInfo()).status).toBe('running');
    expect(await service.isUpToDate()).toBe(true);
    expect((await service.getGraphs()).length).toBe(1);
    expect((await (await ds.ensureService('svc')).getInfo()).name).toBe('svc');
    expect(await collect(ds.getServices())).toHaveLength(1);
    await ds.importFromFiles([await file('s2.nt', '<https://example.org/z> <https://example.org/name> "Z" .\n')], { defaultGraphName: 'https://example.org/graphs/s2' });
    expect(await (await ds.getService('svc')).isUpToDate()).toBe(false);
    await (await ds.getService('svc')).update();
    expect(await (await ds.getService('svc')).isUpToDate()).toBe(true);
    await (await ds.getService('svc')).rename('svc-2');
    await (await ds.getService('svc-2')).delete();
    expect(await collect(ds.getServices())).toHaveLength(0);
  });
  it('clear', async () => {
    const ds = await (await carol()).addDataset('cleared');
    await ds.importFromFiles([await file('c.nt', DATA)], { defaultGraphName: 'https://example.org/graphs/c' });
    await ds.uploadAsset(await file('c.txt', 'c'), 'c.txt');
    await ds.clear('graphs', 'assets');
    expect((await ds.getInfo(true)).graphCount).toBe(0);
    expect(await collect(ds.getAssets())).toHaveLength(0);
  });
  it('delete', async () => {
    const user = await carol();
    const ds = await user.addDataset('deleted');
    await ds.delete();
    expect(await user.hasDataset('deleted')).toBe(false);
  });
});

describe('Query', () => {
  it('getInfo, getRunLink, results().bindings(), results().bindings().toFile()', async () => {
    const q = await (await carol()).getQuery('names');
    expect((await q.getInfo()).requestConfig?.payload.query).toMatch(/SELECT/);
    expect(await q.getRunLink()).toBe(`${proxy.url}/queries/carol/names/run`);
    expect((await collect(q.results().bindings())).map((b: any) => b.name)).toEqual(['A', 'B']);
    const out = join(dir, 'names.tsv');
    await q.results().bindings().toFile(out);
    expect((await readFile(out, 'utf8')).split('\n')[0]).toMatch(/\?s\t\?name/);
  });
  it('results().statements() of a CONSTRUCT', async () => {
    const q = await (await carol()).addQuery('construct', { dataset: await base(), queryString: 'CONSTRUCT WHERE { ?s ?p ?o }', serviceType: 'speedy' });
    expect(await collect(q.results().statements())).toHaveLength(2);
  });
  it('addVersion, useVersion, update, getString, copy, delete', async () => {
    const user = await carol();
    const q = await user.addQuery('versioned', {
      dataset: await base(),
      queryString: 'SELECT * WHERE { ?s ?p ?name }',
      serviceType: 'speedy',
      variables: [{ name: 'name', termType: 'Literal' }],
    });
    await q.addVersion({ queryString: 'SELECT ?s WHERE { ?s ?p ?name }' });
    expect((await q.getInfo(true)).numberOfVersions).toBe(2);
    expect((await (await q.useVersion(1)).getInfo()).version).toBe(1);
    await q.update({ description: 'described' });
    expect((await q.getInfo(true)).description).toBe('described');
    expect(await q.getString({ name: 'A' })).toMatch(/"A"/);
    const copy = await q.copy('versioned-copy');
    expect((await copy.getInfo()).name).toBe('versioned-copy');
    await copy.delete();
    expect(await user.hasQuery('versioned-copy')).toBe(false);
  });
  it('runPipeline, Query.runPipeline: the CONSTRUCT results land in the destination graph (featureToggles.queryJobsApi true)', async () => {
    expect((await app.getInfo()).featureToggles).toMatchObject({ queryJobsApi: true });
    const user = await carol();
    const construct = await user.addQuery('pipeline', {
      dataset: await base(),
      queryString: 'CONSTRUCT { ?s <https://example.org/label> ?name } WHERE { ?s <https://example.org/name> ?name }',
      serviceType: 'speedy',
    });
    const target = await user.addDataset('pipeline-target');
    const pipeline = await construct.runPipeline({ destination: { dataset: target, graph: 'https://example.org/graphs/pipeline' } });
    expect(pipeline.slug).toBeTruthy();
    const written = await target.getGraph('https://example.org/graphs/pipeline');
    expect((await written.getInfo()).numberOfStatements).toBe(2);
    const store = await written.toStore();
    expect(store.countQuads(DataFactory.namedNode('https://example.org/a'), DataFactory.namedNode('https://example.org/label'), DataFactory.literal('A'), null)).toBe(1);
    await user.runPipeline({ queries: [construct], destination: { dataset: target, graph: 'https://example.org/graphs/pipeline2' } });
    expect((await (await target.getGraph('https://example.org/graphs/pipeline2')).getInfo()).numberOfStatements).toBe(2);
  });
});

describe('the answers the client got', () => {
  it('all match /openapi.json', () => {
    expect(proxy.answers()).toBeGreaterThan(100);
    expect(proxy.problems).toEqual([]);
  });
});
