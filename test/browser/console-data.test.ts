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
import { waitForJob } from '../support/imports.js';

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

  it('serves the console at /console with its CSP, and /info points there', { timeout: 120_000 }, async () => {
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

  it('signs in (a wrong password shows the API error), switches email and manages tokens, signs out', { timeout: 120_000 }, async () => {
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
      await page.getByTestId('data-upload-progress').waitFor(WAIT);
      await expect.poll(() => page.getByTestId('data-upload-percent').textContent(), { timeout: 60_000 }).toBe('100%');
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
      // The import's job is listed, finished, with its statements.
      await page.getByTestId('jobs').getByText('finished').waitFor(WAIT);

      // The resource browser: one resource's statements; an IRI opens its own description.
      await page.getByLabel('Resource IRI').fill('https://example.org/thing/1');
      await page.getByRole('button', { name: 'Describe' }).click();
      await page.getByTestId('describe').getByText('"Thing number 1 of the six megabyte test file"').waitFor(WAIT);
      await page.getByTestId('describe').getByRole('button', { name: 'https://example.org/label' }).click();
      await page.getByText('Nothing is said about this resource.').waitFor(WAIT);
      expect(await page.getByLabel('Resource IRI').inputValue()).toBe('https://example.org/label');

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

      // A label column and a number column: the results can be shown as a chart.
      await page.getByLabel('SPARQL query').fill('SELECT ?s (STRLEN(?label) AS ?length) WHERE { ?s <https://example.org/label> ?label } ORDER BY ?s LIMIT 8');
      await page.getByRole('button', { name: 'Run query' }).click();
      await page.getByRole('button', { name: 'Show chart' }).click();
      await page.getByRole('img', { name: 'Bar chart of length by s' }).waitFor(WAIT);
      await h.screenshot(page, '06b-query-chart');

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

  it('uploads an asset with tus: the connection drops after the first chunk, Resume sends only the rest', { timeout: 120_000 }, async () => {
    const { context, page } = await h.newPage();
    try {
      await h.platform.createDataset('alice', 'files', 'private', aliceToken);
      await h.signIn(page, 'alice');
      await page.goto(`${h.consoleUrl}#/datasets/alice/files`);
      // Every PATCH past the first chunk fails (as a dropped connection) until the test lets them through.
      let failing = true;
      const offsets: string[] = [];
      await page.route('**/assets/add/**', async (route) => {
        const req = route.request();
        if (req.method() === 'PATCH') {
          const offset = req.headers()['upload-offset'] ?? '';
          offsets.push(offset);
          if (failing && offset !== '0') return route.abort('connectionreset');
        }
        return route.continue();
      });
      await page.getByLabel(/Asset file/).setInputFiles(bigFile);
      await page.getByRole('button', { name: 'Upload asset' }).click();
      // tus retries, then gives up: the console offers to resume, the first chunk sent.
      await page.getByRole('button', { name: 'Resume upload' }).waitFor(WAIT);
      const paused = Number((await page.getByTestId('asset-upload-percent').textContent())?.replace('%', ''));
      expect(paused).toBeGreaterThan(50);
      expect(paused).toBeLessThan(100);
      await h.screenshot(page, '04b-asset-upload-interrupted');
      failing = false;
      await page.getByRole('button', { name: 'Resume upload' }).click();
      await expect.poll(() => page.getByTestId('asset-upload-percent').textContent(), { timeout: 60_000 }).toBe('100%');
      // The first chunk went once: the resume asked the server for its offset and sent only the rest.
      expect(offsets.filter((o) => o === '0')).toHaveLength(1);
      const size = (await readFile(bigFile)).length;
      await page.getByText(`(${size} bytes, 1 version)`).waitFor(WAIT);
      const assets = await h.platform.request('GET', '/datasets/alice/files/assets', { token: aliceToken });
      expect(assets.body.map((a: { assetName: string; fileSize: number }) => [a.assetName, a.fileSize])).toEqual([[bigFile.split('/').pop(), size]]);
      const download = await fetch(`${h.platform.url}/datasets/alice/files/assets/${assets.body[0].identifier}`, { headers: { authorization: `Bearer ${aliceToken}` } });
      expect(Buffer.from(await download.arrayBuffer()).equals(await readFile(bigFile))).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('manages an organisation: members, their roles and a custom role; a saved query with versions', { timeout: 120_000 }, async () => {
    const { context, page } = await h.newPage();
    try {
      await h.signIn(page, 'alice');
      await page.getByRole('link', { name: 'Organisations' }).click();
      await page.getByLabel('Organisation name').fill('acme');
      await page.getByRole('button', { name: 'Create organisation' }).click();
      await page.getByRole('heading', { name: 'Organisation acme' }).waitFor(WAIT);
      await page.getByLabel('Custom role name').fill('editor');
      await page.getByLabel('writeDatasets').check();
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.getByRole('button', { name: 'Delete role editor' }).waitFor(WAIT);
      await page.getByLabel('New member (account name)').fill('bob');
      await page.getByLabel('Their role').selectOption('editor');
      await page.getByRole('button', { name: 'Add member' }).click();
      await expect.poll(() => page.getByLabel('Role of bob').inputValue(), WAIT).toBe('editor');
      const members = await h.platform.request('GET', '/accounts/acme/members', { token: aliceToken });
      expect(members.body.map((m: { role: string; user: { accountName: string } }) => `${m.user.accountName}:${m.role}`).sort()).toEqual(['alice:owner', 'bob:editor']);
      // An unknown account is refused in the API's words.
      await page.getByLabel('New member (account name)').fill('nobody-here');
      await page.getByRole('button', { name: 'Add member' }).click();
      const refused = await h.platform.request('POST', '/accounts/acme/members', { token: aliceToken, body: { accountName: 'nobody-here', role: 'member' } });
      await expect.poll(() => page.getByRole('alert').first().textContent(), WAIT).toBe(refused.body.message);
      await h.screenshot(page, '07-organisation');
      expect(await h.seriousViolations(page)).toEqual([]);

      await page.getByRole('link', { name: 'Queries' }).click();
      await page.getByLabel('Query name').fill('labels');
      await page.getByLabel('Dataset (account/dataset)').fill('alice/demo');
      await page.getByLabel('Query text').fill('SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s LIMIT 2');
      await page.getByRole('button', { name: 'Save query' }).click();
      await page.getByRole('button', { name: 'Run version 1' }).click();
      await expect.poll(() => page.getByTestId('saved-results').locator('tbody tr').count(), WAIT).toBe(2);
      await page.getByLabel('Query text').fill('SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s LIMIT 3');
      await page.getByRole('button', { name: 'Save as new version' }).click();
      await page.getByRole('button', { name: 'Run version 2' }).click();
      await expect.poll(() => page.getByTestId('saved-results').locator('tbody tr').count(), WAIT).toBe(3);
      expect((await h.platform.request('GET', '/queries/alice/labels', { token: aliceToken })).body.numberOfVersions).toBe(2);
      // A version with a variable: its value goes in before the run.
      await page.getByLabel('Query text').fill('SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s LIMIT 3');
      await page.getByLabel(/^Variables \(JSON/).fill(JSON.stringify([{ name: 's', termType: 'NamedNode' }]));
      await page.getByRole('button', { name: 'Save as new version' }).click();
      await page.getByLabel('Variable s').fill('https://example.org/thing/7');
      await page.getByRole('button', { name: 'Run version 3' }).click();
      await expect.poll(() => page.getByTestId('saved-results').locator('tbody tr').first().textContent(), WAIT).toBe('https://example.org/thing/7');
      await h.screenshot(page, '08-saved-query');
    } finally {
      await context.close();
    }
  });

  it('signs in from the keyboard alone; a service runs, goes out of sync after an import, and Sync brings it back', { timeout: 120_000 }, async () => {
    await h.platform.createDataset('alice', 'served', 'private', aliceToken);
    const importNt = async (nt: string) => {
      const form = new FormData();
      form.append('file', new Blob([nt]), 'data.nt');
      const res = await fetch(`${h.platform.url}/datasets/alice/served/jobs`, { method: 'POST', headers: { authorization: `Bearer ${aliceToken}` }, body: form });
      expect((await waitForJob(h.platform, aliceToken, 'alice/served', ((await res.json()) as { jobId: string }).jobId)).status).toBe('finished');
    };
    await importNt('<https://example.org/a> <https://example.org/p> "1" .\n');
    const { context, page } = await h.newPage();
    try {
      await page.goto(h.consoleUrl);
      await page.getByLabel('Account name').waitFor(WAIT);
      await page.keyboard.press('Tab');
      await page.keyboard.type('alice');
      await page.keyboard.press('Tab');
      await page.keyboard.type('alice-password-123');
      await page.keyboard.press('Enter');
      await page.getByText('Signed in as alice').waitFor(WAIT);

      await page.goto(`${h.consoleUrl}#/datasets/alice/served`);
      await page.getByLabel('Service name').fill('sparql');
      await page.getByLabel('Type').selectOption('jena');
      await page.getByRole('button', { name: 'Create service' }).click();
      await expect.poll(() => page.getByTestId('status-sparql').textContent(), { timeout: 60_000 }).toBe('running');
      expect(await page.getByTestId('sync-sparql').textContent()).toBe('in sync');
      await importNt('<https://example.org/b> <https://example.org/p> "2" .\n');
      await page.getByRole('button', { name: 'Refresh' }).click();
      await expect.poll(() => page.getByTestId('sync-sparql').textContent(), WAIT).toBe('out of sync');
      await h.screenshot(page, '09-service-out-of-sync');
      await page.getByRole('button', { name: 'Sync service sparql' }).click();
      await expect.poll(() => page.getByTestId('sync-sparql').textContent(), { timeout: 60_000 }).toBe('in sync');
      await expect.poll(() => page.getByTestId('status-sparql').textContent(), { timeout: 60_000 }).toBe('running');
      const service = await h.platform.request('GET', '/datasets/alice/served/services/sparql', { token: aliceToken });
      expect(service.body).toMatchObject({ status: 'running', outOfSync: false, numberOfLoadedStatements: 2 });
      expect(await h.seriousViolations(page)).toEqual([]);

      // Delete asks first: dismissed, the service stays; accepted, it goes.
      const deleteButton = page.getByRole('button', { name: 'Delete service sparql' });
      const questions: string[] = [];
      page.once('dialog', (d) => void (questions.push(d.message()), d.dismiss()));
      await deleteButton.click();
      await expect.poll(() => questions.length, WAIT).toBe(1);
      expect((await h.platform.request('GET', '/datasets/alice/served/services/sparql', { token: aliceToken })).status).toBe(200);
      page.once('dialog', (d) => void (questions.push(d.message()), d.accept()));
      await deleteButton.click();
      await page.getByTestId('status-sparql').waitFor({ state: 'detached', ...WAIT });
      expect(questions).toEqual(['Delete the service sparql?', 'Delete the service sparql?']);
      expect((await h.platform.request('GET', '/datasets/alice/served/services/sparql', { token: aliceToken })).status).toBe(404);
    } finally {
      await context.close();
    }
  });

  it("does not show another user's private dataset: the API's 404 is shown", { timeout: 120_000 }, async () => {
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
