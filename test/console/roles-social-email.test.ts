import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type Keyhall, startKeyhall } from '../guides/guide.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';
import { accessible, buildConsole, consolePage, noHorizontalScroll, shot } from './browser-helpers.js';

const ADMIN = 'root@roles-console.test';
const PASSWORD = 'a long enough password 1';
const MEMBER = 'ada@roles-console.test';
const SECRET = 'google-client-secret-never-shown-0123456789';
const noChromium = !existsSync(CHROMIUM) && 'no Chromium at /usr/bin/chromium';

// The Roles, member roles, Social sign-in and Email screens (docs/console.md) against `keyhall
// serve` started by the CLI on its quick-start tenant (http://localhost:<port>): the built
// console in Debian's Chromium, each change checked through /v1 with the printed API key.
describe('console: roles, member roles, social sign-in, email', { skip: noChromium }, () => {
  let k: Keyhall;
  let browser: Browser;
  let page: Page;
  let orgId = '';
  const cspViolations: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${k.issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${k.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    // JSON.parse's any: the assertions below read the fields they check.
    const json = text ? JSON.parse(text) : {};
    return { status: r.status, json, text };
  };
  /** Waits (up to 10 s) until `read` through /v1 gives `expected`, then asserts it. */
  const eventually = async (read: () => Promise<unknown>, expected: unknown, what: string) => {
    let got: unknown;
    for (let i = 0; i < 100; i++) {
      got = await read();
      if (JSON.stringify(got) === JSON.stringify(expected)) return;
      await page.waitForTimeout(100);
    }
    assert.deepEqual(got, expected, what);
  };
  const nav = async (name: string) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
  };
  /** axe at 1280 px, then no sideways scrolling at 390 px. */
  const checkLayout = async (screen: string) => {
    await shot(page, `40-${screen}`);
    await accessible(page, screen);
    await page.setViewportSize({ width: 390, height: 900 });
    await noHorizontalScroll(page, screen);
    await page.setViewportSize({ width: 1280, height: 900 });
  };
  const alert = (text: string | RegExp) => page.getByRole('alert').filter({ hasText: text }).first().waitFor();

  before(async () => {
    buildConsole();
    // The generic provider's endpoints are resolved when it is made: a loopback address the egress policy allows.
    k = await startKeyhall({ KEYHALL_EGRESS_ALLOW: '127.0.0.1/32' });
    ({ browser, page } = await consolePage(cspViolations));
    const link = /(http:\/\/localhost:\d+\/console\/setup\?token=\S+)/.exec(k.output())?.[1];
    assert.ok(link, `no setup link in ${k.output()}`);
    await page.goto(link);
    await page.getByLabel('Email').fill(ADMIN);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.getByRole('link', { name: 'Skip for now and open the console' }).waitFor();
    await page.goto(`${k.issuer}/login?return_to=%2Fconsole%2F`);
    await page.fill('#email', ADMIN);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${k.issuer}/console/`), page.click('form[action="/login"] button[type=submit]')]);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    const rs = await api('POST', '/resource_servers', {
      name: 'Invoices API',
      identifier: 'https://invoices.example/api',
      permissions: [{ name: 'invoices:read' }, { name: 'invoices:write' }],
    });
    assert.equal(rs.status, 201, rs.text);
    const org = await api('POST', '/organizations', { name: 'Acme' });
    assert.equal(org.status, 201, org.text);
    orgId = org.json.id;
    const user = await api('POST', '/users', { email: MEMBER, password: PASSWORD });
    assert.equal(user.status, 201, user.text);
  });
  after(async () => {
    await browser?.close();
    if (k) {
      const out = k.output();
      assert.equal(await k.close(), 0, out);
    }
  });

  it('defines tenant and organization roles with permissions, sets the default role, refuses a taken key', async () => {
    await nav('Roles');
    const tenant = page.getByRole('region', { name: 'Tenant roles' });
    const form = tenant.getByRole('form', { name: 'Define a tenant role' });
    await form.getByLabel('Key').fill('billing');
    await form.getByLabel('Name').fill('Billing');
    await form.getByLabel('invoices:read').check();
    await form.getByRole('button', { name: 'Define role' }).click();
    await tenant.getByText('Role billing defined.').waitFor();
    const rsId = (await api('GET', '/resource_servers')).json.data[0].id as string;
    assert.deepEqual((await api('GET', '/roles/billing')).json.permissions, [{ resource_server_id: rsId, permission: 'invoices:read' }]);

    // Edit: the detail pane of the new role (picked after creation).
    const edit = tenant.getByRole('form', { name: 'Edit billing' });
    await edit.getByLabel('Name').fill('Billing team');
    await edit.getByLabel('invoices:write').check();
    await edit.getByRole('button', { name: 'Save role' }).click();
    await tenant.getByText('Role billing saved.').waitFor();
    const saved = (await api('GET', '/roles/billing')).json;
    assert.equal(saved.name, 'Billing team');
    assert.deepEqual(saved.permissions.map((p: { permission: string }) => p.permission).sort(), ['invoices:read', 'invoices:write']);

    // A key already defined: the API's 409 shows in place.
    await form.getByLabel('Key').fill('billing');
    await form.getByLabel('Name').fill('Again');
    await form.getByRole('button', { name: 'Define role' }).click();
    await form.getByRole('alert').waitFor();

    // The organization's own role.
    const own = page.getByRole('region', { name: 'Organization roles' });
    const ownForm = own.getByRole('form', { name: 'Define an organization role' });
    await ownForm.getByLabel('Key').fill('reviewer');
    await ownForm.getByLabel('Name').fill('Reviewer');
    await ownForm.getByRole('button', { name: 'Define role' }).click();
    await own.getByText('Role reviewer defined.').waitFor();
    assert.equal((await api('GET', `/organizations/${orgId}/roles/reviewer`)).status, 200);

    // The default role of new members.
    const def = page.getByRole('form', { name: 'Default role' });
    await def.getByLabel('Role of new members').selectOption('billing');
    await def.getByRole('button', { name: 'Save default role' }).click();
    await def.getByText('Default role saved.').waitFor();
    assert.equal((await api('GET', '/role_settings')).json.default_role, 'billing');
    await def.getByLabel('Role of new members').selectOption('member');
    await def.getByRole('button', { name: 'Save default role' }).click();
    await eventually(async () => (await api('GET', '/role_settings')).json.default_role, 'member', 'default role');
    await checkLayout('roles');
  });

  it("gives a member several roles from the tenant's and the organization's, changes them, and deletes a held role by reassigning", async () => {
    await nav('Organizations');
    await page.getByRole('button', { name: /Acme/ }).click();
    const members = page.getByRole('region', { name: 'Members' });
    await members.getByLabel('Add a user by email').fill(MEMBER);
    const add = members.getByRole('form', { name: 'Add a member' });
    await add.getByLabel(/Billing team \(billing\)/).check();
    await add.getByLabel(/Reviewer \(reviewer, this organization\)/).check();
    await add.getByRole('button', { name: 'Add member' }).click();
    const userId = (await api('GET', `/users?email=${encodeURIComponent(MEMBER)}`)).json.data[0].id as string;
    const rolesOf = async () => ((await api('GET', `/organizations/${orgId}/members`)).json.data as Array<{ roles: string[] }>)[0]?.roles.slice().sort();
    await eventually(rolesOf, ['billing', 'reviewer'], 'roles added');

    // Change: untick one; none ticked is refused in the page.
    const row = members.locator(`li[data-member="${userId}"]`);
    await row.getByRole('button', { name: `Change roles of ${MEMBER}` }).click();
    await row.getByLabel(/Reviewer/).uncheck();
    await row.getByLabel(/Billing team/).uncheck();
    await row.getByRole('button', { name: 'Save roles' }).click();
    await row.getByRole('alert').filter({ hasText: 'Tick at least one role.' }).waitFor();
    await row.getByLabel(/Billing team/).check();
    await row.getByRole('button', { name: 'Save roles' }).click();
    await eventually(rolesOf, ['billing'], 'roles changed');
    await checkLayout('member-roles');

    // Deleting a role members hold: the 409 shows, then "Delete and reassign".
    await nav('Roles');
    const tenant = page.getByRole('region', { name: 'Tenant roles' });
    await tenant.getByRole('button', { name: /Billing team/ }).click();
    await tenant.getByRole('button', { name: 'Delete role' }).click();
    await tenant.getByRole('button', { name: 'Yes, delete' }).click();
    await tenant.getByRole('alert').first().waitFor();
    assert.equal((await api('GET', '/roles/billing')).status, 200);
    await tenant.getByLabel('Give its members the role').selectOption('member');
    await tenant.getByRole('button', { name: 'Delete and reassign' }).click();
    await tenant.getByText('Role billing deleted.').waitFor();
    assert.equal((await api('GET', '/roles/billing')).status, 404);
    await eventually(rolesOf, ['member'], 'roles reassigned');
  });

  it('adds, edits, orders and deletes social connections; the client secret is never shown', async () => {
    await nav('Social sign-in');
    const create = page.getByRole('form', { name: 'Add a social connection' });
    await create.getByLabel('Provider', { exact: true }).selectOption('preset:google');
    await create.getByLabel('Client ID', { exact: true }).fill('google-client-id');
    await create.getByLabel('Client secret', { exact: true }).fill(SECRET);
    await create.getByRole('button', { name: 'Add connection' }).click();
    await page.getByText(/Connection .* created/).waitFor();
    const google = (await api('GET', '/social_connections')).json.data[0];
    assert.equal(google.preset, 'google');
    assert.equal(google.has_client_secret, true);
    const detail = page.getByRole('region', { name: google.name });
    await detail.getByText(google.redirect_uri, { exact: true }).waitFor();
    assert.ok(google.redirect_uri.startsWith(`${k.issuer}/`), google.redirect_uri);
    await detail.getByText('set (never shown)').waitFor();
    assert.ok(!(await page.content()).includes(SECRET), 'the secret is not in the page');

    // Edit: sign-up off, order 5; a blank secret keeps it.
    const edit = detail.getByRole('form', { name: `Edit ${google.name}` });
    await edit.getByLabel(/Sign-up \(an unknown identity/).uncheck();
    await edit.getByLabel(/Order on the login page/).fill('5');
    await edit.getByRole('button', { name: 'Save connection' }).click();
    await page.getByText(`Connection ${google.name} saved.`).waitFor();
    const changed = (await api('GET', `/social_connections/${google.id}`)).json;
    assert.deepEqual([changed.sign_up, changed.sign_in, changed.display_order, changed.has_client_secret], [false, true, 5, true]);

    // A generic OAuth 2.0 provider with field paths, listed before Google (order 0 < 5).
    await create.getByLabel('Provider', { exact: true }).selectOption('oauth2');
    await create.getByLabel('Button name').fill('Acme ID');
    await create.getByLabel('Authorization endpoint').fill('https://127.0.0.1:9/authorize');
    await create.getByLabel('Token endpoint', { exact: true }).fill('https://127.0.0.1:9/token');
    await create.getByLabel('Userinfo endpoint').fill('https://127.0.0.1:9/me');
    await create.getByLabel('Field path of subject').fill('data.id');
    await create.getByLabel('Field path of email (optional)').fill('data.mail');
    await create.getByLabel('Client ID', { exact: true }).fill('acme-client');
    await create.getByRole('button', { name: 'Add connection' }).click();
    await page.getByText('Connection Acme ID created. Register its redirect URI at the provider.').waitFor();
    const acme = (await api('GET', '/social_connections')).json.data.find((c: { name: string }) => c.name === 'Acme ID');
    assert.equal(acme.kind, 'oauth2');
    assert.deepEqual([acme.fields.subject, acme.fields.email, acme.has_client_secret], ['data.id', 'data.mail', false]);
    const names = await page.getByRole('region', { name: 'Connections' }).locator('ul.pick > li > button:first-child strong').allInnerTexts();
    assert.deepEqual(names, ['Acme ID', google.name]);

    // A refused provider (discovery of an unreachable issuer) shows the API's error.
    await create.getByLabel('Provider', { exact: true }).selectOption('oidc');
    await create.getByLabel('Button name').fill('Nowhere');
    await create.getByLabel('Issuer').fill('https://127.0.0.1:1/');
    await create.getByLabel('Client ID', { exact: true }).fill('x');
    await create.getByRole('button', { name: 'Add connection' }).click();
    await create.getByRole('alert').waitFor();
    assert.equal((await api('GET', '/social_connections')).json.data.length, 2);

    // Account linking.
    const linking = page.getByRole('form', { name: 'Account linking' });
    await linking.getByLabel(/Never link automatically/).check();
    await linking.getByRole('button', { name: 'Save account linking' }).click();
    await linking.getByText('Account linking saved.').waitFor();
    assert.equal((await api('GET', '/social_settings')).json.account_linking, 'manual');
    await checkLayout('social');

    // Delete after confirmation.
    const row = page.getByRole('region', { name: 'Connections' }).locator('ul.pick > li').filter({ hasText: 'Acme ID' });
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('Connection Acme ID deleted.').waitFor();
    assert.equal((await api('GET', `/social_connections/${acme.id}`)).status, 404);
  });

  it('sets the sender, lists the outbox without bodies, and says mail is not being sent without SMTP', async () => {
    const userId = (await api('GET', `/users?email=${encodeURIComponent(MEMBER)}`)).json.data[0].id as string;
    const sent = await api('POST', `/users/${userId}/verification_email`);
    assert.equal(sent.status, 202, sent.text);

    await nav('Email');
    await page.getByRole('note').filter({ hasText: 'Mail is not being sent' }).waitFor();
    const sender = page.getByRole('form', { name: 'Sender' });
    await sender.getByLabel('From name (optional)').fill('Acme <IT>');
    await sender.getByRole('button', { name: 'Save sender' }).click();
    await alert(/from_name/);
    await sender.getByLabel('From name (optional)').fill('Acme');
    await sender.getByLabel('From address').fill('hello@acme.example');
    await sender.getByLabel('Reply-to address (optional)').fill('help@acme.example');
    await sender.getByRole('button', { name: 'Save sender' }).click();
    await sender.getByText('Sender saved.').waitFor();
    const settings = (await api('GET', '/email_settings')).json;
    assert.deepEqual(
      [settings.from_address, settings.from_name, settings.reply_to, settings.transport],
      ['hello@acme.example', 'Acme', 'help@acme.example', 'dev_mailbox'],
    );

    const email = (await api('GET', '/email_outbox')).json.data[0];
    const outboxRow = page.locator(`tr[data-email="${email.id}"]`);
    await outboxRow.waitFor();
    const text = await outboxRow.innerText();
    for (const shown of [MEMBER, 'verify_email', email.message_id]) assert.ok(text.includes(shown), `${shown} in ${text}`);
    assert.ok(!(await page.content()).includes('vfy_'), 'no link or token in the page');
    await checkLayout('email');
    assert.deepEqual(cspViolations, []);
  });
});
