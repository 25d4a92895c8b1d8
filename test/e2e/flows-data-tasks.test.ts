/**
 * The data tasks of flows end to end through HTTP: Load from URL (RDF, CSV, TSV, XML; create,
 * overwrite or add; headers with masked values), SHACL validation (shapes from a URL or a
 * dataset graph; the report artifact; failOnViolation), Send email (the outbox), Set access level
 * and Service action, each acting as the run's starter.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Parser } from 'n3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { readOutbox } from '../support/outbox.js';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let aliceSession: Record<string, string>;
let bobSession: Record<string, string>;

const EX = 'https://ex.org/';
const TAB = 'https://w3id.org/linked-data-platform/tabular#';
const XMLV = 'https://w3id.org/linked-data-platform/xml#';
const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const SECRET = 'sesame-7f3a9c21-open';

// ---- The file server the loads read ----

const FILES: Record<string, { type: string; body: string }> = {
  '/data.ttl': { type: 'text/turtle', body: `@prefix ex: <${EX}> .\nex:a ex:name "Alice" ; a ex:Person .\nex:b ex:name "Bob" ; ex:age 42 .\n` },
  '/export': { type: 'application/n-triples', body: `<${EX}c> <${EX}name> "Carol" .\n<${EX}d> <${EX}name> "Dan"@en .\n` },
  '/plain': { type: 'application/octet-stream', body: `<${EX}e> <${EX}name> "Eve" .\n` },
  '/one.ttl': { type: 'text/turtle', body: `<${EX}x> <${EX}p> "1" .\n<${EX}x> <${EX}p> "2" .\n` },
  '/two.ttl': { type: 'text/turtle', body: `<${EX}x> <${EX}p> "2" .\n<${EX}x> <${EX}p> "3" .\n` },
  '/people.csv': { type: 'text/csv', body: 'name,age,city\r\n"Smith, Jane",42,Amsterdam\r\nÉmile,,"Paris\nFrance"\r\n' },
  '/people.tsv': { type: 'text/plain', body: 'name\tage\nJane\t42\n"Bob"\t\n' },
  '/catalog.xml': {
    type: 'application/xml',
    body: '<?xml version="1.0"?>\n<catalog version="2">\n  <book id="b1"><title>Night &amp; Day</title><p>Read <i>this</i> now</p></book>\n  <book id="b2"/>\n</catalog>\n',
  },
  '/broken.ttl': { type: 'text/turtle', body: `<${EX}a> <${EX}p> "unterminated .\n` },
  '/shapes.ttl': {
    type: 'text/turtle',
    body: `@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix ex: <${EX}> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person ;
  sh:property [ sh:path ex:name ; sh:minCount 1 ; sh:datatype xsd:string ] ;
  sh:property [ sh:path ex:age ; sh:minCount 1 ; sh:datatype xsd:integer ] .
`,
  },
};

let files: Server;
let filesUrl: string;
const received: { url: string; headers: IncomingHttpHeaders }[] = [];

// ---- Helpers ----

let seq = 0;
const fid = (base: string) => `${base}-${++seq}`;
const flowPath = (id: string, account = 'alice') => `/flows/blueprints/${account}/${id}`;

async function newFlow(definition: Record<string, unknown>, account = 'alice', session = aliceSession): Promise<string> {
  await createFlow(p, account, session, { name: String(definition.id), accessLevel: 'Private', connections: [], ...definition });
  return flowPath(String(definition.id), account);
}

/** A flow of one task. */
const oneTask = (type: string, settings: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  newFlow({ id: fid(type), tasks: [{ id: 'task', label: type, type, settings }], ...extra });

async function runToEnd(path: string, options: { query?: Record<string, string>; token?: string } = {}): Promise<any> {
  const token = options.token ?? alice;
  const started = await startRun(p, `${path}/run`, token, options);
  expect(started.status, started.text).toBe(201);
  return waitForRun(p, started.body.id, token, 60_000);
}

async function taskOf(runId: string, taskId = 'task', token = alice): Promise<any> {
  const res = await p.request('GET', `/flows/taskInstances?runId=${runId}`, { token });
  expect(res.status, res.text).toBe(200);
  const task = res.body.find((t: any) => t.taskId === taskId);
  expect(task, `task ${taskId} of run ${runId}`).toBeDefined();
  return task;
}

/** Runs a one-task flow to its end and answers the run and the task. */
async function runTask(type: string, settings: Record<string, unknown>, options: { extra?: Record<string, unknown>; token?: string; account?: string; session?: Record<string, string> } = {}) {
  const path = options.account
    ? await newFlow({ id: fid(type), tasks: [{ id: 'task', label: type, type, settings }], ...options.extra }, options.account, options.session)
    : await oneTask(type, settings, options.extra);
  const run = await runToEnd(path, { token: options.token });
  return { run, task: await taskOf(run.id, 'task', options.token ?? alice), path };
}

const ds = (dataset: string, account = 'alice') => ({ account, dataset });

async function graphNt(dataset: string, graph: string, token = alice): Promise<string> {
  const res = await p.request('GET', `/datasets/${dataset}/download.nt?graph=${encodeURIComponent(graph)}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.text;
}

/** The graph's triples as `s p o` with literals as their plain value (N-Triples parsed). */
async function triplesOf(dataset: string, graph: string): Promise<{ s: string; p: string; o: string; lang: string; dt: string }[]> {
  return new Parser({ format: 'N-Triples' }).parse(await graphNt(dataset, graph)).map((q) => ({
    s: q.subject.value,
    p: q.predicate.value,
    o: q.object.value,
    lang: q.object.termType === 'Literal' ? q.object.language : '',
    dt: q.object.termType === 'Literal' ? q.object.datatype.value : '',
  }));
}

async function graphsOf(dataset: string): Promise<Record<string, number>> {
  const res = await p.request('GET', `/datasets/${dataset}/graphs?limit=100`, { token: alice });
  expect(res.status, res.text).toBe(200);
  return Object.fromEntries(res.body.map((g: any) => [g.graphName, g.numberOfStatements]));
}

beforeAll(async () => {
  files = createServer((req, res) => {
    received.push({ url: req.url ?? '', headers: req.headers });
    const path = (req.url ?? '').split('?')[0]!;
    if (path === '/protected.csv') {
      if (req.headers.authorization !== `Bearer ${SECRET}`) {
        res.writeHead(401).end('no');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/csv' }).end('secret,value\nkey,ok\n');
      return;
    }
    const file = FILES[path];
    if (!file) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': file.type }).end(file.body);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;

  p = await TestPlatform.start();
  await enableFlows(p);
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  aliceSession = await consoleSession(p, 'alice');
  bobSession = await consoleSession(p, 'bob');
  for (const name of ['loads', 'tables', 'shapes', 'valid']) await p.createDataset('alice', name, 'private', alice);
});

afterAll(async () => {
  await p?.stop();
  await new Promise<void>((resolve) => (files ? files.close(() => resolve()) : resolve()));
});

// ---- Load from URL ----

describe('Load from URL: RDF', () => {
  it('loads Turtle (detected by extension) into the named graph', async () => {
    const graph = `${EX}graphs/turtle`;
    const { run, task } = await runTask('loadFromUrl', { url: `${filesUrl}/data.ttl`, dataset: ds('loads'), graph });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(task.output).toEqual({ graph, statements: 4 });
    expect(task.log.join('\n')).toMatch(/as Turtle \(detected\)/);
    expect((await graphNt('alice/loads', graph)).trim().split('\n').sort()).toEqual(
      [
        `<${EX}a> <${EX}name> "Alice" .`,
        `<${EX}a> <${RDF}type> <${EX}Person> .`,
        `<${EX}b> <${EX}age> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .`,
        `<${EX}b> <${EX}name> "Bob" .`,
      ].sort(),
    );
  });

  it('loads N-Triples by content type, and by the format setting; the graph defaults to the URL', async () => {
    const byType = await runTask('loadFromUrl', { url: `${filesUrl}/export`, dataset: ds('loads') });
    expect(byType.run.status, JSON.stringify(byType.run.error)).toBe('finished');
    expect(byType.task.output).toEqual({ graph: `${filesUrl}/export`, statements: 2 });
    expect((await graphNt('alice/loads', `${filesUrl}/export`)).trim().split('\n').sort()).toEqual([`<${EX}c> <${EX}name> "Carol" .`, `<${EX}d> <${EX}name> "Dan"@en .`]);

    // application/octet-stream and no extension: the format must be given.
    const unknown = await runTask('loadFromUrl', { url: `${filesUrl}/plain`, dataset: ds('loads') });
    expect(unknown.run.status).toBe('failed');
    expect(unknown.run.error.message).toMatch(/Cannot tell the format .*set the task's format/);
    const given = await runTask('loadFromUrl', { url: `${filesUrl}/plain`, dataset: ds('loads'), format: 'n-triples', graph: `${EX}graphs/plain` });
    expect(given.run.status, JSON.stringify(given.run.error)).toBe('finished');
    expect(given.task.log.join('\n')).toMatch(/as N-Triples\./);
    expect(await graphNt('alice/loads', `${EX}graphs/plain`)).toBe(`<${EX}e> <${EX}name> "Eve" .\n`);
  });

  it('fails on a syntax error or a missing file, leaving the dataset unchanged', async () => {
    const before = await graphsOf('alice/loads');
    const broken = await runTask('loadFromUrl', { url: `${filesUrl}/broken.ttl`, dataset: ds('loads'), graph: `${EX}graphs/broken` });
    expect(broken.run.status).toBe('failed');
    expect(broken.run.error.message).toMatch(/broken\.ttl: syntax error at line 1/);
    const missing = await runTask('loadFromUrl', { url: `${filesUrl}/nothing.ttl`, dataset: ds('loads'), graph: `${EX}graphs/broken` });
    expect(missing.run.status).toBe('failed');
    expect(missing.run.error.message).toMatch(/404/);
    expect(await graphsOf('alice/loads')).toEqual(before);
  });

  it('adds to a graph, or replaces it with overwrite', async () => {
    const graph = `${EX}graphs/merge`;
    const load = (file: string, overwrite: boolean) => runTask('loadFromUrl', { url: `${filesUrl}/${file}`, dataset: ds('loads'), graph, overwrite });
    expect((await load('one.ttl', false)).task.output).toEqual({ graph, statements: 2 });
    const added = await load('two.ttl', false);
    expect(added.task.output).toEqual({ graph, statements: 2 });
    expect(added.task.log.join('\n')).toMatch(/Added to <.*merge>.*2 statements loaded, 3 in the graph/);
    expect((await graphsOf('alice/loads'))[graph]).toBe(3);
    const replaced = await load('two.ttl', true);
    expect(replaced.run.status).toBe('finished');
    expect((await graphsOf('alice/loads'))[graph]).toBe(2);
    expect((await graphNt('alice/loads', graph)).trim().split('\n').sort()).toEqual([`<${EX}x> <${EX}p> "2" .`, `<${EX}x> <${EX}p> "3" .`]);
  });

  it('creates the dataset (private) only when asked', async () => {
    const settings = { url: `${filesUrl}/one.ttl`, dataset: ds('created'), graph: `${EX}graphs/one` };
    const refused = await runTask('loadFromUrl', settings);
    expect(refused.run.status).toBe('failed');
    expect(refused.run.error.message).toMatch(/alice\/created" does not exist/);
    const created = await runTask('loadFromUrl', { ...settings, createDataset: true });
    expect(created.run.status, JSON.stringify(created.run.error)).toBe('finished');
    expect(created.task.log.join('\n')).toMatch(/Created the dataset alice\/created \(private\)/);
    const dataset = await p.request('GET', '/datasets/alice/created', { token: alice });
    expect(dataset.body).toMatchObject({ accessLevel: 'private', graphCount: 1, statements: 2 });
    // Bob may not create datasets in alice's account.
    const bobs = await runTask('loadFromUrl', { ...settings, dataset: ds('bobmade'), createDataset: true }, { account: 'bob', session: bobSession, token: bob });
    expect(bobs.run.status).toBe('failed');
    expect((await p.request('GET', '/datasets/alice/bobmade', { token: alice })).status).toBe(404);
  });

  it('sends headers with masked values, never logging them', async () => {
    const path = await newFlow({
      id: fid('protected'),
      maskedValues: [{ name: 'token' }],
      tasks: [
        {
          id: 'task',
          label: 'Protected',
          type: 'loadFromUrl',
          settings: { url: `${filesUrl}/protected.csv`, headers: { Authorization: 'Bearer ?token' }, dataset: ds('tables'), graph: `${EX}graphs/protected` },
        },
      ],
    });
    expect((await p.request('PUT', `${path}/maskedValues/token`, { headers: aliceSession, body: { value: SECRET } })).status).toBe(204);
    const run = await runToEnd(path);
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const task = await taskOf(run.id);
    expect(received.filter((r) => r.url === '/protected.csv').at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    const log = task.log.join('\n');
    expect(log).toMatch(/GET .*protected\.csv \(headers: Authorization\)/);
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('Bearer');
    expect(await graphNt('alice/tables', `${EX}graphs/protected`)).toContain('"ok"');
  });
});

describe('a task that logs a lot', () => {
  it('keeps its first lines and a note of the cut, so its record still fits one stored item (DynamoDB: 400 KB)', async () => {
    // 190 graphs with names of about 2,000 characters: one log line per graph came to ~380 KB,
    // and the output's graph list as much again, which the store refused (DynamoDB: 400 KB per
    // item; dynalite counts characters, DynamoDB UTF-8 bytes): the task then had no record.
    const graphs = Array.from({ length: 190 }, (_, i) => `${EX}graphs/${i}/${'x'.repeat(1_950)}`);
    FILES['/many-graphs.nq'] = { type: 'application/n-quads', body: graphs.map((g, i) => `<${EX}s> <${EX}p> "${i}" <${g}> .\n`).join('') };
    const { run, task } = await runTask('loadFromUrl', { url: `${filesUrl}/many-graphs.nq`, dataset: ds('loads'), graph: `${EX}graphs/many` });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(task.status).toBe('finished');
    expect(task.log.length).toBeLessThanOrEqual(200);
    expect(task.log.slice(0, 2).join('\n')).toMatch(/Reading "many-graphs.nq"/);
    expect(task.log.at(-1)).toMatch(/^\[log cut: \d+ more lines not kept; a task keeps at most 200 lines and 64 KiB of log\]$/);
    expect(Buffer.byteLength(task.log.join('\n'))).toBeLessThan(70 * 1024);
    expect(Buffer.byteLength(JSON.stringify(task))).toBeLessThan(200 * 1024);
    // The output lists as many graph names as fit a state's output, and counts the others.
    expect(task.output).toMatchObject({ graph: `${EX}graphs/many`, statements: 190 });
    expect(task.output.graphs.length + task.output.graphsNotListed).toBe(191);
    expect(task.output.graphsNotListed).toBeGreaterThan(0);
    // The statements are all there.
    expect(await graphNt('alice/loads', graphs[189]!)).toBe(`<${EX}s> <${EX}p> "189" .\n`);
  }, 120_000);
});

describe('Load from URL: tables and XML as RDF', () => {
  it('maps CSV losslessly: every cell a string, empty cells kept', async () => {
    const graph = `${EX}graphs/people`;
    const { run, task } = await runTask('loadFromUrl', { url: `${filesUrl}/people.csv`, dataset: ds('tables'), graph, format: 'auto' });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(task.log.join('\n')).toMatch(/as CSV \(detected\)/);
    const t = await triplesOf('alice/tables', graph);
    const cell = (row: number, column: string) => t.filter((x) => x.s === `${graph}/row/${row}` && x.p === `${TAB}column/${column}`).map((x) => [x.o, x.dt]);
    const STRING = 'http://www.w3.org/2001/XMLSchema#string';
    expect(cell(1, 'name')).toEqual([['Smith, Jane', STRING]]);
    expect(cell(1, 'age')).toEqual([['42', STRING]]);
    expect(cell(1, 'city')).toEqual([['Amsterdam', STRING]]);
    expect(cell(2, 'name')).toEqual([['Émile', STRING]]);
    expect(cell(2, 'age')).toEqual([['', STRING]]);
    expect(cell(2, 'city')).toEqual([['Paris\nFrance', STRING]]);
    expect(t.filter((x) => x.s === `${graph}/row/2` && x.p === `${RDF}type`).map((x) => x.o)).toEqual([`${TAB}Row`]);
    expect(t.filter((x) => x.s === `${graph}/row/2` && x.p === `${TAB}rowNumber`).map((x) => x.o)).toEqual(['2']);
    expect(t.filter((x) => x.p === `${TAB}header`).map((x) => x.o).sort()).toEqual(['age', 'city', 'name']);
    // 4 table statements, 3 columns × 4, 2 rows × (2 + 3 cells).
    expect(task.output).toEqual({ graph, statements: 4 + 12 + 10 });
  });

  it('maps TSV (by the format setting): quotes are data', async () => {
    const graph = `${EX}graphs/tsv`;
    const { run } = await runTask('loadFromUrl', { url: `${filesUrl}/people.tsv`, dataset: ds('tables'), graph, format: 'tsv' });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const t = await triplesOf('alice/tables', graph);
    const cell = (row: number, column: string) => t.filter((x) => x.s === `${graph}/row/${row}` && x.p === `${TAB}column/${column}`).map((x) => x.o);
    expect(cell(1, 'name')).toEqual(['Jane']);
    expect(cell(1, 'age')).toEqual(['42']);
    expect(cell(2, 'name')).toEqual(['"Bob"']);
    expect(cell(2, 'age')).toEqual(['']);
  });

  it('maps XML: elements, attributes and text, in order', async () => {
    const graph = `${EX}graphs/catalog`;
    const { run, task } = await runTask('loadFromUrl', { url: `${filesUrl}/catalog.xml`, dataset: ds('tables'), graph });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(task.log.join('\n')).toMatch(/as XML \(detected\)/);
    const t = await triplesOf('alice/tables', graph);
    const el = (k: number) => `${graph}/element/${k}`;
    const of = (s: string, p: string) => t.filter((x) => x.s === s && x.p === p).map((x) => x.o);
    expect([1, 2, 3, 4, 5, 6].map((k) => of(el(k), `${XMLV}name`)[0])).toEqual(['catalog', 'book', 'title', 'p', 'i', 'book']);
    expect(of(el(1), `${XMLV}attribute/version`)).toEqual(['2']);
    expect(of(el(2), `${XMLV}attribute/id`)).toEqual(['b1']);
    expect(of(el(6), `${XMLV}attribute/id`)).toEqual(['b2']);
    expect(of(el(3), `${RDF}value`)).toEqual(['Night & Day']);
    expect(of(el(5), `${RDF}value`)).toEqual(['this']);
    expect(of(`${graph}/text/1`, `${RDF}value`)).toEqual(['Read ']);
    expect(of(`${graph}/text/2`, `${RDF}value`)).toEqual([' now']);
    expect(of(el(4), `${XMLV}child`).sort()).toEqual([`${graph}/text/1`, el(5), `${graph}/text/2`].sort());
    expect([`${graph}/text/1`, el(5), `${graph}/text/2`].map((s) => of(s, `${XMLV}position`)[0])).toEqual(['1', '2', '3']);
    expect(of(el(1), `${XMLV}child`).sort()).toEqual([el(2), el(6)]);
    expect(of(`${graph}/document`, `${XMLV}child`)).toEqual([el(1)]);
  });
});

// ---- SHACL validation ----

describe('SHACL validation', () => {
  const dataGraph = `${EX}graphs/people`;
  const shapesGraph = `${EX}graphs/shapes`;
  beforeAll(async () => {
    // valid: ex:a conforms; invalid data: ex:b lacks an age, ex:c has a non-integer age.
    const valid = `<${EX}a> <${RDF}type> <${EX}Person> .\n<${EX}a> <${EX}name> "Alice" .\n<${EX}a> <${EX}age> "30"^^<http://www.w3.org/2001/XMLSchema#integer> .\n`;
    const invalid = `${valid}<${EX}b> <${RDF}type> <${EX}Person> .\n<${EX}b> <${EX}name> "Bob" .\n<${EX}c> <${RDF}type> <${EX}Person> .\n<${EX}c> <${EX}name> "Carol" .\n<${EX}c> <${EX}age> "old" .\n`;
    FILES['/valid.nt'] = { type: 'application/n-triples', body: valid };
    FILES['/invalid.nt'] = { type: 'application/n-triples', body: invalid };
    for (const [file, graph, dataset] of [['valid.nt', dataGraph, 'valid'], ['invalid.nt', `${EX}graphs/invalid`, 'valid'], ['shapes.ttl', shapesGraph, 'shapes']] as const) {
      const { run } = await runTask('loadFromUrl', { url: `${filesUrl}/${file}`, dataset: ds(dataset), graph });
      expect(run.status, JSON.stringify(run.error)).toBe('finished');
    }
  });

  async function reportOf(task: any): Promise<string> {
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]).toMatchObject({ fileName: 'shacl-report.ttl', contentType: 'text/turtle' });
    const file = await fetch(task.artifacts[0].url, { headers: { authorization: `Bearer ${alice}` } });
    expect(file.status).toBe(200);
    return file.text();
  }

  it('conforms: shapes from a URL, one graph validated', async () => {
    const { run, task } = await runTask('shaclValidation', { dataset: ds('valid'), graph: dataGraph, shapes: { url: `${filesUrl}/shapes.ttl` }, failOnViolation: true });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(task.output).toEqual({ conforms: true, violations: 0 });
    const report = await reportOf(task);
    expect(report).toMatch(/sh:ValidationReport/);
    expect(report).toMatch(/sh:conforms true/);
  });

  it('does not conform: the report lists the violations; the run goes on without failOnViolation', async () => {
    const { run, task } = await runTask('shaclValidation', { dataset: ds('valid'), graph: `${EX}graphs/invalid`, shapes: { url: `${filesUrl}/shapes.ttl` } });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    expect(task.output).toEqual({ conforms: false, violations: 2 });
    const report = await reportOf(task);
    expect(report).toMatch(/sh:conforms false/);
    const results = new Parser().parse(report).filter((q) => q.predicate.value === 'http://www.w3.org/ns/shacl#focusNode').map((q) => q.object.value);
    expect(results.sort()).toEqual([`${EX}b`, `${EX}c`]);
  });

  it('fails the run with the count when failOnViolation; shapes from a dataset graph, the whole dataset validated', async () => {
    const { run, task } = await runTask('shaclValidation', { dataset: ds('valid'), shapes: { dataset: ds('shapes'), graph: shapesGraph }, failOnViolation: true });
    expect(run.status).toBe('failed');
    expect(run.error.message).toMatch(/does not conform to the shapes: 2 violations/);
    expect(task.status).toBe('failed');
    expect(await reportOf(task)).toMatch(/sh:conforms false/);
    // The same shapes (the whole shapes dataset) on the valid graph only.
    const ok = await runTask('shaclValidation', { dataset: ds('valid'), graph: dataGraph, shapes: { dataset: ds('shapes') }, failOnViolation: true });
    expect(ok.run.status, JSON.stringify(ok.run.error)).toBe('finished');
    expect(ok.task.output).toEqual({ conforms: true, violations: 0 });
  });

  it('reads only what the starter may read', async () => {
    const { run } = await runTask('shaclValidation', { dataset: ds('valid'), shapes: { url: `${filesUrl}/shapes.ttl` } }, { account: 'bob', session: bobSession, token: bob });
    expect(run.status).toBe('failed');
    expect(run.error.message).toMatch(/alice\/valid" does not exist/);
    const missingGraph = await runTask('shaclValidation', { dataset: ds('valid'), graph: `${EX}graphs/none`, shapes: { url: `${filesUrl}/shapes.ttl` } });
    expect(missingGraph.run.error.message).toMatch(/Graph <.*none> does not exist/);
  });
});

