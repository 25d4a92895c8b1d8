/**
 * Issue 14, data routes: assets (delete all, download by name, Range requests, deleting a version
 * answers the Asset) and import jobs (start answers 202, clearing jobs, reset, removing a file,
 * `downloadedBytes`), with who may and who may not; and an import reporting its progress while
 * it indexes (bytes read, statements indexed), watched over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';
import { waitForJob } from '../support/imports.js';
import { startSlowSource, type SlowSource } from '../support/slow-source.js';

let p: TestPlatform;
let alice: string;
let bob: string;
let source: SlowSource;

async function uploadAsset(dataset: string, token: string, name: string, content: string, versionOf?: string) {
  const form = new FormData();
  if (versionOf) form.append('versionOf', versionOf);
  form.append('file', new Blob([content], { type: 'text/plain' }), name);
  const res = await fetch(`${p.url}/datasets/${dataset}/assets`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  return { status: res.status, body: await res.json() };
}

async function uploadJobFile(dataset: string, jobId: string, token: string, name: string, content: string) {
  const tus = { 'tus-resumable': '1.0.0', authorization: `Bearer ${token}` };
  const created = await fetch(`${p.url}/datasets/${dataset}/jobs/${jobId}/add`, {
    method: 'POST',
    headers: { ...tus, 'upload-length': String(Buffer.byteLength(content)), 'upload-metadata': `filename ${Buffer.from(name).toString('base64')}` },
  });
  expect(created.status).toBe(201);
  const patch = await fetch(created.headers.get('location')!, { method: 'PATCH', headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: content });
  expect(patch.status).toBe(204);
}

const get = (path: string, token?: string, headers: Record<string, string> = {}) =>
  fetch(`${p.url}${path}`, { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });

beforeAll(async () => {
  // Every reading of the clock is 6 s after the last: a running import writes its progress at
  // every chance it gets (it writes when 5 s have passed), so a test-sized job reports often.
  let ticks = 0;
  const real = Date.now();
  const clock = {
    now: () => new Date(real + ++ticks * 6_000),
    sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
    after: (ms: number, action: () => void) => {
      const t = setTimeout(action, ms);
      return () => clearTimeout(t);
    },
  };
  p = await TestPlatform.start({ clock });
  alice = await p.createUser('alice');
  bob = await p.createUser('bob');
  await p.createDataset('alice', 'docs', 'public', alice);
  await p.createDataset('alice', 'secret', 'private', alice);
  source = await startSlowSource();
});
afterAll(async () => {
  await source?.stop();
  await p?.stop();
});

describe('assets', () => {
  it('downloads by file name (?fileName=), the latest version', async () => {
    const first = await uploadAsset('alice/docs', alice, 'notes.txt', 'first');
    await uploadAsset('alice/docs', alice, 'notes.txt', 'second!', first.body.identifier);
    const res = await get('/datasets/alice/docs/assets/download?fileName=notes.txt');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('second!');
    expect(res.headers.get('content-disposition')).toMatch(/notes\.txt/);
    expect((await get('/datasets/alice/docs/assets/download?fileName=none.txt')).status).toBe(404);
    const missing = await get('/datasets/alice/docs/assets/download');
    expect(missing.status).toBe(400);
    expect((await missing.json()).message).toMatch(/fileName/);
    expect((await get('/datasets/alice/docs/assets/download?fileName=notes.txt&x=1')).status).toBe(400);
  });

  it('answers Range requests with 206 and Content-Range, 416 outside the file', async () => {
    const up = await uploadAsset('alice/docs', alice, 'digits.txt', '0123456789');
    const path = `/datasets/alice/docs/assets/${up.body.identifier}`;
    const whole = await get(path);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const part = await get(path, undefined, { range: 'bytes=2-5' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 2-5/10');
    expect(await part.text()).toBe('2345');
    const tail = await get(path, undefined, { range: 'bytes=-3' });
    expect([tail.status, await tail.text()]).toEqual([206, '789']);
    const open = await get(`${path}/${up.body.versions[0].id}`, undefined, { range: 'bytes=7-' });
    expect([open.status, open.headers.get('content-range'), await open.text()]).toEqual([206, 'bytes 7-9/10', '789']);
    const beyond = await get(path, undefined, { range: 'bytes=10-20' });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe('bytes */10');
    expect((await beyond.json()).message).toBeTruthy();
    // An invalid range is ignored: the whole file.
    const reversed = await get(path, undefined, { range: 'bytes=5-2' });
    expect([reversed.status, await reversed.text()]).toEqual([200, '0123456789']);
    const byName = await get('/datasets/alice/docs/assets/download?fileName=digits.txt', undefined, { range: 'bytes=0-0' });
    expect([byName.status, await byName.text()]).toEqual([206, '0']);
  });

  it('deleting a version answers 200 with the Asset left', async () => {
    const v1 = await uploadAsset('alice/docs', alice, 'two.txt', 'one');
    const v2 = await uploadAsset('alice/docs', alice, 'two.txt', 'two', v1.body.identifier);
    const [first, second] = v2.body.versions;
    const res = await p.request('DELETE', `/datasets/alice/docs/assets/${v1.body.identifier}/${first.id}`, { token: alice });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ assetName: 'two.txt', identifier: v1.body.identifier, versions: [expect.objectContaining({ id: second.id })] });
    expect((await p.request('DELETE', `/datasets/alice/docs/assets/${v1.body.identifier}/${first.id}`, { token: bob })).status).toBe(403);
  });

  it('DELETE …/assets removes every asset, for writers only', async () => {
    await uploadAsset('alice/secret', alice, 'a.txt', 'a');
    expect((await p.request('DELETE', '/datasets/alice/secret/assets', { token: bob })).status).toBe(404);
    expect((await p.request('DELETE', '/datasets/alice/docs/assets', { token: bob })).status).toBe(403);
    expect((await p.request('DELETE', '/datasets/alice/docs/assets')).status).toBe(401);
    expect((await p.request('GET', '/datasets/alice/docs/assets')).body.length).toBeGreaterThan(0);
    expect((await p.request('DELETE', '/datasets/alice/docs/assets', { token: alice })).status).toBe(204);
    expect((await p.request('GET', '/datasets/alice/docs/assets')).body).toEqual([]);
    expect((await p.request('GET', '/datasets/alice/docs', { token: alice })).body.assetCount).toBe(0);
    expect((await p.request('GET', '/datasets/alice/secret/assets', { token: alice })).body).toHaveLength(1);
  });
});

