/**
 * Issue 14, data routes: statements (`Dataset.getStatements`), terms (autocomplete), dataset copy
 * (`Dataset.copy`) and graphs imported from other datasets (`importFromDataset`), over HTTP and
 * through the official @triply/triplydb client, with who may and who may not.
 */
import App from '@triply/triplydb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform, nextLinkOf } from '../support/platform.js';
import { graphsOf, importFiles, lines } from '../support/imports.js';
import { startService } from '../support/services.js';

let p: TestPlatform;
let alice: string;
let bob: string;

const EX = 'https://example.org/';
const DATA = [
  `<${EX}alice> <${EX}name> "Alice" <${EX}people> .`,
  `<${EX}alice> <${EX}knows> <${EX}bob> <${EX}people> .`,
  `<${EX}bob> <${EX}name> "Bob"@en <${EX}people> .`,
  `<${EX}albatross> <${EX}name> "Albatross" <${EX}birds> .`,
  `<${EX}bird> <${EX}count> "3"^^<http://www.w3.org/2001/XMLSchema#integer> <${EX}birds> .`,
].join('\n');

async function download(token: string | undefined, dataset: string): Promise<string[]> {
  const res = await fetch(`${p.url}/datasets/${dataset}/download.nq`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(200);
  return lines(await res.text());
}

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  await p.createDataset('alice', 'pub', 'public', alice);
  await p.createDataset('alice', 'priv', 'private', alice);
  for (const ds of ['alice/pub', 'alice/priv']) {
    const job = await importFiles(p, alice, ds, [{ name: 'data.nq', content: DATA }]);
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
  }
});
afterAll(async () => {
  await p?.stop();
});