// ---- Send email ----

describe('Send email', () => {
  async function outboxMessage(messageId: string): Promise<any> {
    const message = (await readOutbox(p.dataDir)).find((m) => m.messageId === messageId);
    expect(message, `outbox file of ${messageId}`).toBeDefined();
    expect(message!.file).toMatch(/\.eml$/);
    return message;
  }

  it('sends to the recipients; a masked value shows in the email but not in the log', async () => {
    const path = await newFlow({
      id: fid('email'),
      variables: [{ name: 'team' }],
      maskedValues: [{ name: 'code' }],
      tasks: [
        {
          id: 'task',
          label: 'Mail',
          type: 'sendEmail',
          settings: {
            to: ['owner@museum.example', '?team'],
            cc: ['cc@museum.example'],
            bcc: ['audit@museum.example'],
            subject: 'Report for ?team',
            body: 'The access code is ?code.\nStarted by ?system_triggererAccountName.',
          },
        },
      ],
    });
    expect((await p.request('PUT', `${path}/maskedValues/code`, { headers: aliceSession, body: { value: SECRET } })).status).toBe(204);
    const run = await runToEnd(path, { query: { team: 'a@team.example, b@team.example' } });
    expect(run.status, JSON.stringify(run.error)).toBe('finished');
    const task = await taskOf(run.id);
    expect(task.output).toEqual({ messageId: expect.any(String), recipients: 5 });
    const mail = await outboxMessage(task.output.messageId);
    expect(mail).toMatchObject({
      to: ['owner@museum.example', 'a@team.example', 'b@team.example'],
      cc: ['cc@museum.example'],
      bcc: ['audit@museum.example'],
      subject: 'Report for a@team.example, b@team.example',
      text: `The access code is ${SECRET}.\nStarted by alice.`,
    });
    const log = task.log.join('\n');
    expect(log).toMatch(/Sent the email to 5 recipients/);
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('access code');
    const texts = [(await p.request('GET', `/flows/runs/${run.id}`, { token: alice })).text, (await p.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: alice })).text];
    for (const text of texts) expect(text).not.toContain(SECRET);
  });

  it('checks recipients again after substitution', async () => {
    const path = await newFlow({
      id: fid('email-limits'),
      variables: [{ name: 'who' }],
      tasks: [{ id: 'task', label: 'Mail', type: 'sendEmail', settings: { to: ['?who'], subject: 'x', body: 'y' } }],
    });
    const many = Array.from({ length: 11 }, (_, i) => `u${i}@x.example`).join(';');
    const tooMany = await runToEnd(path, { query: { who: many } });
    expect(tooMany.status).toBe('failed');
    expect(tooMany.error.message).toMatch(/11 recipients after substitution.*at most 10/);
    const notAnAddress = await runToEnd(path, { query: { who: 'nobody' } });
    expect(notAnAddress.error.message).toMatch(/"nobody" is not an email address/);
    const none = await runToEnd(path, { query: { who: '' } });
    expect(none.error.message).toMatch(/no recipients/);
  });
});

