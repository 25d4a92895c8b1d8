/**
 * Structured logs of the embedded platform, and no secrets in them: requests carrying a password,
 * an API token, a session cookie, a flow's masked value and a run's platform token, and a request
 * that fails with a 500 carrying them all, while the platform logs to a captured sink. Every
 * request's lines carry its request id and route pattern, and concurrent requests never mix them.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../functions/adapters/common/powertools-logger.js';
import { consoleSession, createFlow, enableFlows, startRun, waitForRun } from '../support/flows.js';
import { TestPlatform } from '../support/platform.js';

interface Line {
  level: string;
  message: string;
  requestId?: string;
  route?: string;
  status?: number;
  [key: string]: unknown;
}

const raw: string[] = [];
const lines = (): Line[] => raw.map((l) => JSON.parse(l) as Line);

const PASSWORD = 'alice-Pa55word-for-logging';
const MASKED = 'masked-Value-3f9c1e77';
let p: TestPlatform;
let alice: string;
let session: Record<string, string>;
let echo: Server;
let echoUrl: string;
const received: { url: string; headers: IncomingHttpHeaders }[] = [];
/** Every secret a request carried; none may appear in what the logger wrote. */
const secrets: string[] = [];

beforeAll(async () => {
  p = await TestPlatform.start({ logger: createLogger({ level: 'INFO', write: (line) => raw.push(line) }) });
  echo = createServer((req, res) => {
    received.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  alice = await p.createUser('alice', { password: PASSWORD });
  session = await consoleSession(p, 'alice', PASSWORD);
  const sessionId = /ldp_session=([^;]+)/.exec(session.cookie!)![1]!;
  secrets.push(PASSWORD, MASKED, alice, p.adminToken, sessionId, session['x-csrf-token']!);
});

afterAll(async () => {
  await p?.stop();
  await new Promise((r) => echo?.close(r));
});

describe('embedded platform logs', () => {
  it('writes one JSON line per request with its request id, route pattern and status', async () => {
    expect((await p.request('GET', '/me', { token: alice })).status).toBe(200);
    expect((await p.request('GET', '/datasets/alice', { token: alice })).status).toBe(200);
    const requests = lines().filter((l) => l.message === 'request');
    const me = requests.find((l) => l.route === 'GET /me');
    expect(me).toMatchObject({ level: 'INFO', status: 200, service: 'linked-data-platform' });
    expect(me!.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(requests.find((l) => l.route === 'GET /datasets/{account}')).toMatchObject({ status: 200 });
    // Paths are not logged (they hold names); the pattern is.
    expect(raw.join('\n')).not.toContain('"/datasets/alice"');
  });

  it('runs a flow with a masked value and the run token without either reaching the log', async () => {
    await enableFlows(p);
    await createFlow(p, 'alice', session, {
      id: 'secretive',
      name: 'Secretive',
      accessLevel: 'Private',
      maskedValues: [{ name: 'apiKey' }],
      tasks: [
        { id: 'me', label: 'Who am I', type: 'httpRequest', settings: { url: `${p.url}/me`, headers: { Authorization: 'Bearer ?system_platformToken' } } },
        { id: 'send', label: 'Send', type: 'httpRequest', settings: { url: `${echoUrl}/echo/\\?k=?apiKey`, headers: { 'X-Api-Key': '?apiKey', Authorization: 'Bearer ?system_platformToken' } } },
        // Nothing listens on port 9 here: the task fails with the masked value in its URL.
        { id: 'fail', label: 'Fail', type: 'httpRequest', settings: { url: 'http://127.0.0.1:9/\\?k=?apiKey' } },
      ],
      connections: [
        { from: 'me', to: 'send' },
        { from: 'send', to: 'fail' },
      ],
    });
    const put = await p.request('PUT', '/flows/blueprints/alice/secretive/maskedValues/apiKey', { headers: session, body: { value: MASKED } });
    expect(put.status).toBe(204);
    const started = await startRun(p, '/flows/blueprints/alice/secretive/run', alice);
    expect(started.status, started.text).toBe(201);
    const run = await waitForRun(p, started.body.id, alice);
    expect(run.status).toBe('failed');
    const seen = received.find((r) => r.url.startsWith('/echo/'));
    expect(seen?.headers['x-api-key']).toBe(MASKED);
    const runToken = String(seen!.headers.authorization).replace(/^Bearer /, '');
    expect(runToken.length).toBeGreaterThan(10);
    secrets.push(runToken);
    // The run's own call to the API was logged like any request.
    expect(lines().some((l) => l.message === 'request' && l.route === 'GET /me' && l.status === 200)).toBe(true);
  });

  it('logs a failing request (500) with its id and route, never its token, cookie or body', async () => {
    expect((await p.request('POST', '/datasets/alice', { token: alice, body: { name: 'files', accessLevel: 'private' } })).status).toBe(201);
    // A file where the data bucket's folder should be: every write to it fails, an internal error.
    const dataBlobs = join(p.dataDir, 'blobs', 'data');
    await mkdir(join(p.dataDir, 'blobs'), { recursive: true });
    const moved = await rename(dataBlobs, `${dataBlobs}.moved`).then(
      () => true,
      (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? false : Promise.reject(e)),
    );
    await writeFile(dataBlobs, 'not a folder');
    try {
      const form = new FormData();
      form.append('file', new Blob([`password=${PASSWORD} key=${MASKED}`]), 'secrets.txt');
      const res = await fetch(`${p.url}/datasets/alice/files/assets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, cookie: session.cookie!, 'x-api-key': MASKED },
        body: form,
      });
      expect(res.status).toBe(500);
      const body = await res.text();
      for (const secret of secrets) expect(body).not.toContain(secret);
    } finally {
      await rm(dataBlobs);
      if (moved) await rename(`${dataBlobs}.moved`, dataBlobs);
    }
    const route = 'POST /datasets/{account}/{dataset}/assets';
    const failed = lines().filter((l) => l.route === route);
    const error = failed.find((l) => l.level === 'ERROR');
    expect(error).toBeDefined();
    expect(error!.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(failed.find((l) => l.message === 'request')).toMatchObject({ status: 500, requestId: error!.requestId });
  });

  it('keeps concurrent requests apart: each request id has one route on all its lines', async () => {
    const before = raw.length;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 3 === 0 ? p.request('GET', '/info') : i % 3 === 1 ? p.request('GET', '/me', { token: alice }) : p.request('GET', '/datasets/alice/files', { token: alice }),
      ),
    );
    const fresh = raw.slice(before).map((l) => JSON.parse(l) as Line);
    const routes = new Map<string, Set<string>>();
    for (const l of fresh.filter((x) => x.requestId)) routes.set(l.requestId!, (routes.get(l.requestId!) ?? new Set()).add(l.route!));
    expect(routes.size).toBe(12);
    for (const set of routes.values()) expect(set.size).toBe(1);
    expect(fresh.filter((l) => l.route === 'GET /info')).toHaveLength(4);
  });

  it('wrote none of the secrets the requests carried', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(7);
    const written = raw.join('\n');
    expect(written.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(written).not.toContain(secret);
  });
});

describe('the logger redacts secrets that reach it anyway', () => {
  it('masks secret attributes by name, and tokens, cookies and URL passwords inside text and errors', () => {
    const out: string[] = [];
    const logger = createLogger({ level: 'INFO', write: (line) => out.push(line) });
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNlY3JldA';
    logger.info('sign-in', { password: 'hunter2-secret', headers: { authorization: 'Bearer opaque-secret-1', cookie: 'ldp_session=sess-secret-2' } });
    logger.error('fetch failed', { error: new Error(`GET https://user:url-secret-3@example.org/x failed; sent Bearer ${jwt} and ldp_session=sess-secret-4`) });
    logger.withAttributes({ requestId: 'r-1', route: 'GET /me' }, () => logger.warn(`token ${jwt} refused`));
    const text = out.join('\n');
    for (const secret of ['hunter2-secret', 'opaque-secret-1', 'sess-secret-2', 'url-secret-3', 'sess-secret-4', jwt, 'c2lnbmF0dXJlLXNlY3JldA']) expect(text).not.toContain(secret);
    const [signIn, failed, refused] = out.map((l) => JSON.parse(l));
    expect(signIn).toMatchObject({ level: 'INFO', message: 'sign-in', password: '[redacted]' });
    expect(failed.error.message).toBe('GET https://[redacted]@example.org/x failed; sent Bearer [redacted] and ldp_session=[redacted]');
    expect(refused).toMatchObject({ level: 'WARN', message: 'token [redacted] refused', requestId: 'r-1', route: 'GET /me' });
  });
});
