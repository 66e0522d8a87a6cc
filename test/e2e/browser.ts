import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { CHROMIUM, sharedChromium } from '../helpers/shared-chromium.ts';

/**
 * What the console's end-to-end tests share: a fresh build of the console,
 * Debian's Chromium driven by playwright-core, screenshots (into
 * test-results/screenshots/, or docs/screenshots/ with
 * GATEHOUSE_UPDATE_SCREENSHOTS=1: a test run must not rewrite tracked files)
 * and moving between screens.
 */
export { CHROMIUM };
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SHOTS =
  process.env.GATEHOUSE_UPDATE_SCREENSHOTS === '1'
    ? join(ROOT, 'docs', 'screenshots')
    : join(ROOT, 'test-results', 'screenshots');

/** Build the console as it ships into `<work>/console` (never a stale dist-renderer/). */
export async function buildConsole(work: string): Promise<string> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);
  const consoleDir = join(work, 'console');
  await build({
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'error',
    build: { outDir: consoleDir, emptyOutDir: true },
  });
  await mkdir(SHOTS, { recursive: true });
  return consoleDir;
}

/**
 * A page in a fresh context of the worker's Chromium (its own cookies and storage); script errors and console errors
 * (unless `ignore` matches) go to `errors`.
 */
export async function openPage(errors: string[], ignore?: RegExp): Promise<{ context: BrowserContext; page: Page }> {
  const context = await (
    await sharedChromium()
  ).newContext({
    viewport: { width: 1280, height: 900 },
    colorScheme: 'light',
    reducedMotion: 'reduce',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error' && !(ignore && ignore.test(m.text()))) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { context, page };
}

/** A full-page screenshot named `<name>.png`, without the focus ring. */
export async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Open a screen from the navigation and wait for its heading. */
export async function go(page: Page, screen: string, step: { timeout: number }): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Console' })
    .getByRole('link', { name: new RegExp(`^${screen}`) })
    .click();
  await page.getByRole('heading', { level: 1, name: screen }).waitFor(step);
}
