/**
 * The console's part of `npm run bench` (issue 17): what its first load costs (index.html and the
 * scripts and styles it names, as the embedded platform sends them compressed, before the query
 * editor or the flow canvas load on demand) and the time to interactive of a dataset page in
 * Debian's chromium (navigation start to the dataset's statements and upload form shown).
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { recordAim } from './aims.js';
import type { RunningPlatform } from './embedded-server.js';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));
const AIM_KB = 400;

async function firstLoadBytes(url: string): Promise<{ total: number; raw: number; files: string[] }> {
  const get = async (path: string) => {
    const res = await fetch(new URL(path, url), { headers: { 'accept-encoding': 'br, gzip' } });
    if (!res.ok) throw new Error(`${path}: ${res.status}`);
    const compressed = Number(res.headers.get('content-length') ?? 0);
    const body = await res.text();
    return { compressed, raw: Buffer.byteLength(body), body };
  };
  const index = await get('/console/');
  const named = [...index.body.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  let total = index.compressed;
  let raw = index.raw;
  for (const file of named) {
    const f = await get(file);
    total += f.compressed;
    raw += f.raw;
  }
  return { total, raw, files: ['index.html', ...named] };
}

export async function benchConsole(platform: RunningPlatform): Promise<void> {
  console.log('# Console (issue 17): first load and time to interactive');
  const load = await firstLoadBytes(platform.url);
  const kb = load.total / 1024;
  console.log(`first load: ${load.files.length} files, ${kb.toFixed(1)} KB compressed (${(load.raw / 1024).toFixed(1)} KB uncompressed): ${load.files.join(', ')}`);
  recordAim('console first load (HTML+JS+CSS, compressed)', `${kb.toFixed(1)} KB`, `< ${AIM_KB} KB compressed`, kb < AIM_KB);

  if (!CHROMIUM) {
    console.log('time to interactive: not measured, chromium is missing (apt-get install -y chromium)');
    return;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
  try {
    const context = await browser.newContext();
    context.setDefaultTimeout(30_000);
    const login = await context.request.post(`${platform.url}/login`, { data: { accountName: 'admin', password: platform.adminPassword } });
    if (!login.ok()) throw new Error(`login: ${login.status()} ${await login.text()}`);
    const page = await context.newPage();
    const times: number[] = [];
    for (let i = 0; i < 6; i++) {
      // A new document each time (cached assets after the first, as a returning user has them).
      await page.goto(`${platform.url}/console/?n=${i}#/datasets/bench/public-data`);
      await page.getByTestId('statement-count').waitFor();
      await page.getByRole('button', { name: 'Upload', exact: true }).waitFor();
      times.push(await page.evaluate(() => performance.now()));
    }
    const [cold, ...warm] = times;
    warm.sort((a, b) => a - b);
    const median = warm[Math.floor(warm.length / 2)]!;
    console.log(`time to interactive, dataset page: first visit ${cold!.toFixed(0)} ms; later visits median ${median.toFixed(0)} ms (of ${warm.length})`);
  } finally {
    await browser.close();
  }
}
