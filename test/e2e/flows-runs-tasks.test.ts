/**
 * Flow runs end to end through HTTP, part 2 of 3 (the set-up is in test/support/flow-runs.ts):
 * run and task statuses (and aborting), the decision operators, and the Set description, SPARQL
 * query and SPARQL update tasks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startRun, waitForRun } from '../support/flows.js';
import { DATA, decisionFlow, EX, useFlowRunsWorld } from '../support/flow-runs.js';
import type { TestPlatform } from '../support/platform.js';

const world = useFlowRunsWorld();
const { fid, newFlow, runToEnd, taskOf, statusesOf, until, runsOf } = world;
let p: TestPlatform;
let alice: string;
let bob: string;
let aliceSession: Record<string, string>;
let dataDatasetId: string;
beforeAll(() => {
  ({ p, alice, bob, aliceSession, dataDatasetId } = world);
});

// ---- Statuses ----

describe('run and task statuses', () => {
  it('finished: every task finished', async () => {
    const { path } = await newFlow({
      id: fid('finished'),
      outputVariables: [{ name: 'a' }, { name: 'b' }],
      tasks: [
        { id: 'one', label: 'One', type: 'setVariables', settings: { values: { a: '1' } } },
        { id: 'two', label: 'Two', type: 'setVariables', settings: { values: { b: '?a+1' } } },
      ],
      connections: [{ from: 'one', to: 'two' }],
    });
    const run = await runToEnd(path);
    expect(run).toMatchObject({ status: 'finished', startedBy: 'alice' });
    expect(run.error).toBeUndefined();
    expect(run.finishedAt >= run.createdAt).toBe(true);
    expect(await statusesOf(run.id)).toEqual({ one: 'finished', two: 'finished' });
    expect((await taskOf(run.id, 'two')).output).toEqual({ variables: { b: '1+1' } });
  });

  it('failed: the error is on the run and the task; later tasks never started', async () => {
    const { path } = await newFlow({
      id: fid('failed'),
      outputVariables: [{ name: 'x' }],
      tasks: [
        { id: 'query', label: 'Query a missing dataset', type: 'sparqlQuery', settings: { dataset: { account: 'alice', dataset: 'nosuchdataset' }, query: { text: 'SELECT * WHERE { ?s ?p ?o }' }, output: { to: 'artifact', format: 'json' } } },
        { id: 'after', label: 'After', type: 'setVariables', settings: { values: { x: '1' } } },
      ],
      connections: [{ from: 'query', to: 'after' }],
    });
    const run = await runToEnd(path);
    expect(run.status).toBe('failed');
    expect(run.error.taskId).toBe('query');
    expect(run.error.message).toMatch(/nosuchdataset/);
    const query = await taskOf(run.id, 'query');
    expect(query.status).toBe('failed');
    expect(query.error).toBe(run.error.message);
    expect(await statusesOf(run.id)).toEqual({ query: 'failed', after: 'neverStarted' });
  });

  it('timeout: a wait longer than its Timeout', async () => {
    const { path } = await newFlow({
      id: fid('timeout'),
      variables: [{ name: 'delay' }],
      outputVariables: [{ name: 'x' }],
      tasks: [
        { id: 'slow', label: 'Slow', type: 'wait', settings: { seconds: '?delay' }, timeoutSeconds: 1 },
        { id: 'after', label: 'After', type: 'setVariables', settings: { values: { x: '1' } } },
      ],
      connections: [{ from: 'slow', to: 'after' }],
    });
    const started = Date.now();
    const run = await runToEnd(path, { query: { delay: '5' } });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.status).toBe('timeout');
    expect(run.error).toMatchObject({ taskId: 'slow', message: expect.stringMatching(/Timeout/) });
    expect(await statusesOf(run.id)).toEqual({ slow: 'timeout', after: 'neverStarted' });
    // Within the Timeout the same flow finishes.
    const quick = await runToEnd(path, { query: { delay: '0' } });
    expect(quick.status).toBe('finished');
  });

  it('aborted by a Stop run task, with its reason; the branch not chosen is skipped', async () => {
    const { path } = await newFlow({
      id: fid('stop'),
      variables: [{ name: 'maxErrors' }],
      outputVariables: [{ name: 'x' }],
      tasks: [
        { id: 'check', label: 'Check', type: 'decision', settings: { branches: [{ to: 'halt', conditions: [{ variable: 'maxErrors', operator: 'lt', value: '1' }] }], otherwise: 'goOn' } },
        { id: 'halt', label: 'Halt', type: 'stopRun', settings: { reason: 'maxErrors is ?maxErrors' } },
        { id: 'goOn', label: 'Go on', type: 'setVariables', settings: { values: { x: 'on' } } },
        { id: 'last', label: 'Last', type: 'setVariables', settings: { values: { x: 'last' } } },
      ],
      connections: [
        { from: 'check', to: 'halt' },
        { from: 'check', to: 'goOn' },
        { from: 'goOn', to: 'last' },
      ],
    });
    const stopped = await runToEnd(path, { query: { maxErrors: '0' } });
    expect(stopped.status).toBe('aborted');
    expect(stopped.error).toMatchObject({ taskId: 'halt' });
    expect(stopped.error.message).toContain('maxErrors is 0');
    // goOn was not chosen, and last is fed only by it: both skipped, though the run ended early.
    expect(await statusesOf(stopped.id)).toEqual({ check: 'finished', halt: 'aborted', goOn: 'skipped', last: 'skipped' });

    const ran = await runToEnd(path, { query: { maxErrors: '5' } });
    expect(ran.status).toBe('finished');
    expect(await statusesOf(ran.id)).toEqual({ check: 'finished', halt: 'skipped', goOn: 'finished', last: 'finished' });
  });

  it('aborted from the API while waiting; aborting again is a conflict', async () => {
    const { path } = await newFlow({
      id: fid('abort'),
      outputVariables: [{ name: 'x' }],
      tasks: [
        { id: 'pause', label: 'Pause', type: 'wait', settings: { seconds: 30 } },
        { id: 'after', label: 'After', type: 'setVariables', settings: { values: { x: '1' } } },
      ],
      connections: [{ from: 'pause', to: 'after' }],
    });
    const started = await startRun(p, `${path}/run`, alice);
    expect(started.status).toBe(201);
    // pending (waiting to start) until its first task starts, then running.
    expect(started.body.status).toBe('pending');
    const runId = started.body.id as string;
    await until('the wait task starts', async () => ((await taskOf(runId, 'pause')).status !== 'pending' ? true : undefined));
    expect((await p.request('GET', `/flows/runs/${runId}`, { token: alice })).body.status).toBe('running');

    // Someone who cannot see the run cannot abort it.
    expect((await p.request('POST', `/flows/runs/${runId}/abort`, { token: bob })).status).toBe(404);
    const t0 = Date.now();
    const aborted = await p.request('POST', `/flows/runs/${runId}/abort`, { token: alice });
    expect(aborted.status, aborted.text).toBe(200);
    expect(aborted.body.status).toBe('aborted');
    expect(aborted.body.error.message).toMatch(/alice/);
    const run = await waitForRun(p, runId, alice, 5_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(run.status).toBe('aborted');
    expect(run.finishedAt).toBeDefined();
    // The wait was cut short: aborted, not finished.
    expect(await statusesOf(runId)).toEqual({ pause: 'aborted', after: 'neverStarted' });

    const again = await p.request('POST', `/flows/runs/${runId}/abort`, { token: alice });
    expect(again.status).toBe(409);
    expect((await p.request('POST', '/flows/runs/nosuchrun/abort', { token: alice })).status).toBe(404);
  });
});

// ---- Decisions ----

describe('decision operators', () => {
  // [operator, condition value, a value for which it holds, one for which it does not (undefined: unset)]
  const cases: [string, string | undefined, string | undefined, string | undefined][] = [
    ['equals', 'abc', 'abc', 'abd'],
    ['notEquals', 'abc', 'abd', 'abc'],
    ['contains', 'bc', 'abcd', 'acbd'],
    ['matches', '^a\\d+$', 'a123', 'a12b'],
    ['lt', '10', '9', '10'],
    ['le', '10', '10.0', '10.5'],
    ['gt', '10', '100', '9'],
    ['ge', '10', '10', '9.99'],
    ['empty', undefined, undefined, 'x'],
    ['notEmpty', undefined, 'x', undefined],
  ];
  for (const [operator, value, holds, fails] of cases) {
    it(`${operator} chooses its branch and skips the other`, async () => {
      const { path } = await newFlow(decisionFlow(fid(`op-${operator.toLowerCase()}`), { variable: 'v', operator, ...(value !== undefined ? { value } : {}) }));
      const yes = await runToEnd(path, { query: holds !== undefined ? { v: holds } : {} });
      expect(yes.status).toBe('finished');
      expect(await statusesOf(yes.id)).toEqual({ d: 'finished', yes: 'finished', no: 'skipped' });
      expect((await taskOf(yes.id, 'd')).output).toEqual({ branch: 'yes' });
      const no = await runToEnd(path, { query: fails !== undefined ? { v: fails } : {} });
      expect(no.status).toBe('finished');
      expect(await statusesOf(no.id)).toEqual({ d: 'finished', yes: 'skipped', no: 'finished' });
    });
  }

  it('fails a numeric comparison of a non-number', async () => {
    const { path } = await newFlow(decisionFlow(fid('op-nan'), { variable: 'v', operator: 'gt', value: '1' }));
    const run = await runToEnd(path, { query: { v: 'many' } });
    expect(run.status).toBe('failed');
    expect(run.error.message).toMatch(/not a number/);
    expect(await statusesOf(run.id)).toEqual({ d: 'failed', yes: 'neverStarted', no: 'neverStarted' });
  });
});

// ---- Set description ----

describe('set description', () => {
  it('sets the run description; over 1,000 characters after substitution the task fails', async () => {
    const { path } = await newFlow({
      id: fid('describe'),
      variables: [{ name: 'what' }],
      tasks: [{ id: 'desc', label: 'Describe', type: 'setDescription', settings: { description: 'Loaded ?what by ?system_triggererAccountName.' } }],
    });
    const run = await runToEnd(path, { query: { what: 'the museum' } });
    expect(run.status).toBe('finished');
    expect(run.description).toBe('Loaded the museum by alice.');
    const listed = await runsOf(`blueprintId=${run.flowId}`);
    expect(listed.body.find((r: any) => r.id === run.id).description).toBe('Loaded the museum by alice.');

    const long = await runToEnd(path, { body: { what: 'x'.repeat(1_000) } });
    expect(long.status).toBe('failed');
    expect(long.error.message).toMatch(/1,?000/);
    expect(long.description).toBeUndefined();
    expect((await taskOf(long.id, 'desc')).status).toBe('failed');
  });
});

// ---- SPARQL query and update tasks ----

describe('SPARQL query task', () => {
  it('writes a CONSTRUCT to a graph and saves a SELECT as CSV and JSON files', async () => {
    const graph = `${EX}graphs/labels`;
    const { path } = await newFlow({
      id: fid('sparql'),
      tasks: [
        {
          id: 'construct',
          label: 'Construct labels',
          type: 'sparqlQuery',
          settings: {
            dataset: { account: 'alice', dataset: 'data' },
            query: { text: `CONSTRUCT { ?s <${EX}label> ?n } WHERE { ?s <${EX}name> ?n }` },
            output: { to: 'graph', dataset: { account: 'alice', dataset: 'target' }, graph, overwrite: true },
          },
        },
        {
          id: 'csv',
          label: 'Names as CSV',
          type: 'sparqlQuery',
          settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text: `SELECT ?s ?n WHERE { ?s <${EX}name> ?n } ORDER BY ?s` }, output: { to: 'artifact', format: 'csv', fileName: 'names.csv' } },
        },
        {
          id: 'json',
          label: 'Names as JSON',
          type: 'sparqlQuery',
          settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text: `SELECT ?s ?n WHERE { ?s <${EX}name> ?n } ORDER BY ?s` }, output: { to: 'artifact', format: 'json' } },
        },
      ],
    });
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');

    // The graph.
    expect((await taskOf(run.id, 'construct')).output).toEqual({ graph, statements: 3 });
    const graphs = await p.request('GET', '/datasets/alice/target/graphs', { token: alice });
    expect(graphs.body.map((g: any) => [g.graphName, g.numberOfStatements])).toContainEqual([graph, 3]);
    const nt = await p.request('GET', `/datasets/alice/target/download.nt?graph=${encodeURIComponent(graph)}`, { token: alice });
    expect(nt.status).toBe(200);
    expect(nt.text).toContain(`<${EX}a> <${EX}label> "Alice" .`);
    const ask = await p.request('GET', `/datasets/alice/target/sparql?query=${encodeURIComponent(`ASK { GRAPH <${graph}> { <${EX}a> <${EX}label> "Alice" } }`)}`, {
      token: alice,
      headers: { accept: 'application/sparql-results+json' },
    });
    expect(ask.status, ask.text).toBe(200);
    expect(JSON.parse(ask.text).boolean).toBe(true);

    // The files.
    const csv = await taskOf(run.id, 'csv');
    expect(csv.artifacts).toHaveLength(1);
    expect(csv.artifacts[0]).toMatchObject({ fileName: 'names.csv', contentType: 'text/csv' });
    const csvFile = await fetch(csv.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
    expect(csvFile.status).toBe(200);
    expect(csvFile.headers.get('content-type')).toMatch(/^text\/csv/);
    const csvLines = (await csvFile.text()).trim().split(/\r?\n/);
    expect(csvLines[0]).toBe('s,n');
    expect(csvLines[1]).toBe(`${EX}a,Alice`);
    expect(csvLines).toHaveLength(4);

    const json = await taskOf(run.id, 'json');
    expect(json.artifacts[0]).toMatchObject({ fileName: 'json.json', contentType: 'application/sparql-results+json' });
    const jsonFile = await fetch(json.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
    expect(jsonFile.status).toBe(200);
    const results = JSON.parse(await jsonFile.text());
    expect(results.head.vars).toEqual(['s', 'n']);
    expect(results.results.bindings).toHaveLength(3);
    expect(results.results.bindings[0]).toMatchObject({ s: { type: 'uri', value: `${EX}a` }, n: { value: 'Alice' } });
    // Files need the right to read the run.
    expect((await fetch(json.artifacts[0].url, { headers: { authorization: `Bearer ${bob}` } })).status).toBe(404);
  });

  it('adds to a graph without overwrite, and replaces it with overwrite', async () => {
    const graph = `${EX}graphs/added`;
    const task = (id: string, text: string, overwrite: boolean) => ({
      id,
      label: id,
      type: 'sparqlQuery',
      settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text }, output: { to: 'graph', dataset: { account: 'alice', dataset: 'target' }, graph, overwrite } },
    });
    const add = await newFlow({ id: fid('add'), tasks: [task('names', `CONSTRUCT { ?s <${EX}n> ?n } WHERE { ?s <${EX}name> ?n }`, false)] });
    const types = await newFlow({ id: fid('types'), tasks: [task('types', `CONSTRUCT { ?s a ?t } WHERE { ?s a ?t }`, false)] });
    const replace = await newFlow({ id: fid('replace'), tasks: [task('types', `CONSTRUCT { ?s a ?t } WHERE { ?s a ?t }`, true)] });
    const count = async () => (await p.request('GET', '/datasets/alice/target/graphs', { token: alice })).body.find((g: any) => g.graphName === graph)?.numberOfStatements;
    expect((await runToEnd(add.path)).status).toBe('finished');
    expect(await count()).toBe(3);
    expect((await runToEnd(types.path)).status).toBe('finished');
    expect(await count()).toBe(5);
    // The same statements again: a graph is a set.
    expect((await runToEnd(types.path)).status).toBe('finished');
    const nt = (await p.request('GET', `/datasets/alice/target/download.nt?graph=${encodeURIComponent(graph)}`, { token: alice })).text;
    expect(nt.split('\n').filter((l: string) => l.trim() === '')).toHaveLength(1);
    expect(nt.trim().split('\n').sort()).toEqual([
      `<${EX}a> <${EX}n> "Alice" .`,
      `<${EX}a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${EX}Person> .`,
      `<${EX}b> <${EX}n> "Bob \\"quoted\\" } ; DROP ALL" .`,
      `<${EX}b> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${EX}Person> .`,
      `<${EX}c> <${EX}n> "${EX}Person" .`,
    ].sort());
    expect(await count()).toBe(5);
    expect((await runToEnd(replace.path)).status).toBe('finished');
    expect(await count()).toBe(2);
  });

  it('runs a saved query on its dataset', async () => {
    const saved = await p.request('POST', '/queries/alice', {
      token: alice,
      body: {
        name: 'people-names',
        accessLevel: 'private',
        dataset: dataDatasetId,
        requestConfig: { payload: { query: `SELECT ?n WHERE { ?s a <${EX}Person> ; <${EX}name> ?n } ORDER BY ?n` } },
        variables: [],
      },
    });
    expect(saved.status, saved.text).toBe(201);
    const { path } = await newFlow({
      id: fid('saved'),
      tasks: [{ id: 'names', label: 'Saved', type: 'sparqlQuery', settings: { query: { savedQuery: { account: 'alice', name: 'people-names' } }, output: { to: 'artifact', format: 'json', fileName: 'people.json' } } }],
    });
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const task = await taskOf(run.id, 'names');
    expect(task.log.join('\n')).toMatch(/saved query alice\/people-names version 1/);
    const file = await fetch(task.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
    const names = JSON.parse(await file.text()).results.bindings.map((b: any) => b.n.value);
    expect(names).toEqual(['Alice', 'Bob "quoted" } ; DROP ALL']);
  });

  it('binds variables into SPARQL as terms: an IRI as an IRI, quotes and braces as a literal', async () => {
    const { path } = await newFlow({
      id: fid('bind'),
      variables: [{ name: 'target' }, { name: 'needle' }],
      tasks: [
        { id: 'byIri', label: 'By IRI', type: 'sparqlQuery', settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text: 'SELECT ?s WHERE { ?s ?p ?target } ORDER BY ?s' }, output: { to: 'artifact', format: 'json' } } },
        { id: 'byText', label: 'By text', type: 'sparqlQuery', settings: { dataset: { account: 'alice', dataset: 'data' }, query: { text: `SELECT ?s WHERE { ?s <${EX}name> ?needle }` }, output: { to: 'artifact', format: 'json' } } },
      ],
    });
    const needle = 'Bob "quoted" } ; DROP ALL';
    const run = await runToEnd(path, { body: { target: `${EX}Person`, needle } });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const subjects = async (taskId: string) => {
      const task = await taskOf(run.id, taskId);
      const file = await fetch(task.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
      return JSON.parse(await file.text()).results.bindings.map((b: any) => b.s.value);
    };
    // ex:Person as an IRI matches the rdf:type triples, not ex:c's literal "https://ex.org/Person".
    expect(await subjects('byIri')).toEqual([`${EX}a`, `${EX}b`]);
    expect(await subjects('byText')).toEqual([`${EX}b`]);
    // Nothing was dropped.
    const graphs = await p.request('GET', '/datasets/alice/data/graphs', { token: alice });
    expect(graphs.body.map((g: any) => [g.graphName, g.numberOfStatements])).toEqual([[`${EX}graphs/data`, 5]]);
  });
});

describe('SPARQL update task', () => {
  it('updates a dataset when switched on; a flow with it cannot be saved while switched off', async () => {
    await p.createDataset('alice', 'updatable', 'private', alice);
    const definition = (id: string) => ({
      id,
      tasks: [
        {
          id: 'insert',
          label: 'Insert',
          type: 'sparqlUpdate',
          settings: { dataset: { account: 'alice', dataset: 'updatable' }, update: { text: `INSERT DATA { GRAPH <${EX}graphs/upd> { <${EX}x> <${EX}p> "inserted" } }` } },
        },
      ],
    });
    const { path } = await newFlow(definition(fid('update')));
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const graphs = await p.request('GET', '/datasets/alice/updatable/graphs', { token: alice });
    expect(graphs.body.map((g: any) => [g.graphName, g.numberOfStatements])).toEqual([[`${EX}graphs/upd`, 1]]);

    const off = await p.request('PATCH', '/admin/flows', { token: p.adminToken, body: { sparqlUpdateTaskEnabled: false } });
    expect(off.status).toBe(200);
    try {
      const refused = await p.request('POST', '/flows/blueprints/alice', { headers: aliceSession, body: { name: 'u', accessLevel: 'Private', connections: [], ...definition(fid('update-off')) } });
      expect(refused.status).toBe(400);
      expect(refused.text).toMatch(/sparqlUpdateTaskEnabled/);
      // A flow saved while it was on cannot use it now.
      const failed = await runToEnd(path);
      expect(failed.status).toBe('failed');
      expect(failed.error.message).toMatch(/switched off/);
    } finally {
      const on = await p.request('PATCH', '/admin/flows', { token: p.adminToken, body: { sparqlUpdateTaskEnabled: true } });
      expect(on.status).toBe(200);
    }
    expect((await p.request('GET', '/admin/flows', { token: p.adminToken })).body).toMatchObject({ flowsEnabled: true, sparqlUpdateTaskEnabled: true });
  });
});
