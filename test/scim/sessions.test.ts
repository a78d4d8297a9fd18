import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { Browser, signIn } from '../signin/helpers.js';
import { v1 } from '../helpers/v1.js';
import { createDirectory, type Directory, eventsOf, PATCH, scimClient, USER, verifyDomain } from './helpers.js';

const PASSWORD = 'correct horse battery staple';

describe('SCIM deprovisioning ends hosted-login sessions', () => {
  let s: TestServer;
  let d: Directory;
  before(async () => {
    s = await startTestServer();
    d = await createDirectory(s);
  });
  after(() => s.close());

  /** Signs the user in on the hosted login page; returns the browser holding the session. */
  async function loggedIn(email: string): Promise<Browser> {
    const b = new Browser(s.port, s.tenant.tenant.host);
    const r = await signIn(b, '/login', email, PASSWORD);
    assert.equal(r.status, 303, r.text);
    assert.equal((await b.get('/sessions')).status, 200);
    return b;
  }
  const signedOut = async (b: Browser) => {
    const r = await b.get('/sessions');
    return r.status === 303 && /^\/login/.test(String(r.headers.location));
  };

  it('deactivation and DELETE revoke the sessions of a user the directory created', async () => {
    const u = (await d.scim('POST', '/Users', { schemas: [USER], userName: 'leaver@acme.example' })).json();
    const userId = (await d.api('GET', `/users?email=leaver@acme.example`)).json().data[0].id;
    assert.equal((await d.api('PATCH', `/users/${userId}`, { password: PASSWORD })).status, 200);
    const b = await loggedIn('leaver@acme.example');
    await d.scim('PATCH', `/Users/${u.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    assert.ok(await signedOut(b), 'the session ends with the deactivation');
    const revoked = await eventsOf(d.api, d.orgId, 'session.revoked');
    assert.equal(revoked.length, 1);
    assert.deepEqual(revoked[0]?.actor, { type: 'scim', id: d.connectionId });
    assert.equal(revoked[0]?.data.reason, 'deprovisioned');

    await d.scim('PATCH', `/Users/${u.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
    const again = await loggedIn('leaver@acme.example');
    assert.equal((await d.scim('DELETE', `/Users/${u.id}`)).status, 204);
    assert.ok(await signedOut(again), 'the session ends with the DELETE');
  });

  it('keeps the sessions of a shared user who still belongs to another organization', async () => {
    const other = (await d.api('POST', '/organizations', { name: 'Elsewhere' })).json().id;
    const shared = (await d.api('POST', '/users', { email: 'shared@acme.example', password: PASSWORD })).json();
    assert.equal((await d.api('POST', `/organizations/${other}/members`, { user_id: shared.id })).status, 201);
    // The directory links the existing user: their email is in its organization's verified domain.
    await verifyDomain(d.api, d.orgId, 'acme.example');
    const linked = await d.scim('POST', '/Users', { schemas: [USER], userName: 'shared@acme.example' });
    assert.equal(linked.status, 201, linked.text);
    const u = linked.json();
    const b = await loggedIn('shared@acme.example');
    await d.scim('PATCH', `/Users/${u.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
    assert.ok(!(await signedOut(b)), 'membership elsewhere: the session stays');
    assert.equal((await d.api('GET', `/organizations/${other}/members`)).json().data.length, 1);
  });
  it('keeps the sessions of a linked user with no other membership (an organization key cannot sign them out)', async () => {
    // The reviewer's sequence: a user who signed up and belongs to no organization; another
    // organization's admin, holding only an organization-bound directory:write key, links the
    // user by email through its own directory, then deprovisions them, repeatedly. (Linking now
    // also needs the email in that organization's verified domain: link-rules.test.ts.)
    const platform = v1(s, s.tenant.platformApiKey);
    const victim = (await platform('POST', '/users', { email: 'boss@corp.example', password: PASSWORD })).json();
    const b = await loggedIn('boss@corp.example');
    const orgX = (await platform('POST', '/organizations', { name: 'X' })).json().id;
    await verifyDomain(platform, orgX, 'corp.example');
    const key = await platform('POST', `/organizations/${orgX}/api_keys`, { name: 'x-admin', scopes: ['directory:write'] });
    assert.equal(key.status, 201, key.text);
    const xkey = v1(s, key.json().key);
    const conn = await xkey('POST', `/organizations/${orgX}/directory/connections`, { name: 'evil idp' });
    assert.equal(conn.status, 201, conn.text);
    const tok = await xkey('POST', `/organizations/${orgX}/directory/scim_token`, { connection_id: conn.json().id });
    const scim = scimClient(s, tok.json().token);

    for (let round = 0; round < 2; round++) {
      const c = await scim('POST', '/Users', { schemas: [USER], userName: 'boss@corp.example' });
      assert.equal(c.status, 201, c.text);
      const off = await scim('PATCH', `/Users/${c.json().id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
      assert.equal(off.status, 200, off.text);
      assert.ok(!(await signedOut(b)), 'deactivating a linked user keeps their session');
      assert.equal((await scim('DELETE', `/Users/${c.json().id}`)).status, 204);
      assert.ok(!(await signedOut(b)), 'deleting a linked user keeps their session');
    }
    assert.equal((await eventsOf(platform, orgX, 'session.revoked')).length, 0);
    assert.equal((await eventsOf(platform, orgX, 'member.removed')).length, 2, 'the membership in X is still removed');
    assert.equal((await platform('GET', `/users/${victim.id}`)).status, 200, 'the tenant user stays');
  });
});
