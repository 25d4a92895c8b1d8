/**
 * The README's onboarding curl session, run as written (bash, curl, node) against the embedded
 * platform started as `npm start` starts it: the exact bodies of POST /accounts, POST /login, the
 * CSRF step and the token, then a dataset, an import and a query with that token.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let dir: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  dir = await mkdtemp(join(tmpdir(), 'ldp-onboarding-'));
});
afterAll(async () => {
  await p?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("runs the README's onboarding session as pasted", async () => {
  const readme = await readFile(join(import.meta.dirname, '../../README.md'), 'utf8');
  const block = /<!-- onboarding:start -->\s*```sh\n([\s\S]*?)```\s*<!-- onboarding:end -->/.exec(readme)?.[1];
  expect(block).toBeTruthy();
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', block!], {
    cwd: dir,
    env: { ...process.env, API: p.url, ADMIN_TOKEN: p.adminToken },
    timeout: 90_000,
  });
  // The SPARQL answer (the last output) holds the imported statement.
  expect(stdout).toContain('"value":"A"');
  // The token it made is alice's, and works.
  const dataset = await p.request('GET', '/datasets/alice/demo', { token: p.adminToken });
  expect(dataset.body).toMatchObject({ name: 'demo', accessLevel: 'private', statements: 1 });
  const tokens = await p.request('GET', '/accounts/alice/tokens', { token: p.adminToken });
  expect(tokens.body.map((t: { description: string }) => t.description)).toEqual(['my laptop']);
  // The session ended with the logout: the cookie no longer signs in.
  const jar = (await readFile(join(dir, 'cookies.txt'), 'utf8')).split('\n').map((line) => line.split('\t'));
  const session = jar.find((fields) => fields[5] === 'ldp_session')?.[6];
  expect(session).toBeTruthy();
  expect((await p.request('GET', '/me', { headers: { cookie: `ldp_session=${session}` } })).status).toBe(401);
});

it('refuses a session change without the CSRF header (403) and a wrong password (401)', async () => {
  await p.request('POST', '/accounts', { token: p.adminToken, body: { type: 'user', accountName: 'bob', password: 'bob-secret-1234' } });
  const login = await fetch(`${p.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ accountName: 'bob', password: 'bob-secret-1234' }) });
  const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const noCsrf = await p.request('POST', '/accounts/bob/tokens', { headers: { cookie }, body: { description: 'x' } });
  expect(noCsrf.status).toBe(403);
  const csrf = (await login.json()).csrfToken as string;
  expect((await p.request('POST', '/accounts/bob/tokens', { headers: { cookie, 'x-csrf-token': csrf }, body: { description: 'x' } })).status).toBe(201);
  expect((await p.request('POST', '/login', { body: { accountName: 'bob', password: 'wrong-password-123' } })).status).toBe(401);
});
