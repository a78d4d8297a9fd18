import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import * as client from 'openid-client';
import { ManualClock } from '../../src/kernel/clock.js';
import type { HttpResponse } from '../helpers/http.js';
import { REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from '../signin/helpers.js';
import { basic } from './helpers.js';
import { makeProof, proofKey, type ProofKey } from './dpop-helpers.js';

function assertJsonError(r: HttpResponse, status: number, error: string) {
  assert.equal(r.status, status, r.text.slice(0, 300));
  assert.equal(r.json().error, error);
}

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The FAPI 2.0 Security Profile as a client setting (`profile: "fapi2"`): one test per requirement. */
describe('FAPI 2.0 profile (profile: "fapi2")', () => {
  let s: SigninTestServer;
  const clock = new ManualClock();
  let key: CryptoKey;
  let es384: CryptoKey;
  let jwk: JWK;
  let fapi: string;
  let challenge: string;
  const nowS = () => Math.floor(clock.now() / 1000);

  before(async () => {
    // Codes live 300 s by configuration; a FAPI client's still only 60 s.
    s = await startSigninServer({ clock, config: { codeTtlSeconds: 300 } });
    const pair = await generateKeyPair('EdDSA', { extractable: true });
    key = pair.privateKey;
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1' };
    const p384 = await generateKeyPair('ES384', { extractable: true });
    es384 = p384.privateKey;
    const jwk384 = { ...(await exportJWK(p384.publicKey)), kid: 'k384' };
    fapi = (
      await s.createClient({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [jwk, jwk384] },
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: [REDIRECT],
        profile: 'fapi2',
      })
    ).client_id;
    challenge = await S256(VERIFIER);
    await s.createUser('fapi@example.com');
  });
  after(() => s.close());

  const assertion = (id = fapi, signWith: { key: CryptoKey; alg: string; kid: string } = { key, alg: 'EdDSA', kid: 'k1' }) =>
    new SignJWT({ iss: id, sub: id, aud: s.issuer, jti: crypto.randomUUID(), iat: nowS(), exp: nowS() + 60 })
      .setProtectedHeader({ alg: signWith.alg, kid: signWith.kid })
      .sign(signWith.key);
  const keyAuth = async (id = fapi) => ({ client_id: id, client_assertion_type: JWT_BEARER, client_assertion: await assertion(id) });
  const proof = (k: ProofKey, path: string) => makeProof(k, { htm: 'POST', htu: `${s.issuer}${path}`, iat: nowS() });
  const authorization = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid offline_access',
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

  /** PAR (private_key_jwt), the browser signs in, and the code comes back. */
  async function code(id = fapi): Promise<URLSearchParams> {
    const pushed = await s.post('/par', { ...authorization(), ...(await keyAuth(id)) });
    assert.equal(pushed.status, 201, pushed.text);
    const b = s.browser();
    const start = await b.get(`/authorize?${new URLSearchParams({ client_id: id, request_uri: pushed.json().request_uri })}`);
    const cb = await signIn(b, start.headers.location!, 'fapi@example.com');
    return new URL(cb.headers.location!).searchParams;
  }
  const redeem = async (c: string, dpop?: ProofKey, id = fapi) =>
    s.post(
      '/token',
      { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER, ...(await keyAuth(id)) },
      dpop ? { dpop: await proof(dpop, '/token') } : {},
    );

  it('a complete FAPI 2.0 flow through openid-client: PAR + PKCE + DPoP + private_key_jwt, iss in the response', async () => {
    const config = await client.discovery(new URL(s.issuer), fapi, { redirect_uris: [REDIRECT] }, client.PrivateKeyJwt({ key, kid: 'k1' }), {
      execute: [client.allowInsecureRequests],
    });
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = await client.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT,
        scope: 'openid offline_access',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      },
      { DPoP },
    );
    const b = s.browser();
    const start = await b.get(url.pathname + url.search);
    const cb = new URL((await signIn(b, start.headers.location!, 'fapi@example.com')).headers.location!);
    assert.equal(cb.searchParams.get('iss'), s.issuer, 'RFC 9207 iss in the authorization response');
    const tokens = await client.authorizationCodeGrant(config, cb, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true }, undefined, {
      DPoP,
    });
    assert.equal(tokens.token_type, 'dpop');
    assert.ok(((await s.verifyAt(tokens.access_token)).cnf as { jkt?: string }).jkt);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    assert.equal(refreshed.token_type, 'dpop');
    assert.equal((await s.server.ctx.management.clients.get(s.tenant.tenant.id, fapi)).profile, 'fapi2');
  });

  it('PAR is required: a plain /authorize request is invalid_request (redirected, with iss)', async () => {
    const r = await s.request({ path: `/authorize?${new URLSearchParams({ client_id: fapi, ...authorization() })}` });
    assert.equal(r.status, 303);
    const url = new URL(r.headers.location!);
    assert.equal(url.searchParams.get('error'), 'invalid_request');
    assert.equal(url.searchParams.get('iss'), s.issuer);
    assert.equal(url.searchParams.get('code'), null);
  });

  it('PKCE with S256 is required: /par without code_challenge, or with plain, is invalid_request', async () => {
    const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = authorization();
    assertJsonError(await s.post('/par', { ...noPkce, ...(await keyAuth()) }), 400, 'invalid_request');
    assertJsonError(await s.post('/par', { ...authorization({ code_challenge_method: 'plain' }), ...(await keyAuth()) }), 400, 'invalid_request');
  });

  it('private_key_jwt only: a client secret or no authentication is invalid_client at /par and /token', async () => {
    for (const path of ['/par', '/token']) {
      const form = path === '/par' ? authorization() : { grant_type: 'authorization_code', code: 'ac_x', redirect_uri: REDIRECT, code_verifier: VERIFIER };
      assertJsonError(await s.post(path, form, { authorization: basic(fapi, 'cs_guessed') }), 401, 'invalid_client');
      assertJsonError(await s.post(path, { ...form, client_id: fapi, client_secret: 'cs_guessed' }), 401, 'invalid_client');
      assertJsonError(await s.post(path, { ...form, client_id: fapi }), 401, 'invalid_client');
    }
    // Nor can the client be registered, or changed, to use another method.
    const refused = (e: { code?: string }) => e.code === 'invalid_client_metadata';
    await assert.rejects(s.createClient({ redirect_uris: [REDIRECT], profile: 'fapi2' }), refused);
    await assert.rejects(s.server.ctx.management.clients.update(s.tenant.tenant.id, fapi, { token_endpoint_auth_method: 'client_secret_basic' }), refused);
  });

  it("a client assertion's aud is the issuer alone: the token or PAR URL is invalid_client", async () => {
    for (const aud of [`${s.issuer}/token`, `${s.issuer}/par`]) {
      const a = await new SignJWT({ iss: fapi, sub: fapi, aud, jti: crypto.randomUUID(), iat: nowS(), exp: nowS() + 60 })
        .setProtectedHeader({ alg: 'EdDSA', kid: 'k1' })
        .sign(key);
      assertJsonError(
        await s.post('/par', { ...authorization(), client_id: fapi, client_assertion_type: JWT_BEARER, client_assertion: a }),
        401,
        'invalid_client',
      );
    }
    const ok = await s.post('/par', { ...authorization(), ...(await keyAuth()) });
    assert.equal(ok.status, 201, ok.text);
  });

  it('only RS256/PS256/ES256/EdDSA: an ES384 client assertion is invalid_client, an ES384 DPoP proof invalid_dpop_proof', async () => {
    const form = { ...authorization(), client_id: fapi, client_assertion_type: JWT_BEARER };
    assertJsonError(
      await s.post('/par', { ...form, client_assertion: await assertion(fapi, { key: es384, alg: 'ES384', kid: 'k384' }) }),
      401,
      'invalid_client',
    );
    const p384 = await generateKeyPair('ES384', { extractable: true });
    const dpop384 = await makeProof(
      { pair: p384, jwk: await exportJWK(p384.publicKey) },
      { htm: 'POST', htu: `${s.issuer}/par`, iat: nowS() },
      { alg: 'ES384', jwk: await exportJWK(p384.publicKey) },
    );
    assertJsonError(await s.post('/par', { ...authorization(), ...(await keyAuth()) }, { dpop: dpop384 }), 400, 'invalid_dpop_proof');
  });

  it('DPoP is required at /token: no proof is invalid_request; refresh tokens are bound to the DPoP key', async () => {
    const c = (await code()).get('code')!;
    assertJsonError(await redeem(c), 400, 'invalid_request');
    const mine = await proofKey();
    const ok = await redeem(c, mine);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().token_type, 'DPoP');
    const rt = ok.json().refresh_token as string;
    const refresh = async (dpop?: ProofKey) =>
      s.post('/token', { grant_type: 'refresh_token', refresh_token: rt, ...(await keyAuth()) }, dpop ? { dpop: await proof(dpop, '/token') } : {});
    assertJsonError(await refresh(), 400, 'invalid_request');
    assertJsonError(await refresh(await proofKey()), 400, 'invalid_grant');
    const rotated = await refresh(mine);
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.json().token_type, 'DPoP');
  });

  it('codes live at most 60 seconds (the configured 300 s apply to other clients)', async () => {
    const other = (
      await s.createClient({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [jwk] },
        grant_types: ['authorization_code'],
        redirect_uris: [REDIRECT],
      })
    ).client_id;
    const fapiCode = (await code()).get('code')!;
    const otherCode = (await code(other)).get('code')!;
    clock.advance(61_000);
    assertJsonError(await redeem(fapiCode, await proofKey()), 400, 'invalid_grant');
    const ok = await redeem(otherCode, await proofKey(), other);
    assert.equal(ok.status, 200, ok.text);
  });
});
