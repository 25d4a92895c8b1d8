/**
 * Progress of a running import (issue 19), as the API shows it: while a URL load downloads, the
 * job reports the bytes downloaded so far (written every few seconds by the worker, not per
 * chunk); when it ends, the whole count, the statements and both progress fields at 1. The source
 * keeps sending until the test has seen progress, so nothing here depends on timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';
import { waitForJob } from '../support/imports.js';
import { startSlowSource, type SlowSource } from '../support/slow-source.js';

let p: TestPlatform;
let alice: string;
let source: SlowSource;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  source = await startSlowSource({ intervalMs: 100, perChunk: 20 });
});
afterAll(async () => {
  await source?.stop();
  await p?.stop();
});

describe('a running import', () => {
  it('shows the bytes downloaded so far while it downloads, then the totals', async () => {
    await p.createDataset('alice', 'slow', 'private', alice);
    const created = await p.request('POST', '/datasets/alice/slow/jobs', { token: alice, body: { type: 'download', downloadUrls: [`${source.url}/slow.nt`] } });
    expect(created.status, created.text).toBe(201);
    const path = `/datasets/alice/slow/jobs/${created.body.jobId}`;
    let seen: any;
    // Bounded: the worker writes progress every 5 s; 300 polls of 100 ms leave six times that.
    for (let i = 0; i < 300 && !seen; i++) {
      const job = (await p.request('GET', path, { token: alice })).body;
      expect(job.status).toBe('downloading');
      if (job.downloadedBytes > 0) seen = job;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen, 'progress was reported while downloading').toBeDefined();
    expect(seen).toMatchObject({ status: 'downloading', downloadingProgress: 0, indexingProgress: 0 });
    expect(seen.downloadedBytes).toBeLessThanOrEqual(source.bytes());
    expect(seen.updatedAt > created.body.updatedAt).toBe(true);

    source.release();
    const done = await waitForJob(p, alice, 'alice/slow', created.body.jobId);
    expect(done.status, JSON.stringify(done.error)).toBe('finished');
    expect(done).toMatchObject({ downloadedBytes: source.bytes(), numberOfStatements: source.statements(), downloadingProgress: 1, indexingProgress: 1 });
    expect(done.downloadedBytes).toBeGreaterThan(seen.downloadedBytes);
  }, 60_000);
});
