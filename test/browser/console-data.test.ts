/**
 * The console in a real Chromium (issue 17): sign in and out, account settings (email switch,
 * tokens shown once and revoked), a dataset created, a 6 MB file uploaded with the progress bar
 * through tus and imported, graphs renamed, a query run and its CSV downloaded, API errors shown
 * in the API's words, and axe-core's serious findings on these pages.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { writeFile, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, ConsoleHarness, WAIT } from '../support/browser.js';

const run = browserAvailable();

describe.skipIf(!run)('console: data pages in Chromium', () => {
  let h: ConsoleHarness;
  let aliceToken: string;
  const bigFile = join(tmpdir(), `ldp-console-6mb-${process.pid}.nt`);

  beforeAll(async () => {
    h = await ConsoleHarness.start();
    aliceToken = await h.platform.createUser('alice');
    await h.platform.createUser('bob');
    // About 6 MB of N-Triples: 60,000 statements.
    const lines: string[] = [];
    for (let i = 0, size = 0; size < 6_000_000 && i < 100_000; i++) {
      const line = `<https://example.org/thing/${i}> <https://example.org/label> "Thing number ${i} of the six megabyte test file" .\n`;
      lines.push(line);
      size += line.length;
    }
    await writeFile(bigFile, lines.join(''));
  });
  afterAll(async () => {
    await h?.stop();
    await rm(bigFile, { force: true });
  });

  it('serves the console at /console with its CSP, and /info points there', async () => {
    const res = await fetch(h.consoleUrl, { headers: { 'accept-encoding': 'br' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await res.text()).toContain('<div id="root">');
    const info = await h.platform.request('GET', '/info');
    expect(info.body.consoleUrl).toBe(`${h.platform.url}/console`);
    const redirect = await fetch(`${h.platform.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect((await fetch(`${h.platform.url}/console/x`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${h.platform.url}/console/assets/none.js`)).status).toBe(404);
    // The API's own 404 stays JSON elsewhere.
    expect((await fetch(`${h.platform.url}/nothing-here`)).status).toBe(404);
  });

  it('signs in (a wrong password shows the API error), switches email and manages tokens, signs out', async () => {
    const { context, page } = await h.newPage();
    try {
      await page.goto(h.consoleUrl);
      await page.getByLabel('Account name').fill('alice');
      await page.getByLabel('Password').fill('not-the-password-1');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const wrong = await h.platform.request('POST', '/login', { body: { accountName: 'alice', password: 'not-the-password-1' } });
      await expect.poll(() => page.getByRole('alert').textContent(), WAIT).toBe(wrong.body.message);
      await h.screenshot(page, '01-sign-in-error');
      expect(await h.seriousViolations(page)).toEqual([]);

      await h.signIn(page, 'alice');
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { name: 'Account settings' }).waitFor(WAIT);
      const emailSwitch = page.getByLabel(/Email notifications/);
      const before = await emailSwitch.isChecked();
      await emailSwitch.click();
      await expect.poll(async () => (await h.platform.request('GET', '/me', { token: aliceToken })).body.emailNotifications, WAIT).toBe(!before);

      await page.getByLabel('Description').fill('console token');
      await page.getByRole('button', { name: 'Create token' }).click();
      const shown = await page.getByTestId('new-token').inputValue();
      expect(shown.length).toBeGreaterThan(20);
      // The token works against the API, and is shown only once.
      expect((await h.platform.request('GET', '/me', { token: shown })).body.accountName).toBe('alice');
      await h.screenshot(page, '02-account-token-shown-once');
      expect(await h.seriousViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Done' }).click();
      await expect.poll(() => page.getByTestId('new-token').count(), WAIT).toBe(0);
      await page.getByRole('button', { name: 'Revoke token console token' }).click();
      await expect.poll(async () => (await h.platform.request('GET', '/me', { token: shown })).status, WAIT).toBe(401);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
      // The session cookie is gone: the console asks to sign in again after a reload.
      await page.reload();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    } finally {
      await context.close();
    }
  });

  it('creates a dataset, uploads 6 MB with the progress bar, imports it, renames a graph, queries and downloads CSV', { timeout: 180_000 }, async () => {
    const { context, page } = await h.newPage();
    try {
      await h.signIn(page, 'alice');
      await page.getByLabel('Name', { exact: true }).fill('bad name with spaces');
      await page.getByRole('button', { name: 'Create dataset' }).click();
      const refused = await h.platform.request('POST', '/datasets/alice', { token: aliceToken, body: { name: 'bad name with spaces', accessLevel: 'private' } });
      expect(refused.status).toBe(400);
      await expect.poll(() => page.getByRole('alert').textContent(), WAIT).toBe(refused.body.message);

      await page.getByLabel('Name', { exact: true }).fill('demo');
      await page.getByRole('button', { name: 'Create dataset' }).click();
      await page.getByRole('heading', { name: 'alice / demo' }).waitFor(WAIT);
      await h.screenshot(page, '03-dataset-empty');
      expect(await h.seriousViolations(page)).toEqual([]);

      await page.getByLabel(/Data file/).setInputFiles(bigFile);
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      // The progress bar shows, and reaches 100 % once every chunk is sent.
      await page.getByTestId('upload-progress').waitFor(WAIT);
      await expect.poll(() => page.getByTestId('upload-percent').textContent(), { timeout: 60_000 }).toBe('100%');
      await h.screenshot(page, '04-dataset-upload-progress');
      await expect.poll(() => page.getByTestId('job-status').textContent(), { timeout: 90_000 }).toMatch(/^Import finished/);
      const dataset = await h.platform.request('GET', '/datasets/alice/demo', { token: aliceToken });
      expect(dataset.body.statements).toBeGreaterThan(40_000);
      await expect.poll(() => page.getByTestId('statement-count').textContent(), WAIT).toBe(String(dataset.body.statements));

      // Rename the graph the import made.
      await page.getByRole('button', { name: /^Rename graph / }).click();
      await page.getByLabel(/^New name of /).fill('https://example.org/graphs/things');
      await page.getByRole('button', { name: 'Save name' }).click();
      await page.getByText('https://example.org/graphs/things', { exact: true }).waitFor(WAIT);
      await h.screenshot(page, '05-dataset-graphs');

      // Query, see the table, download the CSV.
      await page.getByRole('link', { name: 'Query this dataset' }).click();
      await page.getByLabel('SPARQL query').fill('SELECT ?s ?label WHERE { ?s <https://example.org/label> ?label } ORDER BY ?s LIMIT 5');
      await page.getByRole('button', { name: 'Run query' }).click();
      await expect.poll(() => page.getByTestId('results').locator('tbody tr').count(), WAIT).toBe(5);
      await h.screenshot(page, '06-query-results');
      expect(await h.seriousViolations(page)).toEqual([]);
      const [download] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('link', { name: 'Download CSV' }).click()]);
      const csv = await readFile((await download.path())!, 'utf8');
      expect(csv.split(/\r?\n/)[0]).toBe('s,label');
      expect(csv).toContain('https://example.org/thing/');

      // A SPARQL syntax error is shown in the endpoint's own words.
      await page.getByLabel('SPARQL query').fill('SELECT WHERE {');
      await page.getByRole('button', { name: 'Run query' }).click();
      await expect.poll(async () => (await page.getByRole('alert').textContent()) ?? '', WAIT).toMatch(/./);
      const direct = await fetch(`${h.platform.url}/datasets/alice/demo/sparql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${aliceToken}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ query: 'SELECT WHERE {' }),
      });
      const words = (await direct.text()).trim();
      expect(await page.getByRole('alert').textContent()).toBe(words);
    } finally {
      await context.close();
    }
  });

  it("does not show another user's private dataset: the API's 404 is shown", async () => {
    const { context, page } = await h.newPage();
    try {
      await h.signIn(page, 'bob');
      await page.goto(`${h.consoleUrl}#/datasets/alice/demo`);
      const denied = await h.platform.request('GET', '/datasets/alice/demo', { token: await h.platform.createToken('bob', h.platform.adminToken) });
      expect(denied.status).toBe(404);
      await expect.poll(() => page.getByRole('alert').first().textContent(), WAIT).toBe(denied.body.message);
    } finally {
      await context.close();
    }
  });
});
