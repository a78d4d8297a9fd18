import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/v1.js';
import { createDirectory, USER, verifyDomain } from '../scim/helpers.js';
import type { Browser } from '../signin/helpers.js';
import { authorizeAtSp, type SsoTestServer, startSsoServer } from '../sso/helpers.js';
import { startTestIdp } from '../sso/saml-idp.js';
import { ConsoleClient, PASSWORD } from './helpers.js';

const ADMIN = 'first-admin@console.test';

interface Admin {
  user_id: string;
  email: string;
  granted_at: string;
}

/** GET /console/api/admins/candidate. */
interface Candidate {
  user: { id: string; email: string; created_at: string };
  already_admin: boolean;
  managed_by: Array<{ kind: 'directory'; organization_id: string; organization_name: string; connection_id: string; connection_name: string }>;
  sso: Array<{ organization_id: string; organization_name: string; connection_id: string; connection_name: string; protocol: string }>;
  verified_domain: { organization_id: string; organization_name: string; domain: string } | null;
  organizations: Array<{ id: string; name: string; role: string }>;
  organizations_total: number;
  has_password: boolean;
  password_set_by: { type: string; id: string | null; every_permission: boolean } | null;
  fingerprint: string;
}

const candidatePath = (email: string) => `/console/api/admins/candidate?email=${encodeURIComponent(email)}`;

/** Signs the tenant's first administrator up through its setup link, then in on the hosted login. */
async function firstAdministrator(s: TestServer, email: string): Promise<{ client: ConsoleClient; id: string }> {
  const client = new ConsoleClient(s);
  client.csrf = (await client.call('GET', `/console/api/setup?token=${s.tenant.setupToken}`)).json().csrf_token;
  const made = await client.call('POST', '/console/api/setup', { token: s.tenant.setupToken, email, password: PASSWORD });
  assert.equal(made.status, 201, made.text);
  await client.signIn(email);
  return { client, id: made.json().user.id };
}

