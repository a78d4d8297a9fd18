import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { expectError, v1 } from '../helpers/v1.js';
import { type OAuthTestServer, startOAuthServer } from './helpers.js';

describe('/v1/clients sign-in settings', () => {
  let s: OAuthTestServer;
  before(async () => {
    s = await startOAuthServer();
  });
  after(() => s.close());

  it('registers, shows and changes the sign-in settings of a client', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const created = await api('POST', '/clients', {
      client_name: 'Partner app',
      redirect_uris: ['https://partner.example/cb'],
      third_party: true,
      id_token_signed_response_alg: 'EdDSA',
      require_pushed_authorization_requests: true,
      post_logout_redirect_uris: ['https://partner.example/bye'],
    });
    assert.equal(created.status, 201, created.text);
    const c = created.json();
    assert.equal(c.third_party, true);
    assert.equal(c.id_token_signed_response_alg, 'EdDSA');
    assert.equal(c.require_pushed_authorization_requests, true);
    assert.deepEqual(c.post_logout_redirect_uris, ['https://partner.example/bye']);
    const stored = await s.server.ctx.oauth.ports.signin.clientSettings(s.tenant.tenant.id, c.client_id);
    assert.deepEqual(stored, {
      thirdParty: true,
      idTokenAlg: 'EdDSA',
      requirePar: true,
      postLogoutRedirectUris: ['https://partner.example/bye'],
      backchannelLogoutUri: null,
      backchannelLogoutSessionRequired: false,
      requireSignedRequestObject: false,
      profile: null,
      claims: [],
    });
    assert.equal(c.require_signed_request_object, false);
    assert.equal(c.profile, null);

    const patched = await api('PATCH', `/clients/${c.client_id}`, { third_party: false });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json().third_party, false);
    assert.equal(patched.json().id_token_signed_response_alg, 'EdDSA', 'other settings kept');
    assert.equal((await api('GET', `/clients/${c.client_id}`)).json().third_party, false);

    const plain = (await api('POST', '/clients', { redirect_uris: ['https://plain.example/cb'] })).json();
    assert.equal(plain.third_party, false);
    assert.equal(plain.id_token_signed_response_alg, 'RS256');
    assert.equal((await api('DELETE', `/clients/${c.client_id}`)).status, 204);
    expectError(await api('GET', `/clients/${c.client_id}`), 404, 'not_found');
  });

  it('rejects bad sign-in settings', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const base = { redirect_uris: ['https://x.example/cb'] };
    expectError(await api('POST', '/clients', { ...base, id_token_signed_response_alg: 'none' }), 400, 'invalid_request');
    expectError(await api('POST', '/clients', { ...base, third_party: 'yes' }), 400, 'invalid_request');
    expectError(await api('POST', '/clients', { ...base, post_logout_redirect_uris: ['javascript:alert(1)'] }), 400, 'invalid_request');
    expectError(await api('POST', '/clients', { ...base, profile: 'fapi1' }), 400, 'invalid_request');
    expectError(await api('POST', '/clients', { ...base, require_signed_request_object: 'yes' }), 400, 'invalid_request');
    // FAPI 2.0 needs private_key_jwt; a request object needs keys to verify with.
    expectError(await api('POST', '/clients', { ...base, profile: 'fapi2' }), 400, 'invalid_client_metadata');
    expectError(await api('POST', '/clients', { ...base, require_signed_request_object: true }), 400, 'invalid_client_metadata');
    const plain = (await api('POST', '/clients', base)).json();
    expectError(await api('PATCH', `/clients/${plain.client_id}`, { profile: 'fapi2' }), 400, 'invalid_client_metadata');
  });
});
