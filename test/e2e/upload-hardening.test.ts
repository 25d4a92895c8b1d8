/**
 * Hostile uploads end their own job, never the process (issue 11, finding 3 and the import
 * findings): billion laughs RDF/XML and deeply nested JSON-LD by every way a file comes in (simple
 * upload, URL import, the Load from URL flow task, SHACL shapes from a URL); deeply nested Turtle;
 * truncated, non-gzip and bomb `.gz` files; leftovers of killed jobs; a job started while one of
 * its tus uploads is unfinished.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { graphsOf, importFiles, waitForJob } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';

const EX = 'https://example.org/';
const RDF_NS = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';

/** 1 KB that expands to 10^9 "lol"s in a parser that follows nested entities. */
function billionLaughs(): string {
  let entities = '<!ENTITY lol0 "lol">';
  for (let i = 1; i <= 9; i++) entities += `<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`;
  return (
    `<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [${entities}]>\n<rdf:RDF xmlns:rdf="${RDF_NS}" xmlns:ex="${EX}">` +
    `<rdf:Description rdf:about="${EX}s"><ex:p>&lol9;</ex:p></rdf:Description></rdf:RDF>\n`
  );
}

/** Bypass attempts on the entity check (review): a predefined entity first, a lower-case DOCTYPE, a DOCTYPE after the root. */
function hiddenLaughs(): string {
  let entities = '<!ENTITY lol0 "lol">';
  for (let i = 1; i <= 9; i++) entities += `<!ENTITY lol${i} "&amp;${`&lol${i - 1};`.repeat(10)}">`;
  return billionLaughs().replace(/<!DOCTYPE rdf:RDF \[[^\]]*\]>/, `<!DOCTYPE rdf:RDF [${entities}]>`);
}
const lowerCaseDoctypeLaughs = () => billionLaughs().replace('<!DOCTYPE', '<!doctype');
const lateDoctype = () =>
  `<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="${RDF_NS}" xmlns:ex="${EX}">\n<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]>` +
  `<rdf:Description rdf:about="${EX}s"><ex:p>&a;</ex:p></rdf:Description></rdf:RDF>\n`;

/** 1,000 nested node objects (about 54 KB): oxigraph's WASM stack overflows on it. */
function deepJsonLd(depth = 1000): string {
  let doc = `{"@id":"${EX}leaf","${EX}name":"leaf"}`;
  for (let i = 0; i < depth; i++) doc = `{"@id":"${EX}n${i}","${EX}child":${doc}}`;
  return doc;
}

const DEEP_TURTLE_LEVELS = 20_000;
/** Blank node property lists and collections nested 20,000 deep (N3's parser keeps its own stack). */
const deepTurtle = () =>
  `@prefix ex: <${EX}> .\nex:s ex:p ${'[ ex:p '.repeat(DEEP_TURTLE_LEVELS)}"x"${' ]'.repeat(DEEP_TURTLE_LEVELS)} .\n` +
  `ex:s ex:list ${'( '.repeat(DEEP_TURTLE_LEVELS)}"y"${' )'.repeat(DEEP_TURTLE_LEVELS)} .\n`;

const VALID = {
  rdfxml: `<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [<!ENTITY ex "${EX}">]>\n<rdf:RDF xmlns:rdf="${RDF_NS}" xmlns:ex="${EX}"><rdf:Description rdf:about="&ex;ok"><ex:p>fine</ex:p></rdf:Description></rdf:RDF>\n`,
  jsonld: `{"@id":"${EX}ok","${EX}p":"fine"}`,
  turtle: `<${EX}ok> <${EX}p> "fine" .\n`,
};

const MESSAGES = {
  laughs: /laughs\.rdf: refused RDF\/XML: the entity "lol1" refers to the entity "lol0"; .*billion laughs/,
  deepJsonLd: /deep\.jsonld: refused JSON-LD at line 1: objects and arrays are nested more than 256 levels deep; .*flatten/,
  truncated: /truncated\.nt\.gz: the gzip file is truncated/,
  notGzip: /notgzip\.nt\.gz is not gzip data/,
  bomb: /bomb\.nt\.gz: refused as a probable gzip bomb: .* more than 1000:1/,
};

