// Headless Chromium (Debian's, as CI installs it) driven by playwright-core, for the web
// client's end-to-end tests. Each launch gets a fresh profile directory, removed on close.
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT } from './postgres.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Where the screenshots of a run go (the test output). */
export const SCREENSHOT_DIR = join(REPO_ROOT, '.tmp', 'screenshots');

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console errors and failed requests seen so far (CSP violations show up here). */
  problems: string[];
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function launchBrowser(
  options: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {},
): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'pgmcp-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-gpu'],
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.colorScheme ?? 'light',
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // Fail with the locator in the message well before the test's own timeout.
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    context,
    page,
    problems,
    async screenshot(name) {
      const file = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: false });
      return file;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface PageTraffic {
  /** Every console message of any level, and every uncaught page error. */
  console: string[];
  /** Every request that failed on the network and every answer with a 4xx or 5xx status. */
  failures: string[];
  /** Every request the page made, as `METHOD path` (query string kept), in order. */
  requests: string[];
}

/** Records what `page` says and asks from now on, for tests that want a clean console. */
export function recordTraffic(page: Page): PageTraffic {
  const traffic: PageTraffic = { console: [], failures: [], requests: [] };
  const pathOf = (url: string): string => {
    if (!/^https?:/.test(url)) return url.slice(0, 60);
    const u = new URL(url);
    return u.pathname + u.search;
  };
  page.on('console', (message) => traffic.console.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => traffic.console.push(`page error: ${error.message}`));
  page.on('request', (request) =>
    traffic.requests.push(`${request.method()} ${pathOf(request.url())}`),
  );
  page.on('requestfailed', (request) =>
    traffic.failures.push(
      `${request.method()} ${pathOf(request.url())} failed: ${request.failure()?.errorText ?? '?'}`,
    ),
  );
  page.on('response', (response) => {
    if (response.status() >= 400) {
      const request = response.request();
      traffic.failures.push(`${request.method()} ${pathOf(response.url())} → ${response.status()}`);
    }
  });
  return traffic;
}
