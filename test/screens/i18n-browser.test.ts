/**
 * German hosted pages in a real browser (Debian chromium, playwright-core): an /authorize request
 * with `ui_locales=de` from an English browser shows the login page and, with an MFA policy
 * requiring a second factor, the challenge, the authenticator-app enrolment and the recovery codes
 * in German, with no CSP violation. Skipped (and said so) only when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import type { BrowserContext } from 'playwright-core';
import { v1 } from '../helpers/v1.js';
import { CHROMIUM, launch } from '../mfa/browser-helpers.js';
import { PASSWORD, REDIRECT, S256, type SigninTestServer, startSigninServer, VERIFIER } from '../signin/helpers.js';

const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';

describe('German hosted pages in chromium (ui_locales=de)', { skip }, () => {
  let s: SigninTestServer;
  let context: BrowserContext;
  let close: () => Promise<void>;
  before(async () => {
    s = await startSigninServer();
    ({ context, close } = await launch());
  });
  after(async () => {
    await close?.();
    await s?.close();
  });

  it('shows the login, the second-factor enrolment, the authenticator app and the recovery codes in German', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    assert.equal((await api('PUT', '/mfa_policy', { policy: 'required' })).status, 200);
    await s.createUser('deutsch@example.com');
    const web = await s.webClient({ client_name: 'Acme Portal' });
    const page = await context.newPage();
    await page.setExtraHTTPHeaders({ 'accept-language': 'en-US,en;q=0.9' });
    const csp: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: web.client_id,
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'st',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
      ui_locales: 'de',
    });
    await page.goto(`${s.issuer}/authorize?${query}`);
    assert.match(page.url(), /\/login\?flow=flw_/);
    assert.equal(await page.getAttribute('html', 'lang'), 'de');
    assert.equal(await page.title(), 'Anmelden · Keyhall');
    assert.equal(await page.textContent('h1'), 'Bei Acme Portal anmelden');
    assert.equal(await page.textContent('label[for=email]'), 'E-Mail-Adresse');
    assert.equal(await page.textContent('label[for=password]'), 'Passwort');
    assert.equal(await page.textContent('#passkey-login'), 'Mit einem Passkey anmelden');
    assert.equal(await page.getAttribute('#webauthn-status', 'data-unsupported'), 'Dieser Browser unterstützt keine Passkeys.');

    await page.fill('#email', 'deutsch@example.com');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/mfa\/challenge\?/), page.click('form[action="/login"] button[type=submit]')]);
    assert.equal(await page.getAttribute('html', 'lang'), 'de');
    assert.equal(await page.textContent('h1'), 'Bestätigen Sie, dass Sie es sind');
    assert.match((await page.textContent('#enrol')) ?? '', /Ihre Organisation verlangt einen zweiten Anmeldeschritt/);
    assert.equal(await page.textContent('#passkey-enrol'), 'Passkey hinzufügen');
    assert.equal(await page.getAttribute('#passkey-name', 'placeholder'), 'z. B. Arbeitslaptop');

    await Promise.all([page.waitForURL(/\/mfa\/totp\?/), page.click('#totp-enrol')]);
    assert.equal(await page.textContent('h1'), 'Authenticator-App einrichten');
    await Promise.all([page.waitForURL(/\/mfa\/totp\?/), page.click('form[action="/mfa/totp/start"] button')]);
    assert.match((await page.textContent('main')) ?? '', /Scannen Sie diesen Code mit Ihrer Authenticator-App/);
    assert.equal(await page.textContent('#totp-uri'), 'In einer Authenticator-App auf diesem Gerät öffnen');
    const secret = (await page.textContent('#totp-secret'))!;

    await page.fill('#code', '000000' === (await generate({ secret })) ? '111111' : '000000');
    await Promise.all([page.waitForLoadState('load'), page.click('form[action="/mfa/totp/confirm"] button')]);
    assert.equal(await page.textContent('p.error'), 'Dieser Code ist nicht richtig. Geben Sie den aktuellen Code aus Ihrer App ein.');

    await page.fill('#code', await generate({ secret }));
    await Promise.all([page.waitForLoadState('load'), page.click('form[action="/mfa/totp/confirm"] button')]);
    assert.equal(await page.textContent('h1'), 'Ihre Wiederherstellungscodes');
    assert.equal(await page.title(), 'Wiederherstellungscodes · Keyhall');
    assert.equal(await page.textContent('#continue'), 'Weiter');
    assert.deepEqual(csp, []);
  });
});
