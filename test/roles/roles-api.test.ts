import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

/** Issue 31: /v1/roles, an organization's own roles, members' roles, the default role and deletion with ?reassign=. */
describe('/v1/roles and members with roles', () => {
  let s: TestServer;
  let api: Api;
  let rs: string;
  let orgA: string;
  let orgB: string;
  before(async () => {
    s = await startTestServer();
    api = v1(s, s.tenant.platformApiKey);
    rs = (await api('POST', '/resource_servers', { name: 'Files', identifier: 'https://files.example', scopes: ['files:read', 'files:write'] })).json().id;
    orgA = (await api('POST', '/organizations', { name: 'A' })).json().id;
    orgB = (await api('POST', '/organizations', { name: 'B' })).json().id;
  });
  after(() => s.close());

  const user = async (email: string) => (await api('POST', '/users', { email })).json().id as string;
  const orgKey = async (org: string, scopes: string[]) => (await api('POST', `/organizations/${org}/api_keys`, { name: 'org', scopes })).json().key as string;

  it('admin and member are ordinary tenant-wide roles; a new tenant role is listed, read, changed, and its events recorded', async () => {
    const listed = await api('GET', '/roles?limit=100');
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.json().data.map((r: { key: string }) => r.key),
      ['admin', 'member'],
    );
    const created = await api('POST', '/roles', { key: 'writer', name: 'Writer', permissions: [{ resource_server_id: rs, permission: 'files:write' }] });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json().organization_id, null);
    expectError(await api('POST', '/roles', { key: 'writer', name: 'Again' }), 409, 'conflict');
    expectError(await api('POST', '/roles', { key: 'Bad Key', name: 'x' }), 400, 'invalid_request');
    const patched = await api('PATCH', '/roles/writer', { description: 'Writes files' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json().description, 'Writes files');
    assert.deepEqual(patched.json().permissions, [{ resource_server_id: rs, permission: 'files:write' }]);
    expectError(await api('GET', '/roles/nope'), 404, 'not_found');
    const got = await api('GET', `/resource_servers/${rs}`);
    assert.deepEqual(got.json().permissions, [
      { name: 'files:read', description: null },
      { name: 'files:write', description: null },
    ]);
    const events = (await api('GET', '/events?limit=100&types=role.created,role.updated')).json().data;
    assert.deepEqual(
      events.map((e: { type: string; data: { key: string } }) => [e.type, e.data.key]),
      [
        ['role.created', 'writer'],
        ['role.updated', 'writer'],
      ],
    );
  });

  it("an organization's key with roles:write manages its own organization's roles only: tenant roles and another organization's are 403 forbidden", async () => {
    const key = await orgKey(orgA, ['roles:read', 'roles:write']);
    const own = v1(s, key);
    expectError(await own('POST', '/roles', { key: 'sneaky', name: 'Sneaky' }), 403, 'forbidden');
    expectError(await own('DELETE', '/roles/member?reassign=admin'), 403, 'forbidden');
    expectError(await own('POST', `/organizations/${orgB}/roles`, { key: 'sneaky', name: 'Sneaky' }), 403, 'forbidden');
    expectError(await own('POST', '/authorize_check', { user_id: 'user_x', organization_id: orgA, permission: 'files:read' }), 403, 'forbidden');
    const r = await own('POST', `/organizations/${orgA}/roles`, {
      key: 'auditor',
      name: 'Auditor',
      permissions: [{ resource_server_id: rs, permission: 'files:read' }],
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().organization_id, orgA);
    assert.equal((await own('GET', `/organizations/${orgA}/roles`)).json().data.length, 1);
    expectError(await v1(s, await orgKey(orgA, ['roles:read']))('POST', `/organizations/${orgA}/roles`, { key: 'x', name: 'x' }), 403, 'insufficient_scope');
    assert.equal((await api('GET', '/roles/auditor')).status, 404, 'an organization role is not a tenant role');
  });

  it('members hold several roles (role stays the first); the default role for new members is a setting', async () => {
    const u = await user('multi@example.com');
    assert.deepEqual((await api('GET', '/role_settings')).json(), { default_role: 'member' });
    const m = await api('POST', `/organizations/${orgA}/members`, { user_id: u });
    assert.equal(m.status, 201, m.text);
    assert.deepEqual([m.json().role, m.json().roles], ['member', ['member']]);
    const p = await api('PATCH', `/organizations/${orgA}/members/${u}`, { roles: ['writer', 'auditor'] });
    assert.equal(p.status, 200, p.text);
    assert.deepEqual([p.json().role, p.json().roles], ['writer', ['writer', 'auditor']]);
    const old = await api('PATCH', `/organizations/${orgA}/members/${u}`, { role: 'admin' });
    assert.deepEqual([old.json().role, old.json().roles], ['admin', ['admin']], 'the single-role form still works');
    expectError(await api('PATCH', `/organizations/${orgA}/members/${u}`, { role: 'admin', roles: ['member'] }), 400, 'invalid_request');
    expectError(await api('PATCH', `/organizations/${orgA}/members/${u}`, { roles: [] }), 400, 'invalid_request');
    const changed = (await api('GET', `/events?limit=100&organization_id=${orgA}&types=member.role_changed`)).json().data.at(-1);
    assert.deepEqual(changed.data, { organization_id: orgA, user_id: u, role: 'admin', previous_role: 'writer', roles: ['admin'] });

    expectError(await api('PUT', '/role_settings', { default_role: 'auditor' }), 400, 'invalid_request');
    assert.deepEqual((await api('PUT', '/role_settings', { default_role: 'writer' })).json(), { default_role: 'writer' });
    const v = await user('defaulted@example.com');
    assert.deepEqual((await api('POST', `/organizations/${orgB}/members`, { user_id: v })).json().roles, ['writer']);
    expectError(await api('DELETE', '/roles/writer?reassign=member'), 409, 'conflict');
    assert.equal((await api('PUT', '/role_settings', { default_role: 'member' })).status, 200);
  });

  it('deleting a role some member holds is 409 unless ?reassign= names another; the holders are reassigned', async () => {
    const u = await user('holder@example.com');
    assert.equal((await api('POST', '/roles', { key: 'temp', name: 'Temp' })).status, 201);
    assert.equal((await api('POST', `/organizations/${orgB}/members`, { user_id: u, roles: ['temp', 'admin'] })).status, 201);
    expectError(await api('DELETE', '/roles/temp'), 409, 'conflict');
    expectError(await api('DELETE', '/roles/temp?reassign=temp'), 400, 'invalid_request');
    expectError(await api('DELETE', '/roles/temp?reassign=nope'), 400, 'invalid_request');
    assert.equal((await api('GET', '/roles/temp')).status, 200, 'a refused delete deleted nothing');
    assert.equal((await api('DELETE', '/roles/temp?reassign=member')).status, 204);
    const members = (await api('GET', `/organizations/${orgB}/members?limit=100`)).json().data;
    assert.deepEqual(members.find((m: { user_id: string }) => m.user_id === u).roles, ['member', 'admin']);
    const types = (await api('GET', '/events?limit=100&types=role.deleted')).json().data.map((e: { data: { key: string } }) => e.data.key);
    assert.ok(types.includes('temp'));
    // An unheld role goes without ?reassign=.
    assert.equal((await api('POST', '/roles', { key: 'unused', name: 'Unused' })).status, 201);
    assert.equal((await api('DELETE', '/roles/unused')).status, 204);
  });

  it('/v1/authorize_check: unknown organization 404, malformed input 400', async () => {
    expectError(await api('POST', '/authorize_check', { user_id: 'user_x', organization_id: 'org_nope', permission: 'files:read' }), 404, 'not_found');
    expectError(await api('POST', '/authorize_check', { user_id: 'x', organization_id: orgA, permission: 'files:read' }), 400, 'invalid_request');
    expectError(await api('POST', '/authorize_check', { user_id: 'user_x', organization_id: orgA }), 400, 'invalid_request');
    assert.deepEqual((await api('POST', '/authorize_check', { user_id: 'user_nobody', organization_id: orgA, permission: 'files:read' })).json(), {
      allowed: false,
      roles: [],
    });
  });
});
