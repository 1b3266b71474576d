import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/**
 * Builds the console into dist/console, as `npm run build` does, so that the app under test serves
 * it: once per test run. Suites run in parallel workers, and a build empties dist/console before it
 * writes it again, so a second build would pull the pages from under a browser suite in the other
 * worker; the builds take a lock (a directory, made atomically) and the first leaves a mark the
 * others find.
 */
export function buildConsole(): void {
  const run = process.env.TEST_DATABASE_RUN ?? 'standalone';
  const mark = join(ROOT, 'dist/console', `.built-for-${run}`);
  withBuildLock(() => {
    if (existsSync(mark)) return;
    execFileSync(join(ROOT, 'node_modules/.bin/vite'), ['build', '--config', 'console/vite.config.mjs'], {
      cwd: ROOT,
      stdio: 'pipe',
      timeout: 120_000,
    });
    writeFileSync(mark, '');
  });
}

const BUILD_LOCK = join(ROOT, 'dist/.console-build.lock');
const BUILD_LOCK_WAIT_MS = 180_000;
const STALE_LOCK_MS = 150_000;

/** When the lock was taken (now, when it has just been released). */
function lockTakenAt(lock: string): number {
  try {
    return statSync(lock).mtimeMs;
  } catch {
    return Date.now();
  }
}

function withBuildLock(build: () => void): void {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + BUILD_LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(BUILD_LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock older than any build (its timeout is 120 s) is a killed run's: take it over.
      if (Date.now() - lockTakenAt(BUILD_LOCK) > STALE_LOCK_MS) rmSync(BUILD_LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${BUILD_LOCK} still held after ${BUILD_LOCK_WAIT_MS} ms`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    build();
  } finally {
    rmSync(BUILD_LOCK, { recursive: true, force: true });
  }
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

/**
 * The codes of the API's vocabulary (GET /admin/vocabulary's lists) that the page shows as they
 * are, rather than by their label: in Chinese mode there must be none. Read from what is rendered
 * and visible (innerText), outside raw bytes (pre), which are the channel's own.
 */
export async function untranslatedCodes(page: Page, codes: readonly string[]): Promise<string[]> {
  const text = await page.evaluate<string>(`(() => {
    const copy = document.body.cloneNode(true);
    for (const raw of copy.querySelectorAll('pre, script, style')) raw.remove();
    document.body.append(copy);
    copy.style.position = 'absolute';
    const text = copy.innerText;
    copy.remove();
    return text;
  })()`);
  const escape = (code: string) => code.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return codes.filter((code) => new RegExp(`(^|[^A-Za-z0-9_.])${escape(code)}(?![A-Za-z0-9_])`).test(text));
}

export interface TableFit {
  /** The page scrolls sideways, or one of its tables' own boxes does. */
  scrollsSideways: boolean;
  /** Tables whose last column is the actions column ("Actions", "操作"). */
  actionColumns: number;
  /** Of those, the ones whose actions column lies outside the viewport. */
  actionColumnsHidden: number;
  tables: number;
}

/** Whether the page's tables fit the viewport without scrolling sideways, and their action columns are in sight. */
export function tablesFit(page: Page, actionsTitle: string): Promise<TableFit> {
  // A string, evaluated in the page: this file is compiled without the DOM's types.
  return page.evaluate<TableFit>(`(() => {
    const title = ${JSON.stringify(actionsTitle)};
    const root = document.documentElement;
    let scrollsSideways = root.scrollWidth > root.clientWidth;
    let actionColumns = 0;
    let actionColumnsHidden = 0;
    const tables = [...document.querySelectorAll('main .ant-table')];
    for (const table of tables) {
      const boxes = [...table.querySelectorAll('.ant-table-content, .ant-table-body, .ant-table-container')];
      if (boxes.some((b) => b.scrollWidth > b.clientWidth + 1)) scrollsSideways = true;
      const heads = [...table.querySelectorAll('thead th')];
      const last = heads[heads.length - 1];
      if (!last || last.textContent.trim() !== title) continue;
      actionColumns++;
      const box = last.getBoundingClientRect();
      if (box.left < 0 || box.right > innerWidth) actionColumnsHidden++;
    }
    return { scrollsSideways, actionColumns, actionColumnsHidden, tables: tables.length };
  })()`);
}

/** Where the browser suites write a screenshot of each page they visit, in each language (gitignored; CI keeps it as output). */
export const SCREENSHOT_DIR = join(ROOT, 'test-output/console-screenshots');

/** A screenshot of the whole page as it stands, as `<name>.png` in SCREENSHOT_DIR (and in `copyTo` as well, when given). */
export async function saveScreenshot(page: Page, name: string, copyTo?: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = `${name.replace(/[^A-Za-z0-9_-]+/g, '-')}.png`;
  const image = await page.screenshot({ path: join(SCREENSHOT_DIR, file) });
  if (copyTo) {
    mkdirSync(copyTo, { recursive: true });
    writeFileSync(join(copyTo, file), image);
  }
}