// The console's administrators API (docs/console.md): GET/POST /console/api/admins,
// DELETE /console/api/admins/{userId}, audited with the administrator as actor.
describe('console administrators API', () => {
  let s: TestServer;
  let c: ConsoleClient;
  let adminId: string;
  const clock = new ManualClock(Date.parse('2026-02-01T00:00:00Z'));
  const v1 = (method: string, path: string, body?: unknown) =>
    s.request({
      method,
      path,
      headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const newUser = async (email: string) => {
    const r = await v1('POST', '/v1/users', { email, password: PASSWORD });
    assert.equal(r.status, 201, r.text);
    return r.json().id as string;
  };
  const admins = async (client = c) => {
    const r = await client.call('GET', '/console/api/admins');
    assert.equal(r.status, 200, r.text);
    return r.json().data as Admin[];
  };
  const lastEvent = async (type: string) => (await v1('GET', `/v1/events?types=${type}&order=desc&limit=1`)).json().data[0];

  /** The id of the test tenant's platform key (every permission). */
  const platformKeyId = async () => {
    const keys = (await v1('GET', '/v1/api_keys?limit=100')).json().data as Array<{ id: string; key_prefix: string }>;
    return keys.find((k) => s.tenant.platformApiKey.startsWith(k.key_prefix))!.id;
  };
  const candidate = async (email: string, client = c) => {
    const r = await client.call('GET', candidatePath(email));
    assert.equal(r.status, 200, r.text);
    return r.json() as Candidate;
  };

  before(async () => {
    s = await startTestServer({ clock });
    ({ client: c, id: adminId } = await firstAdministrator(s, ADMIN));
  });
  after(() => s.close());

  it('lists the administrators with user id, email and when they were granted', async () => {
    assert.deepEqual(await admins(), [{ user_id: adminId, email: ADMIN, granted_at: '2026-02-01T00:00:00.000Z' }]);
  });

  it('grants tenant_admin to an existing user by email: 201, audited with the administrator as actor', async () => {
    const id = await newUser('second@console.test');
    clock.advance(60_000);
    const r = await c.call('POST', '/console/api/admins', { email: '  Second@Console.test ' });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json(), { user_id: id, email: 'second@console.test', granted_at: '2026-02-01T00:01:00.000Z' });
    assert.deepEqual(
      (await admins()).map((a) => a.user_id),
      [adminId, id],
    );
    const ev = await lastEvent('tenant_admin.granted');
    assert.deepEqual(ev.actor, { type: 'user', id: adminId });
    assert.deepEqual(ev.data, { user_id: id });
    // The new administrator can use the console.
    const second = new ConsoleClient(s);
    await second.signIn('second@console.test');
    assert.equal((await admins(second)).length, 2);
  });

  it('granting: no such user is 404, an administrator already 409, bad input 400', async () => {
    expectError(await c.call('POST', '/console/api/admins', { email: 'nobody@console.test' }), 404, 'not_found');
    const again = await c.call('POST', '/console/api/admins', { email: ADMIN });
    expectError(again, 409, 'conflict');
    assert.match(again.json().error_description, /already is an administrator/);
    expectError(await c.call('POST', '/console/api/admins', { email: 'not-an-email' }), 400, 'invalid_request');
    expectError(await c.call('POST', '/console/api/admins', { email: `${'a'.repeat(250)}@x.test` }), 400, 'invalid_request');
    expectError(await c.call('POST', '/console/api/admins', {}), 400, 'invalid_request');
    expectError(await c.call('POST', '/console/api/admins', { email: 'x@console.test', role: 'owner' }), 400, 'invalid_request');
    expectError(
      await c.call('POST', '/console/api/admins', 'email=x@console.test', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported_media_type',
    );
    expectError(await c.call('POST', '/console/api/admins', '{"email":'), 400, 'invalid_request');
  });

  it('revokes another administrator: 204, the user stays, audited; their console access ends at once', async () => {
    const id = await newUser('third@console.test');
    assert.equal((await c.call('POST', '/console/api/admins', { email: 'third@console.test' })).status, 201);
    const third = new ConsoleClient(s);
    await third.signIn('third@console.test');
    assert.equal((await third.call('GET', '/console/api/overview')).status, 200);

    const r = await c.call('DELETE', `/console/api/admins/${id}`);
    assert.equal(r.status, 204, r.text);
    assert.ok(!(await admins()).some((a) => a.user_id === id));
    assert.equal((await v1('GET', `/v1/users/${id}`)).status, 200, 'the user stays');
    const ev = await lastEvent('tenant_admin.revoked');
    assert.deepEqual(ev.actor, { type: 'user', id: adminId });
    assert.deepEqual(ev.data, { user_id: id });
    expectError(await third.call('GET', '/console/api/admins'), 403, 'forbidden');
  });

  it('revoking: yourself 409, a non-administrator or unknown user 404, a malformed id 404', async () => {
    const self = await c.call('DELETE', `/console/api/admins/${adminId}`);
    expectError(self, 409, 'conflict');
    assert.match(self.json().error_description, /cannot remove yourself/);
    const plain = await newUser('plain@console.test');
    expectError(await c.call('DELETE', `/console/api/admins/${plain}`), 404, 'not_found');
    expectError(await c.call('DELETE', '/console/api/admins/user_0000000000000000000000000'), 404, 'not_found');
    expectError(await c.call('DELETE', '/console/api/admins/key_0000000000000000000000000'), 404, 'not_found');
    expectError(await c.call('DELETE', `/console/api/admins/${'user_' + 'a'.repeat(80)}`), 404, 'not_found');
    assert.ok((await admins()).some((a) => a.user_id === adminId));
  });

  it('two administrators removing each other at once leave one administrator, never none', async () => {
    // Only the first administrator and "second" are left.
    const rest = (await admins()).filter((a) => a.user_id !== adminId);
    assert.equal(rest.length, 1);
    const second = new ConsoleClient(s);
    await second.signIn(rest[0]!.email);
    const [a, b] = await Promise.all([c.call('DELETE', `/console/api/admins/${rest[0]!.user_id}`), second.call('DELETE', `/console/api/admins/${adminId}`)]);
    const statuses = [a.status, b.status].sort();
    assert.equal(statuses[0], 204, `${a.text} ${b.text}`);
    // The loser either saw the last administrator (409) or had already lost the role (403).
    assert.ok(statuses[1] === 409 || statuses[1] === 403, `${a.status} ${a.text} / ${b.status} ${b.text}`);
    const left = await s.server.ctx.admins.list(s.tenant.tenant.id);
    assert.equal(left.length, 1);
    // Restore the first administrator's access for the tests after this one.
    if (left[0]!.userId !== adminId) await s.server.ctx.admins.grant(s.tenant.tenant.id, ADMIN);
  });

  it('the last administrator cannot be removed (409, saying so)', async () => {
    const only = await s.server.ctx.admins.list(s.tenant.tenant.id);
    for (const a of only) if (a.userId !== adminId) await s.server.ctx.admins.revoke(s.tenant.tenant.id, a.userId);
    const other = await newUser('outsider@console.test');
    await s.server.ctx.admins.grant(s.tenant.tenant.id, 'outsider@console.test');
    const outsider = new ConsoleClient(s);
    await outsider.signIn('outsider@console.test');
    // The outsider removes the first administrator and is then the last one.
    assert.equal((await outsider.call('DELETE', `/console/api/admins/${adminId}`)).status, 204);
    const last = await outsider.call('DELETE', `/console/api/admins/${other}`);
    expectError(last, 409, 'conflict');
    assert.match(last.json().error_description, /last administrator/);
    assert.deepEqual(
      (await admins(outsider)).map((a) => a.user_id),
      [other],
    );
    await s.server.ctx.admins.grant(s.tenant.tenant.id, ADMIN);
  });

  it('mutations need the CSRF header, this origin and same-origin fetch; nothing changes otherwise', async () => {
    const id = await newUser('csrf@console.test');
    const refused = [
      await c.call('POST', '/console/api/admins', { email: 'csrf@console.test' }, { 'x-csrf-token': undefined }),
      await c.call('POST', '/console/api/admins', { email: 'csrf@console.test' }, { 'x-csrf-token': 'A'.repeat(43) }),
      await c.call('POST', '/console/api/admins', { email: 'csrf@console.test' }, { origin: 'https://evil.example' }),
      await c.call('POST', '/console/api/admins', { email: 'csrf@console.test' }, { origin: undefined }),
      await c.call('POST', '/console/api/admins', { email: 'csrf@console.test' }, { 'sec-fetch-site': 'cross-site' }),
    ];
    for (const r of refused) expectError(r, 403, 'csrf_failed');
    assert.ok(!(await admins()).some((a) => a.user_id === id));
    assert.equal((await c.call('POST', '/console/api/admins', { email: 'csrf@console.test' })).status, 201);
    expectError(await c.call('DELETE', `/console/api/admins/${id}`, undefined, { 'x-csrf-token': undefined }), 403, 'csrf_failed');
    expectError(await c.call('DELETE', `/console/api/admins/${id}`, undefined, { origin: 'https://evil.example' }), 403, 'csrf_failed');
    assert.ok((await admins()).some((a) => a.user_id === id));
  });

  it('without a session 401 login_required; a signed-in non-administrator 403 forbidden; /v1 has no such routes', async () => {
    const anonymous = new ConsoleClient(s);
    expectError(await anonymous.call('GET', '/console/api/admins'), 401, 'login_required');
    const plain = new ConsoleClient(s);
    await newUser('nonadmin@console.test');
    await plain.signIn('nonadmin@console.test');
    plain.csrf = (await plain.call('GET', `/console/api/setup?token=${'x'.repeat(43)}`)).json().csrf_token;
    expectError(await plain.call('GET', '/console/api/admins'), 403, 'forbidden');
    expectError(await plain.call('POST', '/console/api/admins', { email: 'nonadmin@console.test' }), 403, 'forbidden');
    expectError(await plain.call('DELETE', `/console/api/admins/${adminId}`), 403, 'forbidden');
    assert.equal((await v1('GET', '/v1/admins')).status, 404);
  });
  it('candidate: a plain account with its memberships, not managed by any organization', async () => {
    const at = new Date(clock.now()).toISOString();
    const id = await newUser('plain-candidate@console.test');
    const beta = (await v1('POST', '/v1/organizations', { name: 'Beta' })).json().id as string;
    const alpha = (await v1('POST', '/v1/organizations', { name: 'Alpha' })).json().id as string;
    for (const [org, role] of [
      [beta, 'member'],
      [alpha, 'admin'],
    ] as const) {
      const m = await v1('POST', `/v1/organizations/${org}/members`, { user_id: id, role });
      assert.equal(m.status, 201, m.text);
    }
    // GET needs no CSRF header (like every console GET), only the session and the console cookie.
    const r = await c.call('GET', candidatePath(' Plain-Candidate@Console.TEST '), undefined, { 'x-csrf-token': undefined, origin: undefined });
    assert.equal(r.status, 200, r.text);
    assert.match(r.json().fingerprint, /^[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...r.json(), fingerprint: undefined },
      {
        fingerprint: undefined,
        user: { id, email: 'plain-candidate@console.test', created_at: at },
        already_admin: false,
        managed_by: [],
        sso: [],
        verified_domain: null,
        organizations: [
          { id: alpha, name: 'Alpha', role: 'admin' },
          { id: beta, name: 'Beta', role: 'member' },
        ],
        organizations_total: 2,
        has_password: true,
        password_set_by: { type: 'api_key', id: await platformKeyId(), every_permission: true },
      },
    );
    const self = await candidate(ADMIN);
    assert.equal(self.already_admin, true);
    // The setup link's password is the new administrator's own choice.
    assert.deepEqual(self.password_set_by, { type: 'system', id: null, every_permission: true });
  });

  it('candidate: who last set the password; a narrower key that did is shown as not holding every permission', async () => {
    const minted = await v1('POST', '/v1/api_keys', { name: 'users only', scopes: ['users:read', 'users:write'] });
    assert.equal(minted.status, 201, minted.text);
    const narrow = minted.json() as { id: string; key: string };
    const asNarrow = (method: string, path: string, body: unknown) =>
      s.request({ method, path, headers: { authorization: `Bearer ${narrow.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const byNarrow = { type: 'api_key', id: narrow.id, every_permission: false };

    // A users:write key prepares the account an administrator is expected to get.
    const made = await asNarrow('POST', '/v1/users', { email: 'prepared@console.test', password: PASSWORD });
    assert.equal(made.status, 201, made.text);
    const id = made.json().id as string;
    assert.deepEqual(await candidate('prepared@console.test').then((x) => [x.has_password, x.password_set_by]), [true, byNarrow]);

    // An administrator sets a new one: nobody else knows it.
    const reset = await c.call('PATCH', `/console/api/users/${id}`, { password: 'a-new-password-the-key-never-saw' });
    assert.equal(reset.status, 200, reset.text);
    assert.deepEqual((await candidate('prepared@console.test')).password_set_by, { type: 'user', id: adminId, every_permission: true });

    // The narrower key sets it again (the account is no administrator yet, so it may): flagged again.
    assert.equal((await asNarrow('PATCH', `/v1/users/${id}`, { password: 'the-key-knows-this-one' })).status, 200);
    assert.deepEqual((await candidate('prepared@console.test')).password_set_by, byNarrow);
    // A name change leaves who set the password as it was.
    assert.equal((await v1('PATCH', `/v1/users/${id}`, { name: 'Prepared' })).status, 200);
    assert.deepEqual((await candidate('prepared@console.test')).password_set_by, byNarrow);
    // A key with the whole catalogue holds every permission.
    assert.equal((await v1('PATCH', `/v1/users/${id}`, { password: 'set-by-the-full-key' })).status, 200);
    assert.deepEqual((await candidate('prepared@console.test')).password_set_by, { type: 'api_key', id: await platformKeyId(), every_permission: true });

    // No password: nothing to know.
    await v1('POST', '/v1/users', { email: 'no-password@console.test' });
    assert.deepEqual(await candidate('no-password@console.test').then((x) => [x.has_password, x.password_set_by]), [false, null]);
  });

  it("candidate: an account an organization's SCIM directory created is managed by it; one it merely linked is not", async () => {
    const org = (await v1('POST', '/v1/organizations', { name: 'Acme Corp' })).json().id as string;
    const dir = await createDirectory(s, { orgId: org, name: 'Okta production' });
    const made = await dir.scim('POST', '/Users', {
      schemas: [USER],
      userName: 'ceo@acme.test',
      emails: [{ value: 'ceo@acme.test', primary: true }],
      active: true,
    });
    assert.equal(made.status, 201, made.text);
    const scimmed = await candidate('ceo@acme.test');
    assert.deepEqual(scimmed.managed_by, [
      { kind: 'directory', organization_id: org, organization_name: 'Acme Corp', connection_id: dir.connectionId, connection_name: 'Okta production' },
    ]);
    assert.deepEqual(scimmed.sso, []);
    assert.deepEqual(scimmed.organizations, [{ id: org, name: 'Acme Corp', role: 'member' }]);
    assert.equal(scimmed.already_admin, false);

    // The tenant's own account that the directory later named by email: linked, not created (a
    // directory links only in its organization's verified domain).
    await verifyDomain(dir.api, org, 'acme.test');
    const own = await newUser('own@acme.test');
    const linked = await dir.scim('POST', '/Users', {
      schemas: [USER],
      userName: 'own@acme.test',
      emails: [{ value: 'own@acme.test', primary: true }],
      active: true,
    });
    assert.equal(linked.status, 201, linked.text);
    const ownCandidate = await candidate('own@acme.test');
    assert.equal(ownCandidate.user.id, own);
    assert.deepEqual(ownCandidate.managed_by, []);
    assert.deepEqual(ownCandidate.organizations, [{ id: org, name: 'Acme Corp', role: 'member' }]);
  });

  it('candidate: memberships are capped at 20, with the total', async () => {
    const id = await newUser('joiner@console.test');
    for (let i = 0; i < 22; i++) {
      const org = (await v1('POST', '/v1/organizations', { name: `Many ${String(i).padStart(2, '0')}` })).json().id as string;
      assert.equal((await v1('POST', `/v1/organizations/${org}/members`, { user_id: id, role: 'member' })).status, 201);
    }
    const r = await candidate('joiner@console.test');
    assert.equal(r.organizations.length, 20);
    assert.equal(r.organizations_total, 22);
    assert.deepEqual(
      r.organizations.slice(0, 2).map((o) => o.name),
      ['Many 00', 'Many 01'],
    );
  });

  it('candidate: no such user 404, a malformed or missing email or an unknown parameter 400', async () => {
    const none = await c.call('GET', candidatePath('nobody@console.test'));
    expectError(none, 404, 'not_found');
    assert.match(none.json().error_description, /no user with the email nobody@console\.test/);
    expectError(await c.call('GET', candidatePath('not-an-email')), 400, 'invalid_request');
    expectError(await c.call('GET', candidatePath(`${'a'.repeat(250)}@x.test`)), 400, 'invalid_request');
    expectError(await c.call('GET', '/console/api/admins/candidate'), 400, 'invalid_request');
    expectError(await c.call('GET', `${candidatePath(ADMIN)}&user_id=${adminId}`), 400, 'invalid_request');
  });

  it('candidate: without a session or the console cookie 401 login_required; a signed-in non-administrator 403 forbidden', async () => {
    expectError(await new ConsoleClient(s).call('GET', candidatePath(ADMIN)), 401, 'login_required');
    const noConsoleCookie = new ConsoleClient(s);
    await noConsoleCookie.signIn(ADMIN);
    for (const name of [...noConsoleCookie.browser.cookies.keys()]) if (name.includes('keyhall_console')) noConsoleCookie.browser.cookies.delete(name);
    expectError(await noConsoleCookie.call('GET', candidatePath(ADMIN)), 401, 'login_required');
    await newUser('not-admin@console.test');
    const plain = new ConsoleClient(s);
    await plain.signIn('not-admin@console.test');
    expectError(await plain.call('GET', candidatePath(ADMIN)), 403, 'forbidden');
  });

  it('grants by user_id (the account the screen showed): 201, audited; then already_admin and 409', async () => {
    const id = (await candidate('ceo@acme.test')).user.id;
    const r = await c.call('POST', '/console/api/admins', { user_id: id });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().user_id, id);
    assert.equal(r.json().email, 'ceo@acme.test');
    const ev = await lastEvent('tenant_admin.granted');
    assert.deepEqual(ev.actor, { type: 'user', id: adminId });
    assert.deepEqual(ev.data, { user_id: id });
    assert.equal((await candidate('ceo@acme.test')).already_admin, true);
    expectError(await c.call('POST', '/console/api/admins', { user_id: id }), 409, 'conflict');
    assert.equal((await c.call('DELETE', `/console/api/admins/${id}`)).status, 204);
  });

  it('grants with the fingerprint the look-up gave only while the account is as shown: a password set since is 409', async () => {
    const minted = await v1('POST', '/v1/api_keys', { name: 'users only (fingerprint)', scopes: ['users:read', 'users:write'] });
    const narrowKey = minted.json().key as string;
    const id = await newUser('shown@console.test');
    const shown = await candidate('shown@console.test');
    assert.deepEqual(shown.password_set_by?.every_permission, true);
    // While the administrator reads the card, a narrower key sets a password it knows.
    const set = await s.request({
      method: 'PATCH',
      path: `/v1/users/${id}`,
      headers: { authorization: `Bearer ${narrowKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'the-key-knows-this-one' }),
    });
    assert.equal(set.status, 200, set.text);
    const stale = await c.call('POST', '/console/api/admins', { user_id: id, fingerprint: shown.fingerprint });
    expectError(stale, 409, 'conflict');
    assert.match(stale.json().error_description, /changed since it was looked up/);
    assert.ok(!(await admins()).some((a) => a.user_id === id));
    // Looked up again, the card shows the narrower key; granting what it shows works.
    const again = await candidate('shown@console.test');
    assert.equal(again.password_set_by?.every_permission, false);
    assert.notEqual(again.fingerprint, shown.fingerprint);
    // A name change is not part of how the account signs in: the fingerprint stays.
    assert.equal((await v1('PATCH', `/v1/users/${id}`, { name: 'Shown' })).status, 200);
    assert.equal((await candidate('shown@console.test')).fingerprint, again.fingerprint);
    const granted = await c.call('POST', '/console/api/admins', { user_id: id, fingerprint: again.fingerprint });
    assert.equal(granted.status, 201, granted.text);
    assert.equal((await c.call('DELETE', `/console/api/admins/${id}`)).status, 204);
    expectError(await c.call('POST', '/console/api/admins', { user_id: id, fingerprint: 'not-hex' }), 400, 'invalid_request');
  });

  it('candidate: a password whose recorded setter no longer matches it (set by a release that does not record it) reads as not recorded', async () => {
    const id = await newUser('rolling@console.test');
    assert.equal((await candidate('rolling@console.test')).password_set_by?.every_permission, true);
    // An instance still on the previous release changes only password_hash.
    await s.server.ctx.db.kysely
      .updateTable('users')
      .set({ password_hash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo' })
      .where('id', '=', id)
      .execute();
    const r = await candidate('rolling@console.test');
    assert.deepEqual([r.has_password, r.password_set_by], [true, null]);
  });

  it('granting: both email and user_id, or neither, 400; an unknown user_id 404; a malformed one 400', async () => {
    const id = await newUser('either@console.test');
    const both = await c.call('POST', '/console/api/admins', { email: 'either@console.test', user_id: id });
    expectError(both, 400, 'invalid_request');
    assert.match(both.json().error_description, /exactly one of email and user_id/);
    expectError(await c.call('POST', '/console/api/admins', {}), 400, 'invalid_request');
    expectError(await c.call('POST', '/console/api/admins', { user_id: null }), 400, 'invalid_request');
    const unknown = await c.call('POST', '/console/api/admins', { user_id: 'user_0000000000000000000000000' });
    expectError(unknown, 404, 'not_found');
    expectError(await c.call('POST', '/console/api/admins', { user_id: 'key_0000000000000000000000000' }), 400, 'invalid_request');
    expectError(await c.call('POST', '/console/api/admins', { user_id: 42 }), 400, 'invalid_request');
    expectError(await c.call('POST', '/console/api/admins', { user_id: id }, { 'x-csrf-token': undefined }), 403, 'csrf_failed');
    assert.ok(!(await admins()).some((a) => a.user_id === id));
  });
});

// An account that signs in through an organization's SSO connection (SAML JIT here, against the
// test IdP): the look-up names the connection and its organization.
describe('console administrators API: candidate signed in through SSO', () => {
  let s: SsoTestServer;
  let c: ConsoleClient;
  before(async () => {
    s = await startSsoServer();
    ({ client: c } = await firstAdministrator(s, 'sso-admin@console.test'));
  });
  after(() => s.close());

  it('lists the SSO connection, its organization and protocol, and the JIT membership', async () => {
    const idp = await startTestIdp();
    const org = (await s.api('POST', '/organizations', { name: 'Initech' })).json().id as string;
    const conn = await s.api('POST', `/organizations/${org}/sso/connections`, {
      protocol: 'saml',
      name: 'Initech ADFS',
      saml: { metadata_xml: idp.metadataXml },
    });
    assert.equal(conn.status, 201, conn.text);
    const connectionId = conn.json().id as string;
    const spMetadata = (await s.browser().get(`/sso/saml/${connectionId}/metadata`)).text;
    const app = await s.publicClient();

    const b: Browser = s.browser();
    const flow = new URL(await authorizeAtSp(s, b, app.client_id), s.issuer).searchParams.get('flow')!;
    const start = await b.get(`/sso/${connectionId}/start?flow=${encodeURIComponent(flow)}`);
    assert.equal(start.status, 303, start.text.slice(0, 300));
    const requestId = await idp.requestId(new URL(start.headers.location!), spMetadata);
    const response = await idp.respond(spMetadata, requestId, { email: 'peter@initech.test', name: 'Peter Gibbons' });
    // The IdP's cross-site post (no cookies), then the browser's GET of the completion page.
    const acs = await s.browser().post(`/sso/saml/${connectionId}/acs`, { SAMLResponse: response }, { origin: new URL(idp.ssoUrl).origin });
    assert.equal(acs.status, 303, acs.text.slice(0, 300));
    const done = await b.get(acs.headers.location!);
    assert.equal(done.status, 303, done.text.slice(0, 300));

    const r = await c.call('GET', candidatePath('peter@initech.test'));
    assert.equal(r.status, 200, r.text);
    const got = r.json() as Candidate;
    assert.deepEqual(got.sso, [
      { organization_id: org, organization_name: 'Initech', connection_id: connectionId, connection_name: 'Initech ADFS', protocol: 'saml' },
    ]);
    assert.deepEqual(got.managed_by, []);
    assert.deepEqual(
      got.organizations.map((o) => [o.id, o.name]),
      [[org, 'Initech']],
    );
    assert.equal(got.already_admin, false);
    assert.equal(got.verified_domain, null, 'initech.test is not verified');

    // Once Initech verifies initech.test, its IdP may sign in as any existing account of that
    // domain, one that never used SSO included: the look-up says so.
    const bob = await s.api('POST', '/users', { email: 'bob@initech.test', password: PASSWORD });
    assert.equal(bob.status, 201, bob.text);
    assert.equal((await s.api('PATCH', `/organizations/${org}`, { domain: 'initech.test' })).status, 200);
    const verified = await s.api('POST', `/organizations/${org}/domain_verification`, { method: 'manual' });
    assert.equal(verified.status, 200, verified.text);
    const bobCandidate = (await c.call('GET', candidatePath('bob@initech.test'))).json() as Candidate;
    assert.deepEqual(bobCandidate.verified_domain, { organization_id: org, organization_name: 'Initech', domain: 'initech.test' });
    assert.deepEqual([bobCandidate.sso, bobCandidate.managed_by, bobCandidate.organizations], [[], [], []]);
    assert.deepEqual(((await c.call('GET', candidatePath('peter@initech.test'))).json() as Candidate).verified_domain?.organization_id, org);
  });
});
