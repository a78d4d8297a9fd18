import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import * as client from 'openid-client';
import type { HttpResponse } from '../helpers/http.js';
import { REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from '../signin/helpers.js';
import { rawJwt } from './dpop-helpers.js';

/** An error page: 400 HTML, no Location, the error code in the page. */
function assertErrorPage(r: HttpResponse, error: string) {
  assert.equal(r.status, 400, r.text.slice(0, 300));
  assert.equal(r.headers.location, undefined);
  assert.match(r.text, new RegExp(`data-error="${error}"`));
}

function assertJsonError(r: HttpResponse, status: number, error: string) {
  assert.equal(r.status, status, r.text.slice(0, 300));
  assert.equal(r.json().error, error);
}

function assertErrorRedirect(r: HttpResponse, s: SigninTestServer, error: string, state: string | null) {
  assert.equal(r.status, 303, r.text.slice(0, 300));
  const url = new URL(r.headers.location!);
  assert.equal(url.origin + url.pathname, REDIRECT);
  assert.equal(url.searchParams.get('error'), error);
  assert.equal(url.searchParams.get('state'), state);
  assert.equal(url.searchParams.get('iss'), s.issuer);
}

const q = (params: Record<string, string>) => `/authorize?${new URLSearchParams(params)}`;

describe('signed request objects (RFC 9101 JAR) at /authorize and /par', () => {
  let s: SigninTestServer;
  let key: CryptoKey;
  let jwk: JWK;
  let clientId: string;
  let otherId: string;
  let challenge: string;
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    s = await startSigninServer();
    const pair = await generateKeyPair('EdDSA', { extractable: true });
    key = pair.privateKey;
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1' };
    clientId = (await s.webClient({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } })).client_id;
    otherId = (await s.webClient({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } })).client_id;
    challenge = await S256(VERIFIER);
    await s.createUser('jar@example.com');
  });
  after(() => s.close());

  /** The authorization parameters of a good request object of `clientId`. */
  const params = (extra: Record<string, unknown> = {}) => ({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    state: 'from-the-object',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

  /** A request object: the parameters plus iss, aud, iat, exp (override or remove with undefined). */
  async function requestObject(claims: Record<string, unknown> = {}, opts: { key?: CryptoKey; alg?: string; typ?: string } = {}) {
    const base: Record<string, unknown> = { ...params(), iss: clientId, aud: s.issuer, iat: now(), exp: now() + 60, ...claims };
    const payload = Object.fromEntries(Object.entries(base).filter(([, v]) => v !== undefined));
    return new SignJWT(payload).setProtectedHeader({ alg: opts.alg ?? 'EdDSA', kid: 'k1', typ: opts.typ ?? 'oauth-authz-req+jwt' }).sign(opts.key ?? key);
  }

  /** A private_key_jwt client assertion for /par. */
  const assertion = (id = clientId) =>
    new SignJWT({ iss: id, sub: id, aud: s.issuer, jti: crypto.randomUUID(), iat: now(), exp: now() + 60 })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'k1' })
      .sign(key);
  const par = async (form: Record<string, string>, id = clientId) =>
    s.post('/par', {
      client_id: id,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await assertion(id),
      ...form,
    });

  it('discovery announces request objects and their algorithms', async () => {
    const meta = (await s.request({ path: '/.well-known/openid-configuration' })).json();
    assert.equal(meta.request_parameter_supported, true);
    assert.deepEqual(meta.request_object_signing_alg_values_supported, ['EdDSA', 'Ed25519', 'ES256', 'PS256']);
    assert.equal(meta.require_signed_request_object, false);
    assert.equal(meta.request_uri_parameter_supported, false);
  });

  describe('refusals: invalid_request_object (a page at /authorize, JSON 400 at /par)', () => {
    const cases: Array<[string, () => Promise<string>]> = [
      ['signed by another key', async () => requestObject({}, { key: (await generateKeyPair('EdDSA')).privateKey })],
      ['alg none', async () => rawJwt({ alg: 'none', typ: 'oauth-authz-req+jwt' }, { ...params(), iss: clientId, aud: s.issuer, exp: now() + 60 })],
      ['expired', () => requestObject({ iat: now() - 300, exp: now() - 120 })],
      ['no exp', () => requestObject({ exp: undefined })],
      ['client_id differs from the query', () => requestObject({ client_id: otherId })],
      ['no client_id in the object', () => requestObject({ client_id: undefined })],
      ['iss is not the client', () => requestObject({ iss: otherId })],
      ['aud is not the issuer', () => requestObject({ aud: 'https://elsewhere.example' })],
      ['nbf in the future', () => requestObject({ nbf: now() + 600 })],
      ['lives more than an hour', () => requestObject({ exp: now() + 7200 })],
      ['typ of another kind of token', () => requestObject({}, { typ: 'dpop+jwt' })],
      ['a nested request_uri', () => requestObject({ request_uri: 'urn:ietf:params:oauth:request_uri:x' })],
      ['not a JWS', async () => 'not-a-jwt'],
    ];
    for (const [name, make] of cases) {
      it(name, async () => {
        const jwt = await make();
        // The query's own parameters do not rescue it, and nothing is redirected.
        assertErrorPage(
          await s.request({ path: q({ client_id: clientId, request: jwt, redirect_uri: REDIRECT, response_type: 'code' }) }),
          'invalid_request_object',
        );
        assertJsonError(await par({ request: jwt }), 400, 'invalid_request_object');
      });
    }
  });

  it('refuses request together with request_uri (invalid_request page), and request_uri in a pushed request', async () => {
    const jwt = await requestObject();
    assertErrorPage(
      await s.request({ path: q({ client_id: clientId, request: jwt, request_uri: 'urn:ietf:params:oauth:request_uri:abc' }) }),
      'invalid_request',
    );
    assertJsonError(await par({ request: jwt, request_uri: 'urn:ietf:params:oauth:request_uri:abc' }), 400, 'invalid_request');
  });

  it('uses only the parameters inside the object: the query cannot override them', async () => {
    // prompt=none in the object with nobody signed in: login_required, with the object's state.
    const jwt = await requestObject({ prompt: 'none' });
    const r = await s.request({ path: q({ client_id: clientId, request: jwt, state: 'from-the-query', prompt: 'login' }) });
    assertErrorRedirect(r, s, 'login_required', 'from-the-object');
  });

  it('a client without registered keys gets request_not_supported', async () => {
    const pub = (await s.publicClient()).client_id;
    const r = await s.request({
      path: q({
        client_id: pub,
        redirect_uri: REDIRECT,
        response_type: 'code',
        state: 'st',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        request: 'a.b.c',
      }),
    });
    assertErrorRedirect(r, s, 'request_not_supported', 'st');
  });

  it('require_signed_request_object: a plain request is invalid_request at /authorize and /par; a signed one is accepted', async () => {
    const strict = (await s.webClient({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] }, require_signed_request_object: true })).client_id;
    const view = await s.server.ctx.management.clients.get(s.tenant.tenant.id, strict);
    assert.equal(view.require_signed_request_object, true);
    const plain = { ...params({ client_id: strict }), state: 'plain' };
    assertErrorRedirect(await s.request({ path: q(plain) }), s, 'invalid_request', 'plain');
    assertJsonError(await par(plain, strict), 400, 'invalid_request');
    const signed = await requestObject({ client_id: strict, iss: strict });
    const pushed = await par({ request: signed }, strict);
    assert.equal(pushed.status, 201, pushed.text);
    const start = await s.browser().get(q({ client_id: strict, request_uri: pushed.json().request_uri }));
    assert.equal(start.status, 303);
    assert.match(start.headers.location!, /^\/login\?flow=flw_/);
    // Registering it needs keys to verify with.
    await assert.rejects(
      s.createClient({ redirect_uris: [REDIRECT], require_signed_request_object: true }),
      (e: { code?: string }) => e.code === 'invalid_client_metadata',
    );
  });

  it('a pushed request object works through to the code', async () => {
    const pushed = await par({ request: await requestObject({ state: 'pushed' }) });
    assert.equal(pushed.status, 201, pushed.text);
    const b = s.browser();
    const start = await b.get(q({ client_id: clientId, request_uri: pushed.json().request_uri }));
    const cb = await signIn(b, start.headers.location!, 'jar@example.com');
    const url = new URL(cb.headers.location!);
    assert.equal(url.searchParams.get('state'), 'pushed');
    assert.ok(url.searchParams.get('code'));
  });

  it('a request object from openid-client (buildAuthorizationUrlWithJAR) works end to end', async () => {
    const config = await client.discovery(new URL(s.issuer), clientId, { redirect_uris: [REDIRECT] }, client.PrivateKeyJwt({ key, kid: 'k1' }), {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = await client.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: REDIRECT,
        scope: 'openid email',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      },
      { key, kid: 'k1' },
    );
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request']);
    const b = s.browser();
    const start = await b.get(url.pathname + url.search);
    assert.equal(start.status, 303, start.text.slice(0, 300));
    const cb = await signIn(b, start.headers.location!, 'jar@example.com');
    const tokens = await client.authorizationCodeGrant(config, new URL(cb.headers.location!), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    assert.equal(tokens.scope, 'openid email');
    assert.equal(tokens.claims()!.nonce, nonce);
  });
});
