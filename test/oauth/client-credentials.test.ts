import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { basic, insecure, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

describe('client_credentials grant', () => {
  let s: OAuthTestServer;
  before(async () => {
    s = await startOAuthServer();
  });
  after(() => s.close());

  it('issues an EdDSA at+jwt per RFC 9068 to a client_secret_basic client, with no refresh token', async () => {
    const c = await serviceClient(s);
    const client = { client_id: c.client_id };
    const res = await oauth.clientCredentialsGrantRequest(
      s.as,
      client,
      oauth.ClientSecretBasic(c.client_secret!),
      new URLSearchParams({ scope: 'read' }),
      insecure,
    );
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const tokens = await oauth.processClientCredentialsResponse(s.as, client, res);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.scope, 'read');
    assert.equal(tokens.refresh_token, undefined);
    assert.ok(tokens.expires_in && tokens.expires_in > 0);
    const claims = await s.verifyAt(tokens.access_token);
    assert.equal(claims.sub, c.client_id);
    assert.equal(claims.client_id, c.client_id);
    assert.equal(claims.scope, 'read');
    assert.equal(claims.aud, s.issuer);
    assert.ok(typeof claims.jti === 'string' && Buffer.from(claims.jti, 'base64url').length >= 16);
    assert.equal((claims.exp as number) - (claims.iat as number), tokens.expires_in);
  });

  it('works with client_secret_post and grants all registered scopes by default', async () => {
    const c = await serviceClient(s, { token_endpoint_auth_method: 'client_secret_post' });
    const client = { client_id: c.client_id };
    const res = await oauth.clientCredentialsGrantRequest(s.as, client, oauth.ClientSecretPost(c.client_secret!), new URLSearchParams(), insecure);
    const tokens = await oauth.processClientCredentialsResponse(s.as, client, res);
    assert.equal(tokens.scope, 'read write');
  });

  it('puts an allowed resource indicator in aud (RFC 8707)', async () => {
    const c = await serviceClient(s, { allowed_resources: ['https://api.example/', 'https://other.example/'] });
    const r = await s.post(
      '/token',
      { grant_type: 'client_credentials', resource: 'https://api.example/' },
      { authorization: basic(c.client_id, c.client_secret!) },
    );
    assert.equal(r.status, 200);
    const claims = await s.verifyAt(r.json().access_token, 'https://api.example/');
    assert.equal(claims.aud, 'https://api.example/');
    const two = await s.post(
      '/token',
      { grant_type: 'client_credentials', resource: ['https://api.example/', 'https://other.example/'] },
      { authorization: basic(c.client_id, c.client_secret!) },
    );
    assert.deepEqual((await s.verifyAt(two.json().access_token, 'https://other.example/')).aud, ['https://api.example/', 'https://other.example/']);
  });

  describe('bad requests', () => {
    let id: string;
    let auth: string;
    before(async () => {
      const c = await serviceClient(s, { allowed_resources: ['https://api.example/'] });
      id = c.client_id;
      auth = basic(c.client_id, c.client_secret!);
    });
    const cases: Array<[string, Record<string, string | string[]>, number, string]> = [
      ['an unknown grant_type', { grant_type: 'password' }, 400, 'unsupported_grant_type'],
      ['no grant_type', {}, 400, 'invalid_request'],
      ['a repeated grant_type', { grant_type: ['client_credentials', 'client_credentials'] }, 400, 'invalid_request'],
      ['an unregistered scope', { grant_type: 'client_credentials', scope: 'admin' }, 400, 'invalid_scope'],
      ['a malformed scope', { grant_type: 'client_credentials', scope: 'read "x"' }, 400, 'invalid_scope'],
      ['a resource not allowed', { grant_type: 'client_credentials', resource: 'https://evil.example/' }, 400, 'invalid_target'],
      ['a relative resource', { grant_type: 'client_credentials', resource: '/api' }, 400, 'invalid_target'],
      ['a resource with a fragment', { grant_type: 'client_credentials', resource: 'https://api.example/#x' }, 400, 'invalid_target'],
      ['a grant not registered for the client', { grant_type: 'refresh_token', refresh_token: 'x' }, 400, 'unauthorized_client'],
    ];
    for (const [name, form, status, error] of cases) {
      it(`rejects ${name}`, async () => {
        const r = await s.post('/token', form, { authorization: auth });
        assert.equal(r.status, status);
        assert.equal(r.json().error, error);
        assert.equal(r.headers['cache-control'], 'no-store');
      });
    }

    it('rejects a JSON body', async () => {
      const r = await s.request({
        method: 'POST',
        path: '/token',
        headers: { 'content-type': 'application/json', authorization: auth },
        body: JSON.stringify({ grant_type: 'client_credentials' }),
      });
      assert.equal(r.status, 400);
      assert.equal(r.json().error, 'invalid_request');
    });

    it('answers GET with 405', async () => {
      const r = await s.request({ path: '/token' });
      assert.equal(r.status, 405);
    });

    it('rejects a public client using client_credentials', async () => {
      const pub = await s.createClient({ token_endpoint_auth_method: 'none', grant_types: ['refresh_token'] });
      const r = await s.post('/token', { grant_type: 'client_credentials', client_id: pub.client_id });
      assert.equal(r.status, 400);
      assert.equal(r.json().error, 'unauthorized_client');
    });

    it('does not serve the client on another tenant', async () => {
      const other = await s.createTenant('other.localhost');
      assert.ok(other);
      const r = await s.request({
        method: 'POST',
        path: '/token',
        host: 'other.localhost',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        body: 'grant_type=client_credentials',
      });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
      assert.ok(id);
    });
  });
});
