import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { setupLink } from '../../src/console/service.js';
import { CONSOLE_DIST } from '../../src/http/console/assets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { fail500, ok, startReceiver, type Receiver } from '../helpers/receiver.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';
import { accessible, buildConsole, consolePage, noHorizontalScroll, shot } from './browser-helpers.js';
import { PASSWORD } from './helpers.js';

const root = path.resolve(import.meta.dirname, '../..');
const ADMIN = 'root@console.test';

// The console end to end with the built assets, a real server and Debian's Chromium (issue 18).
describe('console in a browser', () => {
  let s: TestServer;
  let browser: Browser | undefined;
  let page: Page;
  let receiver: Receiver;
  const cspViolations: string[] = [];
  const v1 = (method: string, p: string, body?: unknown, key?: string) =>
    s.request({
      method,
      path: p,
      headers: { authorization: `Bearer ${key ?? s.tenant.platformApiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const nav = async (name: string) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
  };

  before(async () => {
    buildConsole();
    receiver = await startReceiver(fail500);
    s = await startTestServer({ config: { egressAllow: '127.0.0.1/32', webhookRetrySchedule: '0', dispatchIntervalMs: 200, webhookTimeoutMs: 2000 } });
    if (!existsSync(CHROMIUM)) return;
    ({ browser, page } = await consolePage(cspViolations));
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await s?.close();
  });

  it('serves hashed assets under a strict CSP: no inline script, never framed', async () => {
    // Vite empties its output directory: it must not be where tsc puts a src/ folder.
    assert.ok(!existsSync(path.join(root, 'src', path.basename(CONSOLE_DIST))), `${CONSOLE_DIST} would wipe compiled server code`);
    const index = await s.request({ path: '/console/' });
    assert.equal(index.status, 200);
    const csp = String(index.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(index.headers['x-frame-options'], 'DENY');
    assert.doesNotMatch(index.text, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
    const asset = /src="(\/console\/assets\/index-[A-Za-z0-9_-]{8,}\.js)"/.exec(index.text)?.[1];
    assert.ok(asset, 'a hashed script');
    const js = await s.request({ path: asset });
    assert.equal(js.status, 200);
    assert.match(String(js.headers['content-type']), /javascript/);
    assert.match(String(js.headers['cache-control']), /immutable/);
    // A screen path gets the same page; traversal and unknown assets do not.
    assert.equal((await s.request({ path: '/console/organizations' })).text, index.text);
    assert.equal((await s.request({ path: '/console/assets/..%2F..%2Fpackage.json' })).status, 404);
    assert.equal((await s.request({ path: '/console/assets/nothing.js' })).status, 404);
  });

  it(
    'first administrator from the setup link, signed in by it, then again on the hosted login',
    { skip: !existsSync(CHROMIUM) && 'no Chromium at /usr/bin/chromium' },
    async () => {
      await page.goto(setupLink(s.tenant.tenant.issuer, s.tenant.setupToken));
      await page.getByLabel('Email').fill(ADMIN);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Repeat the password').fill(PASSWORD);
      await shot(page, '01-setup');
      await accessible(page, 'setup');
      const created = page.waitForResponse((r) => r.url().endsWith('/console/api/setup') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Create administrator' }).click();
      // What the server answered, in the failure message if it was not the administrator.
      const answer = await created;
      assert.equal(answer.status(), 201, `POST /console/api/setup: ${answer.status()} ${await answer.text()}`);
      // The setup signed the administrator in (second factors: setup-enrolment.test.ts); sign in
      // again on the hosted login, which the console's own cookie follows.
      await page
        .getByRole('link', { name: 'Skip for now and open the console' })
        .waitFor()
        .catch(async (err: unknown) => assert.fail(`${String(err)}\nthe page shows: ${await page.locator('main').innerText()}`));
      await page.goto(`${s.tenant.tenant.issuer}/login?return_to=%2Fconsole%2F`);
      await page.fill('#email', ADMIN);
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(`${s.tenant.tenant.issuer}/console/`), page.click('form[action="/login"] button[type=submit]')]);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.getByText('No failed webhook deliveries.').waitFor();
      await shot(page, '02-overview');
      await accessible(page, 'overview');

      // The link was used up.
      const again = await page.context().newPage();
      await again.goto(setupLink(s.tenant.tenant.issuer, s.tenant.setupToken));
      await again.getByText('This setup link has expired or was already used').waitFor();
      await again.close();
    },
  );

  it('creates an organization and sets its branding with a live preview', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('Organizations');
    await page.getByText('No organizations yet').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Acme');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { level: 2, name: 'Acme' }).waitFor();
    await page.getByLabel('Display name').fill('Acme Corp');
    await page.getByLabel('Primary color (#rrggbb)').fill('#0a7d45');
    await page.getByText('Sign in to Acme Corp').waitFor();
    // A refused value shows the API's error_description.
    await page.getByLabel('Logo URL (https)').fill('http://insecure.example/logo.png');
    await page.getByRole('button', { name: 'Save branding' }).click();
    await page.getByRole('alert').filter({ hasText: 'https' }).waitFor();
    await page.getByLabel('Logo URL (https)').fill('');
    await page.getByRole('button', { name: 'Save branding' }).click();
    await page.getByText('Branding saved.').waitFor();
    await shot(page, '03-organizations');
    await accessible(page, 'organizations');
    const orgs = (await v1('GET', '/v1/organizations')).json().data;
    assert.equal(orgs[0].brand_display_name, 'Acme Corp');
    assert.equal(orgs[0].brand_primary_color, '#0a7d45');
  });

  let mintedKey = '';
  it('mints an API key: the secret is shown once and the event names the administrator', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('API keys');
    // Least privilege: no permission is ticked at first, and a key with none is not minted.
    const boxes = page.getByRole('group', { name: 'Permissions' }).getByRole('checkbox');
    assert.ok((await boxes.count()) > 10, 'one box per permission');
    assert.deepEqual([...new Set(await boxes.evaluateAll((els) => els.map((e) => (e as unknown as { checked: boolean }).checked)))], [false], 'none ticked');
    const keysBefore = (await v1('GET', '/v1/api_keys')).json().data.length;
    await page.getByLabel('Name', { exact: true }).fill('console key');
    await page.getByRole('button', { name: 'Mint API key' }).click();
    await page.getByRole('alert').filter({ hasText: 'Tick at least one permission' }).waitFor();
    assert.equal((await v1('GET', '/v1/api_keys')).json().data.length, keysBefore, 'nothing minted');
    await page.getByRole('checkbox', { name: 'organizations:read' }).check();
    await page.getByRole('button', { name: 'Mint API key' }).click();
    const secret = page.getByRole('textbox', { name: /New API key/ });
    await secret.waitFor();
    mintedKey = await secret.inputValue();
    assert.match(mintedKey, /^sk_live_[A-Za-z0-9_-]{43}$/);
    await page.getByText('This secret is shown only once').waitFor();
    await page.getByRole('cell', { name: /console key/ }).waitFor();
    await shot(page, '04-api-keys');
    await accessible(page, 'api keys');
    // The key is in the page (the box's value) until it is stored, then nowhere (getByText never
    // matches an input's value, so the page's HTML is what is checked).
    assert.ok((await page.content()).includes(mintedKey), 'shown in the page');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await secret.waitFor({ state: 'detached' });
    assert.equal((await page.content()).includes(mintedKey), false, 'gone once stored');
    await page.reload();
    await page.getByRole('cell', { name: /console key/ }).waitFor();
    assert.equal(await page.content().then((html) => html.includes(mintedKey)), false, 'never shown again');

    assert.equal((await v1('GET', '/v1/organizations', undefined, mintedKey)).status, 200, 'the key works');
    const admin = (await v1('GET', `/v1/users?email=${encodeURIComponent(ADMIN)}`)).json().data[0];
    const created = (await v1('GET', '/v1/events?types=api_key.created')).json().data.find((e: { data: { name: string } }) => e.data.name === 'console key');
    assert.deepEqual(created.actor, { type: 'user', id: admin.id });
  });

  it('registers a webhook, shows the failed delivery and replays it', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('Webhooks');
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel(/Event types/).fill('api_key.created');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page.getByRole('textbox', { name: /Signing secret/ }).waitFor();
    assert.match(await page.getByRole('textbox', { name: /Signing secret/ }).inputValue(), /^whsec_/);
    await page.getByRole('button', { name: 'I have stored it' }).click();

    const org = (await v1('GET', '/v1/organizations')).json().data[0];
    assert.equal((await v1('POST', `/v1/organizations/${org.id}/api_keys`, { name: 'hook trigger', scopes: ['organizations:read'] })).status, 201);
    await receiver.waitFor(1);
    const failedRow = page.locator('tr[data-status="failed"]');
    for (let i = 0; i < 50 && (await failedRow.count()) === 0; i++) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(200);
    }
    await failedRow.first().waitFor();
    assert.match(await failedRow.first().innerText(), /500/);
    await shot(page, '05-webhooks');
    await accessible(page, 'webhooks');

    receiver.respond = ok;
    await failedRow.first().getByRole('button', { name: 'Replay' }).click();
    await page.getByText(/queued again/).waitFor();
    await receiver.waitFor(2);
    const delivered = page.locator('tr[data-status="delivered"]');
    for (let i = 0; i < 50 && (await delivered.count()) === 0; i++) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(200);
    }
    await delivered.first().waitFor();
    assert.equal(receiver.received[0]!.headers['webhook-id'], receiver.received[1]!.headers['webhook-id'], 'the same delivery again');
  });

  it('reads the event feed with filters', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('Events');
    await page.getByLabel('Types (comma-separated)').fill('api_key.created');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    // The unfiltered table stays on screen until the filtered page arrives, and it holds
    // api_key.created rows too: wait for the rows the filter leaves out to go first.
    await page.getByRole('cell', { name: 'organization.created' }).first().waitFor({ state: 'detached' });
    await page.getByRole('cell', { name: 'api_key.created' }).first().waitFor();
    assert.equal(await page.getByRole('cell', { name: 'organization.created' }).count(), 0);
    await page.getByLabel('Types (comma-separated)').fill('no.such_type');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('alert').filter({ hasText: 'unknown event type' }).waitFor();
    await page.getByLabel('Types (comma-separated)').fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('cell', { name: 'organization.created' }).first().waitFor();
    // The data as fields, not JSON: the key minted above, by name and with its one scope.
    const minted = page.locator('tr', { has: page.getByRole('cell', { name: 'api_key.created', exact: true }) }).filter({ hasText: 'console key' });
    const fields = await minted
      .locator('dl.fields')
      .evaluate((dl) => [...dl.querySelectorAll('dt')].map((dt) => `${dt.textContent}=${dt.nextElementSibling?.textContent}`));
    assert.deepEqual(
      fields.filter((f) => !f.startsWith('key_id=')),
      ['name=console key', 'scopes=organizations:read'],
    );
    assert.equal(await page.locator('td code.data').count(), 0, 'no raw JSON');
    await shot(page, '06-events');
    await accessible(page, 'events');
  });

  it('revokes a key after confirmation', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('API keys');
    const row = page.getByRole('row').filter({ hasText: 'console key' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await v1('GET', '/v1/organizations', undefined, mintedKey)).status, 200, 'cancel revokes nothing');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByRole('row').filter({ hasText: 'console key' }).waitFor({ state: 'detached' });
    const refused = await v1('GET', '/v1/organizations', undefined, mintedKey);
    assert.equal(refused.status, 401);
    assert.equal(refused.json().error, 'invalid_token');
  });

  it('creates a user, ends their sessions, and adds them to an organization with a role', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('Users');
    await page.getByLabel('Email', { exact: true }).fill('ada@console.test');
    await page.getByLabel('Name (optional)').fill('Ada');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { level: 2, name: 'ada@console.test' }).waitFor();
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.getByRole('button', { name: 'Yes, sign out' }).click();
    await page.getByText('Every session was ended.').waitFor();
    await page.getByRole('button', { name: 'Create user' }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill('ada@console.test');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('alert').filter({ hasText: 'already exists' }).waitFor();
    await shot(page, '07-users');
    await accessible(page, 'users');

    await nav('Organizations');
    await page.getByRole('button', { name: /Acme/ }).click();
    await page.getByLabel('Add a user by email').fill('ada@console.test');
    await page.getByRole('button', { name: 'Add member' }).click();
    // Roles are ticked (several may be); the member starts with the default role.
    await page.getByRole('button', { name: 'Change roles of ada@console.test' }).click();
    const roles = page.getByRole('group', { name: 'Roles of ada@console.test' });
    await roles.getByLabel(/\(admin\)/).check();
    await roles.getByLabel(/\(member\)/).uncheck();
    await page.getByRole('button', { name: 'Save roles' }).click();
    const org = (await v1('GET', '/v1/organizations')).json().data[0];
    for (let i = 0; i < 50; i++) {
      const members = (await v1('GET', `/v1/organizations/${org.id}/members`)).json().data;
      if (members[0]?.role === 'admin') break;
      await page.waitForTimeout(100);
    }
    const members = (await v1('GET', `/v1/organizations/${org.id}/members`)).json().data;
    assert.equal(members[0].role, 'admin');
    const added = (await v1('GET', '/v1/events?types=member.added')).json().data[0];
    assert.equal(added.actor.type, 'user');
    await shot(page, '08-organization-members');
    await accessible(page, 'organization members');
  });

  it('registers an OAuth client (secret once) and a resource server', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('Applications');
    await page.getByText('No OAuth clients yet.').waitFor();
    await page.getByLabel('Name', { exact: true }).first().fill('Shop');
    await page.getByLabel(/Redirect URIs/).fill('https://shop.example/callback');
    await page.getByRole('button', { name: 'Register client' }).click();
    const secret = page.getByRole('textbox', { name: /Client secret of/ });
    await secret.waitFor();
    assert.ok((await secret.inputValue()).length >= 32);
    await page.getByRole('cell', { name: 'Shop', exact: true }).waitFor();
    await page.getByLabel('Identifier (the audience URI)').fill('not a uri');
    await page.getByLabel('Name', { exact: true }).nth(1).fill('Orders API');
    await page.getByRole('button', { name: 'Register API' }).click();
    await page.getByRole('alert').filter({ hasText: 'absolute URI' }).waitFor();
    await page.getByLabel('Identifier (the audience URI)').fill('https://orders.example');
    await page.getByRole('button', { name: 'Register API' }).click();
    await page.getByText('https://orders.example').waitFor();
    await shot(page, '09-applications');
    await accessible(page, 'applications');
    const clients = (await v1('GET', '/v1/clients')).json().data;
    assert.equal(clients[0].client_name, 'Shop');
  });

  it('creates a directory connection and mints its SCIM token (shown once)', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('Directory');
    await page.getByText('No directory connections in this organization.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Okta');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByText('no token yet').waitFor();
    await page.getByRole('button', { name: 'Mint SCIM token' }).click();
    await page.getByRole('button', { name: 'Yes, mint' }).click();
    const token = await page.getByRole('textbox', { name: 'SCIM token' }).inputValue();
    const scim = await s.request({ path: '/scim/v2/Users', headers: { authorization: `Bearer ${token}` } });
    assert.equal(scim.status, 200, scim.text);
    await shot(page, '10-directory');
    await accessible(page, 'directory');
  });

  it('at 1280 px the screens are a sidebar: one line each, in one column, beside the screen', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await nav('Overview');
    const links = page.getByRole('navigation', { name: 'Console' }).getByRole('link');
    const boxes = (await links.evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()))) as Array<{
      x: number;
      y: number;
      width: number;
      height: number;
    }>;
    assert.equal(boxes.length, 17);
    const line = Math.min(...boxes.map((b) => b.height));
    for (const [i, b] of boxes.entries()) {
      assert.equal(Math.round(b.x), Math.round(boxes[0]!.x), `link ${i} in the same column`);
      assert.ok(b.height < line * 1.5, `link ${i} on one line (${b.height}px)`);
      if (i > 0) assert.ok(b.y >= boxes[i - 1]!.y + boxes[i - 1]!.height - 1, `link ${i} below the one before`);
    }
    const main = (await page.locator('main').boundingBox())!;
    assert.ok(Math.max(...boxes.map((b) => b.x + b.width)) <= main.x + 1, 'the screen is beside the sidebar');
    await noHorizontalScroll(page, 'Overview at 1280 px');
  });

  it('is usable at 390 px wide, and nothing broke the CSP', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, file] of [
      ['Overview', '11-overview-390'],
      ['Organizations', '12-organizations-390'],
      ['Users', '13-users-390'],
      ['API keys', '14-api-keys-390'],
      ['Directory', '15-directory-390'],
      ['Applications', '16-applications-390'],
    ] as const) {
      await nav(name);
      await page.waitForLoadState('networkidle');
      await shot(page, file);
      await noHorizontalScroll(page, `${name} at 390 px`);
    }
    await accessible(page, 'api keys at 390 px');
    assert.deepEqual(cspViolations, []);
  });
});
