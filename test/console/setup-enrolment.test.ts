import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import type { BrowserContext, Page } from 'playwright-core';
import { setupLink } from '../../src/console/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CHROMIUM, launch, virtualAuthenticator } from '../mfa/browser-helpers.js';
import { accessible, buildConsole, noHorizontalScroll, shot } from './browser-helpers.js';
import { PASSWORD } from './helpers.js';

const ADMIN = 'first@console.test';
const skip = !existsSync(CHROMIUM) && 'no Chromium at /usr/bin/chromium';

// The setup link's second step (docs/console.md): the new administrator, signed in by the link,
// adds a passkey (a CDP virtual authenticator) and an authenticator app in place, then signs in
// with that passkey on the hosted login.
describe('console setup: passkey and authenticator app in place', { skip }, () => {
  let s: TestServer;
  let context: BrowserContext;
  let close: () => Promise<void>;
  let page: Page;
  const cspViolations: string[] = [];
  const v1 = (method: string, path: string, body?: unknown) =>
    s.request({
      method,
      path,
      headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const issuer = () => s.tenant.tenant.issuer;

  const createAdmin = async (link: string, email: string) => {
    await page.goto(link);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.getByRole('heading', { level: 2, name: 'Protect the account with a second factor' }).waitFor();
  };

  /** Starts TOTP enrolment on the page and confirms it with the current code (the server's clock is the real one here). */
  const enrolTotp = async () => {
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = (await page.locator('#totp-secret').textContent())!.trim();
    // The QR code is an SVG data: image, which the console's CSP allows (img-src data:).
    await page.waitForFunction(`document.querySelector('img.qr')?.naturalWidth > 0`);
    await page.getByLabel('Code from the app').fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Confirm' }).click();
  };

  before(async () => {
    buildConsole();
    // WebAuthn needs a domain RP ID: the tenant is served on localhost:<port>.
    s = await startTestServer({ localhost: true });
    ({ context, close } = await launch());
    page = context.pages()[0] ?? (await context.newPage());
    await page.setViewportSize({ width: 1280, height: 900 });
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
    });
    await virtualAuthenticator(context, page);
  });
  after(async () => {
    await close?.();
    await s?.close();
  });

  it('offers a passkey and an authenticator app right after the administrator is created', async () => {
    await createAdmin(setupLink(issuer(), s.tenant.setupToken), ADMIN);
    await page.getByText(`Your administrator account ${ADMIN} is ready`).waitFor();
    await shot(page, '20-setup-second-factor');
    await accessible(page, 'setup: second factor');

    await page.getByLabel('Name of the passkey (optional)').fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Passkey “Work laptop” added.').waitFor();

    await enrolTotp();
    await page.getByText('The authenticator app is set up.').waitFor();
    assert.equal(await page.locator('#recovery-codes li').count(), 10);
    await shot(page, '21-setup-enrolled');
    await accessible(page, 'setup: enrolled');
    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalScroll(page, 'setup at 390 px');
    await shot(page, '22-setup-enrolled-390');
    await page.setViewportSize({ width: 1280, height: 900 });

    // The factors are the hosted ones: the passkey in /v1, both enrolments audited as the user.
    const user = (await v1('GET', `/v1/users?email=${encodeURIComponent(ADMIN)}`)).json().data[0];
    const passkeys = (await v1('GET', `/v1/users/${user.id}/passkeys`)).json().data;
    assert.deepEqual(
      passkeys.map((p: { name: string }) => p.name),
      ['Work laptop'],
    );
    const events = (await v1('GET', '/v1/events?types=passkey.registered,mfa.totp.enrolled')).json().data as Array<{ type: string; actor: unknown }>;
    assert.deepEqual(events.map((e) => e.type).sort(), ['mfa.totp.enrolled', 'passkey.registered']);
    for (const e of events) assert.deepEqual(e.actor, { type: 'user', id: user.id });

    await page.getByRole('link', { name: 'Continue to the console' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  });

  it('the passkey then signs the administrator in on the hosted login, back into the console', async () => {
    await page.goto(`${issuer()}/logout`);
    await Promise.all([page.waitForURL(/\/login\/signed-out/), page.getByRole('button', { name: 'Sign out' }).click()]);
    await page.goto(`${issuer()}/console/`);
    await page.waitForURL(/\/login\?return_to=%2Fconsole%2F/);
    // The login page may already have used the passkey through autofill (conditional mediation).
    await Promise.all([page.waitForURL(`${issuer()}/console/`), page.click('#passkey-login', { timeout: 3000 }).catch(() => undefined)]);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const user = (await v1('GET', `/v1/users?email=${encodeURIComponent(ADMIN)}`)).json().data[0];
    const logins = (await v1('GET', '/v1/events?types=login.passkey')).json().data as Array<{ data: { user_id: string } }>;
    assert.ok(logins.some((e) => e.data.user_id === user.id));
  });

  it('under an MFA policy of required, the console opens only once a factor is added', async () => {
    assert.equal((await v1('PUT', '/v1/mfa_policy', { policy: 'required' })).status, 200);
    try {
      const token = await s.server.ctx.admins.issueSetupToken(s.tenant.tenant.id);
      await createAdmin(setupLink(issuer(), token), 'required@console.test');
      await page.getByText('This tenant requires a second factor').waitFor();
      assert.equal(await page.getByRole('link', { name: /open the console|Continue to the console/ }).count(), 0);
      await shot(page, '23-setup-second-factor-required');
      await accessible(page, 'setup: second factor required');
      await enrolTotp();
      await page.getByRole('link', { name: 'Continue to the console' }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.getByText('required@console.test').waitFor();
    } finally {
      assert.equal((await v1('PUT', '/v1/mfa_policy', { policy: 'optional' })).status, 200);
    }
    assert.deepEqual(cspViolations, []);
  });
});
