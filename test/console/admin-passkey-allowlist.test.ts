import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { setupLink } from '../../src/console/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { CHROMIUM, launch, passwordToMfa, VIRTUAL_AAGUID, virtualAuthenticator } from '../mfa/browser-helpers.js';
import { buildConsole } from './browser-helpers.js';
import { PASSWORD } from './helpers.js';

const ADMIN = 'admin@console.test';
/** An allowlist that excludes Chromium's virtual authenticator. */
const YUBIKEY = 'cb69481e-8ff7-4039-93ec-0a2729a154a8';
const skip = !existsSync(CHROMIUM) && 'no Chromium at /usr/bin/chromium';

// Issue 26, finding 4: one organization's AAGUID allowlist blocked the passkey registration of a
// tenant administrator who was (or was made) a member of it, everywhere — the console included.
// The allowlist applies to the organization's members, not to the tenant's administrators.
describe("an organization's AAGUID allowlist and a tenant administrator's console passkey", { skip }, () => {
  let s: TestServer;
  let api: Api;
  let context: BrowserContext;
  let close: () => Promise<void>;
  let org: string;

  before(async () => {
    buildConsole();
    // WebAuthn needs a domain RP ID: the tenant is served on localhost:<port>.
    s = await startTestServer({ localhost: true });
    api = v1(s, s.tenant.platformApiKey);
    ({ context, close } = await launch());
    org = (await api('POST', '/organizations', { name: 'Strict' })).json().id;
    assert.equal((await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [YUBIKEY] })).status, 200);
  });
  after(async () => {
    await close?.();
    await s?.close();
  });

  const rejected = async () =>
    (await api('GET', '/events?types=passkey.rejected&limit=100')).json().data as Array<{ data: { user_id: string; organization_id: string } }>;

  it('a tenant administrator who is a member of an organization with an allowlist adds a passkey in the console', async () => {
    const page: Page = context.pages()[0] ?? (await context.newPage());
    await virtualAuthenticator(context, page);
    await page.goto(setupLink(s.tenant.tenant.issuer, s.tenant.setupToken));
    await page.getByLabel('Email').fill(ADMIN);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.getByRole('heading', { level: 2, name: 'Protect the account with a second factor' }).waitFor();

    // The administrator belongs to the strict organization (any way it happened: a platform key here).
    const admin = (await api('GET', `/users?email=${encodeURIComponent(ADMIN)}`)).json().data[0];
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: admin.id })).status, 201);

    await page.getByLabel('Name of the passkey (optional)').fill('Admin laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Passkey “Admin laptop” added.').waitFor({ timeout: 10_000 });
    const passkeys = (await api('GET', `/users/${admin.id}/passkeys`)).json().data;
    assert.deepEqual(
      passkeys.map((p: { name: string; aaguid: string }) => [p.name, p.aaguid]),
      [['Admin laptop', VIRTUAL_AAGUID]],
    );
    assert.ok(!(await rejected()).some((e) => e.data.user_id === admin.id));
    await page.close();
  });

  it("the organization's ordinary members are still held to its allowlist", async () => {
    const user = (await api('POST', '/users', { email: 'member@strict.test', password: PASSWORD })).json();
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user.id })).status, 201);
    const page = await context.newPage();
    await virtualAuthenticator(context, page);
    await passwordToMfa(page, s.tenant.tenant.issuer, user.email);
    await Promise.all([page.waitForSelector('#mfa-error'), page.click('#passkey-register')]);
    assert.match((await page.locator('#mfa-error').textContent()) ?? '', /does not allow this kind of passkey/);
    assert.equal((await api('GET', `/users/${user.id}/passkeys`)).json().data.length, 0);
    assert.ok((await rejected()).some((e) => e.data.user_id === user.id && e.data.organization_id === org));
    await page.close();
  });
});
