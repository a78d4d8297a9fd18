/** Chromium with a CDP virtual authenticator, for the passkey browser tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { PASSWORD } from '../signin/helpers.js';

// KEYHALL_TEST_CHROMIUM only lets a test run check the skip path; CI uses Debian's /usr/bin/chromium.
export const CHROMIUM = process.env.KEYHALL_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const VIRTUAL_AAGUID = '01020304-0506-0708-0102-030405060708';

/** A CDP virtual authenticator on the page (platform-like: internal, resident keys, UV). */
export async function virtualAuthenticator(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return cdp;
}

export async function launch(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'keyhall-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Signs in with the password on /login?return_to=/mfa and waits for /mfa. */
export async function passwordToMfa(page: Page, issuer: string, email: string) {
  await page.goto(`${issuer}/login?return_to=%2Fmfa`);
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await Promise.all([page.waitForURL(`${issuer}/mfa`), page.click('form[action="/login"] button[type=submit]')]);
}

/**
 * Runs one step of a browser test under its own time limit, so that a hang fails naming the step
 * (CDP calls and page.close() have no time limit of their own) instead of the whole test's limit.
 */
export async function step<T>(name: string, run: () => Promise<T>, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      run(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`browser step "${name}" did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
