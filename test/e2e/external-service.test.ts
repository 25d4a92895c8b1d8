/**
 * A service whose snapshot outgrows the embedded engine runs on the external engine (Virtuoso
 * here, Neptune on AWS) through the same HTTP routes. Needs Debian's virtuoso-opensource-7: the
 * suite skips loudly without it, and fails instead under CI=true.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { select, startService } from '../support/services.js';
import { findVirtuoso, startVirtuoso, VIRTUOSO_PACKAGE, type VirtuosoServer } from '../support/virtuoso.js';

const found = findVirtuoso();
const onCi = process.env.CI === 'true';
if (!found) console.warn(`\n!! ${onCi ? 'FAILING (CI=true)' : 'SKIPPING'}: external-service tests need virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE}\n`);

describe.runIf(!found && onCi)('external engine prerequisites', () => {
  it(`needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE} under CI`, () => {
    expect(found, `install ${VIRTUOSO_PACKAGE}`).not.toBeNull();
  });
});

describe.skipIf(!found)('a service on the external engine', () => {
  let virtuoso: VirtuosoServer;
  let p: TestPlatform;
  let alice: string;

  beforeAll(async () => {
    virtuoso = await startVirtuoso();
    p = await TestPlatform.start({
      settings: {
        sparql: {
          queryTimeoutMs: 20_000,
          maxStatements: 10,
          replicas: 1,
          external: { queryEndpoint: virtuoso.sparqlEndpoint, graphStoreEndpoint: virtuoso.graphStoreEndpoint },
        },
      },
    });
    alice = await p.createUser('alice');
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await virtuoso?.stop();
  });

  it('loads a snapshot too large for the embedded store there, answers through HTTP, and syncs', async () => {
    await p.createDataset('alice', 'large', 'public', alice);
    const lines = Array.from({ length: 40 }, (_, i) => `<https://e/s${i}> <https://e/value> "${i}" .`).join('\n');
    await importFiles(p, alice, 'alice/large', [{ name: 'large.nt', content: lines }], { defaultGraphName: 'https://e/g' });
    const service = await startService(p, alice, 'alice/large', { name: 'big' });
    expect(service).toMatchObject({ status: 'running', numberOfLoadedStatements: 40 });
    const endpoint = '/datasets/alice/large/services/big/sparql';
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('40');
    const graphs = await select(p, undefined, endpoint, 'SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }');
    expect(graphs.map((r) => r.g)).toEqual(['https://e/g']);

    await importFiles(p, alice, 'alice/large', [{ name: 'more.nt', content: '<https://e/extra> <https://e/value> "x" .' }], { defaultGraphName: 'https://e/g2' });
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('40');
    await p.request('POST', '/datasets/alice/large/services/big', { token: alice, body: { sync: true } });
    for (let i = 0; i < 400; i++) {
      const s = await p.request('GET', '/datasets/alice/large/services/big');
      if (s.body.status === 'running' && !s.body.outOfSync) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe('41');
  }, 120_000);
});
