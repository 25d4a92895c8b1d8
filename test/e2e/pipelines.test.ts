/**
 * Issue 14, area D: pipelines (TriplyDB's "query jobs"). Saved CONSTRUCT/DESCRIBE queries run
 * through the saved-query run path against a source dataset; their results replace one graph of the
 * target dataset in one swap (kept as it was when a query fails). Over HTTP to the embedded platform.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;
const DATA = '<https://example.org/a> <https://example.org/name> "A" .\n<https://example.org/b> <https://example.org/name> "B" .\n<https://example.org/c> <https://example.org/name> "C" .\n';
const G = 'https://example.org/graphs/out';

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  const src = await p.createDataset('alice', 'src', 'public', alice);
  await p.createDataset('alice', 'dst', 'public', alice);
  await p.createDataset('bob', 'mine', 'private', bob);
  const job = await importFiles(p, alice, 'alice/src', [{ name: 'd.nt', content: DATA }], { defaultGraphName: 'https://example.org/graphs/in' });
  if (job.status !== 'finished') throw new Error(`import: ${JSON.stringify(job)}`);
  const q = async (name: string, query: string, extra: Record<string, unknown> = {}) => {
    const r = await p.request('POST', '/queries/alice', { token: alice, body: { name, accessLevel: 'public', dataset: src.id, serviceConfig: { type: 'speedy' }, requestConfig: { payload: { query } }, ...extra } });
    if (r.status !== 201) throw new Error(`query ${name}: ${r.status} ${r.text}`);
  };
  await q('labels', 'CONSTRUCT { ?s <https://example.org/label> ?name } WHERE { ?s <https://example.org/name> ?name }');
  await q('one', 'CONSTRUCT { ?s <https://example.org/picked> ?name } WHERE { ?s <https://example.org/name> ?name }', {
    variables: [{ name: 'name', termType: 'Literal', required: true }],
  });
  await q('table', 'SELECT * WHERE { ?s ?p ?o }');
  // A second version of "labels" that writes another predicate: a pipeline can name version 1.
  const v2 = await p.request('POST', '/queries/alice/labels', { token: alice, body: { requestConfig: { payload: { query: 'CONSTRUCT { ?s <https://example.org/v2> ?name } WHERE { ?s <https://example.org/name> ?name }' } } } });
  if (v2.status !== 200) throw new Error(`version: ${v2.status} ${v2.text}`);
});
afterAll(async () => {
  await p?.stop();
});

const config = (over: Record<string, unknown> = {}) => ({
  version: 0.2,
  queries: [{ name: 'alice/labels' }],
  sourceDataset: 'alice/src',
  targetDataset: 'alice/dst',
  targetGraphName: G,
  ...over,
});
const graphOf = async (ds: string, name: string) => {
  const r = await p.request('GET', `/datasets/${ds}/graphs`, { token: alice });
  expect(r.status).toBe(200);
  return (r.body as { graphName: string; numberOfStatements: number; id: string }[]).find((g) => g.graphName === name);
};
const statementsOf = async (ds: string, graph: string) => {
  const r = await p.request('GET', `/datasets/${ds}/statements?graph=${encodeURIComponent(graph)}&limit=100`, { token: alice });
  expect(r.status).toBe(200);
  return JSON.stringify(r.body);
};

describe('pipelines (issue 14 area D)', () => {
  it('run the queries, at the versions and with the variables given, and write their results into the target graph', async () => {
    const created = await p.request('POST', '/pipelines/alice', {
      token: alice,
      body: config({ queries: [{ name: 'alice/labels', version: 1, priority: 2 }, { name: 'alice/one', variables: { name: 'B' } }] }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'finished', progress: 1, targetGraphName: G, numberOfStatements: 4 });
    expect(created.body.jobs).toEqual([
      expect.objectContaining({ status: 'finished', progress: 1, query: expect.objectContaining({ owner: 'alice', name: 'labels', version: 1 }), statements: 3 }),
      expect.objectContaining({ status: 'finished', query: expect.objectContaining({ name: 'one' }), statements: 1 }),
    ]);
    const polled = await p.request('GET', `/pipelines/alice/${created.body.id}`, { token: alice });
    expect(polled.status).toBe(200);
    expect(polled.body).toEqual(created.body);
    expect((await graphOf('alice/dst', G))?.numberOfStatements).toBe(4);
    const text = await statementsOf('alice/dst', G);
    expect(text).toContain('https://example.org/label');
    expect(text).toContain('https://example.org/picked');
    expect(text).not.toContain('https://example.org/v2');
    // Without a version: the latest; the graph is replaced, not added to.
    const latest = await p.request('POST', '/pipelines/alice', { token: alice, body: config() });
    expect(latest.body).toMatchObject({ status: 'finished', numberOfStatements: 3 });
    const after = await statementsOf('alice/dst', G);
    expect(after).toContain('https://example.org/v2');
    expect(after).not.toContain('https://example.org/label');
  });

  it('a query that fails leaves the target graph as it was, and the pipeline says error', async () => {
    const before = await graphOf('alice/dst', G);
    expect(before).toBeDefined();
    const failed = await p.request('POST', '/pipelines/alice', { token: alice, body: config({ queries: [{ name: 'alice/labels' }, { name: 'alice/one' }] }) });
    expect(failed.status).toBe(201);
    expect(failed.body.status).toBe('error');
    expect(failed.body.error.message).toMatch(/name: this variable is required/);
    expect(failed.body.jobs.map((j: { status: string }) => j.status)).toEqual(['finished', 'error']);
    expect(await graphOf('alice/dst', G)).toEqual(before);
    expect((await p.request('GET', `/pipelines/alice/${failed.body.id}`, { token: alice })).body.status).toBe('error');
  });

  it('writes a default graph name when none is given', async () => {
    const r = await p.request('POST', '/pipelines/alice', { token: alice, body: config({ targetGraphName: undefined }) });
    expect(r.body.status).toBe('finished');
    expect(r.body.targetGraphName).toMatch(/\/alice\/dst\/graphs\/pipeline$/);
    expect((await graphOf('alice/dst', r.body.targetGraphName))?.numberOfStatements).toBe(3);
  });

  it('refuse bad input with 400 naming what to fix, unknown queries and pipelines with 404', async () => {
    const bad: [unknown, RegExp][] = [
      [config({ version: 0.1 }), /version/],
      [config({ queries: [] }), /queries/],
      [config({ queries: [{ name: 'alice/table' }] }), /select query; pipelines run CONSTRUCT and DESCRIBE/],
      [config({ queries: [{ name: 'nonsense' }] }), /queries\[0\]\.name/],
      [config({ targetGraphName: 'not an iri' }), /targetGraphName/],
      [config({ sourceDataset: undefined }), /sourceDataset/],
      [config({ extra: 1 }), /extra/],
      [{ ...config(), queries: [{ name: 'alice/labels', variables: { name: 3 } }] }, /variables/],
    ];
    for (const [body, message] of bad) {
      const r = await p.request('POST', '/pipelines/alice', { token: alice, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message).toMatch(message);
    }
    expect((await p.request('POST', '/pipelines/alice?x=1', { token: alice, body: config() })).status).toBe(400);
    const missing = await p.request('POST', '/pipelines/alice', { token: alice, body: config({ queries: [{ name: 'alice/nope' }] }) });
    expect(missing.status).toBe(404);
    expect((await p.request('GET', '/pipelines/alice/nope', { token: alice })).status).toBe(404);
  });

  it('only members run and see an account’s pipelines; the caller must read the source and queries and write the target', async () => {
    const made = await p.request('POST', '/pipelines/alice', { token: alice, body: config() });
    expect((await p.request('POST', '/pipelines/alice', { body: config() })).status).toBe(401);
    expect((await p.request('GET', `/pipelines/alice/${made.body.id}`)).status).toBe(401);
    expect((await p.request('POST', '/pipelines/alice', { token: bob, body: config() })).status).toBe(404);
    expect((await p.request('GET', `/pipelines/alice/${made.body.id}`, { token: bob })).status).toBe(404);
    // Bob reads alice's public source and query, but may not write her dataset.
    expect((await p.request('POST', '/pipelines/bob', { token: bob, body: config() })).status).toBe(403);
    // Into his own dataset he may.
    const own = await p.request('POST', '/pipelines/bob', { token: bob, body: config({ targetDataset: 'bob/mine' }) });
    expect(own.status).toBe(201);
    expect(own.body.status).toBe('finished');
    // Alice cannot read bob's private dataset as a source (404, as for a missing one).
    expect((await p.request('POST', '/pipelines/alice', { token: alice, body: config({ sourceDataset: 'bob/mine' }) })).status).toBe(404);
  });

  it('/info turns the query jobs API on', async () => {
    const r = await p.request('GET', '/info');
    expect(r.body.featureToggles.queryJobsApi).toBe(true);
  });
});
