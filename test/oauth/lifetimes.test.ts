import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRefreshFamily } from '../../src/oauth/token/refresh.js';
import { basic, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

describe('token lifetimes per tenant (/v1/oauth/settings)', () => {
  let s: OAuthTestServer;
  let auth: string;
  let clientId: string;
  before(async () => {
    s = await startOAuthServer({ config: { accessTokenTtlSeconds: 900 } });
    const c = await serviceClient(s, { grant_types: ['client_credentials', 'refresh_token'] });
    clientId = c.client_id;
    auth = basic(c.client_id, c.client_secret!);
  });
  after(() => s.close());

  const settings = (method: string, body?: unknown) =>
    s.request({
      method,
      path: '/v1/oauth/settings',
      headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const expiresIn = async () => (await s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth })).json().expires_in;

  it('uses the configured default until the tenant sets its own', async () => {
    const r = (await settings('GET')).json();
    assert.deepEqual(r, {
      access_token_ttl_seconds: null,
      refresh_token_ttl_seconds: null,
      id_token_claims: null,
      effective: { access_token_ttl_seconds: 900, refresh_token_ttl_seconds: 30 * 24 * 3600, id_token_claims: 'scoped' },
    });
    assert.equal(await expiresIn(), 900);
  });

  it('applies the tenant lifetimes to access tokens and new refresh-token families', async () => {
    const put = await settings('PUT', { access_token_ttl_seconds: 120, refresh_token_ttl_seconds: 3600 });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json().effective, { access_token_ttl_seconds: 120, refresh_token_ttl_seconds: 3600, id_token_claims: 'scoped' });
    const r = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth });
    assert.equal(r.json().expires_in, 120);
    const claims = await s.verifyAt(r.json().access_token);
    assert.equal((claims.exp as number) - (claims.iat as number), 120);

    const rt = await startRefreshFamily(s.tenant.tenant, { clientId, sub: 'u', scopes: [], resources: [], jkt: null }, s.server.ctx.oauth.ports, Date.now());
    const next = (await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth })).json();
    assert.equal(next.expires_in, 120);
    assert.equal((await settings('PUT', { access_token_ttl_seconds: null, refresh_token_ttl_seconds: null })).status, 200);
    assert.equal(await expiresIn(), 900);
  });

  it('does not change another tenant', async () => {
    await settings('PUT', { access_token_ttl_seconds: 60, refresh_token_ttl_seconds: null });
    const b = await s.createTenant('b.localhost');
    const c = await s.server.ctx.management.clients.create(b.tenant.id, { grant_types: ['client_credentials'] });
    const r = await s.request({
      method: 'POST',
      path: '/token',
      host: 'b.localhost',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.client_id, c.client_secret!) },
      body: 'grant_type=client_credentials',
    });
    assert.equal(r.json().expires_in, 900);
  });

  for (const [name, body] of [
    ['an access-token lifetime under 30 s', { access_token_ttl_seconds: 5, refresh_token_ttl_seconds: null }],
    ['a non-integer lifetime', { access_token_ttl_seconds: 60.5, refresh_token_ttl_seconds: null }],
    ['a missing field', { access_token_ttl_seconds: 60 }],
  ] as const) {
    it(`rejects ${name}`, async () => {
      const r = await settings('PUT', body);
      assert.equal(r.status, 400);
      assert.equal(r.json().error, 'invalid_request');
    });
  }
});
