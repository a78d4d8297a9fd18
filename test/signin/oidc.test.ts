import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { ManualClock } from '../../src/kernel/clock.js';
import { basic } from '../oauth/helpers.js';
import { REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from './helpers.js';

describe('OpenID details: id_token_hint, max_age/auth_time, userinfo by POST body, require PAR, public DPoP clients', () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  let web: { client_id: string; client_secret: string };
  let challenge: string;
  before(async () => {
    s = await startSigninServer({ clock });
    web = await s.webClient();
    challenge = await S256(VERIFIER);
    await s.createUser('one@example.com');
    await s.createUser('two@example.com');
  });
  after(() => s.close());

  const authorize = (extra: Record<string, string> = {}) =>
    `/authorize?${new URLSearchParams({ client_id: web.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'st', code_challenge: challenge, code_challenge_method: 'S256', ...extra })}`;
  const tokens = async (cbLocation: string) => {
    const code = new URL(cbLocation).searchParams.get('code')!;
    return (
      await s.post(
        '/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER },
        { authorization: basic(web.client_id, web.client_secret) },
      )
    ).json();
  };
  const claims = (idToken: string) => JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString());

  it('honours id_token_hint: silent success for the same user, login_required for another, invalid_request for a forged hint', async () => {
    const b = s.browser();
    const first = await tokens((await signIn(b, (await b.get(authorize())).headers.location!, 'one@example.com')).headers.location!);
    const same = await b.get(authorize({ prompt: 'none', id_token_hint: first.id_token }));
    assert.ok(new URL(same.headers.location!).searchParams.get('code'));

    const other = s.browser();
    await signIn(other, (await other.get(authorize())).headers.location!, 'two@example.com');
    const mismatch = await other.get(authorize({ prompt: 'none', id_token_hint: first.id_token }));
    assert.equal(new URL(mismatch.headers.location!).searchParams.get('error'), 'login_required');
    clock.advance(1000);
    const interactive = await other.get(authorize({ id_token_hint: first.id_token }));
    assert.match(interactive.headers.location!, /^\/login\?flow=/);
    const forged = await b.get(authorize({ id_token_hint: `${first.id_token.slice(0, -6)}AAAAAA` }));
    assert.equal(new URL(forged.headers.location!).searchParams.get('error'), 'invalid_request');
  });

  it('puts auth_time in the ID token and re-authenticates when it is older than max_age', async () => {
    const b = s.browser();
    const loginAt = clock.now();
    const t1 = await tokens((await signIn(b, (await b.get(authorize())).headers.location!, 'one@example.com')).headers.location!);
    assert.equal(claims(t1.id_token).auth_time, Math.floor(loginAt / 1000));
    clock.advance(120_000);
    const fresh = await b.get(authorize({ max_age: '300' }));
    const t2 = await tokens(fresh.headers.location!);
    assert.equal(claims(t2.id_token).auth_time, Math.floor(loginAt / 1000), 'a login within max_age is reused');
    const stale = await b.get(authorize({ max_age: '60' }));
    assert.match(stale.headers.location!, /^\/login\?flow=/);
    const t3 = await tokens((await signIn(b, stale.headers.location!, 'one@example.com')).headers.location!);
    assert.equal(claims(t3.id_token).auth_time, Math.floor(clock.now() / 1000));
  });

  it('serves /userinfo to a token in a POST form body, and refuses two ways at once', async () => {
    const b = s.browser();
    const t = await tokens((await signIn(b, (await b.get(authorize({ scope: 'openid email' }))).headers.location!, 'one@example.com')).headers.location!);
    const body = await s.post('/userinfo', { access_token: t.access_token });
    assert.equal(body.status, 200);
    assert.equal(body.json().email, 'one@example.com');
    const both = await s.post('/userinfo', { access_token: t.access_token }, { authorization: `Bearer ${t.access_token}` });
    assert.equal(both.status, 400);
    const query = await s.request({ path: `/userinfo?access_token=${t.access_token}` });
    assert.equal(query.status, 401);
  });

  it('refuses a plain /authorize request from a client that requires PAR', async () => {
    const strict = await s.webClient();
    await s.clientSettings(strict.client_id, { requirePar: true });
    const r = await s.request({ path: authorize({ client_id: strict.client_id }) });
    assert.equal(r.status, 303);
    assert.equal(new URL(r.headers.location!).searchParams.get('error'), 'invalid_request');
    const pushed = await s.post(
      '/par',
      { response_type: 'code', client_id: strict.client_id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' },
      { authorization: basic(strict.client_id, strict.client_secret) },
    );
    assert.equal(pushed.status, 201);
  });

  it('runs the flow for a public client with DPoP (openid-client); its refresh token is bound to the DPoP key', async () => {
    clock.set(Date.now()); // openid-client signs its DPoP proofs with the real time
    const pub = await s.publicClient();
    const config = await client.discovery(new URL(s.issuer), pub.client_id, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const verifier = client.randomPKCECodeVerifier();
    const url = await client.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT,
        scope: 'openid offline_access',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { DPoP: dpop },
    );
    const b = s.browser();
    const cb = await signIn(b, (await b.get(url.pathname + url.search)).headers.location!, 'two@example.com');
    const t = await client.authorizationCodeGrant(config, new URL(cb.headers.location!), { pkceCodeVerifier: verifier }, undefined, { DPoP: dpop });
    assert.ok(t.refresh_token);
    const noProof = await s.post('/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token!, client_id: pub.client_id });
    assert.equal(noProof.status, 400);
    const refreshed = await client.refreshTokenGrant(config, t.refresh_token!, undefined, { DPoP: dpop });
    assert.ok(refreshed.access_token);
  });
});
