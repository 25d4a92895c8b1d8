/**
 * Embedded SPARQL hosts that end on their own (issue 19): a `virtuoso` service whose virtuoso-t
 * process exits (crashed, killed) must not claim `running`: it goes to error with the reason,
 * its queries answer 503, its host's database is removed, and a start brings it back. The
 * service beside it, on a host that is fine, is left alone.
 * Needs Debian's virtuoso-opensource-7: the suite skips loudly without it, and fails under CI=true.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { select, startService, waitForService } from '../support/services.js';
import { findVirtuoso, VIRTUOSO_PACKAGE } from '../support/virtuoso.js';

const found = findVirtuoso();
const onCi = process.env.CI === 'true';
if (!found) console.warn(`\n!! ${onCi ? 'FAILING (CI=true)' : 'SKIPPING'}: virtuoso host tests need virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE}\n`);

describe.runIf(!found && onCi)('virtuoso host prerequisites (a host that dies)', () => {
  it(`needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE} under CI`, () => {
    expect(found, `install ${VIRTUOSO_PACKAGE}`).not.toBeNull();
  });
});

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!found)('a virtuoso-t host that dies (embedded)', () => {
  let p: TestPlatform;
  let alice: string;
  const hostDirs = async () => (await readdir(join(p.dataDir, 'virtuoso')).catch(() => [] as string[])).sort();
  /** The PID of a host's virtuoso-t, from its database's lock file. */
  const pidOf = async (dir: string) => Number(/VIRT_PID=(\d+)/.exec(await readFile(join(p.dataDir, 'virtuoso', dir, 'virtuoso.lck'), 'utf8'))?.[1]);
  const service = async (name: string) => (await p.request('GET', `/datasets/alice/d/services/${name}`)).body;

  beforeAll(async () => {
    p = await TestPlatform.start({ env: { VIRTUOSO_HOSTS: found!.server }, settings: { sparql: { queryTimeoutMs: 5000, maxStatements: 1_000_000, replicas: 1 } } });
    alice = await p.createUser('alice');
    await p.createDataset('alice', 'd', 'public', alice);
    const lines = Array.from({ length: 100 }, (_, i) => `<https://e/s${i}> <https://e/value> "${i}" .`).join('\n');
    await importFiles(p, alice, 'alice/d', [{ name: 'data.nt', content: lines }], { defaultGraphName: 'https://e/g' });
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
  });

  it('leaves its service in error (503 on queries, the reason on the service), removes its database, leaves the other service alone; a start brings it back', async () => {
    expect((await startService(p, alice, 'alice/d', { name: 'doomed', type: 'virtuoso' })).status).toBe('running');
    const [doomedDir] = await hostDirs();
    expect(doomedDir).toBeDefined();
    expect((await startService(p, alice, 'alice/d', { name: 'fine', type: 'virtuoso' })).status).toBe('running');
    const fineDir = (await hostDirs()).find((d) => d !== doomedDir)!;
    expect(fineDir).toBeDefined();

    // The doomed service's virtuoso-t dies (as a crash or the OOM killer would end it).
    const pid = await pidOf(doomedDir!);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    let doomed: any;
    for (let i = 0; i < 300; i++) {
      doomed = await service('doomed');
      if (doomed.status !== 'running') break;
      await delay(100);
    }
    expect(doomed.status).toBe('error');
    expect(doomed.error.message).toMatch(/^The service's host ended \(its virtuoso-t ended \(exit SIGKILL\)\); the service answers queries again once started/);
    const query = await p.request('GET', `/datasets/alice/d/services/doomed/sparql?query=${encodeURIComponent('ASK {}')}`, { headers: { accept: 'application/sparql-results+json' } });
    expect(query.status).toBe(503);
    expect(query.text).toMatch(/"doomed" is error/);
    for (let i = 0; i < 100 && (await hostDirs()).includes(doomedDir!); i++) await delay(100);
    expect(await hostDirs()).toEqual([fineDir]);

    // The other service, on a host that is fine, runs on and answers.
    expect(await service('fine')).toMatchObject({ status: 'running' });
    expect((await select(p, undefined, '/datasets/alice/d/services/fine/sparql', 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('100');

    // A start gives the service a new host.
    expect((await p.request('POST', '/datasets/alice/d/services/doomed', { token: alice, body: { start: true } })).status).toBe(200);
    expect((await waitForService(p, alice, 'alice/d', 'doomed')).status).toBe('running');
    expect((await select(p, undefined, '/datasets/alice/d/services/doomed/sparql', 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('100');
    expect(await hostDirs()).toHaveLength(2);
  }, 180_000);
});
