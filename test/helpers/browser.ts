/**
 * Headless Chromium from Debian's package (VPS_CHROMIUM to use another binary), driven by
 * playwright-core, which never downloads a browser. Screenshots land in test-artifacts/screenshots.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from './processes';

export const CHROMIUM_PATH = process.env.VPS_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'screenshots');

export function launchBrowser(): Promise<Browser> {
  // No sandbox: the suite may run as root, where Chromium refuses its own sandbox.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
}

/** Saves a full-page screenshot as <name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const file = path.join(SCREENSHOTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
