/**
 * Flows in the console, in a real Chromium (issue 17): the administrator's switches; a three-task
 * flow built on the canvas (set variables → decision → SPARQL query to a file), saved with a
 * validation problem shown on the task it names and fixed; undo; run with the default preset,
 * watched live until it finishes; the artifact downloaded; a long run stopped; the flow copied as
 * Turtle and pasted into another account; the overview's traffic lights.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, ConsoleHarness, SCREENSHOTS, WAIT } from '../support/browser.js';
import { consoleSession, createFlow, enableFlows } from '../support/flows.js';
import { waitForJob } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';

const run = browserAvailable();

/** The canvas's viewport once it stops moving (fitView may animate), bounded. */
async function settledViewport(page: Page): Promise<void> {
  let last = '';
  for (let i = 0; i < 200; i++) {
    const now = (await page.locator('.react-flow__viewport').getAttribute('style')) ?? '';
    if (now === last) return;
    last = now;
    // Two animation frames between readings: a moving viewport changes in each.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }
}

/**
 * Drags from one task's output handle to another's input handle, as a person does with the mouse.
 * A drag that starts while the canvas still moves can miss: it is tried again (three times at most).
 */
async function connect(page: Page, from: string, to: string): Promise<void> {
  const edge = page.locator(`[data-testid="rf__edge-${from}->${to}"]`);
  for (let attempt = 1; attempt <= 3; attempt++) {
    await settledViewport(page);
    const a = (await page.locator(`.react-flow__node[data-id="${from}"] .react-flow__handle.source`).boundingBox())!;
    const b = (await page.locator(`.react-flow__node[data-id="${to}"] .react-flow__handle.target`).boundingBox())!;
    await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 });
    await page.mouse.up();
    try {
      await edge.waitFor({ timeout: attempt === 3 ? WAIT.timeout : 5_000, state: 'attached' });
      return;
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
}

/** Fills a settings field and leaves it, so the edit is committed. */
async function setField(page: Page, label: string | RegExp, value: string): Promise<void> {
  const field = page.getByRole('form', { name: /^Settings of / }).getByLabel(label, { exact: typeof label === 'string' });
  await field.fill(value);
  await field.blur();
}

describe.skipIf(!run)('console: flows in Chromium', () => {
  let h: ConsoleHarness;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    h = await ConsoleHarness.start();
    alice = await h.platform.createUser('alice');
    bob = await h.platform.createUser('bob');
    await enableFlows(h.platform, { sparqlUpdateTaskEnabled: false });
    await h.platform.createDataset('alice', 'demo', 'private', alice);
    const nt = '<https://example.org/a> <https://example.org/name> "A" .\n<https://example.org/b> <https://example.org/name> "B" .\n';
    const form = new FormData();
    form.append('file', new Blob([nt]), 'demo.nt');
    const job = await fetch(`${h.platform.url}/datasets/alice/demo/jobs`, { method: 'POST', headers: { authorization: `Bearer ${alice}` }, body: form });
    const { jobId } = (await job.json()) as { jobId: string };
    expect((await waitForJob(h.platform, alice, 'alice/demo', jobId)).status).toBe('finished');
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("the administrator's switches: the SPARQL update task on", { timeout: 120_000 }, async () => {
    const { context, page } = await h.newPage();
    try {
      await h.signIn(page, 'admin', TestPlatform.ADMIN_PASSWORD);
      await page.getByRole('link', { name: 'Admin' }).click();
      await page.getByLabel('Flows enabled').waitFor(WAIT);
      expect(await page.getByLabel('Flows enabled').isChecked()).toBe(true);
      const update = page.getByLabel('SPARQL update task enabled');
      expect(await update.isChecked()).toBe(false);
      // The served task catalogue (public: anyone may read it) follows the switch.
      const enabledUpdate = async () => ((await h.platform.request('GET', '/flows/taskTypes')).body as { type: string; enabled: boolean }[]).find((t) => t.type === 'sparqlUpdate')?.enabled;
      expect(await enabledUpdate()).toBe(false);
      await update.click();
      await expect.poll(async () => (await h.platform.request('GET', '/admin/flows', { token: h.platform.adminToken })).body.sparqlUpdateTaskEnabled, WAIT).toBe(true);
      await expect.poll(() => update.isChecked(), WAIT).toBe(true);
      expect(await enabledUpdate()).toBe(true);
      await h.screenshot(page, '10-admin-switches');
      // A user who is not the administrator sees the API's refusal in its own words.
      const refused = await h.platform.request('GET', '/admin/flows', { token: alice });
      expect(refused.status).toBeGreaterThanOrEqual(400);
    } finally {
      await context.close();
    }
  });

  it('builds set variables → decision → SPARQL query on the canvas, fixes a validation problem, runs it live, downloads the artifact', { timeout: 120_000 }, async () => {
    const { context, page } = await h.newPage();
    try {
      await h.signIn(page, 'alice');
      await page.getByRole('link', { name: 'Flows' }).click();
      await page.getByLabel('Flow ID').fill('report');
      await page.getByLabel('Flow name').fill('Nightly report');
      await page.getByRole('button', { name: 'Create flow' }).click();
      await page.getByTestId('save-state').filter({ hasText: 'Saved as version 1' }).waitFor(WAIT);

      // The flow's own settings: a variable, an output variable, a default preset.
      await page.getByRole('button', { name: 'Add variable' }).click();
      const flowForm = page.getByRole('form', { name: 'Flow settings' });
      await flowForm.getByLabel('Variable name', { exact: true }).fill('kind');
      await flowForm.getByLabel('Variable name', { exact: true }).blur();
      await flowForm.getByLabel('Output variable names (comma-separated)', { exact: true }).fill('chosen');
      await flowForm.getByLabel('Output variable names (comma-separated)', { exact: true }).blur();
      await page.getByRole('button', { name: 'Add preset' }).click();
      await flowForm.getByLabel('Preset values (name = value, one a line)', { exact: true }).fill('kind = report');
      await flowForm.getByLabel('Preset values (name = value, one a line)', { exact: true }).blur();

      // The palette is the API's task catalogue.
      const served = await h.platform.request('GET', '/flows/taskTypes');
      expect(served.status).toBe(200);
      await expect.poll(() => page.getByRole('complementary', { name: 'Task types' }).getByRole('button').count(), WAIT).toBe(served.body.length);

      // Three tasks: one dragged from the catalogue onto the canvas, two added from the keyboard.
      const canvas = page.getByTestId('canvas');
      const box = (await canvas.boundingBox())!;
      // An HTML drag that starts before the page is ready can be lost: tried again (three times at most).
      for (let attempt = 1; attempt <= 3; attempt++) {
        await page.getByRole('button', { name: 'Add task Set variables' }).dragTo(canvas, { targetPosition: { x: 90, y: box.height / 2 } });
        try {
          await page.getByTestId('node-setVariables1').waitFor({ timeout: attempt === 3 ? WAIT.timeout : 5_000 });
          break;
        } catch (e) {
          if (attempt === 3) throw e;
        }
      }
      await setField(page, 'Values (name = value, one a line) (required)', 'chosen = ?kind');
      await page.getByRole('button', { name: 'Add task Decision' }).focus();
      await page.keyboard.press('Enter');
      await page.getByTestId('node-decision1').waitFor(WAIT);
      await page.getByRole('button', { name: 'Add task SPARQL query' }).click();
      await page.getByTestId('node-sparqlQuery1').waitFor(WAIT);
      // Undo takes the last task back; adding it again brings it back.
      await page.getByRole('button', { name: 'Undo' }).click();
      await expect.poll(() => page.getByTestId('node-sparqlQuery1').count(), WAIT).toBe(0);
      await page.getByRole('button', { name: 'Add task SPARQL query' }).click();
      await page.getByTestId('node-sparqlQuery1').waitFor(WAIT);
      await setField(page, 'SPARQL query (required)', 'SELECT ?s ?name WHERE { ?s <https://example.org/name> ?name } ORDER BY ?s');
      await setField(page, 'File name (artifact)', 'names.csv');
      // The dataset is left out on purpose: saving names the problem on this task.

      await page.locator('.react-flow__controls-fitview').click();
      await connect(page, 'setVariables1', 'decision1');
      // The keyboard's way: the decision's form connects it to the next task.
      await page.getByTestId('node-decision1').click();
      await page.getByRole('form', { name: /^Settings of / }).getByLabel('Connect to SPARQL query (sparqlQuery1)').check();
      await page.locator('[data-testid="rf__edge-decision1->sparqlQuery1"]').waitFor({ ...WAIT, state: 'attached' });
      await setField(page, 'Branches (JSON) (required)', JSON.stringify([{ to: 'sparqlQuery1', conditions: [{ variable: 'chosen', operator: 'equals', value: 'report' }] }]));

      await page.getByRole('button', { name: 'Save' }).click();
      const node = page.getByTestId('node-sparqlQuery1');
      await node.locator('.node-problem').first().waitFor(WAIT);
      expect(await node.locator('.node-problem').first().textContent()).toMatch(/dataset/i);
      await expect.poll(async () => (await page.getByRole('alert').first().textContent()) ?? '', WAIT).toMatch(/dataset/i);
      await h.screenshot(page, '11-flow-canvas-problem');

      await page.getByTestId('node-sparqlQuery1').click();
      await setField(page, 'Query dataset: account (required)', 'alice');
      await setField(page, 'Query dataset: dataset (required)', 'demo');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByTestId('save-state').filter({ hasText: /Saved as version \d+/ }).waitFor(WAIT);
      await expect.poll(() => node.locator('.node-problem').count(), WAIT).toBe(0);
      await h.screenshot(page, '12-flow-canvas');
      await page.evaluate(() => window.scrollTo(0, 0));
      // The README's picture (console/docs/flow-canvas.png is a copy of this one).
      await page.screenshot({ path: join(SCREENSHOTS, 'flow-canvas.png'), clip: { x: 0, y: 0, width: 1280, height: 720 } });
      expect(await h.seriousViolations(page)).toEqual([]);

      // Run with the default preset, watched live until it finishes.
      await page.getByRole('button', { name: 'Run…' }).click();
      const dialog = page.getByRole('dialog', { name: /^Run / });
      expect(await dialog.getByLabel('kind').inputValue()).toBe('report');
      await dialog.getByRole('button', { name: 'Start run' }).click();
      await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 60_000 }).toBe('finished');
      await expect.poll(() => page.getByTestId('node-sparqlQuery1').locator('.node-status').textContent(), WAIT).toBe('finished');
      await h.screenshot(page, '13-flow-run-finished');
      const [download] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('link', { name: /^names\.csv/ }).click()]);
      const csv = await readFile((await download.path())!, 'utf8');
      expect(csv.split(/\r?\n/)[0]).toBe('s,name');
      expect(csv).toContain('https://example.org/a,A');

      // Every save is a version: History restores the first (an empty flow) as a new version, then the newest again.
      await page.getByRole('button', { name: 'History' }).click();
      await page.getByRole('button', { name: 'Restore version 1' }).click();
      await expect.poll(async () => (await h.platform.request('GET', '/flows/blueprints/alice/report', { token: alice })).body.definition.tasks.length, WAIT).toBe(0);
      await expect.poll(() => page.getByTestId('node-sparqlQuery1').count(), WAIT).toBe(0);
      const versions = (await h.platform.request('GET', '/flows/blueprints/alice/report/versions', { token: alice })).body as { version: number }[];
      const before = versions.length - 1;
      await page.getByRole('button', { name: 'History' }).click();
      await page.getByRole('button', { name: `Restore version ${before}` }).click();
      await page.getByTestId('node-sparqlQuery1').waitFor(WAIT);

      // From the keyboard: a task on the canvas takes focus and Enter opens its settings.
      await page.locator('.react-flow__pane').click({ position: { x: 20, y: 20 } });
      await page.locator('.react-flow__node[data-id="decision1"]').focus();
      await page.keyboard.press('Enter');
      await page.getByRole('form', { name: 'Settings of Decision' }).waitFor(WAIT);

      // The overview shows the run as a traffic light.
      await page.getByRole('link', { name: 'Flows of alice' }).click();
      await page.getByRole('img', { name: /: finished$/ }).first().waitFor(WAIT);
      await h.screenshot(page, '14-flows-overview');
      expect(await h.seriousViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('stops a long run from the console', { timeout: 120_000 }, async () => {
    const session = await consoleSession(h.platform, 'alice');
    await createFlow(h.platform, 'alice', session, {
      id: 'slow',
      name: 'Slow',
      accessLevel: 'Private',
      tasks: [{ id: 'pause', label: 'Pause', type: 'wait', settings: { seconds: 600 } }],
      connections: [],
    });
    const { context, page } = await h.newPage();
    try {
      await h.signIn(page, 'alice');
      await page.goto(`${h.consoleUrl}#/flows/alice/slow`);
      await page.getByRole('button', { name: 'Run…' }).click();
      await page.getByRole('button', { name: 'Start run' }).click();
      await expect.poll(() => page.getByTestId('run-status').textContent(), WAIT).toBe('running');
      await page.getByRole('button', { name: 'Stop run', exact: true }).click();
      await expect.poll(() => page.getByTestId('run-status').textContent(), WAIT).toBe('aborted');
      const runs = await h.platform.request('GET', '/flows/runs?account=alice', { token: alice });
      expect(runs.body.find((r: { flowId: string }) => r.flowId === 'slow').status).toBe('aborted');
      await h.screenshot(page, '15-flow-run-stopped');

      // The flow's runs page, with its schedules and hooks.
      await page.getByRole('link', { name: 'Runs', exact: true }).last().click();
      await page.getByRole('heading', { name: /^Runs of / }).waitFor(WAIT);
      await page.getByText('aborted', { exact: true }).first().waitFor(WAIT);
      await page.getByLabel('Schedule label').fill('nightly');
      await page.getByLabel('Schedule time (HH:MM)').fill('02:30');
      await page.getByLabel('Schedule time zone').fill('Europe/Amsterdam');
      await page.getByRole('button', { name: 'Add schedule' }).click();
      await page.getByRole('button', { name: /^Delete schedule / }).waitFor(WAIT);
      await page.getByLabel('Hook label').fill('on import');
      await page.getByLabel('Hook dataset account').fill('alice');
      await page.getByLabel('Hook dataset name').fill('demo');
      await page.getByRole('button', { name: 'Add hook' }).click();
      await page.getByRole('button', { name: /^Delete hook / }).waitFor(WAIT);
      const schedules = await h.platform.request('GET', '/flows/blueprints/alice/slow/schedules', { token: alice });
      expect(schedules.body).toHaveLength(1);
      expect(schedules.body[0]).toMatchObject({ label: 'nightly', timeZone: 'Europe/Amsterdam', enabled: true });
      const hooks = await h.platform.request('GET', '/flows/blueprints/alice/slow/hooks', { token: alice });
      expect(hooks.body).toHaveLength(1);
      // A bad time zone is refused in the API's words.
      await page.getByLabel('Schedule time zone').fill('Mars/Olympus');
      await page.getByRole('button', { name: 'Add schedule' }).click();
      const refused = await h.platform.request('POST', '/flows/blueprints/alice/slow/schedules', {
        headers: await consoleSession(h.platform, 'alice'),
        body: { label: 'nightly', recurrence: { every: 'day', at: '02:30' }, timeZone: 'Mars/Olympus', enabled: true },
      });
      expect(refused.status).toBe(400);
      await expect.poll(() => page.getByRole('alert').first().textContent(), WAIT).toBe(refused.body.message);
      await h.screenshot(page, '17-flow-runs-schedules-hooks');
      expect(await h.seriousViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('copies a flow as Turtle and pastes it into another account', { timeout: 120_000 }, async () => {
    const { context, page } = await h.newPage();
    let turtle: string;
    try {
      await h.signIn(page, 'alice');
      await page.goto(`${h.consoleUrl}#/flows/alice/report`);
      await page.getByRole('button', { name: 'Copy as Turtle' }).click();
      turtle = await page.getByTestId('turtle').inputValue();
      expect(turtle).toContain('sparqlQuery1');
    } finally {
      await context.close();
    }
    const other = await h.newPage();
    try {
      await h.signIn(other.page, 'bob');
      await other.page.getByRole('link', { name: 'Flows' }).click();
      await other.page.getByLabel(/Flow in Turtle/).fill(turtle);
      await other.page.getByRole('button', { name: 'Paste as new flow' }).click();
      await other.page.getByTestId('node-sparqlQuery1').waitFor(WAIT);
      const copy = await h.platform.request('GET', '/flows/blueprints/bob/report', { token: bob });
      expect(copy.status).toBe(200);
      expect(copy.body.definition.tasks.map((t: { id: string }) => t.id)).toEqual(['setVariables1', 'decision1', 'sparqlQuery1']);
      // Pasting it again answers the API's conflict, shown where it happened.
      await other.page.getByRole('link', { name: 'Flows of bob' }).click();
      await other.page.getByLabel(/Flow in Turtle/).fill(turtle);
      await other.page.getByRole('button', { name: 'Paste as new flow' }).click();
      await expect.poll(async () => (await other.page.getByRole('alert').first().textContent()) ?? '', WAIT).toMatch(/report/);
      await h.screenshot(other.page, '16-flow-paste-conflict');
    } finally {
      await other.context.close();
    }
  });
});