// ---- Set access level ----

describe('Set access level', () => {
  beforeAll(async () => {
    await p.createDataset('alice', 'levels', 'private', alice);
    await p.createDataset('alice', 'open', 'public', alice);
  });
  const levelOf = async (dataset: string) => (await p.request('GET', `/datasets/${dataset}`, { token: alice })).body.accessLevel;

  it('sets the level, given as text or through a variable (any case)', async () => {
    const pub = await runTask('setAccessLevel', { dataset: ds('levels'), accessLevel: 'Public' });
    expect(pub.run.status, JSON.stringify(pub.run.error)).toBe('finished');
    expect(pub.task.output).toEqual({ accessLevel: 'public', previous: 'private' });
    expect(await levelOf('alice/levels')).toBe('public');

    const path = await newFlow({ id: fid('level-var'), variables: [{ name: 'level' }], tasks: [{ id: 'task', label: 'Level', type: 'setAccessLevel', settings: { dataset: ds('levels'), accessLevel: '?level' } }] });
    expect((await runToEnd(path, { query: { level: 'INTERNAL' } })).status).toBe('finished');
    expect(await levelOf('alice/levels')).toBe('internal');
    const bad = await runToEnd(path, { query: { level: 'secret' } });
    expect(bad.status).toBe('failed');
    expect(bad.error.message).toMatch(/"secret" is not an access level.*from \?level/);
    expect(await levelOf('alice/levels')).toBe('internal');
  });

  it("is refused on a dataset the starter may not change (another account's)", async () => {
    const { run, task } = await runTask('setAccessLevel', { dataset: ds('open'), accessLevel: 'Private' }, { account: 'bob', session: bobSession, token: bob });
    expect(run.status).toBe('failed');
    expect(task.status).toBe('failed');
    expect(run.error.message).toMatch(/change datasets/i);
    expect(await levelOf('alice/open')).toBe('public');
    // A private dataset of another account: not even visible.
    const hidden = await runTask('setAccessLevel', { dataset: ds('loads'), accessLevel: 'Public' }, { account: 'bob', session: bobSession, token: bob });
    expect(hidden.run.error.message).toMatch(/alice\/loads" does not exist/);
    expect(await levelOf('alice/loads')).toBe('private');
  });
});

// ---- Service action ----

describe('Service action', () => {
  const service = async (name: string) => (await p.request('GET', `/datasets/alice/loads/services/${name}`, { token: alice })).body;

  it('starts (creating the service), syncs and stops a service, waiting until it runs', async () => {
    const start = await runTask('serviceAction', { dataset: ds('loads'), service: 'flowsparql', action: 'start', serviceType: 'Sparql' });
    expect(start.run.status, JSON.stringify(start.run.error)).toBe('finished');
    expect(start.task.output).toEqual({ service: 'flowsparql', status: 'running' });
    expect(start.task.log.join('\n')).toMatch(/Created the service "flowsparql"/);
    expect(await service('flowsparql')).toMatchObject({ status: 'running', outOfSync: false, type: 'virtuoso' });

    // New data: the service is out of sync until synced.
    const load = await runTask('loadFromUrl', { url: `${filesUrl}/one.ttl`, dataset: ds('loads'), graph: `${EX}graphs/for-sync` });
    expect(load.run.status).toBe('finished');
    expect((await service('flowsparql')).outOfSync).toBe(true);
    const sync = await runTask('serviceAction', { dataset: ds('loads'), service: 'flowsparql', action: 'sync' });
    expect(sync.run.status, JSON.stringify(sync.run.error)).toBe('finished');
    expect(await service('flowsparql')).toMatchObject({ status: 'running', outOfSync: false });
    const statements = (await p.request('GET', '/datasets/alice/loads', { token: alice })).body.statements;
    expect((await service('flowsparql')).numberOfLoadedStatements).toBe(statements);
    // In sync already: nothing to do.
    const again = await runTask('serviceAction', { dataset: ds('loads'), service: 'flowsparql', action: 'sync' });
    expect(again.run.status).toBe('finished');
    expect(again.task.log.join('\n')).toMatch(/already serves the dataset's current data/);

    const stop = await runTask('serviceAction', { dataset: ds('loads'), service: 'flowsparql', action: 'stop' });
    expect(stop.run.status).toBe('finished');
    expect((await service('flowsparql')).status).toBe('stopped');
    const restart = await runTask('serviceAction', { dataset: ds('loads'), service: 'flowsparql', action: 'start' });
    expect(restart.run.status).toBe('finished');
    expect((await service('flowsparql')).status).toBe('running');
  });

  it('creates a RichSparql service as jena and a textSearch one as elasticSearch; refuses stopping a missing service', async () => {
    const rich = await runTask('serviceAction', { dataset: ds('loads'), service: 'rich', action: 'start', serviceType: 'RichSparql' });
    expect(rich.run.status, JSON.stringify(rich.run.error)).toBe('finished');
    expect((await service('rich')).type).toBe('jena');
    const text = await runTask('serviceAction', { dataset: ds('loads'), service: 'search', action: 'start', serviceType: 'textSearch' });
    expect(text.run.status, JSON.stringify(text.run.error)).toBe('finished');
    expect((await service('search')).type).toBe('elasticSearch');
    expect((await service('search')).status).toBe('running');
    const missing = await runTask('serviceAction', { dataset: ds('loads'), service: 'nosuch', action: 'stop' });
    expect(missing.run.error.message).toMatch(/Cannot stop the service "nosuch".*does not exist/);
    const bobs = await runTask('serviceAction', { dataset: ds('open'), service: 'bobs', action: 'start' }, { account: 'bob', session: bobSession, token: bob });
    expect(bobs.run.status).toBe('failed');
    expect((await p.request('GET', '/datasets/alice/open/services/bobs', { token: alice })).status).toBe(404);
  });
});
