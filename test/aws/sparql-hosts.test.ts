/**
 * A 1 M-statement `virtuoso` service on a SPARQL host through the AWS harness (issue 19): the
 * services function and the import worker start the host task by RunTask (IAM-checked), the
 * harness runs it as Fargate would (the openlink Virtuoso image on Debian's virtuoso-t with the
 * task definition's VIRT_* settings and initdb script, the loader as the bundle's
 * `sparql-loader` role), the loader records the host, and the sparql function (in the VPC)
 * attaches to it. Start → running, queries through the API, a timeout answers 504 and the host
 * lives on, a sync swaps hosts (the old task stops), stop stops the task.
 *
 * The data: 1 M statements of N-Triples, gzipped under the 4 MiB of a simple multipart import (the
 * quickest AWS-shaped way in: one request to the imports function, one import worker run).
 * Needs Debian's virtuoso-opensource-7: skips loudly without it, and fails instead under CI=true.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsTestPlatform } from '../support/aws-harness/client.js';
import type { TestPlatform } from '../support/platform.js';
import { select } from '../support/services.js';
import { findVirtuoso, VIRTUOSO_PACKAGE } from '../support/virtuoso.js';

const found = findVirtuoso();
const onCi = process.env.CI === 'true';
if (!found) console.warn(`\n!! ${onCi ? 'FAILING (CI=true)' : 'SKIPPING'}: SPARQL host tests need virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE}\n`);

describe.runIf(!found && onCi)('SPARQL host prerequisites', () => {
  it(`needs virtuoso-t from the Debian package ${VIRTUOSO_PACKAGE} under CI`, () => {
    expect(found, `install ${VIRTUOSO_PACKAGE}`).not.toBeNull();
  });
});

const STATEMENTS = 1_000_000;
const QUERY_TIMEOUT_MS = 3000;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 1 M statements, compact and repetitive enough to gzip to under 4 MiB. */
function million(): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < STATEMENTS; i++) lines.push(`<e:s${i}> <e:p${i % 10}> <e:o${i % 997}> .`);
  return gzipSync(`${lines.join('\n')}\n`, { level: 9 });
}

