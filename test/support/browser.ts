import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { ADMIN_TOKEN } from './env.js';

/** A phone and a desktop, as the contract names them. */
export const WIDTHS = [1440, 390] as const;
export const viewport = (width: number) => ({ width, height: width === 390 ? 844 : 900 });

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Debian's Chromium through playwright-core (never a downloaded browser), in a throwaway profile. */
export async function openBrowser(origin: string, width = 1440): Promise<Browser> {
  const userDir = mkdtempSync(join(tmpdir(), 'tcc-console-chromium-'));
  const context = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: viewport(width),
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(userDir, { recursive: true, force: true });
    },
  };
}

/**
 * The sign-in form's admin-token way in: the form opens on an operator's email and password unless
 * this browser last signed in with the token; "Sign in with the admin token" switches.
 */
export async function useAdminToken(page: Page): Promise<void> {
  const token = page.getByLabel('Admin token');
  const link = page.getByRole('button', { name: 'Sign in with the admin token' });
  await token.or(link).first().waitFor();
  if (await link.isVisible()) await link.click();
  await token.waitFor();
}

export async function signIn(page: Page, origin: string, name?: string): Promise<void> {
  await page.goto(`${origin}/console`);
  await useAdminToken(page);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  if (name) await page.getByLabel('Your name').fill(name);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export const text = async (l: Locator) => (await l.innerText()).replace(/\s+/g, ' ').trim();

/** CONSOLE_SCREENSHOTS (npm run screenshots) saves the page there, whole. */
export async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.CONSOLE_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

let axeSource: string | undefined;

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * axe-core (from npm), injected into the page as it stands: its serious and critical violations
 * (an empty list when there are none).
 */
export async function axe(page: Page): Promise<AxeFinding[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the debugging protocol, which the page's CSP (script-src 'self') does not
  // govern; once per document (the console changes views without loading a new one).
  if (!(await page.evaluate(() => typeof (globalThis as any).axe?.run === 'function'))) await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n: any) => String(n.target)) }));
  });
  return (found as AxeFinding[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Bytes this page moved over the network since `since()` was last called (responses' transferSize:
 * a cached asset costs 0), with the document itself after a full load: the page weight.
 */
export async function transferred(page: Page, withDocument: boolean): Promise<number> {
  return page.evaluate((doc) => {
    const perf = (globalThis as any).performance;
    const entries = [...(doc ? perf.getEntriesByType('navigation') : []), ...perf.getEntriesByType('resource')];
    return entries.reduce((sum: number, e: any) => sum + (e.transferSize ?? 0), 0);
  }, withDocument);
}

/** Starts counting afresh (resource timings kept so far are dropped; the buffer is made large). */
export async function since(page: Page): Promise<void> {
  await page.evaluate(() => {
    const perf = (globalThis as any).performance;
    perf.setResourceTimingBufferSize(2000);
    perf.clearResourceTimings();
  });
}

/** The page's width as laid out: at most the viewport's, or the page scrolls sideways. */
export async function pageWidth(page: Page): Promise<number> {
  return page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
}