describe('import jobs', () => {
  const createJob = async (dataset: string, token = alice) => {
    const res = await p.request('POST', `/datasets/${dataset}/jobs`, { token, body: {} });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };

  it('start answers 202 with the IndexJob (downloadedBytes among its fields)', async () => {
    const job = await createJob('alice/docs');
    expect(job.downloadedBytes).toBe(0);
    await uploadJobFile('alice/docs', job.jobId, alice, 'a.nt', '<https://e.org/a> <https://e.org/p> "a" .\n');
    const started = await p.request('POST', `/datasets/alice/docs/jobs/${job.jobId}/start`, { token: alice });
    expect(started.status, started.text).toBe(202);
    expect(started.body).toMatchObject({ jobId: job.jobId, downloadedBytes: 0, files: [expect.objectContaining({ fileName: 'a.nt' })] });
    expect((await waitForJob(p, alice, 'alice/docs', job.jobId)).status).toBe('finished');
  });

  it('start takes no body, or {overwriteAll}; anything else is a 400', async () => {
    await p.createDataset('alice', 'over', 'private', alice);
    const line = (o: string) => `<https://e.org/s> <https://e.org/p> "${o}" .\n`;
    const run = async (content: string, body?: unknown) => {
      const job = await createJob('alice/over');
      await uploadJobFile('alice/over', job.jobId, alice, 'x.nt', content);
      const started = await p.request('POST', `/datasets/alice/over/jobs/${job.jobId}/start`, { token: alice, ...(body === undefined ? {} : { body }) });
      return { job, started };
    };
    const first = await run(line('one'));
    expect(first.started.status).toBe(202);
    await waitForJob(p, alice, 'alice/over', first.job.jobId);
    const bad = await run(line('two'), { overwrite: true });
    expect(bad.started.status).toBe(400);
    expect(bad.started.body.message).toMatch(/overwrite/);
    expect((await p.request('POST', `/datasets/alice/over/jobs/${bad.job.jobId}/start`, { token: alice, body: { overwriteAll: 'yes' } })).status).toBe(400);
    const over = await p.request('POST', `/datasets/alice/over/jobs/${bad.job.jobId}/start`, { token: alice, body: { overwriteAll: true } });
    expect(over.status, over.text).toBe(202);
    expect(over.body.overwriteAll).toBe(true);
    await waitForJob(p, alice, 'alice/over', bad.job.jobId);
    const statements = (await p.request('GET', '/datasets/alice/over/statements', { token: alice })).body;
    expect(statements.map((st: any) => st[2].value)).toEqual(['two']);
  });

  it('DELETE …/jobs/{id}/{sourceFileId} removes one file of a job not started', async () => {
    const job = await createJob('alice/docs');
    await uploadJobFile('alice/docs', job.jobId, alice, 'keep.nt', '<https://e.org/k> <https://e.org/p> "k" .\n');
    await uploadJobFile('alice/docs', job.jobId, alice, 'drop.nt', '<https://e.org/d> <https://e.org/p> "d" .\n');
    const files = (await p.request('GET', `/datasets/alice/docs/jobs/${job.jobId}`, { token: alice })).body.files;
    const drop = files.find((f: any) => f.fileName === 'drop.nt');
    const path = `/datasets/alice/docs/jobs/${job.jobId}/${drop.sourceFileId}`;
    expect((await p.request('DELETE', path, { token: bob })).status).toBe(403);
    expect((await p.request('DELETE', path, { token: alice })).status).toBe(204);
    expect((await p.request('DELETE', path, { token: alice })).status).toBe(404);
    const after = (await p.request('GET', `/datasets/alice/docs/jobs/${job.jobId}`, { token: alice })).body.files;
    expect(after.map((f: any) => f.fileName)).toEqual(['keep.nt']);
    expect((await p.request('POST', `/datasets/alice/docs/jobs/${job.jobId}/start`, { token: alice })).status).toBe(202);
    const done = await waitForJob(p, alice, 'alice/docs', job.jobId);
    expect(done.numberOfStatements).toBe(1);
    const late = await p.request('DELETE', `/datasets/alice/docs/jobs/${job.jobId}/${after[0].sourceFileId}`, { token: alice });
    expect(late.status).toBe(409);
    expect(late.body.message).toBeTruthy();
  });

  it('reset takes a failed job back to created, without files; a finished job cannot be reset', async () => {
    const job = await createJob('alice/docs');
    await uploadJobFile('alice/docs', job.jobId, alice, 'bad.nt', 'this is not N-Triples\n');
    await p.request('POST', `/datasets/alice/docs/jobs/${job.jobId}/start`, { token: alice });
    expect((await waitForJob(p, alice, 'alice/docs', job.jobId)).status).toBe('error');
    const path = `/datasets/alice/docs/jobs/${job.jobId}/reset`;
    expect((await p.request('POST', path, { token: bob })).status).toBe(403);
    const reset = await p.request('POST', path, { token: alice });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toMatchObject({ jobId: job.jobId, status: 'created', files: [], indexingProgress: 0 });
    expect(reset.body.error).toBeUndefined();
    await uploadJobFile('alice/docs', job.jobId, alice, 'good.nt', '<https://e.org/g> <https://e.org/p> "g" .\n');
    expect((await p.request('POST', `/datasets/alice/docs/jobs/${job.jobId}/start`, { token: alice })).status).toBe(202);
    expect((await waitForJob(p, alice, 'alice/docs', job.jobId)).status).toBe('finished');
    const again = await p.request('POST', path, { token: alice });
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/finished/);
    expect((await p.request('POST', '/datasets/alice/docs/jobs/nope/reset', { token: alice })).status).toBe(404);
  });

  it('DELETE …/jobs clears the jobs in error and those not yet running, keeps finished ones', async () => {
    await p.createDataset('alice', 'jobs', 'public', alice);
    const waiting = await createJob('alice/jobs');
    const failed = await createJob('alice/jobs');
    await uploadJobFile('alice/jobs', failed.jobId, alice, 'bad.nt', 'not rdf\n');
    await p.request('POST', `/datasets/alice/jobs/jobs/${failed.jobId}/start`, { token: alice });
    expect((await waitForJob(p, alice, 'alice/jobs', failed.jobId)).status).toBe('error');
    const ok = await createJob('alice/jobs');
    await uploadJobFile('alice/jobs', ok.jobId, alice, 'ok.nt', '<https://e.org/o> <https://e.org/p> "o" .\n');
    await p.request('POST', `/datasets/alice/jobs/jobs/${ok.jobId}/start`, { token: alice });
    expect((await waitForJob(p, alice, 'alice/jobs', ok.jobId)).status).toBe('finished');

    expect((await p.request('DELETE', '/datasets/alice/jobs/jobs', { token: bob })).status).toBe(403);
    expect((await p.request('DELETE', '/datasets/alice/jobs/jobs')).status).toBe(401);
    expect((await p.request('DELETE', '/datasets/alice/jobs/jobs?status=error', { token: alice })).status).toBe(400);
    const res = await p.request('DELETE', '/datasets/alice/jobs/jobs', { token: alice });
    expect(res.status, res.text).toBe(200);
    expect([...res.body.deletedJobIds].sort()).toEqual([waiting.jobId, failed.jobId].sort());
    const left = (await p.request('GET', '/datasets/alice/jobs/jobs', { token: alice })).body;
    expect(left.map((j: any) => j.jobId)).toEqual([ok.jobId]);
  });
});

