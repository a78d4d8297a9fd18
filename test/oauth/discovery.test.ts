import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type OAuthTestServer, startOAuthServer } from './helpers.js';

describe('discovery members of the token service', () => {
  let s: OAuthTestServer;
  before(async () => {
    s = await startOAuthServer();
  });
  after(() => s.close());

  it('lists exactly what /token, /introspect and /revoke implement, on the tenant host', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const m = (await s.request({ path })).json();
      assert.equal(m.token_endpoint, `${s.issuer}/token`);
      assert.equal(m.introspection_endpoint, `${s.issuer}/introspect`);
      assert.equal(m.revocation_endpoint, `${s.issuer}/revoke`);
      // Exactly the running server's grant table (the same table /token dispatches on).
      assert.deepEqual(m.grant_types_supported, [...s.server.ctx.oauth.grants.keys()]);
      for (const g of ['client_credentials', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'])
        assert.ok(m.grant_types_supported.includes(g));
      assert.deepEqual(m.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']);
      assert.deepEqual(m.token_endpoint_auth_signing_alg_values_supported, ['EdDSA', 'Ed25519', 'ES256', 'PS256']);
      assert.deepEqual(m.dpop_signing_alg_values_supported, ['EdDSA', 'Ed25519', 'ES256', 'PS256']);
      assert.ok(!m.introspection_endpoint_auth_methods_supported.includes('none'));
      for (const alg of m.dpop_signing_alg_values_supported) assert.ok(!/^(none|HS)/.test(alg));
    }
  });

  it('announces DPoP algorithms in the protected resource metadata', async () => {
    const m = (await s.request({ path: '/.well-known/oauth-protected-resource' })).json();
    assert.deepEqual(m.dpop_signing_alg_values_supported, ['EdDSA', 'Ed25519', 'ES256', 'PS256']);
  });
});
