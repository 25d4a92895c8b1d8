/**
 * Browser tests of the console (issue 17): playwright-core driving Debian's chromium against a real
 * embedded platform on 127.0.0.1 and a free port, which serves the console's build at /console.
 * Without chromium the tests skip LOUDLY; under CI=true they fail instead (.ci/run installs it).
 * Every wait is on a condition with a bounded timeout; screenshots go to test-results/console/
 * (git-ignored) so a person can look at each page.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ensureConsoleBuild } from '../../bin/console-build.js';
import { TestPlatform } from './platform.js';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => !!p);
export const CHROMIUM = CANDIDATES.find((p) => existsSync(p));
export const SCREENSHOTS = resolve(import.meta.dirname, '../../test-results/console');

/** Whether the browser tests can run here; throws under CI=true when they cannot. */
export function browserAvailable(): boolean {
  if (CHROMIUM) return true;
  const message = `Browser tests need chromium (looked at ${CANDIDATES.join(', ')}); install it with "apt-get install -y chromium" or set CHROMIUM_PATH.`;
  if (process.env.CI === 'true') throw new Error(`${message} CI=true: failing instead of skipping.`);
  console.warn(`\n${'!'.repeat(100)}\n!!! SKIPPING THE CONSOLE'S BROWSER TESTS: ${message}\n${'!'.repeat(100)}\n`);
  return false;
}

/** Short bounded waits: a busy 2-core machine is slow, but never this slow. */
export const WAIT = { timeout: 30_000 };

export class ConsoleHarness {
  private constructor(
    readonly platform: TestPlatform,
    readonly browser: Browser,
  ) {}

  static async start(): Promise<ConsoleHarness> {
    await ensureConsoleBuild();
    await mkdir(SCREENSHOTS, { recursive: true });
    const platform = await TestPlatform.start();
    try {
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        timeout: 30_000,
        // Root in containers needs --no-sandbox; /dev/shm is small there.
        args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
      });
      return new ConsoleHarness(platform, browser);
    } catch (e) {
      await platform.stop();
      throw e;
    }
  }

  get consoleUrl(): string {
    return `${this.platform.url}/console/`;
  }

  /** A fresh browser context (its own cookies) with downloads allowed. */
  async newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await this.browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 860 } });
    context.setDefaultTimeout(WAIT.timeout);
    const page = await context.newPage();
    return { context, page };
  }

  /** Signs in through the form; resolves once the signed-in navigation shows. */
  async signIn(page: Page, accountName: string, password = `${accountName}-password-123`): Promise<void> {
    await page.goto(this.consoleUrl);
    await page.getByLabel('Account name').fill(accountName);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(`Signed in as ${accountName}`).waitFor(WAIT);
  }

  async screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  }

  /** axe-core's serious and critical violations on the page as it is now. */
  async seriousViolations(page: Page): Promise<{ id: string; impact: string; help: string; nodes: string[] }[]> {
    const source = await readFile(resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');
    // The console's CSP refuses inline scripts; evaluate runs in the page through the DevTools protocol instead.
    await page.evaluate(source);
    const result = (await page.evaluate(() => (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run())) as {
      violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
    };
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  }

  async stop(): Promise<void> {
    await this.browser.close().catch(() => {});
    await this.platform.stop();
  }
}