describe('import progress while indexing', () => {
  it('reports bytes read and statements indexed during the run, then the totals', async () => {
    await p.createDataset('alice', 'big', 'private', alice);
    const lines = 80_000;
    const url = `${source.url}/big.nt?bytes=${lines * 100}&line=100`;
    const created = await p.request('POST', '/datasets/alice/big/jobs', { token: alice, body: { type: 'download', downloadUrls: [url] } });
    expect(created.status, created.text).toBe(201);
    const path = `/datasets/alice/big/jobs/${created.body.jobId}`;
    const during: any[] = [];
    let job: any;
    // Bounded: 4000 polls; the job writes its progress at every batch it indexes.
    for (let i = 0; i < 4000; i++) {
      job = (await p.request('GET', path, { token: alice })).body;
      if (['finished', 'error', 'canceled'].includes(job.status)) break;
      if (job.status === 'indexing' && job.numberOfStatements > 0) during.push(job);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
    expect(job).toMatchObject({ numberOfStatements: lines, indexingProgress: 1, downloadingProgress: 1, downloadedBytes: lines * 100, indexedBytes: lines * 100 });
    expect(during.length, 'progress seen while indexing').toBeGreaterThan(0);
    for (const seen of during) {
      expect(seen.indexingProgress).toBeGreaterThan(0);
      expect(seen.indexingProgress).toBeLessThan(1);
      expect(seen.numberOfStatements).toBeLessThanOrEqual(lines);
      expect(seen.indexedBytes).toBeGreaterThan(0);
      expect(seen.indexedBytes).toBeLessThanOrEqual(lines * 100);
    }
    // Reported part-way, not only once all was read (the graph swap comes after the last statement).
    expect(during.some((j) => j.numberOfStatements < lines)).toBe(true);
    // Moving, not one value: statements only grow between the reports seen.
    const counts = during.map((j) => j.numberOfStatements);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
  }, 120_000);
});
