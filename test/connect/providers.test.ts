import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EgressResolver } from '../../src/egress/policy.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

const SECRET = 'upstream-client-secret-0123456789';

/** Public names resolve to a public address; `localhost` (the upstream tenant) to loopback; the rest fail. */
const resolver: EgressResolver = async (host) => {
  if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'private.example') return [{ address: '10.1.2.3', family: 4 }];
  if (host.endsWith('.example') || host.endsWith('.com')) return [{ address: '93.184.215.14', family: 4 }];
  throw new Error('ENOTFOUND');
};

describe('/v1/connect/providers', () => {
  let s: TestServer;
  let api: Api;
  let upstreamIssuer: string;
  before(async () => {
    s = await startTestServer({ egressResolver: resolver, config: { egressAllow: '127.0.0.1/32' } });
    api = v1(s, s.tenant.platformApiKey);
    const up = await s.createTenant(`localhost:${s.port}`);
    upstreamIssuer = up.tenant.issuer;
  });
  after(() => s.close());

  const generic = (extra: Record<string, unknown> = {}) => ({
    name: 'Example API',
    authorization_endpoint: 'https://auth.example/authorize',
    token_endpoint: 'https://auth.example/token',
    client_id: 'keyhall-client',
    client_secret: SECRET,
    scopes: ['read', 'write'],
    authorize_params: { access_type: 'offline' },
    ...extra,
  });

  it('registers a generic OAuth 2.0 provider: 201, the secret never returned, encrypted at rest, audited', async () => {
    const r = await api('POST', '/connect/providers', generic());
    assert.equal(r.status, 201, r.text);
    const p = r.json();
    assert.match(p.provider_id, /^cpr_[0-9a-z]{26}$/);
    assert.equal(p.type, 'oauth2');
    assert.equal(p.pkce, true);
    assert.equal(p.token_endpoint_auth_method, 'client_secret_basic');
    assert.equal(p.has_client_secret, true);
    assert.deepEqual(p.scopes, ['read', 'write']);
    assert.deepEqual(p.authorize_params, { access_type: 'offline' });
    assert.equal(p.redirect_uri, `${s.tenant.tenant.issuer}/connect/${p.provider_id}/callback`);
    assert.ok(!r.text.includes(SECRET));
    const row = await s.server.ctx.db.kysely.selectFrom('connect_providers').selectAll().where('id', '=', p.provider_id).executeTakeFirstOrThrow();
    assert.ok(row.client_secret_enc?.startsWith('v1.'));
    assert.ok(!JSON.stringify(row).includes(SECRET));
    const got = await api('GET', `/connect/providers/${p.provider_id}`);
    assert.equal(got.status, 200);
    assert.ok(!got.text.includes(SECRET));
    const events = (await api('GET', '/events?types=connect.provider.created')).json().data;
    const e = events.find((x: { data: { provider_id: string } }) => x.data.provider_id === p.provider_id);
    assert.equal(e.actor.type, 'api_key');
    assert.ok(!JSON.stringify(events).includes(SECRET));
  });

  it('fills endpoints from a preset; explicit fields override it', async () => {
    const r = await api('POST', '/connect/providers', {
      name: 'Google',
      preset: 'google',
      client_id: 'g',
      client_secret: SECRET,
      scopes: ['openid', 'email', 'https://www.googleapis.com/auth/calendar'],
    });
    assert.equal(r.status, 201, r.text);
    const p = r.json();
    assert.equal(p.preset, 'google');
    assert.equal(p.authorization_endpoint, 'https://accounts.google.com/o/oauth2/v2/auth');
    assert.equal(p.token_endpoint, 'https://oauth2.googleapis.com/token');
    assert.equal(p.revocation_endpoint, 'https://oauth2.googleapis.com/revoke');
    assert.deepEqual(p.authorize_params, { access_type: 'offline', prompt: 'consent' });
    assert.equal(p.scopes.length, 3);
    for (const preset of ['microsoft', 'github', 'slack']) {
      const x = await api('POST', '/connect/providers', { name: preset, preset, client_id: 'c', client_secret: SECRET });
      assert.equal(x.status, 201, x.text);
      assert.match(x.json().token_endpoint, /^https:\/\//);
    }
  });

  it('discovers an OpenID Connect provider through the egress policy', async () => {
    const r = await api('POST', '/connect/providers', { name: 'Upstream', type: 'oidc', issuer: upstreamIssuer, client_id: 'c', client_secret: SECRET });
    assert.equal(r.status, 201, r.text);
    const p = r.json();
    assert.equal(p.issuer, upstreamIssuer);
    assert.equal(p.authorization_endpoint, `${upstreamIssuer}/authorize`);
    assert.equal(p.token_endpoint, `${upstreamIssuer}/token`);
    assert.equal(p.revocation_endpoint, `${upstreamIssuer}/revoke`);
  });

  it('lists, changes (URLs checked again, secret replaced) and removes providers, each change audited', async () => {
    const p = (await api('POST', '/connect/providers', generic({ name: 'To change' }))).json();
    const list = await api('GET', '/connect/providers?limit=100');
    assert.equal(list.status, 200);
    assert.ok(list.json().data.some((x: { provider_id: string }) => x.provider_id === p.provider_id));
    assert.ok(!list.text.includes(SECRET));
    const before = (
      await s.server.ctx.db.kysely.selectFrom('connect_providers').select('client_secret_enc').where('id', '=', p.provider_id).executeTakeFirstOrThrow()
    ).client_secret_enc;
    const u = await api('PATCH', `/connect/providers/${p.provider_id}`, {
      name: 'Changed',
      client_secret: 'another-secret',
      pkce: false,
      revocation_endpoint: 'https://auth.example/revoke',
    });
    assert.equal(u.status, 200, u.text);
    assert.equal(u.json().name, 'Changed');
    assert.equal(u.json().pkce, false);
    assert.equal(u.json().revocation_endpoint, 'https://auth.example/revoke');
    const after = (
      await s.server.ctx.db.kysely.selectFrom('connect_providers').select('client_secret_enc').where('id', '=', p.provider_id).executeTakeFirstOrThrow()
    ).client_secret_enc;
    assert.notEqual(after, before);
    expectError(await api('PATCH', `/connect/providers/${p.provider_id}`, { token_endpoint: 'http://10.0.0.1/token' }), 400, 'invalid_request');
    assert.equal((await api('DELETE', `/connect/providers/${p.provider_id}`)).status, 204);
    expectError(await api('GET', `/connect/providers/${p.provider_id}`), 404, 'not_found');
    expectError(await api('DELETE', `/connect/providers/${p.provider_id}`), 404, 'not_found');
    expectError(await api('PATCH', `/connect/providers/${p.provider_id}`, { name: 'x' }), 404, 'not_found');
    const types = (await api('GET', '/events?types=connect.provider.updated,connect.provider.deleted'))
      .json()
      .data.filter((e: { data: { provider_id: string } }) => e.data.provider_id === p.provider_id);
    assert.deepEqual(types.map((e: { type: string }) => e.type).sort(), ['connect.provider.deleted', 'connect.provider.updated']);
    assert.ok(!JSON.stringify(types).includes('another-secret'));
  });

  it('refuses every bad input with 400 invalid_request', async () => {
    const bad: Array<[string, Record<string, unknown>, RegExp?]> = [
      ['no name', { ...generic(), name: undefined }],
      ['empty name', generic({ name: '  ' })],
      ['no client_id', { ...generic(), client_id: undefined }],
      ['unknown field', generic({ colour: 'red' })],
      ['unknown type', generic({ type: 'saml' })],
      ['unknown preset', generic({ preset: 'myspace' })],
      ['no token endpoint', { ...generic(), token_endpoint: undefined }, /token_endpoint is required/],
      ['no authorization endpoint', { ...generic(), authorization_endpoint: undefined }, /authorization_endpoint is required/],
      ['oidc without issuer', { name: 'x', type: 'oidc', client_id: 'c', client_secret: SECRET }, /issuer is required/],
      [
        'oidc with endpoints',
        { name: 'x', type: 'oidc', issuer: upstreamIssuer, token_endpoint: 'https://auth.example/t', client_id: 'c', client_secret: SECRET },
        /discovered/,
      ],
      [
        'oidc issuer without discovery',
        { name: 'x', type: 'oidc', issuer: s.tenant.tenant.issuer.replace('127.0.0.1', '127.0.0.1') + '/nothing', client_id: 'c', client_secret: SECRET },
        /discovery failed/,
      ],
      ['secret with method none', generic({ token_endpoint_auth_method: 'none' }), /not used/],
      ['no secret for basic', { ...generic(), client_secret: undefined }, /client_secret is required/],
      ['private address', generic({ token_endpoint: 'https://10.0.0.1/token' }), /token_endpoint: /],
      ['name resolving to a private address', generic({ authorization_endpoint: 'https://private.example/a' }), /authorization_endpoint: /],
      ['unresolvable name', generic({ token_endpoint: 'https://nowhere.invalid/t' }), /token_endpoint: /],
      ['http to a public host', generic({ token_endpoint: 'http://auth.example/t' }), /token_endpoint: /],
      ['credentials in URL', generic({ token_endpoint: 'https://u:p@auth.example/t' }), /token_endpoint: /],
      ['not a URL', generic({ revocation_endpoint: 'not a url' }), /revocation_endpoint: /],
      ['javascript URL', generic({ authorization_endpoint: 'javascript:alert(1)' }), /authorization_endpoint: /],
      ['reserved authorize param', generic({ authorize_params: { redirect_uri: 'https://evil.example/' } }), /set by Keyhall/],
      ['bad authorize param name', generic({ authorize_params: { 'a b': 'x' } })],
      ['non-string authorize param', generic({ authorize_params: { a: 1 } })],
      ['scope with a space', generic({ scopes: ['read write'] })],
      ['scopes not an array', generic({ scopes: 'read' })],
      ['pkce not a boolean', generic({ pkce: 'yes' })],
      ['unknown auth method', generic({ token_endpoint_auth_method: 'private_key_jwt' })],
    ];
    for (const [label, body, description] of bad) {
      const r = await api('POST', '/connect/providers', body);
      assert.equal(r.status, 400, `${label}: ${r.status} ${r.text}`);
      assert.equal(r.json().error, 'invalid_request', label);
      if (description) assert.match(r.json().error_description, description, label);
    }
    const p = (await api('POST', '/connect/providers', generic())).json();
    expectError(await api('PATCH', `/connect/providers/${p.provider_id}`, {}), 400, 'invalid_request');
    expectError(await api('PATCH', `/connect/providers/${p.provider_id}`, { preset: 'github' }), 400, 'invalid_request');
    expectError(await api('PATCH', `/connect/providers/${p.provider_id}`, { client_secret: null }), 400, 'invalid_request');
    expectError(await api('PATCH', `/connect/providers/${p.provider_id}`, { token_endpoint_auth_method: 'none' }), 400, 'invalid_request');
    const none = await api('PATCH', `/connect/providers/${p.provider_id}`, { token_endpoint_auth_method: 'none', client_secret: null });
    assert.equal(none.status, 200, none.text);
    assert.equal(none.json().has_client_secret, false);
    expectError(await api('GET', '/connect/providers/cpr_nope'), 404, 'not_found');
  });

  it('needs a platform key with connect_providers permissions', async () => {
    const org = (await api('POST', '/organizations', { name: 'Org' })).json().id;
    const orgKey = (await api('POST', `/organizations/${org}/api_keys`, { name: 'k', scopes: ['connect_providers:read', 'connect_providers:write'] })).json()
      .key;
    expectError(await v1(s, orgKey)('GET', '/connect/providers'), 403, 'forbidden');
    const readOnly = (await api('POST', '/api_keys', { name: 'r', scopes: ['connect_providers:read'] })).json().key;
    assert.equal((await v1(s, readOnly)('GET', '/connect/providers')).status, 200);
    expectError(await v1(s, readOnly)('POST', '/connect/providers', generic()), 403, 'insufficient_scope');
    expectError(await v1(s, undefined)('GET', '/connect/providers'), 401, 'invalid_token');
  });
});
