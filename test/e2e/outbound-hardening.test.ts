/**
 * Nothing internal is reachable through the outbound path (issue 11, findings 1 and 5), end to end
 * through HTTP: a user's flow cannot talk to the metadata store (it listens on no TCP port, only
 * on an owner-only Unix socket); with private networks off, no notation of the unspecified or a
 * loopback address gets through URL imports, Load from URL, HTTP request or SHACL shapes; names
 * are checked on the addresses they resolve to when connecting; the platform's own back ends (the
 * external SPARQL endpoint) are refused even where private networks are allowed.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.js';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { waitForJob } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';

const EX = 'https://ex.org/';
const SHAPES = `@prefix sh: <http://www.w3.org/ns/shacl#> .\n<${EX}S> a sh:NodeShape ; sh:targetClass <${EX}T> .\n`;

/** TCP ports this process listens on: LISTEN rows of /proc/self/net/tcp{,6} whose socket is one of our descriptors. */
async function listeningTcpPorts(): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(join('/proc/self/fd', fd)).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports = new Set<number>();
  for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    const rows = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const row of rows) {
      const columns = row.trim().split(/\s+/);
      // columns: sl local_address rem_address st ... inode (index 9); state 0A is LISTEN
      if (columns[3] === '0A' && inodes.has(columns[9]!)) ports.add(parseInt(columns[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** A counting file server on loopback: 127.0.0.1 and ::1 on the same port ([::] connects to ::1). */
async function countingServer(): Promise<{ port: number; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const handler: RequestListener = (req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if ((req.url ?? '').startsWith('/shapes.ttl')) res.writeHead(200, { 'content-type': 'text/turtle' }).end(SHAPES);
    else res.writeHead(200, { 'content-type': 'text/turtle' }).end(`<${EX}a> <${EX}p> "reached" .\n`);
  };
  const listen = (server: Server, port: number, host: string) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  for (let attempt = 0; attempt < 10; attempt++) {
    const v4 = createServer(handler);
    await listen(v4, 0, '127.0.0.1');
    const port = (v4.address() as AddressInfo).port;
    const v6 = createServer(handler);
    const both = await listen(v6, port, '::1').then(() => true, () => false);
    const servers = both ? [v4, v6] : [v4];
    const close = () => Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))).then(() => undefined);
    if (both) return { port, hits, close };
    await close();
  }
  throw new Error('no port free on both 127.0.0.1 and ::1');
}

/** A flow user: alice, with a console session and a token. */
async function flowUser(p: TestPlatform): Promise<{ token: string; session: Record<string, string> }> {
  await enableFlows(p);
  const token = await p.createUser('alice');
  return { token, session: await consoleSession(p, 'alice') };
}

let seq = 0;

/** Runs a one-task flow of alice's to its end; answers the run and its task instance. */
async function runTask(p: TestPlatform, user: { token: string; session: Record<string, string> }, type: string, settings: Record<string, unknown>) {
  const id = `${type}-${++seq}`;
  await createFlow(p, 'alice', user.session, { id, name: id, accessLevel: 'Private', connections: [], tasks: [{ id: 'task', label: type, type, settings }] });
  const started = await startRun(p, `/flows/blueprints/alice/${id}/run`, user.token);
  expect(started.status, started.text).toBe(201);
  const run = await waitForRun(p, started.body.id, user.token, 60_000);
  const instances = await p.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: user.token });
  expect(instances.status, instances.text).toBe(200);
  return { run, task: instances.body.find((t: any) => t.taskId === 'task') };
}

const errorOf = (run: any): string => String(run.error?.message ?? JSON.stringify(run.error ?? null));

describe('the metadata store', () => {
  let p: TestPlatform;
  let user: { token: string; session: Record<string, string> };

  beforeAll(async () => {
    p = await TestPlatform.start(); // private networks allowed, as embedded by default
    user = await flowUser(p);
  });
  afterAll(async () => {
    await p?.stop();
  });

  it('answers no DynamoDB request from a flow: the process listens on no TCP port but the API', async () => {
    const apiPort = Number(new URL(p.url).port);
    const ports = await listeningTcpPorts();
    expect(ports).toContain(apiPort); // the reading works: it sees the API
    // The attack: a GetItem of the instance record (the token signing secret) to every port.
    const getItem = {
      TableName: 'platform',
      Key: { [TABLE_SCHEMA.partitionKey]: { S: 'INSTANCE' }, [TABLE_SCHEMA.sortKey]: { S: 'CONFIG' } },
    };
    for (const port of ports) {
      const { run, task } = await runTask(p, user, 'httpRequest', {
        method: 'POST',
        url: `http://127.0.0.1:${port}/`,
        headers: {
          'X-Amz-Target': 'DynamoDB_20120810.GetItem',
          'Content-Type': 'application/x-amz-json-1.0',
          'X-Amz-Date': '20260101T000000Z',
          Authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
        },
        body: JSON.stringify(getItem),
      });
      const answer = [String(task?.output?.body ?? ''), errorOf(run), ...((task?.log ?? []) as string[])].join('\n');
      expect(answer, `port ${port}`).not.toMatch(/"secret"|com\.amazon|"Item"/);
    }
    expect(ports, 'TCP ports this process listens on').toEqual([apiPort]);
  });

  it('listens on a socket only its OS user may reach', async () => {
    const folder = join(p.dataDir, 'run');
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    const socket = await stat(join(folder, 'dynalite.sock'));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
  });

  it('puts the socket in a private temporary folder when the data folder path is too long for one, and removes it on stop', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'ldp-long-'));
    const dataDir = join(parent, 'a-data-folder-whose-path-is-longer-than-a-unix-socket-path-may-be'.repeat(2));
    const runFolders = async () => new Set((await readdir(tmpdir())).filter((name) => name.startsWith('ldp-run-')));
    const before = await runFolders();
    const long = await TestPlatform.start({ dataDir });
    let running = true;
    try {
      const created = [...(await runFolders())].filter((name) => !before.has(name));
      expect(created).toHaveLength(1);
      expect((await stat(join(tmpdir(), created[0]!))).mode & 0o777).toBe(0o700);
      expect((await stat(join(tmpdir(), created[0]!, 'dynalite.sock'))).mode & 0o777).toBe(0o600);
      // The metadata store answers through it: the administrator can create a user.
      expect(await long.createUser('dora')).toMatch(/\S/);
      await long.stop();
      running = false;
      expect([...(await runFolders())].filter((name) => !before.has(name))).toEqual([]);
    } finally {
      if (running) await long.stop();
      await rm(parent, { recursive: true, force: true });
    }
  });
});

