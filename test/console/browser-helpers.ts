/** The console's browser-test kit: the build, axe-core, screenshots and the 390 px check (see browser.test.ts). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { setupLink } from '../../src/console/service.js';
import type { TestServer } from '../helpers/server.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';

const root = path.resolve(import.meta.dirname, '../..');
/** Screenshots of every screen, for people to look at (gitignored). */
export const SHOTS = path.join(root, 'test/generated/console-screenshots');

/** The built console, built here when stale so a fresh clone's `npm test` needs no extra step. */
export function buildConsole(): void {
  const r = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', '--console'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, `console build failed: ${r.stderr}${r.stdout}`);
  mkdirSync(SHOTS, { recursive: true });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core in the page (evaluated over CDP, so the page's CSP does not apply to it): no serious or critical violation. */
export async function accessible(page: Page, screen: string): Promise<void> {
  await page.evaluate(axeSource);
  // A string: the test is compiled without the DOM library.
  const violations = (await page.evaluate(`(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ' (' + v.impact + '): ' + v.help + ' at ' + JSON.stringify(v.nodes.map((n) => n.target)));
  })()`)) as string[];
  assert.deepEqual(violations, [], `axe on ${screen}`);
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** At the page's current width nothing scrolls sideways (wide tables scroll inside `.table`). */
export async function noHorizontalScroll(page: Page, screen: string): Promise<void> {
  const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
  const wide = await page.evaluate(
    `[...document.querySelectorAll('body *')].filter((e) => !e.closest('.table') && e.getBoundingClientRect().right > window.innerWidth + 1).map((e) => e.tagName + '.' + e.className).slice(0, 5).join(' ')`,
  );
  assert.ok(overflow <= 1, `${screen}: ${overflow}px of horizontal scrolling (${wide})`);
}

/**
 * Debian's Chromium with one 1280 px page that records Content Security Policy violations into
 * `cspViolations` (the console must cause none).
 */
export async function consolePage(cspViolations: string[]): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({
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
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
  });
  return { browser, page };
}

/**
 * The tenant's first administrator made from its setup link, then signed in again on the hosted
 * login (which the console's own cookie follows), ending on the console's Overview.
 */
export async function setUpAdministrator(page: Page, s: TestServer, email: string, password: string): Promise<void> {
  const issuer = s.tenant.tenant.issuer;
  await page.goto(setupLink(issuer, s.tenant.setupToken));
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Repeat the password').fill(password);
  await page.getByRole('button', { name: 'Create administrator' }).click();
  await page.getByRole('link', { name: 'Skip for now and open the console' }).waitFor();
  await page.goto(`${issuer}/login?return_to=%2Fconsole%2F`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL(`${issuer}/console/`), page.click('form[action="/login"] button[type=submit]')]);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}
