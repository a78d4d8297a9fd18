import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

describe('/v1 organizations, users and members', () => {
  let s: TestServer;
  let api: Api;
  before(async () => {
    s = await startTestServer();
    api = v1(s, s.tenant.platformApiKey);
  });
  after(() => s.close());

  it('creates, reads, patches (branding) and deletes an organization', async () => {
    const r = await api('POST', '/organizations', { name: 'Acme', slug: 'acme', domain: 'Acme.example' });
    assert.equal(r.status, 201, r.text);
    const org = r.json();
    assert.match(org.id, /^org_/);
    assert.equal(org.status, 'active');
    assert.equal(org.domain, 'acme.example');
    assert.equal(org.did, null);
    assert.equal(org.webauthn_aaguid_allowlist, null);
    const patched = await api('PATCH', `/organizations/${org.id}`, {
      brand_logo_url: 'https://cdn.acme.example/logo.png',
      brand_primary_color: '#AA00ff',
      brand_display_name: 'Acme Inc.',
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json().brand_primary_color, '#aa00ff');
    assert.equal(patched.json().brand_display_name, 'Acme Inc.');
    assert.equal(patched.json().name, 'Acme');
    assert.equal((await api('GET', `/organizations/${org.id}`)).json().brand_logo_url, 'https://cdn.acme.example/logo.png');
    expectError(await api('POST', '/organizations', { name: 'Other', slug: 'acme' }), 409, 'conflict');
    assert.equal((await api('DELETE', `/organizations/${org.id}`)).status, 204);
    expectError(await api('GET', `/organizations/${org.id}`), 404, 'not_found');
    expectError(await api('PATCH', `/organizations/${org.id}`, { name: 'x' }), 404, 'not_found');
    expectError(await api('DELETE', `/organizations/${org.id}`), 404, 'not_found');
  });

  it('rejects bad organization input with 400 invalid_request naming the field', async () => {
    const { id } = (await api('POST', '/organizations', { name: 'Valid' })).json();
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/organizations', {}, 'name'],
      ['POST', '/organizations', { name: 42 }, 'name'],
      ['POST', '/organizations', { name: 'x'.repeat(201) }, 'name'],
      ['POST', '/organizations', { name: 'x', slug: 'Bad Slug' }, 'slug'],
      ['POST', '/organizations', { name: 'x', domain: 'not a domain' }, 'domain'],
      ['POST', '/organizations', { name: 'x', status: 'disabled' }, 'status'],
      ['POST', '/organizations', { name: 'x', id: 'org_x' }, 'id'],
      ['PATCH', `/organizations/${id}`, { brand_logo_url: 'http://insecure.example/logo.png' }, 'brand_logo_url'],
      ['PATCH', `/organizations/${id}`, { brand_logo_url: 'javascript:alert(1)' }, 'brand_logo_url'],
      ['PATCH', `/organizations/${id}`, { brand_primary_color: 'red' }, 'brand_primary_color'],
      ['PATCH', `/organizations/${id}`, { brand_primary_color: '#12345' }, 'brand_primary_color'],
      ['PATCH', `/organizations/${id}`, { brand_display_name: 'x'.repeat(101) }, 'brand_display_name'],
      ['PATCH', `/organizations/${id}`, { webauthn_aaguid_allowlist: [] }, 'webauthn_aaguid_allowlist'],
      ['GET', '/organizations?limit=0', undefined, 'limit'],
      ['GET', '/organizations?limit=abc', undefined, 'limit'],
      ['GET', '/organizations?after=../../etc', undefined, 'after'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await api(method, path, body);
      expectError(r, 400, 'invalid_request');
      assert.match(r.json().error_description, new RegExp(field), `${method} ${path} ${JSON.stringify(body)}`);
    }
    const bad = await api('POST', '/organizations', '{"name":');
    expectError(bad, 400, 'invalid_request');
    const wrongType = await s.request({
      method: 'POST',
      path: '/v1/organizations',
      headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, 'content-type': 'text/plain' },
      body: 'name=x',
    });
    expectError(wrongType, 415, 'unsupported_media_type');
  });

  it('lists organizations with cursor pagination', async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await api('POST', '/organizations', { name: `Page ${i}` })).json().id);
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const r = await api('GET', `/organizations?limit=2${after ? `&after=${after}` : ''}`);
      assert.equal(r.status, 200);
      const { data, next_cursor } = r.json();
      assert.ok(data.length <= 2, 'data.length <= 2');
      seen.push(...data.map((o: { id: string }) => o.id));
      if (!next_cursor) break;
      after = next_cursor;
    }
    for (const id of created) assert.ok(seen.includes(id), 'seen.includes(id)');
    assert.equal(new Set(seen).size, seen.length);
  });

  it('manages users: email normalised and unique, passwords never returned', async () => {
    const r = await api('POST', '/users', { email: '  Ada@Example.COM ', name: 'Ada', password: 'correct horse battery' });
    assert.equal(r.status, 201, r.text);
    const user = r.json();
    assert.match(user.id, /^user_/);
    assert.equal(user.email, 'ada@example.com');
    assert.equal(user.has_password, true);
    assert.ok(!r.text.includes('correct horse'), "!r.text.includes('correct horse')");
    assert.ok(!/password_hash|argon2/.test(r.text), '!/password_hash|argon2/.test(r.text)');
    const row = await s.server.ctx.db.kysely.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.match(String(row.password_hash), /^\$argon2id\$/);
    expectError(await api('POST', '/users', { email: 'ADA@example.com' }), 409, 'conflict');
    expectError(await api('POST', '/users', { email: 'not-an-email' }), 400, 'invalid_request');
    expectError(await api('POST', '/users', { email: 'b@example.com', password: 'short' }), 400, 'invalid_request');
    expectError(await api('POST', '/users', { email: 'b@example.com', password_hash: '$argon2id$x' }), 400, 'invalid_request');
    const byEmail = await api('GET', '/users?email=ADA@example.com');
    assert.deepEqual(
      byEmail.json().data.map((u: { id: string }) => u.id),
      [user.id],
    );
    const patched = await api('PATCH', `/users/${user.id}`, { name: 'Ada L.', password: 'another long password' });
    assert.equal(patched.status, 200);
    assert.equal(patched.json().name, 'Ada L.');
    assert.ok(!patched.text.includes('another long password'), "!patched.text.includes('another long password')");
    assert.equal((await api('GET', `/users/${user.id}`)).json().name, 'Ada L.');
    expectError(await api('GET', '/users/user_00000000000000000000000000'), 404, 'not_found');
  });

  it('manages members with roles and emits member events', async () => {
    const org = (await api('POST', '/organizations', { name: 'Team' })).json().id;
    const user = (await api('POST', '/users', { email: 'grace@example.com' })).json().id;
    const add = await api('POST', `/organizations/${org}/members`, { user_id: user, role: 'admin' });
    assert.equal(add.status, 201, add.text);
    assert.equal(add.json().role, 'admin');
    expectError(await api('POST', `/organizations/${org}/members`, { user_id: user }), 409, 'conflict');
    expectError(await api('POST', `/organizations/${org}/members`, { user_id: user, role: 'owner' }), 400, 'invalid_request');
    expectError(await api('POST', `/organizations/${org}/members`, { user_id: 'user_00000000000000000000000000' }), 400, 'invalid_request');
    expectError(await api('POST', '/organizations/org_00000000000000000000000000/members', { user_id: user }), 404, 'not_found');
    const list = await api('GET', `/organizations/${org}/members`);
    assert.deepEqual(
      list.json().data.map((m: { user_id: string; role: string; user: { email: string } }) => [m.user_id, m.role, m.user.email]),
      [[user, 'admin', 'grace@example.com']],
    );
    const changed = await api('PATCH', `/organizations/${org}/members/${user}`, { role: 'member' });
    assert.equal(changed.json().role, 'member');
    assert.equal((await api('DELETE', `/organizations/${org}/members/${user}`)).status, 204);
    expectError(await api('DELETE', `/organizations/${org}/members/${user}`), 404, 'not_found');
    expectError(await api('PATCH', `/organizations/${org}/members/${user}`, { role: 'admin' }), 404, 'not_found');

    const events = (await api('GET', `/events?limit=100&organization_id=${org}&types=member.added,member.role_changed,member.removed`)).json().data;
    assert.deepEqual(
      events.map((e: { type: string; data: unknown }) => [e.type, e.data]),
      [
        // The data keeps its shape; `roles` (issue 31) lists every role, `role` is the first.
        ['member.added', { organization_id: org, user_id: user, role: 'admin', roles: ['admin'] }],
        ['member.role_changed', { organization_id: org, user_id: user, role: 'member', previous_role: 'admin', roles: ['member'] }],
        ['member.removed', { organization_id: org, user_id: user, role: 'member', roles: ['member'] }],
      ],
    );
    for (const e of events) {
      assert.match(e.id, /^evt_/);
      assert.equal(e.actor.type, 'api_key');
      assert.match(e.actor.id, /^key_/);
      assert.equal(typeof e.created, 'number');
    }
  });

  it('deleting a user removes their memberships with member.removed', async () => {
    const org = (await api('POST', '/organizations', { name: 'Gone' })).json().id;
    const user = (await api('POST', '/users', { email: 'leaver@example.com' })).json().id;
    await api('POST', `/organizations/${org}/members`, { user_id: user });
    assert.equal((await api('DELETE', `/users/${user}`)).status, 204);
    assert.deepEqual((await api('GET', `/organizations/${org}/members`)).json().data, []);
    const types = (await api('GET', `/events?limit=100&organization_id=${org}`)).json().data.map((e: { type: string }) => e.type);
    assert.deepEqual(types, ['organization.created', 'member.added', 'member.removed']);
  });
});