describe('with private networks off', () => {
  let p: TestPlatform;
  let user: { token: string; session: Record<string, string> };
  let files: Awaited<ReturnType<typeof countingServer>>;

  beforeAll(async () => {
    files = await countingServer();
    p = await TestPlatform.start({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' } });
    user = await flowUser(p);
    await p.createDataset('alice', 'target', 'private', user.token);
  });
  afterAll(async () => {
    await p?.stop();
    await files?.close();
  });

  const HOSTS = ['[::]', '[0::]', '[::0]', '0.0.0.0', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]'];

  it('refuses every notation of the unspecified and loopback address through all four paths, and never calls the server', async () => {
    // The server answers on both loopback addresses, so any of these URLs would have reached it.
    for (const host of ['127.0.0.1', '[::1]']) expect((await fetch(`http://${host}:${files.port}/data.ttl`)).status).toBe(200);
    const before = files.hits.length;
    for (const host of HOSTS) {
      const base = `http://${host}:${files.port}`;
      // The message names the origin as the URL parser writes it ([0::] is [::]).
      const refused = new RegExp(`Refused ${new URL(base).origin.replace(/[.[\]]/g, '\\$&')}: `);

      const job = await p.request('POST', '/datasets/alice/target/jobs', { token: user.token, body: { type: 'download', downloadUrls: [`${base}/data.ttl`] } });
      expect(job.status, job.text).toBe(201);
      const ended = await waitForJob(p, user.token, 'alice/target', job.body.jobId);
      expect(ended.status, host).toBe('error');
      expect(ended.error.message, host).toMatch(refused);

      const load = await runTask(p, user, 'loadFromUrl', { url: `${base}/data.ttl`, dataset: { account: 'alice', dataset: 'target' }, graph: `${EX}g` });
      expect(load.run.status, host).toBe('failed');
      expect(errorOf(load.run), host).toMatch(refused);

      const request = await runTask(p, user, 'httpRequest', { url: `${base}/data.ttl` });
      expect(request.run.status, host).toBe('failed');
      expect(errorOf(request.run), host).toMatch(refused);

      const shacl = await runTask(p, user, 'shaclValidation', { dataset: { account: 'alice', dataset: 'target' }, shapes: { url: `${base}/shapes.ttl` } });
      expect(shacl.run.status, host).toBe('failed');
      expect(errorOf(shacl.run), host).toMatch(refused);
    }
    expect(files.hits.slice(before), 'requests that reached the loopback server').toEqual([]);
  });

  it('checks a name on the addresses it resolves to when connecting', async () => {
    const before = files.hits.length;
    const { run } = await runTask(p, user, 'httpRequest', { url: `http://localhost:${files.port}/data.ttl` });
    expect(run.status).toBe('failed');
    expect(errorOf(run)).toMatch(new RegExp(`Refused http://localhost:${files.port}: .*loopback or private-network`));
    expect(files.hits.length).toBe(before);
  });
});

describe('the platform\'s own back ends', () => {
  let p: TestPlatform;
  let user: { token: string; session: Record<string, string> };
  let store: Awaited<ReturnType<typeof countingServer>>;
  let files: Awaited<ReturnType<typeof countingServer>>;

  beforeAll(async () => {
    store = await countingServer(); // stands in for Virtuoso
    files = await countingServer();
    // Private networks allowed (the embedded default): only the back end itself is refused.
    p = await TestPlatform.start({ env: { EXTERNAL_SPARQL_ENDPOINT: `http://127.0.0.1:${store.port}/sparql` } });
    user = await flowUser(p);
  });
  afterAll(async () => {
    await p?.stop();
    await store?.close();
    await files?.close();
  });

  it('are refused by any name or loopback address even where private networks are allowed', async () => {
    const before = store.hits.length;
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:7f00:1]', '127.0.0.2']) {
      const { run } = await runTask(p, user, 'httpRequest', { method: 'POST', url: `http://${host}:${store.port}/sparql`, body: 'update=DROP ALL' });
      expect(run.status, host).toBe('failed');
      expect(errorOf(run), host).toMatch(/Refused .*platform's own back end \(EXTERNAL_SPARQL_ENDPOINT\)/);
    }
    expect(store.hits.slice(before), 'requests that reached the SPARQL store').toEqual([]);
    // Other loopback servers and the platform's own API stay reachable.
    const other = await runTask(p, user, 'httpRequest', { url: `http://127.0.0.1:${files.port}/data.ttl` });
    expect(other.run.status, errorOf(other.run)).toBe('finished');
    expect(other.task.output.body).toContain('reached');
    const own = await runTask(p, user, 'httpRequest', { url: `${p.url}/me`, headers: { Authorization: 'Bearer ?system_platformToken' } });
    expect(own.run.status, errorOf(own.run)).toBe('finished');
    expect(own.task.output.body).toContain('alice');
  });
});
