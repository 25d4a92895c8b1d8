/**
 * What requests remember (issue 18: verified token signatures, the embedded store's read cache,
 * loaded SPARQL stores) never outlives a change of who may see what: each change below is refused
 * on the very next request, on the dataset route and through a SPARQL service's endpoint alike,
 * right after requests that warmed every cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { startService } from '../support/services.js';

let p: TestPlatform;
let alice: string;
let bob: string;

const ask = (dataset: string, token?: string) =>
  p.request('GET', `/datasets/${dataset}/services/main/sparql?query=${encodeURIComponent('ASK { ?s ?p ?o }')}`, { token, headers: { accept: 'application/sparql-results+json' } });

/** Requests that fill the caches: the same token, dataset and service, several times. */
async function warm(dataset: string, token?: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    expect((await p.request('GET', `/datasets/${dataset}`, { token })).status).toBe(200);
    expect((await ask(dataset, token)).status).toBe(200);
  }
}

beforeAll(async () => {
  p = await TestPlatform.start({ settings: { sparql: { queryTimeoutMs: 5000, maxStatements: 1000, replicas: 1 } } });
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  await p.createOrg('acme', alice);
  await p.addMember('acme', 'bob', 'member', alice);
  for (const [account, name, level] of [['alice', 'open', 'public'], ['acme', 'inner', 'private']] as const) {
    await p.createDataset(account, name, level, alice);
    expect((await importFiles(p, alice, `${account}/${name}`, [{ name: 'd.nt', content: '<https://e/s> <https://e/p> "o" .\n' }])).status).toBe('finished');
    await startService(p, alice, `${account}/${name}`, { name: 'main' });
  }
});
afterAll(async () => {
  await p?.stop();
});

describe('caches never outlive a change of access', () => {
  it('a dataset made private is refused to anonymous callers on the next request', async () => {
    await warm('alice/open');
    expect((await p.request('PATCH', '/datasets/alice/open', { token: alice, body: { accessLevel: 'private' } })).status).toBe(200);
    expect((await p.request('GET', '/datasets/alice/open')).status).toBe(404);
    expect((await ask('alice/open')).status).toBe(404);
    expect((await ask('alice/open', alice)).status).toBe(200);
  });

  it('a member removed from an organisation is refused on the next request', async () => {
    await warm('acme/inner', bob);
    expect((await p.request('DELETE', '/accounts/acme/members/bob', { token: alice })).status).toBeLessThan(300);
    expect((await p.request('GET', '/datasets/acme/inner', { token: bob })).status).toBe(404);
    expect((await ask('acme/inner', bob)).status).toBe(404);
  });

  it('a revoked token is refused on the next request', async () => {
    const created = await p.request('POST', '/accounts/alice/tokens', { token: alice, body: { description: 'to revoke' } });
    const token = created.body.token as string;
    await warm('acme/inner', token);
    expect((await p.request('DELETE', `/accounts/alice/tokens/${created.body.tokenId}`, { token: alice })).status).toBe(204);
    expect((await p.request('GET', '/datasets/acme/inner', { token })).status).toBe(401);
    expect((await ask('acme/inner', token)).status).toBe(401);
  });

  it('the token of a deleted account is refused on the next request', async () => {
    const carol = await p.createUser('carol');
    await p.createDataset('carol', 'mine', 'public', carol);
    expect((await p.request('GET', '/datasets/carol/mine', { token: carol })).status).toBe(200);
    expect((await p.request('GET', '/me', { token: carol })).status).toBe(200);
    expect((await p.request('DELETE', '/accounts/carol', { token: p.adminToken })).status).toBe(204);
    expect((await p.request('GET', '/me', { token: carol })).status).toBe(401);
    expect((await p.request('GET', '/datasets/acme/inner', { token: carol })).status).toBe(401);
  });
});
