/** Debian's Chromium for the guides a reader follows in a browser (web app, single-page app). */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM } from '../mfa/browser-helpers.js';

/** Skipped only where /usr/bin/chromium is missing (CI installs it, see .ci/run). */
export const noBrowser = existsSync(CHROMIUM) ? false : 'chromium not installed';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Keyhall's hosted login, as a reader fills it in. */
export async function signInOnKeyhall(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}
