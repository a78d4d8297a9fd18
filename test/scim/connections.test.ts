import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { createDirectory, eventsOf, expectScimError, GROUP, membersOf, scimClient, USER } from './helpers.js';

describe('directory connections, SCIM tokens and SCIM authentication', () => {
  let s: TestServer;
  let api: Api;
  before(async () => {
    s = await startTestServer();
    api = v1(s, s.tenant.platformApiKey);
  });
  after(() => s.close());

  it('creates, lists, updates and deletes connections; mints a token shown once', async () => {
    const org = (await api('POST', '/organizations', { name: 'Acme' })).json().id;
    const c = await api('POST', `/organizations/${org}/directory/connections`, { name: 'Okta', group_roles: { Admins: 'admin' } });
    assert.equal(c.status, 201, c.text);
    assert.match(c.json().id, /^dir_/);
    assert.deepEqual(c.json().group_roles, { admins: 'admin' });
    assert.equal(c.json().has_token, false);
    assert.equal(c.json().rate_limit_per_minute, 600);
    const t = await api('POST', `/organizations/${org}/directory/scim_token`, { connection_id: c.json().id });
    assert.equal(t.status, 201, t.text);
    assert.match(t.json().token, /^scim_[A-Za-z0-9_-]{43}$/);
    assert.equal(t.json().scim_base_url, `http://127.0.0.1:${s.port}/scim/v2`);
    const listed = (await api('GET', `/organizations/${org}/directory/connections`)).json().data;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].has_token, true);
    assert.ok(!JSON.stringify(listed).includes(t.json().token));
    const p = await api('PATCH', `/organizations/${org}/directory/connections/${c.json().id}`, { name: 'Okta prod', rate_limit_per_minute: 50 });
    assert.equal(p.json().name, 'Okta prod');
    assert.equal(p.json().rate_limit_per_minute, 50);
    expectError(await api('POST', `/organizations/${org}/directory/connections`, { name: '' }), 400, 'invalid_request');
    expectError(await api('POST', `/organizations/${org}/directory/connections`, { name: 'x', group_roles: { g: 'owner' } }), 400, 'invalid_request');
    expectError(await api('POST', `/organizations/${org}/directory/scim_token`, { connection_id: 'dir_00000000000000000000000000' }), 404, 'not_found');
    assert.equal((await api('DELETE', `/organizations/${org}/directory/connections/${c.json().id}`)).status, 204);
    expectScimError(await scimClient(s, t.json().token)('GET', '/Users'), 401);
    const events = (
      await api('GET', `/events?limit=100&organization_id=${org}&types=directory.connection.created,directory.token.created,directory.connection.deleted`)
    ).json().data;
    assert.deepEqual(
      events.map((e: { type: string }) => e.type),
      ['directory.connection.created', 'directory.token.created', 'directory.connection.deleted'],
    );
    // Any role usable in the organization is accepted (docs/authorization.md).
    assert.equal((await api('POST', '/roles', { key: 'support', name: 'Support' })).status, 201);
    const custom = await api('POST', `/organizations/${org}/directory/connections`, { name: 'custom', group_roles: { Helpdesk: 'support' } });
    assert.equal(custom.status, 201, custom.text);
    assert.deepEqual(custom.json().group_roles, { helpdesk: 'support' });
    expectError(await api('PATCH', `/organizations/${org}/directory/connections/${custom.json().id}`, { group_roles: { g: 'nope' } }), 400, 'invalid_request');
  });

  it('needs directory:write and an org key of that organization', async () => {
    const { orgId, connectionId } = await createDirectory(s);
    const other = (await api('POST', '/organizations', { name: 'Other' })).json().id;
    const keyOf = async (org: string, scopes: string[]) => (await api('POST', `/organizations/${org}/api_keys`, { name: 'k', scopes })).json().key;
    const noScope = v1(s, await keyOf(orgId, ['members:read']));
    expectError(await noScope('POST', `/organizations/${orgId}/directory/scim_token`, { connection_id: connectionId }), 403, 'insufficient_scope');
    const otherOrg = v1(s, await keyOf(other, ['directory:write']));
    expectError(await otherOrg('POST', `/organizations/${orgId}/directory/scim_token`, { connection_id: connectionId }), 403, 'forbidden');
    expectError(await otherOrg('POST', `/organizations/${other}/directory/scim_token`, { connection_id: connectionId }), 404, 'not_found');
    const own = v1(s, await keyOf(orgId, ['directory:write']));
    assert.equal((await own('POST', `/organizations/${orgId}/directory/scim_token`, { connection_id: connectionId })).status, 201);
  });

  it('accepts only a SCIM token on /scim/v2, and a SCIM token never works on /v1', async () => {
    const d = await createDirectory(s);
    assert.equal((await d.scim('GET', '/ServiceProviderConfig')).status, 200);
    expectScimError(await scimClient(s, undefined)('GET', '/Users'), 401);
    expectScimError(await scimClient(s, s.tenant.platformApiKey)('GET', '/Users'), 401);
    expectScimError(await scimClient(s, 'scim_' + 'A'.repeat(43))('GET', '/Users'), 401);
    const noAuth = await scimClient(s, undefined)('GET', '/ServiceProviderConfig');
    expectScimError(noAuth, 401);
    assert.match(String(noAuth.headers['www-authenticate']), /^Bearer/);
    expectError(await v1(s, d.token)('GET', '/organizations'), 401, 'invalid_token');
    expectError(await v1(s, d.token)('GET', `/organizations/${d.orgId}/members`), 401, 'invalid_token');
  });

  it("a new token revokes only that connection's previous token, at once", async () => {
    const a = await createDirectory(s);
    const b = await createDirectory(s, { orgId: a.orgId, name: 'Second' });
    assert.equal((await a.scim('GET', '/Users')).status, 200);
    const fresh = await a.api('POST', `/organizations/${a.orgId}/directory/scim_token`, { connection_id: a.connectionId });
    expectScimError(await a.scim('GET', '/Users'), 401);
    expectScimError(await a.scim('POST', '/Users', { schemas: [USER], userName: 'x@acme.example' }), 401);
    assert.equal((await scimClient(s, fresh.json().token)('GET', '/Users')).status, 200);
    assert.equal((await b.scim('GET', '/Users')).status, 200);
  });

  it('a token does not work on another tenant', async () => {
    const d = await createDirectory(s);
    await s.createTenant('other.localhost');
    expectScimError(await scimClient(s, d.token, 'other.localhost')('GET', '/Users'), 401);
  });

  it('applies a changed group → role mapping to the active users at once (actor: the API key)', async () => {
    const d = await createDirectory(s);
    const u = (await d.scim('POST', '/Users', { schemas: [USER], userName: 'lead@acme.example' })).json();
    await d.scim('POST', '/Users', { schemas: [USER], userName: 'other@acme.example' });
    await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Leads', members: [{ value: u.id }] });
    assert.ok(
      (await membersOf(d.api, d.orgId)).every((m) => m.role === 'member'),
      'no mapping: roles untouched',
    );
    const p = await d.api('PATCH', `/organizations/${d.orgId}/directory/connections/${d.connectionId}`, { group_roles: { LEADS: 'admin' } });
    assert.equal(p.status, 200, p.text);
    const roles = Object.fromEntries((await membersOf(d.api, d.orgId)).map((m) => [m.user.email, m.role]));
    assert.deepEqual(roles, { 'lead@acme.example': 'admin', 'other@acme.example': 'member' });
    const changed = await eventsOf(d.api, d.orgId, 'member.role_changed');
    assert.equal(changed.length, 1);
    assert.equal(changed[0]?.actor.type, 'api_key');
    await d.api('PATCH', `/organizations/${d.orgId}/directory/connections/${d.connectionId}`, { group_roles: {} });
    assert.equal((await membersOf(d.api, d.orgId)).find((m) => m.user.email === 'lead@acme.example')?.role, 'admin', 'an empty mapping leaves roles alone');
  });

  it('rate-limits per connection with 429 and Retry-After', async () => {
    const limited = await createDirectory(s, { rate_limit_per_minute: 3 });
    const free = await createDirectory(s, { orgId: limited.orgId, name: 'Free' });
    for (let i = 0; i < 3; i++) assert.equal((await limited.scim('GET', '/Users')).status, 200);
    const r = await limited.scim('GET', '/Users');
    expectScimError(r, 429);
    assert.ok(Number(r.headers['retry-after']) >= 1 && Number(r.headers['retry-after']) <= 60);
    assert.equal((await free.scim('GET', '/Users')).status, 200);
  });
});