describe.skipIf(!found)('on AWS: a virtuoso service on a SPARQL host (1 M statements)', () => {
  let aws: AwsTestPlatform;
  let alice: string;

  beforeAll(async () => {
    aws = await AwsTestPlatform.start({
      testOverridesOfOperatorSettings: [{ function: 'SparqlFunction', name: 'QUERY_TIMEOUT_MS', value: String(QUERY_TIMEOUT_MS) }],
    });
    alice = await aws.createUser('alice');
  }, 300_000);
  afterAll(async () => {
    await aws?.stop();
  });

  const hostTasks = () => aws.aws.ecs.tasks.filter((t) => t.containers.some((c) => c.name === 'virtuoso'));
  const serviceBody = async () => (await aws.request('GET', '/datasets/alice/big/services/fast')).body;
  /** Polls (bounded) until the service satisfies `done`; fails on `error`. */
  const serviceUntil = async (done: (s: any) => boolean, what: string) => {
    for (let i = 0; i < 1200; i++) {
      const s = await serviceBody();
      if (done(s)) return s;
      if (s.status === 'error') throw new Error(`service: ${s.error?.message}`);
      await delay(250);
    }
    throw new Error(`the service did not become ${what}`);
  };
  const tasksUntil = async (done: () => boolean, what: string) => {
    for (let i = 0; i < 600 && !done(); i++) await delay(100);
    expect(done(), what).toBe(true);
  };

  it('start → running; queries through the API; a timeout answers 504 and the host lives on; sync swaps hosts; stop stops the task', async () => {
    await aws.createDataset('alice', 'big', 'public', alice);
    const form = new FormData();
    form.append('defaultGraphName', 'https://e/g');
    form.append('file', new Blob([million() as BlobPart], { type: 'application/gzip' }), 'million.nt.gz');
    const created = await fetch(`${aws.url}/datasets/alice/big/jobs`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
    expect(created.status, await created.clone().text()).toBe(201);
    const jobId = (await created.json()).jobId;
    let job: any;
    for (let i = 0; i < 1200; i++) {
      job = (await aws.request('GET', `/datasets/alice/big/jobs/${jobId}`, { token: alice })).body;
      if (['finished', 'error', 'canceled'].includes(job.status)) break;
      await delay(250);
    }
    expect(job.status, JSON.stringify(job.error)).toBe('finished');
    expect(job.numberOfStatements).toBe(STATEMENTS);

    // Start: the import worker runs the host task; its loader records the host.
    expect((await aws.request('POST', '/datasets/alice/big/services', { token: alice, body: { name: 'fast', type: 'virtuoso' } })).status).toBe(201);
    const running = await serviceUntil((s) => s.status === 'running', 'running');
    expect(running.numberOfLoadedStatements).toBe(STATEMENTS);
    const [first, ...others] = hostTasks();
    expect(others).toEqual([]);
    expect(first!.lastStatus).toBe('RUNNING');

    // Queries through the API (the sparql function attaches to the host; nothing is loaded).
    const endpoint = '/datasets/alice/big/services/fast/sparql';
    const p = aws as unknown as TestPlatform;
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe(String(STATEMENTS));
    expect(await select(p, undefined, endpoint, 'SELECT ?o WHERE { <e:s12345> ?p ?o }')).toEqual([{ o: `e:o${12345 % 997}` }]);
    expect((await select(p, undefined, endpoint, 'SELECT DISTINCT ?g WHERE { GRAPH ?g { <e:s1> ?p ?o } }')).map((r) => r.g)).toEqual(['https://e/g']);

    // A runaway query: 504 after the query timeout, and the host answers the next one.
    const slow = 'SELECT (COUNT(*) AS ?n) WHERE { ?a <e:p1> ?b . ?c <e:p2> ?d . ?e <e:p3> ?f }';
    const timedOut = await aws.request('GET', `${endpoint}?query=${encodeURIComponent(slow)}`, { headers: { accept: 'application/sparql-results+json' } });
    expect(timedOut.status).toBe(504);
    expect(timedOut.text).toMatch(/longer than/);
    const ask = await aws.request('GET', `${endpoint}?query=${encodeURIComponent('ASK { <e:s1> ?p ?o }')}`, { headers: { accept: 'application/sparql-results+json' } });
    expect(JSON.parse(ask.text)).toMatchObject({ boolean: true });
    expect(await select(p, undefined, endpoint, 'SELECT ?p WHERE { <e:s7> ?p <e:o7> }')).toEqual([{ p: 'e:p7' }]);
    expect(hostTasks().filter((t) => t.lastStatus === 'RUNNING')).toHaveLength(1);

    // Sync: a second host loads the new snapshot; the old task stops once the new one is recorded.
    const extra = new FormData();
    extra.append('defaultGraphName', 'https://e/g2');
    extra.append('file', new Blob(['<e:extra> <e:p> <e:o> .\n']), 'extra.nt');
    const second = await fetch(`${aws.url}/datasets/alice/big/jobs`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: extra });
    expect(second.status).toBe(201);
    await serviceUntil((s) => s.outOfSync === true, 'out of sync');
    expect((await aws.request('POST', '/datasets/alice/big/services/fast', { token: alice, body: { sync: true } })).status).toBe(200);
    // The old host answers while the new one loads.
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe(String(STATEMENTS));
    await serviceUntil((s) => s.status === 'running' && s.outOfSync === false, 'running and in sync');
    expect((await select(p, undefined, endpoint, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'))[0]!.n).toBe(String(STATEMENTS + 1));
    await tasksUntil(() => hostTasks().find((t) => t.taskArn === first!.taskArn)?.lastStatus === 'STOPPED', 'the old host task stopped');
    const current = hostTasks().filter((t) => t.lastStatus === 'RUNNING');
    expect(current).toHaveLength(1);
    expect(current[0]!.taskArn).not.toBe(first!.taskArn);

    // Stop: the task stops; queries answer 503.
    expect((await aws.request('POST', '/datasets/alice/big/services/fast', { token: alice, body: { stop: true } })).body.status).toBe('stopped');
    await tasksUntil(() => hostTasks().every((t) => t.lastStatus === 'STOPPED'), 'every host task stopped');
    expect((await aws.request('GET', `${endpoint}?query=${encodeURIComponent('ASK {}')}`)).status).toBe(503);
    expect(aws.aws.refusals()).toEqual([]);
  }, 600_000);
});
