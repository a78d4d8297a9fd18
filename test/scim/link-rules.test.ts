import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConsoleClient, PASSWORD } from '../console/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, v1 } from '../helpers/v1.js';
import { eventsOf, expectScimError, membersOf, scimClient, type Scim, USER } from './helpers.js';

// Issue 26, finding 4: an organization-bound key could attach any existing user — a tenant
// administrator included — through its own SCIM directory, which `POST …/members` refuses to the
// same key. A directory now links an existing user only in its organization's verified domain,
// and never a tenant administrator (docs/scim.md).
describe('what an organization-bound directory may link', () => {
  let s: TestServer;
  const platform = () => v1(s, s.tenant.platformApiKey);
  let adminId: string;

  /** An organization, and a directory made with that organization's own key (directory:write only). */
  async function orgDirectory(name: string, domain?: string): Promise<{ orgId: string; scim: Scim }> {
    const orgId = (await platform()('POST', '/organizations', { name, ...(domain ? { domain } : {}) })).json().id as string;
    if (domain) assert.equal((await platform()('POST', `/organizations/${orgId}/domain_verification`, { method: 'manual' })).status, 200);
    const key = await platform()('POST', `/organizations/${orgId}/api_keys`, { name: 'org-admin', scopes: ['directory:write', 'members:write'] });
    assert.equal(key.status, 201, key.text);
    const org = v1(s, key.json().key);
    const conn = await org('POST', `/organizations/${orgId}/directory/connections`, { name: 'their idp' });
    assert.equal(conn.status, 201, conn.text);
    const tok = await org('POST', `/organizations/${orgId}/directory/scim_token`, { connection_id: conn.json().id });
    assert.equal(tok.status, 201, tok.text);
    // The same key cannot attach an existing user through /v1.
    expectError(await org('POST', `/organizations/${orgId}/members`, { user_id: adminId }), 403, 'forbidden');
    return { orgId, scim: scimClient(s, tok.json().token) };
  }

  /** Refused with nothing written: no membership, no SCIM user, no event. */
  async function refused(d: { orgId: string; scim: Scim }, email: string) {
    const r = await d.scim('POST', '/Users', { schemas: [USER], userName: email, emails: [{ value: email, primary: true }] });
    expectScimError(r, 409, 'uniqueness');
    assert.match(r.json().detail, /cannot link it/);
    assert.ok(!r.json().detail.includes('administrator of'), 'one detail whatever the reason');
    assert.deepEqual(await membersOf(platform(), d.orgId), []);
    assert.equal((await d.scim('GET', '/Users')).json().totalResults, 0);
    assert.deepEqual(await eventsOf(platform(), d.orgId, 'directory.user.created,member.added,user.created'), []);
  }

  before(async () => {
    s = await startTestServer();
    // A tenant administrator, made through the console's setup link.
    const c = new ConsoleClient(s);
    c.csrf = (await c.call('GET', `/console/api/setup?token=${s.tenant.setupToken}`)).json().csrf_token;
    const made = await c.call('POST', '/console/api/setup', { token: s.tenant.setupToken, email: 'admin@corp.example', password: PASSWORD });
    assert.equal(made.status, 201, made.text);
    adminId = made.json().user.id;
  });
  after(() => s.close());

  it('refuses a tenant administrator outside the verified domain (the attack as reported)', async () => {
    await refused(await orgDirectory('Evil'), 'admin@corp.example');
  });

  it("refuses a tenant administrator even inside the organization's verified domain", async () => {
    await refused(await orgDirectory('Corp', 'corp.example'), 'ADMIN@corp.example');
    assert.equal((await platform()('GET', `/users/${adminId}`)).json().email, 'admin@corp.example', 'the account is untouched');
  });

  it('refuses an existing user outside the verified domain, and one of an organization whose domain is not verified', async () => {
    const outsider = (await platform()('POST', '/users', { email: 'someone@elsewhere.example', password: PASSWORD })).json();
    await refused(await orgDirectory('Verified', 'verified.example'), outsider.email);
    const unverified = (await platform()('POST', '/organizations', { name: 'Unverified', domain: 'unverified.example' })).json().id as string;
    const user = (await platform()('POST', '/users', { email: 'u@unverified.example' })).json();
    const key = (await platform()('POST', `/organizations/${unverified}/api_keys`, { name: 'k', scopes: ['directory:write'] })).json().key;
    const conn = await v1(s, key)('POST', `/organizations/${unverified}/directory/connections`, { name: 'idp' });
    const tok = await v1(s, key)('POST', `/organizations/${unverified}/directory/scim_token`, { connection_id: conn.json().id });
    await refused({ orgId: unverified, scim: scimClient(s, tok.json().token) }, user.email);
  });

  it("links an existing user in the organization's verified domain, and creates new users in any domain", async () => {
    const d = await orgDirectory('Linking', 'linking.example');
    const existing = (await platform()('POST', '/users', { email: 'member@linking.example' })).json();
    const linked = await d.scim('POST', '/Users', { schemas: [USER], userName: 'member@linking.example' });
    assert.equal(linked.status, 201, linked.text);
    const fresh = await d.scim('POST', '/Users', { schemas: [USER], userName: 'new@elsewhere.example' });
    assert.equal(fresh.status, 201, fresh.text);
    const members = await membersOf(platform(), d.orgId);
    assert.deepEqual(members.map((m) => m.user.email).sort(), ['member@linking.example', 'new@elsewhere.example']);
    const created = await eventsOf(platform(), d.orgId, 'directory.user.created');
    const linkedEvent = created.find((e) => e.data.user_id === existing.id);
    assert.equal(linkedEvent?.data.linked_existing_user, true);
  });
});
