/**
 * Embedded SPARQL hosts (issue 19): with VIRTUOSO_HOSTS set, a `virtuoso` service runs on its own
 * virtuoso-t process, loaded from the snapshot once; queries reach it through the same HTTP routes.
 * Needs Debian's virtuoso-opensource-7: the suite skips loudly without it, and fails under CI=true.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, virtuosoIni } from '../../functions/adapters/local/virtuoso-service-hosts.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles, waitForJob } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { select, startService, waitForService } from '../support/services.js';
import { findVirtuoso, VIRTUOSO_PACKAGE } from '../support/virtuoso.js';

const found = findVirtuoso();
const onCi = process.env.CI === 'true';
if (!found) console.warn(`\n!! ${onCi ? 'FAILING (CI=true)' : 'SKIPPING'}: virtuoso host tests need virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE}\n`);

describe.runIf(!found && onCi)('virtuoso host prerequisites', () => {
  it(`needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE} under CI`, () => {
    expect(found, `install ${VIRTUOSO_PACKAGE}`).not.toBeNull();
  });
});

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!found)('virtuoso services on their own virtuoso-t (embedded)', () => {
  let p: TestPlatform;
  let alice: string;
  const hostDirs = async () => (await readdir(join(p.dataDir, 'virtuoso')).catch(() => [])).sort();
  /** Polls (bounded) until the hosts' directories number `n`. */
  const hostsBecome = async (n: number) => {
    for (let i = 0; i < 300 && (await hostDirs()).length !== n; i++) await delay(100);
    return hostDirs();
  };

  beforeAll(async () => {
    p = await TestPlatform.start({
      env: { VIRTUOSO_HOSTS: found!.server },
      settings: { sparql: { queryTimeoutMs: 1500, maxStatements: 1_000_000, replicas: 1 } },
    });
    alice = await p.createUser('alice');
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
  });

  it('starts, answers, times out with 504 and lives on, swaps hosts on sync, stops', async () => {
    await p.createDataset('alice', 'hosted', 'public', alice);
    const lines = Array.from({ length: 3000 }, (_, i) => `<https://e/s${i}> <https://e/value> "${i}" .`).join('\n');
    await importFiles(p, alice, 'alice/hosted', [{ name: 'data.nt', content: lines }], { defaultGraphName: 'https://e/g' });

    const service = await startService(p, alice, 'alice/hosted', { name: 'fast', type: 'virtuoso' });
    expect(service).toMatchObject({ status: 'running', numberOfLoadedStatements: 3000 });
    const first = await hostsBecome(1);
    expect(first).toHaveLength(1);

    const endpoint = '/datasets/alice/hosted/services/fast/sparql';
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('3000');
    expect((await select(p, undefined, endpoint, 'SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }')).map((r) => r.g)).toEqual(['https://e/g']);

    // 3000³ combinations: far past the 1.5 s query timeout.
    const slow = 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i FILTER(?c != ?f && ?f != ?i) }';
    const timedOut = await p.request('GET', `${endpoint}?query=${encodeURIComponent(slow)}`, { headers: { accept: 'application/sparql-results+json' } });
    expect(timedOut.status).toBe(504);
    expect(timedOut.text).toMatch(/longer than/);
    // The host lives on.
    expect((await select(p, undefined, endpoint, 'SELECT ?o WHERE { <https://e/s7> ?p ?o }'))[0]!.o).toBe('7');

    await importFiles(p, alice, 'alice/hosted', [{ name: 'more.nt', content: '<https://e/extra> <https://e/value> "x" .' }], { defaultGraphName: 'https://e/g2' });
    const sync = await p.request('POST', '/datasets/alice/hosted/services/fast', { token: alice, body: { sync: true } });
    expect(sync.status).toBe(200);
    // The old host answers while the new one loads.
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('3000');
    for (let i = 0; i < 600; i++) {
      const s = await p.request('GET', '/datasets/alice/hosted/services/fast');
      if (s.body.status === 'running' && !s.body.outOfSync) break;
      await delay(100);
    }
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('3001');
    const second = await hostsBecome(1);
    expect(second).toHaveLength(1);
    expect(second[0]).not.toBe(first[0]);

    const stop = await p.request('POST', '/datasets/alice/hosted/services/fast', { token: alice, body: { stop: true } });
    expect(stop.body.status).toBe('stopped');
    expect(await hostsBecome(0)).toEqual([]);
    const stopped = await p.request('GET', `${endpoint}?query=${encodeURIComponent('ASK {}')}`, { headers: { accept: 'application/sparql-results+json' } });
    expect(stopped.status).toBe(503);

    // A sync whose load fails keeps the old host serving: one blank node shared by two graphs with
    // 3000 statements is sent whole in one INSERT..WHERE, which Virtuoso refuses above about 1000.
    await p.request('POST', '/datasets/alice/hosted/services/fast', { token: alice, body: { start: true } });
    expect((await waitForService(p, alice, 'alice/hosted', 'fast')).status).toBe('running');
    const serving = await hostsBecome(1);
    const shared = Array.from({ length: 3000 }, (_, i) => `_:shared <https://e/v> "${i}" <https://e/g${i % 2 ? 4 : 5}> .`).join('\n');
    const sharedJob = await importFiles(p, alice, 'alice/hosted', [{ name: 'shared.nq', content: shared }]);
    expect(sharedJob.status, JSON.stringify(sharedJob)).toBe('finished');
    await p.request('POST', '/datasets/alice/hosted/services/fast', { token: alice, body: { sync: true } });
    let failed: any;
    for (let i = 0; i < 600; i++) {
      failed = (await p.request('GET', '/datasets/alice/hosted/services/fast')).body;
      if (failed.status !== 'updating') break;
      await delay(100);
    }
    expect(failed).toMatchObject({ status: 'running', outOfSync: true });
    expect(failed.error.message).toMatch(/^Loading the data failed: /);
    expect(await hostsBecome(1)).toEqual(serving);
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('3001');
    await p.request('POST', '/datasets/alice/hosted/services/fast', { token: alice, body: { stop: true } });
    expect(await hostsBecome(0)).toEqual([]);

    // jena services stay on the embedded engine.
    const jena = await startService(p, alice, 'alice/hosted', { name: 'reasoning', type: 'jena' });
    expect(jena.status).toBe('running');
    expect(await hostDirs()).toEqual([]);
    await waitForService(p, alice, 'alice/hosted', 'reasoning');
  }, 180_000);

  it("refuses URL imports that aim at a host's Virtuoso (it takes anonymous updates on loopback), while the host runs", async () => {
    await p.createDataset('alice', 'guarded', 'private', alice);
    await importFiles(p, alice, 'alice/guarded', [{ name: 'g.nt', content: '<https://e/secret> <https://e/value> "s" .' }], { defaultGraphName: 'https://e/g' });
    await startService(p, alice, 'alice/guarded', { name: 'guarded', type: 'virtuoso' });
    // The host's ports, from its own configuration file.
    const ports: number[] = [];
    for (const dir of await hostDirs()) {
      const ini = await readFile(join(p.dataDir, 'virtuoso', dir, 'virtuoso.ini'), 'utf8').catch(() => '');
      for (const m of ini.matchAll(/ServerPort\s*=\s*127\.0\.0\.1:(\d+)/g)) ports.push(Number(m[1]));
    }
    expect(ports.length).toBeGreaterThanOrEqual(2);
    await p.createDataset('alice', 'thief', 'public', alice);
    for (const port of ports) {
      const url = `http://127.0.0.1:${port}/sparql?query=${encodeURIComponent('CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }')}`;
      const created = await p.request('POST', '/datasets/alice/thief/jobs', { token: alice, body: { type: 'download', downloadUrls: [url] } });
      const job = created.status === 201 ? await waitForJob(p, alice, 'alice/thief', created.body.jobId) : created.body;
      expect(JSON.stringify(job), `port ${port}`).toMatch(/platform's own back end \(VIRTUOSO_HOSTS/);
    }
    expect((await p.request('GET', '/datasets/alice/thief', { token: alice })).body.statements ?? 0).toBe(0);
    await p.request('POST', '/datasets/alice/guarded/services/guarded', { token: alice, body: { stop: true } });
  }, 120_000);
});

