/**
 * Invitation links from real emails (smtp-server inside the test) followed in Debian Chromium
 * (issue 29 point 5): accepting as a new user (the account created on the page), as an existing
 * user (sign in, back to the invitation, accept), and from a browser signed in as another
 * address (switch, then accept).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, launch } from '../mfa/browser-helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { PASSWORD } from '../signin/helpers.js';
import { startSmtp, waitFor } from './smtp.js';

describe('invitation links in Chromium', { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}` }, () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let s: TestServer;
  let api: Api;
  let context: BrowserContext;
  let closeBrowser: () => Promise<void>;
  let issuer: string;
  let orgId: string;

  before(async () => {
    smtp = await startSmtp();
    s = await startTestServer({ localhost: true, config: { smtpUrl: smtp.url, dispatchIntervalMs: 50 } });
    issuer = s.tenant.tenant.issuer;
    api = v1(s, s.tenant.platformApiKey);
    orgId = (await api('POST', '/organizations', { name: 'Acme' })).json().id;
    ({ context, close: closeBrowser } = await launch());
  });
  after(async () => {
    await closeBrowser();
    await s.close();
    await smtp.close();
  });

  const invite = async (email: string, roles?: string[]) => {
    assert.equal((await api('POST', `/organizations/${orgId}/invitations`, { email, ...(roles ? { roles } : {}) })).status, 201);
    return waitFor(() => smtp.messages.find((m) => m.to.includes(email))?.link, `the invitation to ${email}`);
  };
  const rolesOf = async (email: string) => {
    const user = (await api('GET', `/users?email=${encodeURIComponent(email)}`)).json().data[0];
    return (await api('GET', `/organizations/${orgId}/members`)).json().data.find((m: { user_id: string }) => m.user_id === user.id)?.roles;
  };
  const signIn = async (page: Page, email: string) => {
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await page.click('form[action="/login"] button[type=submit]');
  };

  it('accepts as a new user: the page creates the account and signs it in', async () => {
    const link = await invite('new@example.com');
    const page = await context.newPage();
    await page.goto(link);
    await page.fill('#password', 'a good password');
    await page.fill('#password_repeat', 'a good password');
    await Promise.all([page.waitForSelector('#joined'), page.click('#create')]);
    assert.match((await page.textContent('#joined')) ?? '', /member of Acme/);
    assert.deepEqual(await rolesOf('new@example.com'), ['member']);
    await page.goto(`${issuer}/sessions`);
    assert.equal(new URL(page.url()).pathname, '/sessions', 'signed in');
    await context.clearCookies();
    await page.close();
  });

  it('accepts as an existing user: sign in from the page, back to the invitation, accept', async () => {
    await api('POST', '/users', { email: 'ada@example.com', password: PASSWORD });
    const link = await invite('ada@example.com', ['admin']);
    const page = await context.newPage();
    await page.goto(link);
    await Promise.all([page.waitForURL(/\/login\?/), page.click('#sign-in')]);
    await Promise.all([page.waitForSelector('#accept'), signIn(page, 'ada@example.com')]);
    assert.equal(page.url(), link, 'back on the invitation');
    await Promise.all([page.waitForSelector('#joined'), page.click('#accept')]);
    assert.deepEqual(await rolesOf('ada@example.com'), ['admin']);
    await context.clearCookies();
    await page.close();
  });

  it('signed in as another address: the page offers to switch; after it, the invitee accepts', async () => {
    await api('POST', '/users', { email: 'bob@example.com', password: PASSWORD });
    await api('POST', '/users', { email: 'carol@example.com', password: PASSWORD });
    const link = await invite('carol@example.com');
    const page = await context.newPage();
    await page.goto(`${issuer}/login?return_to=%2Fsessions`);
    await Promise.all([page.waitForURL(`${issuer}/sessions`), signIn(page, 'bob@example.com')]);
    await page.goto(link);
    assert.match((await page.textContent('#other-account')) ?? '', /signed in as bob@example\.com.*carol@example\.com/);
    await Promise.all([page.waitForSelector('#sign-in'), page.click('#switch')]);
    await Promise.all([page.waitForURL(/\/login\?/), page.click('#sign-in')]);
    await Promise.all([page.waitForSelector('#accept'), signIn(page, 'carol@example.com')]);
    await Promise.all([page.waitForSelector('#joined'), page.click('#accept')]);
    assert.deepEqual(await rolesOf('carol@example.com'), ['member']);
    assert.equal(await rolesOf('bob@example.com'), undefined, 'bob did not join');
    await page.close();
  });
});