describe('GET …/statements', () => {
  it('pages with limit and a Link to the next offset, as RDF/JS-like terms with their graph', async () => {
    const seen: unknown[] = [];
    let url: string | undefined = `/datasets/alice/pub/statements?limit=2`;
    for (let i = 0; i < 10 && url; i++) {
      const res = await p.request('GET', url);
      expect(res.status, res.text).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(2);
      seen.push(...res.body);
      const next = nextLinkOf(res);
      url = next ? next.slice(p.url.length) : undefined;
      if (next) expect(next).toMatch(/offset=\d+/);
    }
    expect(url).toBeUndefined();
    expect(seen).toHaveLength(5);
    expect(seen).toContainEqual([
      { termType: 'NamedNode', value: `${EX}bob` },
      { termType: 'NamedNode', value: `${EX}name` },
      { termType: 'Literal', value: 'Bob', language: 'en', datatype: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString' },
      { termType: 'NamedNode', value: `${EX}people` },
    ]);
  });

  it('filters by subject, predicate, object (IRI, lexical form or N-Triples term) and graph', async () => {
    const get = async (q: string) => (await p.request('GET', `/datasets/alice/pub/statements?${q}`)).body as any[];
    expect(await get(`subject=${encodeURIComponent(`${EX}alice`)}`)).toHaveLength(2);
    expect(await get(`predicate=${encodeURIComponent(`${EX}name`)}`)).toHaveLength(3);
    expect(await get(`object=${encodeURIComponent(`${EX}bob`)}`)).toHaveLength(1);
    expect(await get(`object=Albatross`)).toHaveLength(1);
    expect(await get(`object=${encodeURIComponent('"Bob"@en')}`)).toHaveLength(1);
    expect(await get(`graph=${encodeURIComponent(`${EX}birds`)}`)).toHaveLength(2);
    const both = await get(`graph=${encodeURIComponent(`${EX}birds`)}&predicate=${encodeURIComponent(`${EX}count`)}`);
    expect(both).toHaveLength(1);
    expect(both[0][2]).toEqual({ termType: 'Literal', value: '3', datatype: 'http://www.w3.org/2001/XMLSchema#integer' });
  });

  it('pages a filtered listing too (offset counts matching statements)', async () => {
    const name = encodeURIComponent(`${EX}name`);
    const values: string[] = [];
    for (let offset = 0; offset < 4; offset++) {
      const res = await p.request('GET', `/datasets/alice/pub/statements?predicate=${name}&limit=1&offset=${offset}`);
      values.push(...res.body.map((st: any) => st[2].value));
      expect(Boolean(nextLinkOf(res)), `offset ${offset}`).toBe(offset < 2);
    }
    expect(values).toEqual(['Alice', 'Bob', 'Albatross']);
    // A value holding characters N-Triples escapes is still found (by parsing, not on the raw line).
    expect((await p.request('GET', `/datasets/alice/pub/terms?q=${encodeURIComponent('b"')}`)).body).toEqual([]);
    expect((await p.request('GET', `/datasets/alice/pub/statements?object=${encodeURIComponent('"Alice"')}`)).body).toHaveLength(1);
  });

  it('answers 400 for a bad limit or offset or an unknown parameter', async () => {
    for (const q of ['limit=0', 'limit=abc', 'limit=100000', 'offset=-1', 'sort=asc', 'limit=1&limit=2']) {
      const res = await p.request('GET', `/datasets/alice/pub/statements?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.message, q).toBeTruthy();
    }
  });

  it('follows read access: a private dataset is 404 to others and anonymous callers, readable by its owner', async () => {
    expect((await p.request('GET', '/datasets/alice/priv/statements')).status).toBe(404);
    expect((await p.request('GET', '/datasets/alice/priv/statements', { token: bob })).status).toBe(404);
    expect((await p.request('GET', '/datasets/alice/priv/statements', { token: alice })).body).toHaveLength(5);
  });

  it('works with the official client (getStatements)', async () => {
    const app = App.get({ url: p.url, token: alice });
    const ds = await (await app.getAccount('alice')).getDataset('priv');
    const all = await ds.getStatements({ predicate: `${EX}name` }).toArray();
    expect(all).toHaveLength(3);
  });
});

describe('GET …/terms', () => {
  const terms = async (q: string, token?: string) => {
    const res = await p.request('GET', `/datasets/alice/pub/terms?${q}`, { token });
    expect(res.status, res.text).toBe(200);
    return res.body as string[];
  };

  it('terms starting with the string first, then those containing it, by position, distinct and limited', async () => {
    expect(await terms(`q=${encodeURIComponent(`${EX}al`)}&pos=subject`)).toEqual([`${EX}alice`, `${EX}albatross`]);
    // Literals: case-insensitive; "Albatross" starts with "al", "Alice"... is no object here, "Bob" does not match.
    expect(await terms('q=al&pos=object')).toEqual(['Alice', 'Albatross']);
    // Containing, after the starting ones: "bird" is in the IRI https://example.org/bird.
    expect(await terms('q=bird')).toEqual([`${EX}bird`]);
    expect(await terms(`q=${encodeURIComponent(EX)}&pos=predicate`)).toEqual([`${EX}name`, `${EX}knows`, `${EX}count`]);
    expect(await terms(`q=${encodeURIComponent(EX)}&pos=predicate&limit=1`)).toEqual([`${EX}name`]);
    expect(await terms(`q=${encodeURIComponent(EX)}&pos=graph`)).toEqual([`${EX}people`, `${EX}birds`]);
    expect(await terms('q=b&pos=object&termType=Literal&languageTag=en')).toEqual(['Bob']);
    expect(await terms(`q=3&pos=object&dataType=${encodeURIComponent('http://www.w3.org/2001/XMLSchema#integer')}`)).toEqual(['3']);
    expect(await terms(`q=al&pos=subject&graph=${encodeURIComponent(`${EX}birds`)}`)).toEqual([`${EX}albatross`]);
  });

  it('answers 400 for a bad position, term type or limit, or an unknown parameter', async () => {
    for (const q of ['pos=verb', 'termType=BlankNode', 'limit=0', 'limit=1000', 'query=x']) {
      const res = await p.request('GET', `/datasets/alice/pub/terms?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.message, q).toBeTruthy();
    }
  });

  it('follows read access', async () => {
    expect((await p.request('GET', '/datasets/alice/priv/terms?q=a', { token: bob })).status).toBe(404);
    expect((await p.request('GET', '/datasets/alice/priv/terms?q=a')).status).toBe(404);
    expect((await p.request('GET', '/datasets/alice/priv/terms?q=Alice&pos=object', { token: alice })).body).toEqual(['Alice']);
  });
});

describe('POST …/copy', () => {
  it('copies metadata and graphs to another account; the copy stands on its own', async () => {
    const res = await p.request('POST', '/datasets/alice/pub/copy', { token: bob, body: { toAccount: 'bob', name: 'mine' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ name: 'mine', owner: expect.objectContaining({ accountName: 'bob' }), accessLevel: 'public', graphCount: 2, statements: 5 });
    expect(await download(bob, 'bob/mine')).toEqual(await download(undefined, 'alice/pub'));
    // Same name by default; a second copy of that name is a conflict.
    expect((await p.request('POST', '/datasets/alice/pub/copy', { token: bob, body: { toAccount: 'bob' } })).status).toBe(201);
    const again = await p.request('POST', '/datasets/alice/pub/copy', { token: bob, body: { toAccount: 'bob' } });
    expect(again.status).toBe(409);
    expect(again.body.message).toBeTruthy();

    // The source changing or going does not touch the copy (its blobs are its own).
    await p.createDataset('alice', 'temp', 'public', alice);
    await importFiles(p, alice, 'alice/temp', [{ name: 'data.nq', content: DATA }]);
    expect((await p.request('POST', '/datasets/alice/temp/copy', { token: alice, body: { toAccount: 'alice', name: 'temp2' } })).status).toBe(201);
    expect((await p.request('DELETE', '/datasets/alice/temp/graphs', { token: alice })).status).toBe(204);
    expect((await p.request('DELETE', '/datasets/alice/temp', { token: alice })).status).toBe(204);
    expect(await download(alice, 'alice/temp2')).toEqual(await download(undefined, 'alice/pub'));
    expect((await graphsOf(p, alice, 'alice/temp2')).map((g) => g.numberOfStatements).sort()).toEqual([2, 3]);
  });

  it('needs read access to the source and the right to create datasets in the target account', async () => {
    expect((await p.request('POST', '/datasets/alice/priv/copy', { token: bob, body: { toAccount: 'bob' } })).status).toBe(404);
    expect((await p.request('POST', '/datasets/alice/pub/copy', { body: { toAccount: 'alice', name: 'x' } })).status).toBe(401);
    expect([401, 403]).toContain((await p.request('POST', '/datasets/alice/pub/copy', { token: bob, body: { toAccount: 'alice', name: 'x' } })).status);
    expect((await p.request('POST', '/datasets/alice/pub/copy', { token: alice, body: { toAccount: 'nobody', name: 'x' } })).status).toBe(404);
    const owned = await p.request('POST', '/datasets/alice/priv/copy', { token: alice, body: { toAccount: 'alice', name: 'priv-copy' } });
    expect(owned.status).toBe(201);
    expect(owned.body.accessLevel).toBe('private');
    expect((await p.request('GET', '/datasets/alice/priv-copy', { token: bob })).status).toBe(404);
  });

  it('answers 400 for a missing toAccount or a bad name', async () => {
    for (const body of [{}, { toAccount: 7 }, { toAccount: 'bob', name: 'no spaces here' }]) {
      const res = await p.request('POST', '/datasets/alice/pub/copy', { token: bob, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toBeTruthy();
    }
  });

  it('works with the official client (Dataset.copy)', async () => {
    const app = App.get({ url: p.url, token: bob });
    const source = await (await app.getAccount('alice')).getDataset('pub');
    const copy = await source.copy('bob', 'viaclient');
    expect((await copy.getInfo()).name).toBe('viaclient');
    expect((await copy.getInfo(true)).statements).toBe(5);
  });
});

describe('GET|PATCH …/imports', () => {
  it('adds graphs of another dataset the caller may read, lists them, and refuses a taken name unless overwrite', async () => {
    await p.createDataset('bob', 'target', 'private', bob);
    expect((await p.request('GET', '/datasets/bob/target/imports', { token: bob })).body).toEqual([]);
    const body = [{ dataset: { ownerName: 'alice', datasetName: 'pub' }, graphs: [{ from: `${EX}people`, to: `${EX}friends`, overwrite: false }] }];
    const res = await p.request('PATCH', '/datasets/bob/target/imports', { token: bob, body });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([{ dataset: { ownerName: 'alice', datasetName: 'pub' }, graphs: [{ id: expect.any(String), from: `${EX}people`, to: `${EX}friends`, numberOfStatements: 3 }] }]);
    expect((await p.request('GET', '/datasets/bob/target/imports', { token: bob })).body).toEqual(res.body);
    expect(await graphsOf(p, bob, 'bob/target')).toEqual([expect.objectContaining({ graphName: `${EX}friends`, numberOfStatements: 3 })]);
    expect((await p.request('GET', `/datasets/bob/target/statements?graph=${encodeURIComponent(`${EX}friends`)}`, { token: bob })).body).toHaveLength(3);

    const clash = await p.request('PATCH', '/datasets/bob/target/imports', { token: bob, body });
    expect(clash.status).toBe(409);
    expect(clash.body.message).toMatch(/overwrite/);
    const over = [{ dataset: { ownerName: 'alice', datasetName: 'pub' }, graphs: [{ from: `${EX}birds`, to: `${EX}friends`, overwrite: true }] }];
    const replaced = await p.request('PATCH', '/datasets/bob/target/imports', { token: bob, body: over });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body[0].graphs).toEqual([expect.objectContaining({ from: `${EX}birds`, to: `${EX}friends`, numberOfStatements: 2 })]);
    // An import of no graphs changes nothing.
    const none = await p.request('PATCH', '/datasets/bob/target/imports', { token: bob, body: [{ dataset: { ownerName: 'alice', datasetName: 'pub' }, graphs: [] }] });
    expect(none.body).toHaveLength(1);
  });

  it('needs read access to the source and write access to the target', async () => {
    const from = (ownerName: string, datasetName: string) => [{ dataset: { ownerName, datasetName }, graphs: [{ from: `${EX}people` }] }];
    expect((await p.request('PATCH', '/datasets/bob/target/imports', { token: bob, body: from('alice', 'priv') })).status).toBe(404);
    expect((await p.request('PATCH', '/datasets/alice/pub/imports', { token: bob, body: from('alice', 'pub') })).status).toBe(403);
    expect((await p.request('PATCH', '/datasets/alice/pub/imports', { body: from('alice', 'pub') })).status).toBe(401);
    expect((await p.request('GET', '/datasets/bob/target/imports', { token: alice })).status).toBe(404);
    const missing = await p.request('PATCH', '/datasets/bob/target/imports', { token: bob, body: [{ dataset: { ownerName: 'alice', datasetName: 'pub' }, graphs: [{ from: `${EX}nothing` }] }] });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toMatch(/nothing/);
  });

  it('answers 400 for a body of the wrong shape', async () => {
    for (const body of [{}, [{ dataset: { ownerName: 'alice' }, graphs: [] }], [{ dataset: { ownerName: 'alice', datasetName: 'pub' }, graphs: [{ from: `${EX}people`, to: 'not an iri' }] }]]) {
      const res = await p.request('PATCH', '/datasets/bob/target/imports', { token: bob, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toBeTruthy();
    }
  });

  it('leaves a running service of the dataset out of sync until synced', async () => {
    await p.createDataset('alice', 'served', 'private', alice);
    const service = await startService(p, alice, 'alice/served', { name: 'main', type: 'virtuoso' });
    expect(service).toMatchObject({ status: 'running', outOfSync: false });
    const body = [{ dataset: { ownerName: 'alice', datasetName: 'pub' }, graphs: [{ from: `${EX}people` }] }];
    expect((await p.request('PATCH', '/datasets/alice/served/imports', { token: alice, body })).status).toBe(200);
    expect((await p.request('GET', '/datasets/alice/served/services/main', { token: alice })).body.outOfSync).toBe(true);
  });

  it('works with the official client (importFromDataset)', async () => {
    const app = App.get({ url: p.url, token: alice });
    await p.createDataset('alice', 'collector', 'private', alice);
    const account = await app.getAccount('alice');
    const target = await account.getDataset('collector');
    const result: any = await target.importFromDataset(await account.getDataset('pub'), { graphNames: [`${EX}birds`] });
    expect(result[0].graphs).toHaveLength(1);
    expect((await target.getInfo(true)).statements).toBe(2);
  });
});
