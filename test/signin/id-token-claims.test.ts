import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { REDIRECT, type SigninTestServer, signIn, startSigninServer } from './helpers.js';

/**
 * openid-client 6 as applications write it: given a secret, it authenticates with
 * client_secret_post by default, here against clients registered with the default
 * client_secret_basic. The ID token carries the profile claims of the granted scopes.
 */
describe('ID-token profile claims and the default secret method of openid-client', () => {
  let s: SigninTestServer;
  let userId: string;
  before(async () => {
    s = await startSigninServer();
    userId = (await s.createUser('grace@example.com', undefined, 'Grace Hopper')).id;
  });
  after(() => s.close());

  /** The code flow through openid-client's defaults; the ID token's verified claims. */
  async function codeFlow(clientId: string, secret: string, scope: string) {
    const config = await client.discovery(new URL(s.issuer), clientId, secret, undefined, { execute: [client.allowInsecureRequests] });
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const authUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
    });
    const b = s.browser();
    const toLogin = await b.get(authUrl.pathname + authUrl.search);
    const loginPost = await signIn(b, toLogin.headers.location!, 'grace@example.com');
    const tokens = await client.authorizationCodeGrant(config, new URL(loginPost.headers.location!), {
      pkceCodeVerifier: verifier,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const { payload } = await jwtVerify(tokens.id_token!, jwks, { issuer: s.issuer, audience: clientId });
    return { payload, config, tokens };
  }

  it('openid email profile: email, email_verified and name are in the ID token (client registered for Basic, openid-client posts)', async () => {
    const web = await s.webClient();
    const { payload } = await codeFlow(web.client_id, web.client_secret, 'openid email profile');
    assert.equal(payload.sub, userId);
    assert.equal(payload.email, 'grace@example.com');
    assert.equal(payload.email_verified, false);
    assert.equal(payload.name, 'Grace Hopper');
    assert.equal(payload.orgs, undefined, 'orgs stays a /userinfo claim');
  });

  it('openid only: no profile claims', async () => {
    const web = await s.webClient();
    const { payload } = await codeFlow(web.client_id, web.client_secret, 'openid');
    assert.equal(payload.sub, userId);
    for (const c of ['email', 'email_verified', 'name']) assert.equal(payload[c], undefined, c);
  });

  it('id_token_claims "minimal": the tenant keeps ID tokens to the protocol claims; /userinfo is unchanged', async () => {
    const headers = { authorization: `Bearer ${s.tenant.platformApiKey}`, 'content-type': 'application/json' };
    const bad = await s.request({
      method: 'PUT',
      path: '/v1/oauth/settings',
      headers,
      body: JSON.stringify({ access_token_ttl_seconds: null, refresh_token_ttl_seconds: null, id_token_claims: 'all' }),
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.json().error, 'invalid_request');
    const put = await s.request({
      method: 'PUT',
      path: '/v1/oauth/settings',
      headers,
      body: JSON.stringify({ access_token_ttl_seconds: null, refresh_token_ttl_seconds: null, id_token_claims: 'minimal' }),
    });
    assert.equal(put.status, 200);
    assert.equal(put.json().effective.id_token_claims, 'minimal');
    try {
      const web = await s.webClient();
      const { payload, config, tokens } = await codeFlow(web.client_id, web.client_secret, 'openid email profile');
      assert.equal(payload.email, undefined);
      assert.equal(payload.name, undefined);
      const info = await client.fetchUserInfo(config, tokens.access_token, userId);
      assert.equal(info.email, 'grace@example.com');
      assert.equal(info.name, 'Grace Hopper');
    } finally {
      await s.request({
        method: 'PUT',
        path: '/v1/oauth/settings',
        headers,
        body: JSON.stringify({ access_token_ttl_seconds: null, refresh_token_ttl_seconds: null, id_token_claims: null }),
      });
    }
  });

  it('a strict client (token_endpoint_auth_method_strict) refuses openid-client posting its secret', async () => {
    const strict = await s.webClient({ token_endpoint_auth_method_strict: true });
    const err = await codeFlow(strict.client_id, strict.client_secret, 'openid').then(
      () => assert.fail('a strict Basic client must refuse client_secret_post'),
      (e: client.WWWAuthenticateChallengeError) => e,
    );
    // A 401 with `WWW-Authenticate: Basic` reaches the application as a challenge error.
    assert.equal(err.status, 401);
    assert.equal(((await err.response.json()) as { error: string }).error, 'invalid_client');
  });
});
