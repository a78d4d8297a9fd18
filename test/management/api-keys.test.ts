import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

describe('/v1 authentication and API keys', () => {
  let s: TestServer;
  let platform: Api;
  let orgA: string;
  let orgB: string;
  before(async () => {
    s = await startTestServer();
    platform = v1(s, s.tenant.platformApiKey);
    orgA = (await platform('POST', '/organizations', { name: 'A' })).json().id;
    orgB = (await platform('POST', '/organizations', { name: 'B' })).json().id;
  });
  after(() => s.close());

  const mintOrgKey = async (org: string, scopes: string[], via: Api = platform) => {
    const r = await via('POST', `/organizations/${org}/api_keys`, { name: 'k', scopes });
    assert.equal(r.status, 201, r.text);
    return r.json();
  };

  it('refuses missing, malformed, unknown keys and other schemes with 401 invalid_token', async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer' },
      { authorization: 'Bearer not-a-key' },
      { authorization: `Bearer sk_live_${'A'.repeat(43)}` },
      { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      { authorization: `Bearer scim_${'A'.repeat(43)}` },
      { authorization: 'Bearer eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln' },
      { authorization: `DPoP ${s.tenant.platformApiKey}` },
    ];
    for (const headers of cases) {
      const r = await s.request({ path: '/v1/organizations', headers });
      expectError(r, 401, 'invalid_token');
      assert.match(String(r.headers['www-authenticate']), /^Bearer/);
    }
  });

  it('never takes a key from the query string', async () => {
    const r = await s.request({ path: `/v1/organizations?access_token=${s.tenant.platformApiKey}` });
    expectError(r, 401, 'invalid_token');
  });

  it('a key works only on its own tenant host', async () => {
    const other = await s.createTenant(`localhost:${s.port}`);
    const r = await v1(s, s.tenant.platformApiKey, `localhost:${s.port}`)('GET', '/organizations');
    expectError(r, 401, 'invalid_token');
    const own = await v1(s, other.platformApiKey, `localhost:${s.port}`)('GET', '/organizations');
    assert.equal(own.status, 200);
    assert.deepEqual(own.json().data, []);
  });

  it('mints an org key: 201, secret once, hash at rest, api_key.created without the secret', async () => {
    const r = await platform('POST', `/organizations/${orgA}/api_keys`, { name: 'ci', scopes: ['members:read', 'members:write'] });
    assert.equal(r.status, 201);
    const body = r.json();
    assert.match(body.id, /^key_/);
    assert.match(body.key, /^sk_live_[A-Za-z0-9_-]{43}$/);
    assert.equal(body.organization_id, orgA);
    assert.deepEqual(body.scopes, ['members:read', 'members:write']);
    assert.equal(body.name, 'ci');
    assert.ok(body.created_at, 'body.created_at');
    const row = await s.server.ctx.db.kysely.selectFrom('api_keys').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.key_hash.length, 64);
    assert.ok(!JSON.stringify(row).includes(body.key), '!JSON.stringify(row).includes(body.key)');

    const list = await platform('GET', `/organizations/${orgA}/api_keys`);
    assert.equal(list.status, 200);
    const listed = list.json().data.find((k: { id: string }) => k.id === body.id);
    assert.equal(listed.key_prefix, body.key.slice(0, 12));
    assert.equal(listed.key, undefined);
    assert.ok(!list.text.includes(body.key), '!list.text.includes(body.key)');

    const events = (await platform('GET', '/events?limit=100&types=api_key.created')).json().data;
    const ev = events.find((e: { data: { key_id: string } }) => e.data.key_id === body.id);
    assert.deepEqual(ev.data, { key_id: body.id, name: 'ci', scopes: ['members:read', 'members:write'] });
    assert.equal(ev.organization_id, orgA);
    assert.ok(!JSON.stringify(events).includes(body.key), '!JSON.stringify(events).includes(body.key)');
  });

  it('a key bound to another org gets 403 forbidden even with the permission', async () => {
    const k = await mintOrgKey(orgA, ['members:read', 'organizations:read', 'api_keys:write']);
    const api = v1(s, k.key);
    expectError(await api('GET', `/organizations/${orgB}/members`), 403, 'forbidden');
    expectError(await api('GET', `/organizations/${orgB}`), 403, 'forbidden');
    expectError(await api('POST', `/organizations/${orgB}/api_keys`, { name: 'x', scopes: ['members:read'] }), 403, 'forbidden');
    assert.equal((await api('GET', `/organizations/${orgA}/members`)).status, 200);
    // Users are tenant-wide: an org key cannot attach one (and so read their email).
    const withWrite = v1(s, (await mintOrgKey(orgA, ['members:write'])).key);
    const user = (await platform('POST', '/users', { email: 'outsider@example.com' })).json().id;
    expectError(await withWrite('POST', `/organizations/${orgA}/members`, { user_id: user }), 403, 'forbidden');
    // Tenant-wide resources are for platform keys.
    expectError(await api('GET', '/organizations'), 403, 'forbidden');
  });

  it('minting above your own privilege is 403 insufficient_scope; unknown scopes 400 invalid_scope', async () => {
    const k = await mintOrgKey(orgA, ['api_keys:write', 'members:read']);
    const api = v1(s, k.key);
    expectError(await api('POST', `/organizations/${orgA}/api_keys`, { name: 'x', scopes: ['members:write'] }), 403, 'insufficient_scope');
    expectError(await api('POST', `/organizations/${orgA}/api_keys`, { name: 'x', scopes: ['members:read', 'nope:read'] }), 400, 'invalid_scope');
    expectError(await platform('POST', '/api_keys', { name: 'x', scopes: ['root'] }), 400, 'invalid_scope');
    const ok = await api('POST', `/organizations/${orgA}/api_keys`, { name: 'x', scopes: ['members:read'] });
    assert.equal(ok.status, 201);
  });

  it('an org-bound key cannot mint a platform-bound key (403 insufficient_scope)', async () => {
    const k = await mintOrgKey(orgA, ['api_keys:write', 'members:read']);
    expectError(await v1(s, k.key)('POST', '/api_keys', { name: 'x', scopes: ['members:read'] }), 403, 'insufficient_scope');
  });

  it('a route needing a permission the key lacks is 403 insufficient_scope', async () => {
    const k = await mintOrgKey(orgA, ['members:read']);
    const api = v1(s, k.key);
    expectError(await api('POST', `/organizations/${orgA}/api_keys`, { name: 'x', scopes: ['members:read'] }), 403, 'insufficient_scope');
    expectError(await api('PATCH', `/organizations/${orgA}`, { name: 'x' }), 403, 'insufficient_scope');
    expectError(await api('GET', '/events'), 403, 'insufficient_scope');
  });

  it('platform keys mint platform keys; body fields are never mass-assigned', async () => {
    const r = await platform('POST', '/api_keys', { name: 'ops', scopes: ['users:read'] });
    assert.equal(r.status, 201);
    assert.equal(r.json().organization_id, null);
    expectError(await platform('POST', '/api_keys', { name: 'x', scopes: ['users:read'], organization_id: orgA }), 400, 'invalid_request');
    expectError(await platform('POST', `/organizations/${orgA}/api_keys`, { name: 'x', scopes: ['users:read'], platform: true }), 400, 'invalid_request');
    for (const body of [
      { scopes: ['users:read'] },
      { name: 'x' },
      { name: 'x', scopes: 'users:read' },
      { name: '', scopes: ['users:read'] },
      { name: 'x'.repeat(101), scopes: ['users:read'] },
    ]) {
      const bad = await platform('POST', '/api_keys', body);
      expectError(bad, 400, 'invalid_request');
      assert.ok(bad.json().error_description, 'names the field');
    }
  });

  it('revocation is immediate; a revoked key gets 401', async () => {
    const k = await mintOrgKey(orgA, ['members:read']);
    const api = v1(s, k.key);
    assert.equal((await api('GET', `/organizations/${orgA}/members`)).status, 200);
    const del = await platform('DELETE', `/organizations/${orgA}/api_keys/${k.id}`);
    assert.equal(del.status, 204);
    expectError(await api('GET', `/organizations/${orgA}/members`), 401, 'invalid_token');
    expectError(await platform('DELETE', `/organizations/${orgA}/api_keys/${k.id}`), 404, 'not_found');
    // A key of org A cannot be revoked through org B's path.
    const k2 = await mintOrgKey(orgA, ['members:read']);
    expectError(await platform('DELETE', `/organizations/${orgB}/api_keys/${k2.id}`), 404, 'not_found');
    // A malformed id names nothing: 404, like an unknown one.
    expectError(await platform('DELETE', `/organizations/${orgA}/api_keys/not-an-id`), 404, 'not_found');
  });

  it('writes last_used_at at about five-minute resolution', async () => {
    const k = await mintOrgKey(orgA, ['members:read']);
    const read = async () =>
      (await s.server.ctx.db.kysely.selectFrom('api_keys').select('last_used_at').where('id', '=', k.id).executeTakeFirstOrThrow()).last_used_at;
    assert.equal(await read(), null);
    await v1(s, k.key)('GET', `/organizations/${orgA}/members`);
    const first = await read();
    assert.ok(first, 'first');
    await v1(s, k.key)('GET', `/organizations/${orgA}/members`);
    assert.equal(await read(), first);
  });
});
