/**
 * Sign-up and passwordless sign-in followed in Debian Chromium with a real SMTP server
 * (issue 29 points 4 and 6): prompt=create to the client's code, the "Create account" link with
 * the emailed code, the magic link in the browser that asked, and the same link in another
 * browser asking for the code.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { CHROMIUM, launch } from '../mfa/browser-helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { startSmtp, waitFor } from '../email/smtp.js';
import { PASSWORD, REDIRECT, S256, VERIFIER } from '../signin/helpers.js';

describe('sign-up and passwordless sign-in in Chromium', { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}` }, () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let s: TestServer;
  let api: Api;
  let context: BrowserContext;
  let otherContext: BrowserContext;
  const closers: Array<() => Promise<void>> = [];
  let issuer: string;
  let clientId: string;

  before(async () => {
    smtp = await startSmtp();
    s = await startTestServer({ localhost: true, config: { smtpUrl: smtp.url, dispatchIntervalMs: 50 } });
    issuer = s.tenant.tenant.issuer;
    api = v1(s, s.tenant.platformApiKey);
    clientId = (
      await s.server.ctx.management.clients.create(s.tenant.tenant.id, {
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        redirect_uris: [REDIRECT],
      })
    ).client_id;
    const one = await launch();
    const two = await launch();
    context = one.context;
    otherContext = two.context;
    closers.push(one.close, two.close);
  });
  after(async () => {
    for (const close of closers) await close();
    await s.close();
    await smtp.close();
  });

  const messageTo = (to: string, n = 1) => waitFor(() => smtp.messages.filter((m) => m.to.includes(to))[n - 1], `message ${n} to ${to}`);
  const linkIn = (decoded: string) => /https?:\/\/[^\s"<]+\/(?:signup\/verify|login\/email\/verify)\?token=[A-Za-z0-9_-]+/.exec(decoded)?.[0];

  it('prompt=create: the sign-up page, then the code to the client', async () => {
    assert.equal((await api('PUT', '/signin_policy', { signup: 'open' })).status, 200);
    const page = await context.newPage();
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'st',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
      prompt: 'create',
    });
    await page.goto(`${issuer}/authorize?${q.toString()}`);
    assert.match(page.url(), /\/signup\?flow=flw_/);
    await page.fill('#email', 'ada@example.com');
    await page.fill('#password', PASSWORD);
    await page.fill('#password_repeat', PASSWORD);
    // The code travels to the client's redirect_uri (no such host: the request is what counts).
    const [request] = await Promise.all([page.waitForRequest((r) => r.url().startsWith(REDIRECT)), page.click('#signup-submit')]);
    const back = new URL(request.url());
    assert.ok(back.searchParams.get('code'));
    assert.equal(back.searchParams.get('state'), 'st');
    await page.close();
  });

  it('"Create account" with a verified email first: the emailed code typed on the page', async () => {
    assert.equal((await api('PUT', '/signin_policy', { signup: 'open', require_verified_email: true })).status, 200);
    const page = await context.newPage();
    await page.goto(`${issuer}/login?return_to=%2Fsessions`);
    await Promise.all([page.waitForURL(/\/signup\?return_to=/), page.click('#create-account')]);
    await page.fill('#email', 'bob@example.com');
    await page.fill('#password', PASSWORD);
    await page.fill('#password_repeat', PASSWORD);
    await Promise.all([page.waitForSelector('#code-intro'), page.click('#signup-submit')]);
    const m = await messageTo('bob@example.com');
    await page.fill('#code', m.code!);
    await Promise.all([page.waitForURL(`${issuer}/sessions`), page.click('#code-submit')]);
    await page.close();
  });

  it('the magic link signs in the browser that asked; opened in another browser it asks for the code', async () => {
    assert.equal((await api('PUT', '/signin_policy', { signup: 'off', passwordless: ['email_code', 'magic_link'] })).status, 200);
    await api('POST', '/users', { email: 'cleo@example.com', password: PASSWORD });
    const page = await context.newPage();
    await page.goto(`${issuer}/login?return_to=%2Fsessions`);
    await page.fill('#passwordless-email', 'cleo@example.com');
    await Promise.all([page.waitForSelector('#code-intro'), page.click('#email-code')]);
    const m = await messageTo('cleo@example.com');
    const link = linkIn(m.decoded)!;

    const elsewhere = await otherContext.newPage();
    await elsewhere.goto(link);
    await Promise.all([elsewhere.waitForSelector('#code-intro'), elsewhere.click('#confirm')]);
    assert.match((await elsewhere.textContent('#code-intro')) ?? '', /another browser/);
    assert.ok(!(await otherContext.cookies()).some((c) => c.name.includes('session')), 'the forwarded link signed nobody in');
    await elsewhere.close();

    await page.goto(link);
    await Promise.all([page.waitForURL(`${issuer}/sessions`), page.click('#confirm')]);
    await page.close();
  });
});
