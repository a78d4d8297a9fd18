import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { REDIRECT, type SigninTestServer, signIn, startSigninServer } from './helpers.js';

describe('sign-in with openid-client: PAR → /authorize → login form → code → /token (DPoP) → /userinfo (DPoP)', () => {
  let s: SigninTestServer;
  before(async () => {
    s = await startSigninServer();
  });
  after(() => s.close());

  it('completes the flow and the ID token verifies against the JWKS', async () => {
    const user = await s.createUser('ada@example.com');
    const web = await s.webClient({ client_name: 'Example App' });
    const config = await client.discovery(new URL(s.issuer), web.client_id, web.client_secret, client.ClientSecretBasic(web.client_secret), {
      execute: [client.allowInsecureRequests],
    });
    const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authUrl = await client.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT,
        scope: 'openid profile email offline_access',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      },
      { DPoP: dpop },
    );
    assert.match(authUrl.searchParams.get('request_uri')!, /^urn:ietf:params:oauth:request_uri:[\w-]{43}$/);

    // The browser part, done like a browser: cookies, the CSRF token of the form, 303s.
    const b = s.browser();
    const toLogin = await b.get(authUrl.pathname + authUrl.search);
    assert.equal(toLogin.status, 303);
    assert.match(toLogin.headers.location!, /^\/login\?flow=flw_/);
    const loginPost = await signIn(b, toLogin.headers.location!, 'ada@example.com');
    assert.equal(loginPost.status, 303);
    const callback = new URL(loginPost.headers.location!);
    assert.equal(callback.origin + callback.pathname, REDIRECT);
    assert.equal(callback.searchParams.get('iss'), s.issuer);
    assert.equal(callback.searchParams.get('state'), state);

    const tokens = await client.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true },
      undefined,
      {
        DPoP: dpop,
      },
    );
    assert.equal(tokens.token_type.toLowerCase(), 'dpop');
    assert.ok(tokens.refresh_token, 'offline_access gives a refresh token');
    assert.equal(tokens.scope, 'openid profile email offline_access');

    const jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, jwks, { issuer: s.issuer, audience: web.client_id, algorithms: ['RS256'] });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.ok(protectedHeader.kid);
    assert.equal(payload.sub, user.id);
    assert.equal(payload.nonce, nonce);
    assert.equal(typeof payload.auth_time, 'number');
    assert.equal(typeof payload.at_hash, 'string');
    const at = await s.verifyAt(tokens.access_token);
    assert.equal(at.sub, user.id);
    assert.ok((at.cnf as { jkt: string }).jkt);

    const info = await client.fetchUserInfo(config, tokens.access_token, user.id, { DPoP: dpop });
    assert.deepEqual(info, { sub: user.id, email: 'ada@example.com', email_verified: false, name: 'Ada Lovelace', orgs: [] });

    // The refresh token works (bound to the client, and rotates).
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop });
    assert.ok(refreshed.access_token);
  });

  it('signs ID tokens with EdDSA for a client that chose it', async () => {
    await s.createUser('eddsa@example.com');
    const web = await s.webClient({ token_endpoint_auth_method: 'client_secret_post' });
    await s.clientSettings(web.client_id, { idTokenAlg: 'EdDSA' });
    const config = await client.discovery(
      new URL(s.issuer),
      web.client_id,
      { id_token_signed_response_alg: 'EdDSA' },
      client.ClientSecretPost(web.client_secret),
      {
        execute: [client.allowInsecureRequests],
      },
    );
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const b = s.browser();
    const toLogin = await b.get(url.pathname + url.search);
    const cb = await signIn(b, toLogin.headers.location!, 'eddsa@example.com');
    const tokens = await client.authorizationCodeGrant(config, new URL(cb.headers.location!), { pkceCodeVerifier: verifier, idTokenExpected: true });
    assert.equal(decodeProtectedHeader(tokens.id_token!).alg, 'EdDSA');
    assert.equal(tokens.refresh_token, undefined, 'no offline_access, no refresh token');
  });
});
