/**
 * The console's Page texts screen (docs/console.md) with the built assets, a real server and
 * Chromium: the default language and a German text saved there reach the hosted login page; an
 * unknown key is refused with the API's words; accessible and within 390 px.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';
import { accessible, buildConsole, consolePage, noHorizontalScroll, setUpAdministrator, shot } from './browser-helpers.js';
import { PASSWORD } from './helpers.js';

const skip = existsSync(CHROMIUM) ? false : 'no Chromium at /usr/bin/chromium';

describe('console: page texts', { skip }, () => {
  let s: TestServer;
  let api: Api;
  let browser: Browser | undefined;
  let page: Page;
  const cspViolations: string[] = [];

  before(async () => {
    buildConsole();
    s = await startTestServer();
    api = v1(s, s.tenant.platformApiKey);
    ({ browser, page } = await consolePage(cspViolations));
    await setUpAdministrator(page, s, 'root@texts.test', PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('sets the default language and a German text; the hosted login shows them', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Page texts', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Page texts' }).waitFor();
    await page.getByText('Never set: English.').waitFor();

    const locale = page.getByRole('form', { name: 'Default language' });
    await locale.getByLabel('Language of the hosted pages').selectOption('de');
    await locale.getByRole('button', { name: 'Save default language' }).click();
    await page.getByText('Default language saved: German.').waitFor();
    assert.equal((await api('GET', '/branding/locale')).json().default_locale, 'de');

    const german = page.getByRole('form', { name: 'German texts' });
    await german.getByLabel('German messages (key = text)').fill('login.unknown = Hallo');
    await german.getByRole('button', { name: 'Save German texts' }).click();
    await german.getByRole('alert').filter({ hasText: 'unknown message key "login.unknown"' }).waitFor();

    await german.getByLabel('German messages (key = text)').fill('login.heading = Willkommen bei Texts\nlogin.submit = Los');
    await german.getByRole('button', { name: 'Save German texts' }).click();
    await page.getByText('German texts saved: 2 replaced.').waitFor();
    assert.deepEqual((await api('GET', '/branding/texts')).json(), { de: { 'login.heading': 'Willkommen bei Texts', 'login.submit': 'Los' } });

    const login = await s.request({ path: '/login' });
    assert.match(login.text, /<html lang="de">/);
    assert.match(login.text, /<h1>Willkommen bei Texts<\/h1>/);
    assert.match(login.text, /<button type="submit">Los<\/button>/);
    const events = (await api('GET', '/events?types=branding.texts.updated,branding.locale.updated')).json().data as Array<{ type: string }>;
    assert.deepEqual(events.map((e) => e.type).sort(), ['branding.locale.updated', 'branding.texts.updated']);

    await shot(page, 'page-texts');
    await accessible(page, 'page texts');
    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalScroll(page, 'Page texts at 390 px');
    assert.deepEqual(cspViolations, []);
  });
});
