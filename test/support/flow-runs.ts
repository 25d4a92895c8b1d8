/**
 * Shared set-up of the flow-run e2e files (test/e2e/flows-runs-*.test.ts): per file, one embedded
 * platform with flows enabled (and the SPARQL update task switched on), alice and bob with their
 * console sessions, alice/data (imported from DATA), alice/target, bob/secret, and a local echo
 * server the httpRequest tasks call; plus the helpers those tests share (start a run and wait for
 * it, read its task instances, list runs).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from './flows.js';
import { importFiles } from './imports.js';
import { TestPlatform, type ApiResponse } from './platform.js';

export const EX = 'https://ex.org/';
export const DATA = `<${EX}a> <${EX}name> "Alice" ; a <${EX}Person> .
<${EX}b> <${EX}name> "Bob \\"quoted\\" } ; DROP ALL" ; a <${EX}Person> .
<${EX}c> <${EX}name> "${EX}Person" .
`;

export const flowPath = (id: string, account = 'alice') => `/flows/blueprints/${account}/${id}`;

/** A flow whose decision `d` goes to `yes` when `condition` holds, else to `no` (each sets r). */
export function decisionFlow(id: string, condition: Record<string, unknown>): Record<string, unknown> {
  return {
    id,
    variables: [{ name: 'v' }],
    outputVariables: [{ name: 'r' }],
    tasks: [
      { id: 'd', label: 'Decide', type: 'decision', settings: { branches: [{ to: 'yes', conditions: [condition] }], otherwise: 'no' } },
      { id: 'yes', label: 'Yes', type: 'setVariables', settings: { values: { r: 'yes' } } },
      { id: 'no', label: 'No', type: 'setVariables', settings: { values: { r: 'no' } } },
    ],
    connections: [
      { from: 'd', to: 'yes' },
      { from: 'd', to: 'no' },
    ],
  };
}

/** What a test file sees once its beforeAll has run. */
export interface FlowRunsWorld {
  p: TestPlatform;
  alice: string;
  bob: string;
  aliceSession: Record<string, string>;
  bobSession: Record<string, string>;
  dataDatasetId: string;
  /** The echo server's base URL. */
  echoUrl: string;
  /** What the echo server received, in order (filled as requests come in). */
  received: { url: string; headers: IncomingHttpHeaders }[];
  /** A unique flow id per test. */
  fid(base: string): string;
  newFlow(definition: Record<string, unknown>, account?: string, session?: Record<string, string>): Promise<{ path: string; blueprintId: string }>;
  /** Starts a run (must answer 201) and waits for it to end. */
  runToEnd(path: string, options?: { query?: Record<string, string>; body?: unknown; token?: string }): Promise<any>;
  tasksOf(runId: string, token?: string): Promise<any[]>;
  taskOf(runId: string, taskId: string, token?: string): Promise<any>;
  statusesOf(runId: string): Promise<Record<string, string>>;
  /** Polls `check` until it gives a value (bounded). */
  until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  runsOf(query: string, token?: string): Promise<ApiResponse>;
}

/**
 * Registers the file's beforeAll (start everything) and afterAll (stop it) and returns the world;
 * its fields are set once the beforeAll has run, its helpers may be taken apart at once.
 */
export function useFlowRunsWorld(): FlowRunsWorld {
  let echo: Server | undefined;
  let seq = 0;
  const w = {
    received: [],
    fid: (base: string) => `${base}-${++seq}`,
    async newFlow(definition: Record<string, unknown>, account = 'alice', session = w.aliceSession) {
      const created = await createFlow(w.p, account, session, { name: String(definition.id), accessLevel: 'Private', connections: [], ...definition });
      return { path: flowPath(String(definition.id), account), blueprintId: created.blueprintId };
    },
    async runToEnd(path: string, options: { query?: Record<string, string>; body?: unknown; token?: string } = {}) {
      const token = options.token ?? w.alice;
      const started = await startRun(w.p, `${path}/run`, token, options);
      expect(started.status, started.text).toBe(201);
      return waitForRun(w.p, started.body.id, token);
    },
    async tasksOf(runId: string, token = w.alice) {
      const res = await w.p.request('GET', `/flows/taskInstances?runId=${runId}`, { token });
      expect(res.status, res.text).toBe(200);
      return res.body;
    },
    async taskOf(runId: string, taskId: string, token = w.alice) {
      const task = (await w.tasksOf(runId, token)).find((t) => t.taskId === taskId);
      expect(task, `task ${taskId} of run ${runId}`).toBeDefined();
      return task;
    },
    statusesOf: async (runId: string) => Object.fromEntries((await w.tasksOf(runId)).map((t) => [t.taskId, t.status])),
    async until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (let i = 0; i < 2_000 && Date.now() < deadline; i++) {
        const value = await check();
        if (value !== undefined) return value;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`${what}: not within ${timeoutMs} ms`);
    },
    runsOf: async (query: string, token = w.alice): Promise<ApiResponse> => w.p.request('GET', `/flows/runs?${query}`, { token }),
  } as unknown as FlowRunsWorld;

  beforeAll(async () => {
    const server = createServer((req, res) => {
      w.received.push({ url: req.url ?? '', headers: req.headers });
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, headers: req.headers }));
    });
    echo = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    w.echoUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const p = (w.p = await TestPlatform.start());
    await enableFlows(p, { sparqlUpdateTaskEnabled: true });
    w.alice = await p.createUser('alice');
    w.bob = await p.createUser('bob');
    w.aliceSession = await consoleSession(p, 'alice');
    w.bobSession = await consoleSession(p, 'bob');
    w.dataDatasetId = (await p.createDataset('alice', 'data', 'private', w.alice)).id;
    const job = await importFiles(p, w.alice, 'alice/data', [{ name: 'data.ttl', content: DATA }], { defaultGraphName: `${EX}graphs/data` });
    expect(job.status, JSON.stringify(job)).toBe('finished');
    await p.createDataset('alice', 'target', 'private', w.alice);
    await p.createDataset('bob', 'secret', 'private', w.bob);
    const bobJob = await importFiles(p, w.bob, 'bob/secret', [{ name: 's.ttl', content: `<${EX}s> <${EX}name> "Secret" .` }], { defaultGraphName: `${EX}graphs/s` });
    expect(bobJob.status, JSON.stringify(bobJob)).toBe('finished');
  });

  afterAll(async () => {
    await w.p?.stop();
    await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
  });

  return w;
}
