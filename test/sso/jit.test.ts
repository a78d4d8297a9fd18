import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDirectory, USER } from '../scim/helpers.js';
import { authorizeAtSp, oidcConnection, type SsoTestServer, signInUpstream, startSsoServer, upstreamUser } from './helpers.js';

describe('just-in-time provisioning rules', () => {
  let s: SsoTestServer;
  let app: { client_id: string };
  before(async () => {
    s = await startSsoServer();
    app = await s.publicClient();
  });
  after(() => s.close());

  /** A callback URL for `email` at `connection`, not yet followed, in browser `b`. */
  async function callbackFor(b: ReturnType<SsoTestServer['browser']>, connection: string, email: string): Promise<URL> {
    const flow = new URL(await authorizeAtSp(s, b, app.client_id), s.issuer).searchParams.get('flow')!;
    return signInUpstream(s, await b.get(`/sso/${connection}/start?flow=${encodeURIComponent(flow)}`), email);
  }
  const members = async (org: string) =>
    (await s.api('GET', `/organizations/${org}/members?limit=100`)).json().data as Array<{ user_id: string; role: string; user: { email: string } }>;

  it('two simultaneous first logins of one person make one user and one membership', async () => {
    const org = (await s.api('POST', '/organizations', { name: 'Race' })).json().id;
    const conn = await oidcConnection(s, org);
    await upstreamUser(s, 'twice@race.test');
    const [b1, b2] = [s.browser(), s.browser()];
    const [c1, c2] = [await callbackFor(b1, conn.id, 'twice@race.test'), await callbackFor(b2, conn.id, 'twice@race.test')];
    const results = await Promise.all([b1.get(c1.pathname + c1.search), b2.get(c2.pathname + c2.search)]);
    assert.deepEqual(
      results.map((r) => r.status),
      [303, 303],
      results.map((r) => r.text).join('\n'),
    );
    assert.equal((await s.api('GET', '/users?email=twice@race.test')).json().data.length, 1);
    assert.equal((await members(org)).length, 1);
    const added = (await s.api('GET', `/events?organization_id=${org}&types=member.added`)).json().data;
    assert.equal(added.length, 1);
  });

  it('maps upstream groups to a role (the most privileged mapped group wins), else the default role', async () => {
    const org = (await s.api('POST', '/organizations', { name: 'Groups' })).json().id;
    // The upstream (Keyhall) sends no groups claim; the email claim stands in for one here.
    const conn = await oidcConnection(s, org, { default_role: 'member', group_roles: { 'Boss@Groups.test': 'admin' } });
    await s.api('PATCH', `/organizations/${org}/sso/connections/${conn.id}`, { oidc: { claims: { groups: 'email' } } });
    await upstreamUser(s, 'boss@groups.test');
    await upstreamUser(s, 'staff@groups.test');
    for (const email of ['boss@groups.test', 'staff@groups.test']) {
      const b = s.browser();
      const c = await callbackFor(b, conn.id, email);
      assert.equal((await b.get(c.pathname + c.search)).status, 303);
    }
    const roles = Object.fromEntries((await members(org)).map((m) => [m.user.email, m.role]));
    assert.deepEqual(roles, { 'boss@groups.test': 'admin', 'staff@groups.test': 'member' });
  });

  it("links the user the organization's own directory (SCIM) provisioned, without a verified domain", async () => {
    const dir = await createDirectory(s);
    const provisioned = await dir.scim('POST', '/Users', {
      schemas: [USER],
      userName: 'scimmed@corp.test',
      emails: [{ value: 'scimmed@corp.test', primary: true }],
      active: true,
    });
    assert.equal(provisioned.status, 201, provisioned.text);
    const userId = (await s.api('GET', '/users?email=scimmed@corp.test')).json().data[0].id;
    const conn = await oidcConnection(s, dir.orgId);
    await upstreamUser(s, 'scimmed@corp.test');
    const b = s.browser();
    const c = await callbackFor(b, conn.id, 'scimmed@corp.test');
    assert.equal((await b.get(c.pathname + c.search)).status, 303);
    assert.deepEqual(
      (await s.api('GET', '/users?email=scimmed@corp.test')).json().data.map((u: { id: string }) => u.id),
      [userId],
    );

    // Another organization's connection may not take that user over.
    const stranger = (await s.api('POST', '/organizations', { name: 'Stranger' })).json().id;
    const other = await oidcConnection(s, stranger);
    const b2 = s.browser();
    const c2 = await callbackFor(b2, other.id, 'scimmed@corp.test');
    const refused = await b2.get(c2.pathname + c2.search);
    assert.equal(refused.status, 400);
    assert.match(refused.text, /cannot be linked/);
  });

  it('does not take over an account that existed before the directory linked it (SCIM names any email)', async () => {
    // A tenant's own user (here with a password, as an administrator would have)…
    const owner = (await s.api('POST', '/users', { email: 'owner@victim.test', password: 'correct horse battery staple' })).json();
    // …named by an organization's SCIM directory: not linked, as the email is outside the
    // organization's verified domain (test/scim/link-rules.test.ts).
    const dir = await createDirectory(s);
    const linked = await dir.scim('POST', '/Users', {
      schemas: [USER],
      userName: 'owner@victim.test',
      emails: [{ value: 'owner@victim.test', primary: true }],
      active: true,
    });
    assert.equal(linked.status, 409, linked.text);
    // The same organization's IdP asserting that email, verified, may not sign in as that user.
    const conn = await oidcConnection(s, dir.orgId);
    await upstreamUser(s, 'owner@victim.test');
    const b = s.browser();
    const c = await callbackFor(b, conn.id, 'owner@victim.test');
    const refused = await b.get(c.pathname + c.search);
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.text, /cannot be linked/);
    const failed = (await s.api('GET', `/events?types=sso.login.failed`)).json().data.at(-1);
    assert.equal(failed.data.reason, 'email_conflict');
    assert.equal(failed.data.connection_id, conn.id);
    assert.deepEqual(
      (await s.api('GET', '/users?email=owner@victim.test')).json().data.map((u: { id: string }) => u.id),
      [owner.id],
    );
  });
});
