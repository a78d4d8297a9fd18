import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ok, startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';
import { accessible, buildConsole, consolePage, noHorizontalScroll, setUpAdministrator, shot } from './browser-helpers.js';
import { createDirectory, type Directory, GROUP, USER } from '../scim/helpers.js';
import { Browser as HttpBrowser, PASSWORD, signIn } from '../signin/helpers.js';

const ADMIN = 'root@screens2.test';
const noChromium = !existsSync(CHROMIUM) && 'no Chromium at /usr/bin/chromium';

/** The values of a data-* attribute of the rows shown, in order. */
const rowData = (page: Page, attr: string) => page.locator(`tr[data-${attr}]`).evaluateAll((rows, a) => rows.map((r) => r.getAttribute(`data-${a}`)!), attr);

/** Waits (up to 10 s) until the rows shown carry exactly `expected`, then asserts it (a stale list cannot pass). */
async function rowsBecome(page: Page, attr: string, expected: string[]): Promise<void> {
  let shown: string[] = [];
  for (let i = 0; i < 100; i++) {
    shown = await rowData(page, attr);
    if (JSON.stringify(shown) === JSON.stringify(expected)) return;
    await page.waitForTimeout(100);
  }
  assert.deepEqual(shown, expected, `rows (data-${attr})`);
}

/** Every item of a /v1 list, paging through it. */
async function all<T>(api: Api, p: string): Promise<T[]> {
  const out: T[] = [];
  let after = '';
  for (;;) {
    const r = await api('GET', `${p}${p.includes('?') ? '&' : '?'}limit=100${after ? `&after=${after}` : ''}`);
    assert.equal(r.status, 200, r.text);
    const page = r.json() as { data: T[]; has_more: boolean; next_cursor: string };
    out.push(...page.data);
    if (!page.has_more) return out;
    after = page.next_cursor;
  }
}

