/**
 * The links of real emails (smtp-server inside the test) followed in Debian Chromium: verify an
 * address, and "Forgot password?" from the login page to a new password (issue 29).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { CHROMIUM, launch } from '../mfa/browser-helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { PASSWORD } from '../signin/helpers.js';
import { startSmtp, waitFor } from './smtp.js';

describe('email links in Chromium', { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}` }, () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let s: TestServer;
  let api: Api;
  let context: BrowserContext;
  let closeBrowser: () => Promise<void>;
  let issuer: string;

  before(async () => {
    smtp = await startSmtp();
    s = await startTestServer({ localhost: true, config: { smtpUrl: smtp.url, dispatchIntervalMs: 50 } });
    issuer = s.tenant.tenant.issuer;
    api = v1(s, s.tenant.platformApiKey);
    ({ context, close: closeBrowser } = await launch());
  });
  after(async () => {
    await closeBrowser();
    await s.close();
    await smtp.close();
  });

  const messageTo = (to: string) => waitFor(() => smtp.messages.find((m) => m.to.includes(to)), `a message to ${to}`);

  it('verifies an address from the emailed link', async () => {
    const user = (await api('POST', '/users', { email: 'ada@example.com', password: PASSWORD })).json();
    assert.equal((await api('POST', `/users/${user.id}/verification_email`)).status, 202);
    const m = await messageTo('ada@example.com');
    const page = await context.newPage();
    await page.goto(m.link!);
    await Promise.all([page.waitForURL(`${issuer}/verify-email`), page.click('#confirm')]);
    assert.match((await page.textContent('#verified')) ?? '', /confirmed/);
    assert.equal((await api('GET', `/users/${user.id}`)).json().email_verified, true);
    await page.close();
  });

  it('resets a password: Forgot password? on the login page → email → link → new password → sign in', async () => {
    await api('POST', '/users', { email: 'bob@example.com', password: PASSWORD });
    const page = await context.newPage();
    await page.goto(`${issuer}/login?return_to=%2Fsessions`);
    await Promise.all([page.waitForURL(/\/login\/forgot/), page.click('#forgot-password')]);
    await page.fill('#email', 'bob@example.com');
    await Promise.all([page.waitForSelector('#sent'), page.click('form[action="/login/forgot"] button[type=submit]')]);
    const m = await messageTo('bob@example.com');
    await page.goto(m.link!);
    await page.fill('#password', 'a brand new password');
    await page.fill('#password_repeat', 'a brand new password');
    await Promise.all([page.waitForSelector('#reset-done'), page.click('form[action="/reset-password"] button[type=submit]')]);
    await page.goto(`${issuer}/login?return_to=%2Fsessions`);
    await page.fill('#email', 'bob@example.com');
    await page.fill('#password', 'a brand new password');
    await Promise.all([page.waitForURL(`${issuer}/sessions`), page.click('form[action="/login"] button[type=submit]')]);
    await page.close();
  });
});
