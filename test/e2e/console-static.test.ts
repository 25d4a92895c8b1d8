/**
 * The console's files on the embedded platform (issue 17, functions/http/console-static.ts), over
 * HTTP, with a build folder of its own (no browser, no Vite): /console redirects to /console/,
 * index.html carries the CSP and is revalidated, hashed assets are cached for a year and sent
 * compressed, unknown paths below /console get index.html but unknown assets a JSON 404, nothing
 * outside the build is reachable, writes are refused, a missing build says how to build it, and
 * the API's routes are untouched.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';

let build: string;
let p: TestPlatform;
let unbuilt: TestPlatform;
const script = `console.log(${JSON.stringify('x'.repeat(5000))});`;

beforeAll(async () => {
  build = await mkdtemp(join(tmpdir(), 'ldp-console-static-'));
  await mkdir(join(build, 'assets'));
  await writeFile(join(build, 'index.html'), '<!doctype html><div id="root"></div><script type="module" src="/console/assets/index-abc.js"></script>');
  await writeFile(join(build, 'assets', 'index-abc.js'), script);
  await writeFile(join(build, '..', `secret-${process.pid}.txt`), 'not for the web');
  p = await TestPlatform.start({ consoleDir: build });
  unbuilt = await TestPlatform.start({ consoleDir: join(build, 'nothing-here') });
});
afterAll(async () => {
  await p?.stop();
  await unbuilt?.stop();
  await rm(join(build, '..', `secret-${process.pid}.txt`), { force: true });
  await rm(build, { recursive: true, force: true });
});

describe('the console at /console', () => {
  it('redirects /console to /console/ and serves index.html with its CSP, revalidated', async () => {
    const redirect = await fetch(`${p.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/console/');
    const index = await fetch(`${p.url}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await index.text()).toContain('<div id="root">');
    expect((await fetch(`${p.url}/info`)).headers.get('content-type')).toMatch(/json/);
    expect((await (await fetch(`${p.url}/info`)).json()).consoleUrl).toBe(`${p.url}/console`);
  });

  it('sends hashed assets compressed (brotli or gzip, as asked) and cached for a year', async () => {
    const br = await fetch(`${p.url}/console/assets/index-abc.js`, { headers: { 'accept-encoding': 'br' }, decompress: false } as RequestInit);
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(br.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(br.headers.get('vary')).toBe('accept-encoding');
    const raw = Buffer.from(await br.arrayBuffer());
    // fetch may already have decoded it; either way the bytes are the script.
    const text = raw.toString('utf8') === script ? script : brotliDecompressSync(raw).toString('utf8');
    expect(text).toBe(script);
    expect(Number(br.headers.get('content-length'))).toBeLessThan(script.length);
    const plain = await fetch(`${p.url}/console/assets/index-abc.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(script);
  });

  it('answers index.html for other paths below /console, a JSON 404 for a missing asset', async () => {
    const deep = await fetch(`${p.url}/console/datasets/alice`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="root">');
    const missing = await fetch(`${p.url}/console/assets/none.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).message).toMatch(/No console file/);
  });

  it('reaches nothing outside the build folder', async () => {
    for (const path of [`/console/..%2fsecret-${process.pid}.txt`, `/console/%2e%2e/secret-${process.pid}.txt`, `/console/assets/..%2f..%2fsecret-${process.pid}.txt`]) {
      const res = await fetch(`${p.url}${path}`);
      expect(await res.text(), path).not.toContain('not for the web');
    }
  });

  it('refuses writes with a JSON 405', async () => {
    const res = await fetch(`${p.url}/console/index.html`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect((await res.json()).message).toMatch(/GET/);
  });

  it('says how to build the console when it is not built', async () => {
    const res = await fetch(`${unbuilt.url}/console/`);
    expect(res.status).toBe(503);
    expect((await res.json()).message).toMatch(/console-build/);
  });
});
