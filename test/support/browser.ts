import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import axe from 'axe-core';
import { Browser, BrowserContext, BrowserContextOptions, chromium, Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it): never a browser downloaded by a test tool. */
export const CHROMIUM = '/usr/bin/chromium';

/** Without the background-networking flags Chromium keeps trying hosts this closed network refuses. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const ROOT = join(__dirname, '../..');

/** Builds the console into dist/console, as `npm run build` does, so that the app under test serves it. */
export function buildConsole(): void {
  execFileSync(join(ROOT, 'node_modules/.bin/vite'), ['build', '--config', 'console/vite.config.mjs'], {
    cwd: ROOT,
    stdio: 'pipe',
    timeout: 120_000,
  });
}

export interface RunningBrowser {
  browser: Browser;
  /** A new context: its own cookies and sessionStorage, like another operator's browser (en-GB in Paris unless told). */
  operator(options?: BrowserContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<RunningBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // launch() gives every run a fresh, empty profile of its own (and removes it on close).
    args: CHROMIUM_FLAGS,
    timeout: 60_000,
  });
  return {
    browser,
    operator: (options = {}) =>
      browser.newContext({
        viewport: { width: 1280, height: 860 },
        locale: 'en-GB',
        timezoneId: 'Europe/Paris',
        ...options,
      }),
    close: () => browser.close(),
  };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: string[];
}

/** axe-core run inside the page (evaluated through the DevTools protocol: the page's CSP forbids inline scripts). */
export async function accessibilityViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axe.source);
  // A string, evaluated in the page: this file is compiled without the DOM's types.
  return page.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ['violations'] }).then((results) =>
    results.violations.map((v) => ({ id: v.id, impact: v.impact ?? null, nodes: v.nodes.map((n) => n.target.join(' ')) })))`);
}