// The console screens over the routes of the i18-api merge: a user's sessions, what a directory
// provisioned and its role mapping, the server-side event filters and order, exact overview
// counts, and administrators (docs/console.md). Built console, real server, Debian's Chromium.
describe('console screens: sessions, directory, events, overview, administrators', { skip: noChromium }, () => {
  let s: TestServer;
  let receiver: Receiver;
  let api: Api;
  let browser: Browser;
  let page: Page;
  let adminId = '';
  const cspViolations: string[] = [];
  const nav = async (name: string) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
  };

  before(async () => {
    buildConsole();
    receiver = await startReceiver(ok);
    s = await startTestServer({ config: { egressAllow: '127.0.0.1/32' } });
    api = v1(s, s.tenant.platformApiKey);
    ({ browser, page } = await consolePage(cspViolations));

    // The first administrator from the setup link, signed in on the hosted login.
    await setUpAdministrator(page, s, ADMIN, PASSWORD);
    adminId = (await api('GET', `/users?email=${encodeURIComponent(ADMIN)}`)).json().data[0].id;
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await s?.close();
  });

  it("lists a user's sessions and ends one after confirmation", async () => {
    const created = await api('POST', '/users', { email: 'grace@screens2.test', password: PASSWORD });
    assert.equal(created.status, 201, created.text);
    const userId = created.json().id as string;
    for (let i = 0; i < 2; i++) {
      const r = await signIn(new HttpBrowser(s.port, s.tenant.tenant.host), '/login', 'grace@screens2.test', PASSWORD);
      assert.equal(r.status, 303, r.text);
    }
    const before = (await api('GET', `/users/${userId}/sessions`)).json().data as Array<{ id: string }>;
    assert.equal(before.length, 2);

    await nav('Users');
    await page.getByLabel('Find a user by email').fill('grace@screens2.test');
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await page.getByRole('button', { name: /grace@screens2\.test/ }).click();
    await page.getByRole('heading', { level: 2, name: 'grace@screens2.test' }).waitFor();
    await rowsBecome(
      page,
      'session',
      before.map((x) => x.id),
    );
    const first = page.locator(`tr[data-session="${before[0]!.id}"]`);
    assert.match(await first.innerText(), /pwd\s+acr pwd/);
    assert.match(await first.innerText(), /127\.0\.0\.1/);
    await shot(page, '20-user-sessions');
    await accessible(page, 'user sessions');

    // Cancel ends nothing; confirming ends that one session only.
    await first.getByRole('button', { name: 'End session' }).click();
    await first.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await api('GET', `/users/${userId}/sessions`)).json().data.length, 2);
    await first.getByRole('button', { name: 'End session' }).click();
    await first.getByRole('button', { name: 'Yes, end it' }).click();
    await page.getByText('The session was ended.').waitFor();
    await first.waitFor({ state: 'detached' });
    const left = (await api('GET', `/users/${userId}/sessions`)).json().data as Array<{ id: string }>;
    assert.deepEqual(
      left.map((x) => x.id),
      [before[1]!.id],
    );
    const revoked = (await api('GET', '/events?types=session.revoked&order=desc&limit=1')).json().data[0];
    assert.deepEqual(revoked.actor, { type: 'user', id: adminId });
    assert.equal(revoked.data.session_id, before[0]!.id);

    // Another administrator ended the last one meanwhile: ending it here shows the API's 404.
    assert.equal((await api('DELETE', `/users/${userId}/sessions/${before[1]!.id}`)).status, 204);
    const last = page.locator(`tr[data-session="${before[1]!.id}"]`);
    await last.getByRole('button', { name: 'End session' }).click();
    await last.getByRole('button', { name: 'Yes, end it' }).click();
    await last.getByRole('alert').filter({ hasText: 'session not found' }).waitFor();

    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.getByRole('button', { name: 'Yes, sign out' }).click();
    await page.getByText('Every session was ended.').waitFor();
    await page.getByText('No live sessions.').waitFor();
    assert.equal((await api('GET', `/users/${userId}/sessions`)).json().data.length, 0);
  });

  let dir: Directory;
  const scimUsers: string[] = [];
  it('shows the users and groups a SCIM connection provisioned, paged, and edits its group→role mapping', async () => {
    const org = await api('POST', '/organizations', { name: 'Initech' });
    assert.equal(org.status, 201, org.text);
    dir = await createDirectory(s, { orgId: org.json().id, name: 'Okta' });
    // 22 users: more than the screen's page of 20.
    for (let i = 0; i < 22; i++) {
      const r = await dir.scim('POST', '/Users', {
        schemas: [USER],
        userName: `emp${String(i).padStart(2, '0')}@initech.test`,
        displayName: `Employee ${i}`,
        externalId: `ext-${i}`,
        emails: [{ value: `emp${String(i).padStart(2, '0')}@initech.test`, type: 'work', primary: true }],
      });
      assert.equal(r.status, 201, r.text);
      scimUsers.push(r.json().id);
    }
    const provisioned = await all<{ id: string; user_id: string }>(api, `/organizations/${dir.orgId}/directory/connections/${dir.connectionId}/users`);
    assert.equal(provisioned.length, 22);
    const tenantUserOf = new Map(provisioned.map((u) => [u.id, u.user_id]));
    const engineering = await dir.scim('POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'Engineering',
      members: scimUsers.slice(0, 3).map((value) => ({ value })),
    });
    assert.equal(engineering.status, 201, engineering.text);
    const admins = await dir.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Keyhall Admins', members: [{ value: scimUsers[5] }] });
    assert.equal(admins.status, 201, admins.text);
    // A deactivated user shows as such.
    const off = await dir.scim('PATCH', `/Users/${scimUsers[21]}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    assert.equal(off.status, 200, off.text);

    await nav('Directory');
    await page.getByLabel('Organization').selectOption({ label: 'Initech' });
    await page.getByRole('heading', { level: 2, name: 'Okta' }).waitFor();
    const users = page.getByRole('region', { name: 'Provisioned users' });
    await rowsBecome(
      page,
      'user',
      provisioned.slice(0, 20).map((u) => u.user_id),
    );
    const groups = page.getByRole('region', { name: 'Provisioned groups' });
    assert.match(await groups.getByRole('row').filter({ hasText: 'Engineering' }).innerText(), /Engineering\s+3\s+—/);
    assert.match(await groups.getByRole('row').filter({ hasText: 'Keyhall Admins' }).innerText(), /Keyhall Admins\s+1\s+—/);
    await shot(page, '21-directory-provisioned');
    await accessible(page, 'directory provisioned');
    await users.getByRole('button', { name: 'Next page' }).click();
    await users.getByRole('button', { name: 'Previous page' }).waitFor();
    await rowsBecome(
      page,
      'user',
      provisioned.slice(20).map((u) => u.user_id),
    );
    assert.match(await users.locator(`tr[data-user="${tenantUserOf.get(scimUsers[21]!)}"]`).innerText(), /deactivated/);

    // The mapping: rows added and removed, saved as a whole and applied at once.
    const mapping = page.getByRole('form', { name: 'Group → role mapping' });
    await page.getByText('No groups are mapped.').waitFor();
    await mapping.getByRole('button', { name: 'Add a group' }).click();
    await mapping.getByLabel('Group 1', { exact: true }).fill('keyhall admins');
    await mapping.getByLabel('Role of group 1').selectOption('admin');
    await mapping.getByRole('button', { name: 'Add a group' }).click();
    await mapping.getByLabel('Group 2', { exact: true }).fill('Engineering');
    await mapping.getByRole('button', { name: 'Add a group' }).click();
    await mapping.getByLabel('Group 3', { exact: true }).fill('Gone');
    await mapping.getByRole('button', { name: 'Remove group 3' }).click();
    await mapping.getByRole('button', { name: 'Save mapping' }).click();
    await mapping.getByText('Mapping saved.').waitFor();
    const connection = (await api('GET', `/organizations/${dir.orgId}/directory/connections/${dir.connectionId}`)).json();
    assert.deepEqual(connection.group_roles, { 'keyhall admins': 'admin', engineering: 'member' });
    const members = (await api('GET', `/organizations/${dir.orgId}/members?limit=100`)).json().data as Array<{ user_id: string; role: string }>;
    assert.equal(members.find((m) => m.user_id === tenantUserOf.get(scimUsers[5]!))?.role, 'admin', 'the mapping was applied');
    await groups.getByRole('cell', { name: 'admin', exact: true }).waitFor();
    await groups.getByRole('cell', { name: 'member', exact: true }).waitFor();
    const updated = (await api('GET', `/events?types=directory.connection.updated&order=desc&limit=1`)).json().data[0];
    assert.deepEqual(updated.actor, { type: 'user', id: adminId });
    await shot(page, '22-directory-mapping');
    await accessible(page, 'directory mapping');
  });

  it('filters events by actor on the server and flips the order, paging right both ways', async () => {
    await nav('Events');
    // Newest first by default.
    const newest = (await api('GET', '/events?order=desc&limit=25')).json().data as Array<{ id: string }>;
    await rowsBecome(
      page,
      'event',
      newest.map((e) => e.id),
    );

    // The SCIM connection's events: more than a page of 25.
    await page.getByLabel('Actor type').selectOption('scim');
    await page.getByLabel('Actor id (with a type)').fill(dir.connectionId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const q = `actor_type=scim&actor_id=${dir.connectionId}`;
    const desc = await all<{ id: string; actor: { type: string; id: string } }>(api, `/events?${q}&order=desc`);
    assert.ok(desc.length > 25, `${desc.length} SCIM events`);
    assert.ok(desc.every((e) => e.actor.type === 'scim' && e.actor.id === dir.connectionId));
    await rowsBecome(
      page,
      'event',
      desc.slice(0, 25).map((e) => e.id),
    );
    await page.getByRole('button', { name: 'Next page' }).click();
    await rowsBecome(
      page,
      'event',
      desc.slice(25, 50).map((e) => e.id),
    );
    await shot(page, '23-events-actor');
    await accessible(page, 'events by actor');

    // Oldest first: back to the first page, the same events the other way round.
    await page.getByRole('radio', { name: 'Oldest first' }).check();
    const asc = [...desc].reverse();
    await rowsBecome(
      page,
      'event',
      asc.slice(0, 25).map((e) => e.id),
    );
    await page.getByRole('button', { name: 'Next page' }).click();
    await rowsBecome(
      page,
      'event',
      asc.slice(25, 50).map((e) => e.id),
    );
    await page.getByRole('button', { name: 'Previous page' }).click();
    await rowsBecome(
      page,
      'event',
      asc.slice(0, 25).map((e) => e.id),
    );

    // The administrator's own actions: every row's actor is them.
    await page.getByLabel('Actor type').selectOption('user');
    await page.getByLabel('Actor id (with a type)').fill(adminId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const mine = await all<{ id: string }>(api, `/events?actor_type=user&actor_id=${adminId}`);
    await rowsBecome(
      page,
      'event',
      mine.slice(0, 25).map((e) => e.id),
    );
    for (const actor of await page.locator('tr[data-event] td:nth-child(3)').allInnerTexts()) assert.equal(actor.trim(), `user ${adminId}`);

    // Bad input shows the API's error_description.
    await page.getByLabel('Actor type').selectOption('api_key');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('alert').filter({ hasText: 'starting with key_' }).waitFor();
    await page.getByLabel('Actor type').selectOption('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('alert').filter({ hasText: 'actor_id: needs actor_type' }).waitFor();
  });

  it('shows exact counts past a page of 100', async () => {
    for (let i = 0; i < 80; i++) assert.equal((await api('POST', '/users', { email: `bulk${i}@screens2.test` })).status, 201);
    for (const name of ['Shop', 'Backoffice'])
      assert.equal((await api('POST', '/clients', { client_name: name, grant_types: ['client_credentials'] })).status, 201);
    assert.equal((await api('POST', '/api_keys', { name: 'ci', scopes: ['users:read'] })).status, 201);
    const hook = await api('POST', `/organizations/${dir.orgId}/webhooks`, { url: receiver.url, events: ['member.removed'] });
    assert.equal(hook.status, 201, hook.text);
    // Admin + Grace + 22 SCIM + 80: past one page of 100.
    const users = (await all(api, '/users')).length;
    assert.equal(users, 104);
    const expected = {
      organizations: (await all(api, '/organizations')).length,
      users,
      platform_api_keys: (await all(api, '/api_keys')).length,
      oauth_clients: 2,
      webhooks: 1,
      failing_webhooks: 0,
    };
    assert.equal(expected.platform_api_keys, 2);

    await nav('Overview');
    await page.getByText('No failed webhook deliveries.').waitFor();
    const shown: Record<string, number> = {};
    for (const key of Object.keys(expected)) shown[key] = Number(await page.locator(`[data-count="${key}"] dd`).innerText());
    assert.deepEqual(shown, expected);
    // Recent events: newest first.
    const newest = (await api('GET', '/events?order=desc&limit=1')).json().data[0];
    await page.getByRole('region', { name: 'Recent events' }).getByRole('cell', { name: newest.type }).first().waitFor();
    await shot(page, '24-overview-counts');
    await accessible(page, 'overview counts');
  });

  it('grants and removes an administrator, and refuses removing yourself', async () => {
    await nav('Administrators');
    const table = page.getByRole('region', { name: 'Administrators' });
    await table.getByRole('row').filter({ hasText: ADMIN }).filter({ hasText: '(you)' }).waitFor();

    await page.getByLabel('Email of an existing user').fill('nobody@screens2.test');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /user/i);
    await page.getByLabel('Email of an existing user').fill('Grace@Screens2.test');
    await page.getByRole('button', { name: 'Look up' }).click();
    // A plain account: no warning, no confirmation.
    const found = page.getByRole('region', { name: 'Account found' });
    await found.getByText('grace@screens2.test').first().waitFor();
    assert.equal(await found.getByRole('group', { name: 'An organization controls this account' }).count(), 0);
    await found.getByRole('button', { name: 'Make administrator' }).click();
    const grace = table.getByRole('row').filter({ hasText: 'grace@screens2.test' });
    await grace.waitFor();
    const granted = (await api('GET', '/events?types=tenant_admin.granted&order=desc&limit=1')).json().data[0];
    assert.deepEqual(granted.actor, { type: 'user', id: adminId });
    const listed = await page.context().request.get(`${s.tenant.tenant.issuer}/console/api/admins`);
    assert.deepEqual(
      ((await listed.json()) as { data: Array<{ email: string }> }).data.map((a) => a.email),
      [ADMIN, 'grace@screens2.test'],
    );
    await shot(page, '25-administrators');
    await accessible(page, 'administrators');

    // Yourself: the server's 409 and its description, in place.
    const me = table.getByRole('row').filter({ hasText: ADMIN });
    await me.getByRole('button', { name: 'Remove' }).click();
    await me.getByRole('button', { name: 'Yes, remove' }).click();
    await me.getByRole('alert').filter({ hasText: 'you cannot remove yourself' }).waitFor();
    await accessible(page, 'administrators refusal');

    await grace.getByRole('button', { name: 'Remove' }).click();
    await grace.getByRole('button', { name: 'Yes, remove' }).click();
    await grace.waitFor({ state: 'detached' });
    const after = await page.context().request.get(`${s.tenant.tenant.issuer}/console/api/admins`);
    assert.deepEqual(
      ((await after.json()) as { data: Array<{ email: string }> }).data.map((a) => a.email),
      [ADMIN],
    );
    const revoked = (await api('GET', '/events?types=tenant_admin.revoked&order=desc&limit=1')).json().data[0];
    assert.deepEqual(revoked.actor, { type: 'user', id: adminId });
  });

  it('reflows at 390 px, and nothing broke the CSP', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, file] of [
      ['Overview', '26-overview-390'],
      ['Users', '27-users-390'],
      ['Directory', '28-directory-390'],
      ['Events', '29-events-390'],
      ['Administrators', '30-administrators-390'],
    ] as const) {
      await nav(name);
      if (name === 'Users') {
        await page.getByRole('button', { name: /grace@screens2\.test/ }).click();
        await page.getByText('No live sessions.').waitFor();
      }
      if (name === 'Directory') {
        await page.getByLabel('Organization').selectOption({ label: 'Initech' });
        await page.getByLabel('Group 1', { exact: true }).waitFor();
      }
      await page.waitForLoadState('networkidle');
      await shot(page, file);
      await noHorizontalScroll(page, `${name} at 390 px`);
    }
    assert.deepEqual(cspViolations, []);
  });
});