const NT = Array.from({ length: 2000 }, (_, i) => `<${EX}s${i}> <${EX}p> "value ${i}" .\n`).join('');
const TRUNCATED_GZ = (() => {
  const full = gzipSync(NT);
  return full.subarray(0, Math.floor(full.length / 2));
})();
const NOT_GZIP = Buffer.from(NT.slice(0, 500));
/** 200 MB of newlines (blank lines: a parser reads on), compressed on the fly to about 200 KB. */
async function gzipBomb(): Promise<Buffer> {
  const gzip = createGzip();
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => gzip.on('end', resolve));
  const block = Buffer.alloc(1024 * 1024, 0x0a);
  for (let i = 0; i < 200; i++) if (!gzip.write(block)) await new Promise((r) => gzip.once('drain', r));
  gzip.end();
  await done;
  return Buffer.concat(out);
}

let p: TestPlatform;
let alice: string;
let session: Record<string, string>;
let files: Server;
let filesUrl: string;
const FILES: Record<string, { type: string; body: string | Buffer }> = {};

beforeAll(async () => {
  Object.assign(FILES, {
    '/laughs.rdf': { type: 'application/rdf+xml', body: billionLaughs() },
    '/deep.jsonld': { type: 'application/ld+json', body: deepJsonLd() },
    '/valid.rdf': { type: 'application/rdf+xml', body: VALID.rdfxml },
    '/valid.jsonld': { type: 'application/ld+json', body: VALID.jsonld },
    '/truncated.nt.gz': { type: 'application/gzip', body: TRUNCATED_GZ },
    '/notgzip.nt.gz': { type: 'application/gzip', body: NOT_GZIP },
    '/bomb.nt.gz': { type: 'application/gzip', body: await gzipBomb() },
    '/shapes.ttl': {
      type: 'text/turtle',
      body: `@prefix sh: <http://www.w3.org/ns/shacl#> .\n<${EX}Shape> a sh:NodeShape ; sh:targetNode <${EX}ok> ; sh:property [ sh:path <${EX}p> ; sh:minCount 1 ] .\n`,
    },
  });
  files = createServer((req, res) => {
    const file = FILES[(req.url ?? '').split('?')[0]!];
    if (!file) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': file.type }).end(file.body);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  p = await TestPlatform.start();
  await enableFlows(p);
  alice = await p.createUser('alice');
  session = await consoleSession(p, 'alice');
}, 60_000);

afterAll(async () => {
  await p?.stop();
  await new Promise<void>((resolve) => (files ? files.close(() => resolve()) : resolve()));
});

async function expectPlatformUp(): Promise<void> {
  expect((await p.request('GET', '/info')).status).toBe(200);
}

/** A dataset with one graph already imported, and its graphs as they are. */
async function datasetWithData(name: string): Promise<any[]> {
  await p.createDataset('alice', name, 'private', alice);
  const seeded = await importFiles(p, alice, `alice/${name}`, [{ name: 'seed.ttl', content: VALID.turtle }], { defaultGraphName: `${EX}graphs/seed` });
  expect(seeded.status, seeded.error?.message).toBe('finished');
  return graphsOf(p, alice, `alice/${name}`);
}

async function downloadJob(dataset: string, url: string): Promise<any> {
  const res = await p.request('POST', `/datasets/${dataset}/jobs`, { token: alice, body: { type: 'download', downloadUrls: [url] } });
  expect(res.status, res.text).toBe(201);
  return waitForJob(p, alice, dataset, res.body.jobId);
}

let flowSeq = 0;
async function runTask(type: string, settings: Record<string, unknown>): Promise<any> {
  const id = `${type.toLowerCase()}-${++flowSeq}`;
  await createFlow(p, 'alice', session, { id, name: id, accessLevel: 'Private', connections: [], tasks: [{ id: 'task', label: type, type, settings }] });
  const started = await startRun(p, `/flows/blueprints/alice/${id}/run`, alice);
  expect(started.status, started.text).toBe(201);
  return waitForRun(p, started.body.id, alice, 60_000);
}

/** A simple upload of `content` to a dataset with data fails with `message`; the process is up and the data unchanged. */
async function expectRefusedSimpleUpload(dataset: string, name: string, content: string, message: RegExp): Promise<void> {
  const before = await datasetWithData(dataset);
  const job = await importFiles(p, alice, `alice/${dataset}`, [{ name, content }]);
  expect(job.status).toBe('error');
  expect(job.error.message).toMatch(message);
  await expectPlatformUp();
  expect(await graphsOf(p, alice, `alice/${dataset}`)).toEqual(before);
}

describe('a parser-killing file fails its own job; the process stays up and the next import works', () => {
  const cases = [
    { name: 'laughs.rdf', body: () => billionLaughs(), message: MESSAGES.laughs, valid: { name: 'valid.rdf', content: VALID.rdfxml } },
    { name: 'deep.jsonld', body: () => deepJsonLd(), message: MESSAGES.deepJsonLd, valid: { name: 'valid.jsonld', content: VALID.jsonld } },
  ];
  const bypasses = [
    { name: 'hidden-laughs.rdf', body: hiddenLaughs, message: /hidden-laughs\.rdf: refused RDF\/XML: the entity "lol1" refers to the entity "lol0"/ },
    { name: 'lower-laughs.rdf', body: lowerCaseDoctypeLaughs, message: /lower-laughs\.rdf: refused RDF\/XML: the entity "lol1" refers to the entity "lol0"/ },
    { name: 'late-doctype.rdf', body: lateDoctype, message: /late-doctype\.rdf: refused RDF\/XML: a DOCTYPE after the root element/ },
  ];
  for (const c of bypasses) {
    it(`${c.name} (a way around the entity check) is refused by simple upload`, async () => {
      await expectRefusedSimpleUpload(`bypass-${c.name.replace('.', '-')}`, c.name, c.body(), c.message);
    });
  }

  for (const c of cases) {
    it(`${c.name} by simple upload`, async () => {
      const dataset = `simple-${c.name.replace('.', '-')}`;
      await expectRefusedSimpleUpload(dataset, c.name, c.body(), c.message);
      const next = await importFiles(p, alice, `alice/${dataset}`, [c.valid], { defaultGraphName: `${EX}graphs/next` });
      expect(next.status, next.error?.message).toBe('finished');
      expect(next.numberOfStatements).toBe(1);
    });

    it(`${c.name} by URL import`, async () => {
      const dataset = `url-${c.name.replace('.', '-')}`;
      const before = await datasetWithData(dataset);
      const job = await downloadJob(`alice/${dataset}`, `${filesUrl}/${c.name}`);
      expect(job.status).toBe('error');
      expect(job.error.message).toMatch(c.message);
      await expectPlatformUp();
      expect(await graphsOf(p, alice, `alice/${dataset}`)).toEqual(before);
      const next = await downloadJob(`alice/${dataset}`, `${filesUrl}/${c.valid.name}`);
      expect(next.status, next.error?.message).toBe('finished');
    });

    it(`${c.name} by the Load from URL flow task`, async () => {
      const dataset = `flow-${c.name.replace('.', '-')}`;
      const before = await datasetWithData(dataset);
      const run = await runTask('loadFromUrl', { url: `${filesUrl}/${c.name}`, dataset: { account: 'alice', dataset }, graph: `${EX}graphs/loaded` });
      expect(run.status).toBe('failed');
      expect(run.error.message).toMatch(c.message);
      await expectPlatformUp();
      expect(await graphsOf(p, alice, `alice/${dataset}`)).toEqual(before);
      const next = await runTask('loadFromUrl', { url: `${filesUrl}/${c.valid.name}`, dataset: { account: 'alice', dataset }, graph: `${EX}graphs/loaded` });
      expect(next.status, JSON.stringify(next.error)).toBe('finished');
    });

    it(`${c.name} as SHACL shapes from a URL`, async () => {
      const dataset = `shacl-${c.name.replace('.', '-')}`;
      await datasetWithData(dataset);
      const run = await runTask('shaclValidation', { dataset: { account: 'alice', dataset }, shapes: { url: `${filesUrl}/${c.name}` } });
      expect(run.status).toBe('failed');
      expect(run.error.message).toMatch(c.message);
      await expectPlatformUp();
      const next = await runTask('shaclValidation', { dataset: { account: 'alice', dataset }, shapes: { url: `${filesUrl}/shapes.ttl` }, failOnViolation: true });
      expect(next.status, JSON.stringify(next.error)).toBe('finished');
    });
  }

  it('Turtle nested 20,000 levels deep (blank nodes and collections) imports without blowing the stack', async () => {
    await p.createDataset('alice', 'deep-turtle', 'private', alice);
    const job = await importFiles(p, alice, 'alice/deep-turtle', [{ name: 'deep.ttl', content: deepTurtle() }]);
    expect(job.status, job.error?.message).toBe('finished');
    // One statement per level of brackets, two per collection level (rdf:first, rdf:rest), plus the two roots.
    expect(job.numberOfStatements).toBe(DEEP_TURTLE_LEVELS + 1 + 2 * DEEP_TURTLE_LEVELS + 1);
    await expectPlatformUp();
  });
});

describe('gzip files', () => {
  const gzCases = [
    { name: 'truncated.nt.gz', message: MESSAGES.truncated },
    { name: 'notgzip.nt.gz', message: MESSAGES.notGzip },
    { name: 'bomb.nt.gz', message: MESSAGES.bomb },
  ];

  for (const c of gzCases) {
    it(`${c.name} fails its simple upload with its message and changes nothing`, async () => {
      const dataset = `gz-${c.name.split('.')[0]}`;
      const before = await datasetWithData(dataset);
      const job = await importFiles(p, alice, `alice/${dataset}`, [{ name: c.name, content: FILES[`/${c.name}`]!.body }]);
      expect(job.status).toBe('error');
      expect(job.error.message).toMatch(c.message);
      expect(await graphsOf(p, alice, `alice/${dataset}`)).toEqual(before);
      await expectPlatformUp();
    });

    it(`${c.name} fails a URL import and a Load from URL task with its message`, async () => {
      const dataset = `gz-url-${c.name.split('.')[0]}`;
      const before = await datasetWithData(dataset);
      const job = await downloadJob(`alice/${dataset}`, `${filesUrl}/${c.name}`);
      expect(job.status).toBe('error');
      expect(job.error.message).toMatch(c.message);
      const run = await runTask('loadFromUrl', { url: `${filesUrl}/${c.name}`, dataset: { account: 'alice', dataset }, graph: `${EX}graphs/loaded` });
      expect(run.status).toBe('failed');
      expect(run.error.message).toMatch(c.message);
      expect(await graphsOf(p, alice, `alice/${dataset}`)).toEqual(before);
    });
  }

  it('a whole gzip file still imports', async () => {
    await p.createDataset('alice', 'gz-whole', 'private', alice);
    const job = await importFiles(p, alice, 'alice/gz-whole', [{ name: 'whole.nt.gz', content: gzipSync(NT) }]);
    expect(job.status, job.error?.message).toBe('finished');
    expect(job.numberOfStatements).toBe(2000);
  });
});

describe('restart', () => {
  it('removes the staged downloads, unfinished blob writes and graph blobs that killed jobs left', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ldp-leftovers-'));
    let q = await TestPlatform.start({ dataDir });
    try {
      const token = await q.createUser('carol');
      const dataset = await q.createDataset('carol', 'kept', 'private', token);
      const seeded = await importFiles(q, token, 'carol/kept', [{ name: 'seed.nt', content: NT }]);
      expect(seeded.status, seeded.error?.message).toBe('finished');
      await q.stop({ keepData: true });

      // What a job killed mid-way leaves: a download half written, a download written but never
      // recorded, a graph blob never swapped in, a multipart file never taken by a job.
      const blobs = join(dataDir, 'blobs');
      const leftovers = [
        join(blobs, 'uploads', '.tmp', randomUUID()),
        join(blobs, 'data', '.tmp', randomUUID()),
        join(blobs, 'uploads', 'jobs', 'killedjob', 'url0'),
        join(blobs, 'uploads', 'incoming', 'orphan'),
        join(blobs, 'data', 'datasets', dataset.id, 'graphs', 'killedimport.nt.gz'),
      ];
      for (const file of leftovers) {
        await mkdir(join(file, '..'), { recursive: true });
        await writeFile(file, Buffer.alloc(180 * 1024, 0x41));
      }

      q = await TestPlatform.start({ dataDir });
      for (const file of leftovers) expect(existsSync(file), file).toBe(false);
      // The dataset's own graph is untouched.
      const graphs = await graphsOf(q, token, 'carol/kept');
      expect(graphs.map((g) => g.numberOfStatements)).toEqual([2000]);
      const nt = await q.request('GET', '/datasets/carol/kept/download.nt', { token });
      expect(nt.status).toBe(200);
      expect(nt.text.trim().split('\n')).toHaveLength(2000);
    } finally {
      await q.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('tus', () => {
  it('starting a job while one of its tus uploads is unfinished answers 409 naming the file and the missing bytes; nothing starts', async () => {
    await p.createDataset('alice', 'tus-unfinished', 'private', alice);
    const created = await p.request('POST', '/datasets/alice/tus-unfinished/jobs', { token: alice, body: {} });
    expect(created.status).toBe(201);
    const jobId = created.body.jobId as string;
    const content = Buffer.from(NT);
    const tus = { 'tus-resumable': '1.0.0', authorization: `Bearer ${alice}` };
    const create = await fetch(`${p.url}/datasets/alice/tus-unfinished/jobs/${jobId}/add`, {
      method: 'POST',
      headers: { ...tus, 'upload-length': String(content.length), 'upload-metadata': `filename ${Buffer.from('part.nt').toString('base64')}` },
    });
    expect(create.status).toBe(201);
    const location = create.headers.get('location')!;
    const half = 1000;
    const first = await fetch(location, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: content.subarray(0, half),
    });
    expect(first.status).toBe(204);

    const refused = await p.request('POST', `/datasets/alice/tus-unfinished/jobs/${jobId}/start`, { token: alice });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain(`part.nt (${content.length - half} of ${content.length} bytes missing)`);
    // The same job through the path typed in another case: still refused.
    const otherCase = await p.request('POST', `/datasets/ALICE/Tus-Unfinished/jobs/${jobId}/start`, { token: alice });
    expect(otherCase.status, otherCase.text).toBe(409);
    expect((await p.request('GET', `/datasets/alice/tus-unfinished/jobs/${jobId}`, { token: alice })).body.status).toBe('created');

    const rest = await fetch(location, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': String(half), 'content-type': 'application/offset+octet-stream' },
      body: content.subarray(half),
    });
    expect(rest.status).toBe(204);
    const started = await p.request('POST', `/datasets/alice/tus-unfinished/jobs/${jobId}/start`, { token: alice });
    expect(started.status, started.text).toBe(202);
    const done = await waitForJob(p, alice, 'alice/tus-unfinished', jobId);
    expect(done.status, done.error?.message).toBe('finished');
    expect(done.numberOfStatements).toBe(2000);
  });
});