describe.skipIf(!found)('a virtuoso host that cannot start', () => {
  it('leaves the service in error with the reason', async () => {
    // Not a Virtuoso: the host ends at once.
    const p = await TestPlatform.start({ env: { VIRTUOSO_HOSTS: '/bin/false' } });
    try {
      const alice = await p.createUser('alice');
      await p.createDataset('alice', 'd', 'public', alice);
      const service = await startService(p, alice, 'alice/d', { name: 'broken', type: 'virtuoso' });
      expect(service.status).toBe('error');
      expect(service.error.message).toMatch(/^Starting the service's host failed: the SPARQL store ended while starting: exit 1/);
      const query = await p.request('GET', `/datasets/alice/d/services/broken/sparql?query=${encodeURIComponent('ASK {}')}`);
      expect(query.status).toBe(503);
    } finally {
      await p.stop();
    }
  }, 60_000);
});

describe.skipIf(!found)('virtuoso hosts an earlier run left behind', () => {
  it('are ended and removed when the platform starts (a killed platform leaves its virtuoso-t children running)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ldp-test-'));
    const dir = join(dataDir, 'virtuoso', 'virtuoso-t-0123456789abcdef');
    await mkdir(dir, { recursive: true });
    const http = await freePort();
    const ini = join(dir, 'virtuoso.ini');
    await writeFile(ini, virtuosoIni(dir, { sql: await freePort(), http }));
    const stray = spawn(found!.server, ['+foreground', '+configfile', ini], { cwd: dir, stdio: 'ignore' });
    const exited = new Promise((r) => stray.once('exit', r));
    try {
      for (let i = 0; i < 300 && !existsSync(join(dir, 'virtuoso.lck')); i++) await delay(100);
      expect(existsSync(join(dir, 'virtuoso.lck'))).toBe(true);
      const p = await TestPlatform.start({ dataDir, env: { VIRTUOSO_HOSTS: found!.server } });
      try {
        expect(await Promise.race([exited.then(() => 'ended'), delay(10_000).then(() => 'still running')])).toBe('ended');
        expect(existsSync(dir)).toBe(false);
      } finally {
        await p.stop();
      }
    } finally {
      stray.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
