import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';
import { createDirectory, type Directory, USER } from '../scim/helpers.js';
import { PASSWORD } from '../signin/helpers.js';
import { accessible, buildConsole, consolePage, noHorizontalScroll, setUpAdministrator, shot } from './browser-helpers.js';

const ADMIN = 'root@admins-browser.test';
const noChromium = !existsSync(CHROMIUM) && 'no Chromium at /usr/bin/chromium';

// The Administrators screen looks the account up before granting (docs/console.md): an account an
// organization's SCIM directory created is shown with a warning naming the directory and the
// organization, and is granted (by user id) only after a confirmation. Built console, real
// server, Debian's Chromium.
describe('console Administrators screen: where an account came from, before granting', { skip: noChromium }, () => {
  let s: TestServer;
  let api: Api;
  let browser: Browser;
  let page: Page;
  let adminId = '';
  let dir: Directory;
  const cspViolations: string[] = [];
  const grantBodies: string[] = [];
  const admins = async () =>
    (await api('GET', '/events?types=tenant_admin.granted&limit=100')).json().data.map((e: { data: { user_id: string } }) => e.data.user_id) as string[];
  const scimUser = async (email: string) => {
    const r = await dir.scim('POST', '/Users', { schemas: [USER], userName: email, emails: [{ value: email, primary: true }], active: true });
    assert.equal(r.status, 201, r.text);
    return (await api('GET', `/users?email=${encodeURIComponent(email)}`)).json().data[0].id as string;
  };
  const lookUp = async (email: string) => {
    await page.getByLabel('Email of an existing user').fill(email);
    await page.getByRole('button', { name: 'Look up' }).click();
    const found = page.getByRole('region', { name: 'Account found' });
    await found.waitFor();
    return found;
  };

  before(async () => {
    buildConsole();
    s = await startTestServer();
    api = v1(s, s.tenant.platformApiKey);
    ({ browser, page } = await consolePage(cspViolations));
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/console/api/admins') grantBodies.push(r.postData() ?? '');
    });
    await setUpAdministrator(page, s, ADMIN, PASSWORD);
    adminId = (await api('GET', `/users?email=${encodeURIComponent(ADMIN)}`)).json().data[0].id;
    const org = (await api('POST', '/organizations', { name: 'Acme Corp' })).json().id as string;
    dir = await createDirectory(s, { orgId: org, name: 'Okta production' });
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Administrators', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Administrators' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it("warns that an organization's SCIM directory created the account, and grants it by id only after confirmation", async () => {
    const ceo = await scimUser('ceo@acme.test');
    const found = await lookUp('CEO@acme.test');
    const warning = found.getByRole('group', { name: 'An organization controls this account' });
    await warning.waitFor();
    assert.match(
      await warning.innerText(),
      /This account was created by the SCIM directory ‘Okta production’ of organization ‘Acme Corp’: that organization's administrators control it\./,
    );
    const text = await found.innerText();
    assert.match(text, /ceo@acme\.test/);
    assert.match(text, new RegExp(ceo));
    assert.match(text, /Acme Corp \(member\)/);
    await shot(page, '40-administrators-managed-candidate');
    await accessible(page, 'administrators: a managed account');

    // The first click only asks; cancelling grants nothing.
    await found.getByRole('button', { name: 'Make administrator' }).click();
    const question = found.getByRole('group', {
      name: /Make ceo@acme\.test an administrator of the whole tenant, although organization ‘Acme Corp’ controls the account\?/,
    });
    await question.waitFor();
    await accessible(page, 'administrators: the confirmation');
    await question.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual(grantBodies, []);
    assert.ok(!(await admins()).includes(ceo));

    await found.getByRole('button', { name: 'Make administrator' }).click();
    await found.getByRole('button', { name: 'Yes, make administrator' }).click();
    await page.getByRole('status').filter({ hasText: 'ceo@acme.test is now an administrator.' }).waitFor();
    await page.getByRole('region', { name: 'Administrators' }).getByRole('row').filter({ hasText: 'ceo@acme.test' }).waitFor();
    assert.equal(await page.getByRole('region', { name: 'Account found' }).count(), 0);
    // The screen granted the account it showed, by id, not the email.
    const bodies = grantBodies.map((b) => JSON.parse(b) as { user_id: string; fingerprint: string });
    assert.deepEqual(
      bodies.map((b) => [b.user_id, /^[0-9a-f]{32}$/.test(b.fingerprint)]),
      [[ceo, true]],
    );
    const granted = (await api('GET', '/events?types=tenant_admin.granted&order=desc&limit=1')).json().data[0];
    assert.deepEqual(granted.actor, { type: 'user', id: adminId });
    assert.deepEqual(granted.data, { user_id: ceo });

    // Looked up again: already an administrator, nothing to grant.
    const again = await lookUp('ceo@acme.test');
    await again.getByText('ceo@acme.test already is an administrator.').waitFor();
    assert.equal(await again.getByRole('button', { name: 'Make administrator' }).count(), 0);
  });

  it('a look-up of an unknown email shows the API error in place', async () => {
    await page.getByLabel('Email of an existing user').fill('nobody@acme.test');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('alert').filter({ hasText: 'no user with the email nobody@acme.test' }).waitFor();
    assert.equal(await page.getByRole('region', { name: 'Account found' }).count(), 0);
  });

  it("warns about a plain account whose email is in an organization's verified domain (its SSO may sign in as it)", async () => {
    const org = (await api('GET', '/organizations?limit=100')).json().data.find((o: { name: string }) => o.name === 'Acme Corp').id as string;
    assert.equal((await api('PATCH', `/organizations/${org}`, { domain: 'acme.test' })).status, 200);
    assert.equal((await api('POST', `/organizations/${org}/domain_verification`, { method: 'manual' })).status, 200);
    assert.equal((await api('POST', '/users', { email: 'cto@acme.test', password: PASSWORD })).status, 201);
    const found = await lookUp('cto@acme.test');
    const warning = found.getByRole('group', { name: 'An organization controls this account' });
    await warning.waitFor();
    assert.match(
      await warning.innerText(),
      /Its email is in ‘acme\.test’, a verified domain of organization ‘Acme Corp’: that organization's SSO connection can sign in as this account/,
    );
    assert.doesNotMatch(await warning.innerText(), /SCIM directory/);
    await found.getByRole('button', { name: 'Make administrator' }).click();
    await found
      .getByRole('group', { name: /although organization ‘Acme Corp’ controls the account/ })
      .getByRole('button', { name: 'Cancel' })
      .click();
    await accessible(page, 'administrators: a verified-domain account');
  });

  it('warns when a narrower API key set the password, and asks first, naming the key', async () => {
    const minted = await api('POST', '/api_keys', { name: 'users only', scopes: ['users:read', 'users:write'] });
    assert.equal(minted.status, 201, minted.text);
    const narrow = minted.json() as { id: string; key: string };
    const made = await v1(s, narrow.key)('POST', '/users', { email: 'ops@example.org', password: PASSWORD });
    assert.equal(made.status, 201, made.text);
    const found = await lookUp('ops@example.org');
    const warning = found.getByRole('group', { name: "A narrower API key set this account's password" });
    await warning.waitFor();
    assert.match(
      await warning.innerText(),
      new RegExp(`API key ${narrow.id} set the password, and it does not hold every permission: whoever holds that key knows the password`),
    );
    assert.equal(await found.getByRole('group', { name: 'An organization controls this account' }).count(), 0);
    assert.match(await found.innerText(), new RegExp(`Set by API key ${narrow.id} \\(a key without every permission\\)`));
    await found.getByRole('button', { name: 'Make administrator' }).click();
    const question = found.getByRole('group', { name: new RegExp(`although API key ${narrow.id} set its password\\?`) });
    await question.waitFor();
    await accessible(page, 'administrators: a password set by a narrower key');
    await question.getByRole('button', { name: 'Cancel' }).click();
    assert.ok(!grantBodies.some((b) => b.includes(made.json().id)));
  });

  it('reflows at 390 px with the warning shown, and nothing broke the CSP', async () => {
    await scimUser('cfo@acme.test');
    await page.setViewportSize({ width: 390, height: 844 });
    const found = await lookUp('cfo@acme.test');
    await found.getByRole('group', { name: 'An organization controls this account' }).waitFor();
    await found.getByRole('button', { name: 'Make administrator' }).click();
    await found.getByRole('button', { name: 'Yes, make administrator' }).waitFor();
    await noHorizontalScroll(page, 'administrators at 390 px');
    await shot(page, '41-administrators-managed-390');
    await accessible(page, 'administrators at 390 px');
    assert.deepEqual(cspViolations, []);
  });
});
