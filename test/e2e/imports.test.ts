/** Import jobs through HTTP: multipart, tus, URL imports, modes, errors and concurrency. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';
import { graphsOf, importFiles, lines, waitForJob } from '../support/imports.js';

let p: TestPlatform;
let alice: string;
let bob: string;

const TTL = `@prefix ex: <https://example.org/> .
ex:alice a ex:Person ; ex:name "Alice" ; ex:knows ex:bob .
ex:bob a ex:Person ; ex:name "Bob"@en .
`;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
});
afterAll(async () => {
  await p?.stop();
});

describe('the simple (multipart) route', () => {
  it('imports a Turtle file into the default graph and updates the dataset counts', async () => {
    await p.createDataset('alice', 'people', 'public', alice);
    const job = await importFiles(p, alice, 'alice/people', [{ name: 'people.ttl', content: TTL }], {
      defaultGraphName: 'https://example.org/graphs/people',
    });
    expect(job.status).toBe('finished');
    expect(job.files).toEqual([expect.objectContaining({ fileName: 'people.ttl', fileSize: Buffer.byteLength(TTL) })]);
    const graphs = await graphsOf(p, undefined, 'alice/people');
    expect(graphs).toEqual([
      expect.objectContaining({ graphName: 'https://example.org/graphs/people', numberOfStatements: 5, importedAt: expect.any(String) }),
    ]);
    const ds = await p.request('GET', '/datasets/alice/people');
    expect(ds.body).toMatchObject({ statements: 5, graphCount: 1 });
    expect(ds.body.lastGraphsUpdateTime).toEqual(expect.any(String));
  });

  it('names a generated default graph when none is given, and keeps the graphs of N-Quads and TriG', async () => {
    await p.createDataset('alice', 'mixed', 'private', alice);
    const nq = '<https://e/s> <https://e/p> "1" <https://e/g1> .\n<https://e/s> <https://e/p> "2" .\n';
    const trig = '@prefix e: <https://e/> . e:g2 { e:s e:p "3" } e:s e:p "4" .';
    const job = await importFiles(p, alice, 'alice/mixed', [
      { name: 'a.nq', content: nq },
      { name: 'b.trig', content: trig },
    ]);
    expect(job.status).toBe('finished');
    const names = (await graphsOf(p, alice, 'alice/mixed')).map((g) => g.graphName).sort();
    expect(names).toEqual([`${p.url}/alice/mixed/graphs/default`, 'https://e/g1', 'https://e/g2']);
  });

  it('reads gzip files by extension or by their bytes, and every supported syntax', async () => {
    await p.createDataset('alice', 'formats', 'private', alice);
    const files = [
      { name: 'a.nt.gz', content: gzipSync('<https://e/a> <https://e/p> "nt" .\n') },
      { name: 'b.ttl', content: gzipSync('<https://e/b> <https://e/p> "ttl-gzip-bytes" .') },
      { name: 'c.jsonld', content: JSON.stringify({ '@id': 'https://e/c', 'https://e/p': 'jsonld' }) },
      {
        name: 'd.rdf',
        content:
          '<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="https://e/"><rdf:Description rdf:about="https://e/d"><e:p>rdfxml</e:p></rdf:Description></rdf:RDF>',
      },
    ];
    const job = await importFiles(p, alice, 'alice/formats', files, { defaultGraphName: 'https://e/g' });
    expect(job.status, job.error?.message).toBe('finished');
    const nt = await p.request('GET', '/datasets/alice/formats/download.nt', { token: alice });
    expect(lines(nt.text)).toEqual(lines(
      ['<https://e/a> <https://e/p> "nt" .', '<https://e/b> <https://e/p> "ttl-gzip-bytes" .', '<https://e/c> <https://e/p> "jsonld" .', '<https://e/d> <https://e/p> "rdfxml" .'].join('\n'),
    ));
  });

  it('answers 413 for a body of 5 MB or more, pointing to the resumable route, and writes nothing', async () => {
    await p.createDataset('alice', 'big', 'private', alice);
    const big = '<https://e/s> <https://e/p> "x" .\n'.repeat(Math.ceil((5 * 1024 * 1024) / 30));
    const res = await importFiles(p, alice, 'alice/big', [{ name: 'big.nt', content: big }]);
    expect(res.status).toBe(413);
    expect(res.message).toMatch(/jobs\/\{jobId\}\/add/);
    expect(await graphsOf(p, alice, 'alice/big')).toEqual([]);
    expect((await p.request('GET', '/datasets/alice/big/jobs', { token: alice })).body).toEqual([]);
  });

  it('refuses an unknown file type with a message listing the extensions', async () => {
    await p.createDataset('alice', 'unknown', 'private', alice);
    const res = await importFiles(p, alice, 'alice/unknown', [{ name: 'data.csv', content: 'a,b' }]);
    expect(res.status).toBe(400);
    expect(res.message).toMatch(/data\.csv: cannot tell the RDF format.*\.ttl/);
  });
});

describe('syntax errors', () => {
  it('fail the job with the file name, line and column, and leave the dataset exactly as it was', async () => {
    await p.createDataset('alice', 'careful', 'private', alice);
    await importFiles(p, alice, 'alice/careful', [{ name: 'good.ttl', content: TTL }], { defaultGraphName: 'https://e/kept' });
    const before = await graphsOf(p, alice, 'alice/careful');
    const broken = '@prefix ex: <https://example.org/> .\nex:a ex:b ex:c .\nex:a ex:b "unterminated .\n';
    const job = await importFiles(p, alice, 'alice/careful', [
      { name: 'fine.nt', content: '<https://e/x> <https://e/y> "z" .\n' },
      { name: 'broken.ttl', content: broken },
    ], { defaultGraphName: 'https://e/kept', overwriteAll: 'true' });
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/broken\.ttl/);
    expect(job.error.message).toMatch(/line 3/);
    expect(job.error.message).toMatch(/column \d+/);
    expect(await graphsOf(p, alice, 'alice/careful')).toEqual(before);
    const ds = await p.request('GET', '/datasets/alice/careful', { token: alice });
    expect(ds.body.statements).toBe(5);
  });
});

describe('graph name clashes', () => {
  const file = (o: string) => [{ name: 'g.nt', content: `<https://e/s> <https://e/p> "${o}" .\n<https://e/s> <https://e/p> "shared" .\n` }];
  const fields = { defaultGraphName: 'https://e/graph' };

  it('rename by default, overwrite with overwriteAll, merge with mergeGraphs', async () => {
    await p.createDataset('alice', 'modes', 'private', alice);
    await importFiles(p, alice, 'alice/modes', file('a'), fields);
    await importFiles(p, alice, 'alice/modes', file('b'), fields);
    let graphs = await graphsOf(p, alice, 'alice/modes');
    expect(graphs.map((g) => g.graphName)).toEqual(['https://e/graph', 'https://e/graph-1']);

    await importFiles(p, alice, 'alice/modes', file('c'), { ...fields, overwriteAll: 'true' });
    graphs = await graphsOf(p, alice, 'alice/modes');
    expect(graphs).toHaveLength(2);
    const overwritten = await p.request('GET', `/datasets/alice/modes/download.nt?graph=${encodeURIComponent('https://e/graph')}`, { token: alice });
    expect(overwritten.text).toContain('"c"');
    expect(overwritten.text).not.toContain('"a"');

    await importFiles(p, alice, 'alice/modes', file('d'), { ...fields, mergeGraphs: 'true' });
    graphs = await graphsOf(p, alice, 'alice/modes');
    expect(graphs.find((g) => g.graphName === 'https://e/graph').numberOfStatements).toBe(3); // c, shared, d
    expect((await p.request('GET', '/datasets/alice/modes', { token: alice })).body.statements).toBe(5);
  });

  it('refuse overwriteAll together with mergeGraphs', async () => {
    const res = await p.request('POST', '/datasets/alice/modes/jobs', { token: alice, body: { overwriteAll: true, mergeGraphs: true } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/exclude each other/);
  });
});

describe('two imports into one dataset at once', () => {
  it('both land', async () => {
    await p.createDataset('alice', 'busy', 'private', alice);
    const jobs = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        importFiles(p, alice, 'alice/busy', [{ name: `f${i}.nt`, content: `<https://e/s${i}> <https://e/p> "${i}" .\n` }], {
          defaultGraphName: `https://e/g${i}`,
        }),
      ),
    );
    expect(jobs.map((j) => j.status)).toEqual(['finished', 'finished', 'finished', 'finished']);
    const graphs = await graphsOf(p, alice, 'alice/busy');
    expect(graphs.map((g) => g.graphName).sort()).toEqual(['https://e/g0', 'https://e/g1', 'https://e/g2', 'https://e/g3']);
    expect((await p.request('GET', '/datasets/alice/busy', { token: alice })).body).toMatchObject({ statements: 4, graphCount: 4 });
  });
});

describe('resumable (tus 1.0.0) uploads', () => {
  it('upload in pieces, resume after a broken connection, then start', async () => {
    await p.createDataset('alice', 'resumable', 'private', alice);
    const created = await p.request('POST', '/datasets/alice/resumable/jobs', { token: alice, body: { defaultGraphName: 'https://e/tus' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'created', files: [] });
    const jobId = created.body.jobId;
    const content = Buffer.from(Array.from({ length: 2000 }, (_, i) => `<https://e/s${i}> <https://e/p> "${i}" .\n`).join(''));
    const tus = { 'tus-resumable': '1.0.0', authorization: `Bearer ${alice}` };
    const create = await fetch(`${p.url}/datasets/alice/resumable/jobs/${jobId}/add`, {
      method: 'POST',
      headers: { ...tus, 'upload-length': String(content.length), 'upload-metadata': `filename ${Buffer.from('/home/me/data.nt').toString('base64')}` },
    });
    expect(create.status).toBe(201);
    const location = create.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^${p.url}/datasets/alice/resumable/jobs/${jobId}/add/[0-9a-f]{32}$`));

    const half = Math.floor(content.length / 2);
    const first = await fetch(location, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: content.subarray(0, half),
    });
    expect(first.status).toBe(204);
    // The connection broke: ask where to resume.
    const head = await fetch(location, { method: 'HEAD', headers: tus });
    expect(head.headers.get('upload-offset')).toBe(String(half));
    expect(head.headers.get('upload-length')).toBe(String(content.length));
    const second = await fetch(location, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': String(half), 'content-type': 'application/offset+octet-stream' },
      body: content.subarray(half),
    });
    expect(second.status).toBe(204);

    const job = await p.request('GET', `/datasets/alice/resumable/jobs/${jobId}`, { token: alice });
    expect(job.body.files).toEqual([expect.objectContaining({ fileName: 'data.nt', fileSize: content.length })]);
    const started = await p.request('POST', `/datasets/alice/resumable/jobs/${jobId}/start`, { token: alice });
    expect(started.status).toBe(202);
    const done = await waitForJob(p, alice, 'alice/resumable', jobId);
    expect(done.status).toBe('finished');
    expect((await graphsOf(p, alice, 'alice/resumable'))[0].numberOfStatements).toBe(2000);
    // A started job takes no more files.
    const late = await fetch(`${p.url}/datasets/alice/resumable/jobs/${jobId}/add`, {
      method: 'POST',
      headers: { ...tus, 'upload-length': '1', 'upload-metadata': `filename ${Buffer.from('x.nt').toString('base64')}` },
    });
    expect(late.status).toBe(409);
  });

  it('keep uploads of one job out of reach of another, and need write access', async () => {
    await p.createDataset('alice', 'scoped', 'private', alice);
    const a = (await p.request('POST', '/datasets/alice/scoped/jobs', { token: alice, body: {} })).body.jobId;
    const b = (await p.request('POST', '/datasets/alice/scoped/jobs', { token: alice, body: {} })).body.jobId;
    const tus = { 'tus-resumable': '1.0.0', authorization: `Bearer ${alice}` };
    const create = await fetch(`${p.url}/datasets/alice/scoped/jobs/${a}/add`, {
      method: 'POST',
      headers: { ...tus, 'upload-length': '10', 'upload-metadata': `filename ${Buffer.from('x.nt').toString('base64')}` },
    });
    const id = create.headers.get('location')!.split('/').pop();
    const other = await fetch(`${p.url}/datasets/alice/scoped/jobs/${b}/add/${id}`, { method: 'HEAD', headers: tus });
    expect(other.status).toBe(404);
    const asBob = await fetch(`${p.url}/datasets/alice/scoped/jobs/${a}/add`, {
      method: 'POST',
      headers: { ...tus, authorization: `Bearer ${bob}`, 'upload-length': '10', 'upload-metadata': `filename ${Buffer.from('x.nt').toString('base64')}` },
    });
    expect(asBob.status).toBe(404);
    expect((await p.request('POST', `/datasets/alice/scoped/jobs/${a}/start`, { token: alice })).body.message).toMatch(/no files/);
  });

  it('can be canceled before they start', async () => {
    const job = (await p.request('POST', '/datasets/alice/scoped/jobs', { token: alice, body: {} })).body.jobId;
    expect((await p.request('DELETE', `/datasets/alice/scoped/jobs/${job}`, { token: alice })).status).toBe(204);
    expect((await p.request('GET', `/datasets/alice/scoped/jobs/${job}`, { token: alice })).body.status).toBe('canceled');
  });
});

describe('URL imports', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/data.ttl') {
        res.setHeader('content-type', 'text/turtle');
        return res.end(TTL);
      }
      if (req.url === '/no-extension') {
        res.setHeader('content-type', 'application/n-triples');
        return res.end('<https://e/u> <https://e/p> "typed by header" .\n');
      }
      res.statusCode = 404;
      res.end('nope');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it('start by themselves and import every URL', async () => {
    await p.createDataset('alice', 'from-web', 'private', alice);
    const res = await p.request('POST', '/datasets/alice/from-web/jobs', {
      token: alice,
      body: { type: 'download', downloadUrls: [`${base}/data.ttl`, `${base}/no-extension`], defaultGraphName: 'https://e/web' },
    });
    expect(res.status).toBe(201);
    const job = await waitForJob(p, alice, 'alice/from-web', res.body.jobId);
    expect(job.status, job.error?.message).toBe('finished');
    expect((await graphsOf(p, alice, 'alice/from-web'))[0].numberOfStatements).toBe(6);
  });

  it('fail with a message naming the URL that could not be fetched', async () => {
    const res = await p.request('POST', '/datasets/alice/from-web/jobs', { token: alice, body: { type: 'download', downloadUrls: [`${base}/missing.nt`] } });
    const job = await waitForJob(p, alice, 'alice/from-web', res.body.jobId);
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/missing\.nt.*404/);
  });

  it('validate the URLs', async () => {
    const res = await p.request('POST', '/datasets/alice/from-web/jobs', { token: alice, body: { type: 'download', downloadUrls: ['ftp://x/y.nt'] } });
    expect(res.status).toBe(400);
    expect((await p.request('POST', '/datasets/alice/from-web/jobs', { token: alice, body: { type: 'download' } })).status).toBe(400);
  });
});

describe('access', () => {
  it('imports need write access; jobs of hidden datasets are 404', async () => {
    await p.createDataset('alice', 'guarded', 'private', alice);
    await p.createDataset('alice', 'open', 'public', alice);
    expect((await p.request('POST', '/datasets/alice/guarded/jobs', { token: bob, body: {} })).status).toBe(404);
    expect((await p.request('POST', '/datasets/alice/open/jobs', { token: bob, body: {} })).status).toBe(403);
    expect((await p.request('POST', '/datasets/alice/open/jobs', { body: {} })).status).toBe(401);
    const multipart = await importFiles(p, bob, 'alice/open', [{ name: 'x.nt', content: '' }]);
    expect(multipart.status).toBe(403);
  });
});

describe('a restart', () => {
  it('fails jobs that were indexing and leaves their dataset unchanged', async () => {
    const first = await TestPlatform.start({ adminAccount: 'root' });
    const token = first.adminToken;
    await first.createDataset('root', 'interrupted', 'private', token);
    const created = await first.request('POST', '/datasets/root/interrupted/jobs', { token, body: {} });
    const job = created.body;
    // Simulate a crash mid-import: the job record says indexing, through the product's own store.
    const store = first.platform.services.platform.store;
    const record = (await store.getJob(job.datasetId, job.jobId))!;
    await store.updateJob({ ...record, status: 'indexing' }, ['created']);
    await first.stop({ keepData: true });

    const second = await TestPlatform.start({ dataDir: first.dataDir, adminAccount: 'root' });
    try {
      const after = await second.request('GET', `/datasets/root/interrupted/jobs/${job.jobId}`, { token });
      expect(after.body.status).toBe('error');
      expect(after.body.error.message).toMatch(/stopped while this job was indexing/);
      expect((await second.request('GET', '/datasets/root/interrupted', { token })).body.statements).toBe(0);
    } finally {
      await second.stop();
      const { rm } = await import('node:fs/promises');
      await rm(first.dataDir, { recursive: true, force: true });
    }
  });
});
