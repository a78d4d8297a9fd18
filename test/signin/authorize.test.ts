import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HttpResponse } from '../helpers/http.js';
import { REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from './helpers.js';

/** An error page: 400 HTML, no Location, the error code in the page. */
function assertErrorPage(r: HttpResponse, error: string) {
  assert.equal(r.status, 400, r.text.slice(0, 200));
  assert.equal(r.headers.location, undefined);
  assert.match(String(r.headers['content-type']), /^text\/html/);
  assert.match(r.text, new RegExp(`data-error="${error}"`));
}

/** A redirect to the client carrying error, state and iss (RFC 9207). */
function assertErrorRedirect(r: HttpResponse, s: SigninTestServer, error: string, state: string | null = 'xyz') {
  assert.equal(r.status, 303, r.text.slice(0, 200));
  const url = new URL(r.headers.location!);
  assert.equal(url.origin + url.pathname, REDIRECT);
  assert.equal(url.searchParams.get('error'), error);
  assert.equal(url.searchParams.get('state'), state);
  assert.equal(url.searchParams.get('iss'), s.issuer);
}

describe('/authorize', () => {
  let s: SigninTestServer;
  let pub: string;
  let challenge: string;
  before(async () => {
    s = await startSigninServer();
    pub = (await s.publicClient()).client_id;
    challenge = await S256(VERIFIER);
    await s.createUser('grace@example.com');
  });
  after(() => s.close());

  const q = (params: Record<string, string | string[]>) => {
    const u = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) for (const x of Array.isArray(v) ? v : [v]) u.append(k, x);
    return `/authorize?${u}`;
  };
  const good = () => ({
    client_id: pub,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid',
    state: 'xyz',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });

  it('shows an error page, never a redirect, for every redirect_uri variant', async () => {
    const variants = [
      'https://app.example/cb/../x',
      'https://app.example/cb/extra',
      'https://evil.app.example/cb',
      'https://app.example.evil.com/cb',
      'http://app.example/cb',
      'https://app.example/cb?added=1',
      'https://user@app.example/cb',
      'https://app.example/cb#fragment',
      'https://APP.example/cb',
      'https://app.example/cb/',
    ];
    for (const redirect_uri of variants) assertErrorPage(await s.request({ path: q({ ...good(), redirect_uri }) }), 'invalid_request');
    const { redirect_uri: _r, ...noRedirect } = good();
    assertErrorPage(await s.request({ path: q(noRedirect) }), 'invalid_request');
    assertErrorPage(await s.request({ path: q({ ...good(), redirect_uri: [REDIRECT, REDIRECT] }) }), 'invalid_request');
  });

  it('shows an error page for a missing, unknown or repeated client_id', async () => {
    const { client_id: _c, ...noClient } = good();
    assertErrorPage(await s.request({ path: q(noClient) }), 'invalid_client');
    assertErrorPage(await s.request({ path: q({ ...good(), client_id: 'cli_unknown' }) }), 'invalid_client');
    assertErrorPage(await s.request({ path: q({ ...good(), client_id: [pub, pub] }) }), 'invalid_request');
  });

  it('refuses a public client without PKCE, with plain, or with a short challenge', async () => {
    const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = good();
    assertErrorRedirect(await s.request({ path: q(noPkce) }), s, 'invalid_request');
    assertErrorRedirect(await s.request({ path: q({ ...good(), code_challenge_method: 'plain' }) }), s, 'invalid_request');
    assertErrorRedirect(await s.request({ path: q({ ...good(), code_challenge: challenge.slice(0, 42) }) }), s, 'invalid_request');
    const { code_challenge_method: _m2, ...noMethod } = good();
    assertErrorRedirect(await s.request({ path: q(noMethod) }), s, 'invalid_request');
  });

  it('answers response_type, scope, duplicate and prompt errors at the redirect_uri', async () => {
    assertErrorRedirect(await s.request({ path: q({ ...good(), response_type: 'token' }) }), s, 'unsupported_response_type');
    assertErrorRedirect(await s.request({ path: q({ ...good(), response_type: 'id_token token' }) }), s, 'unsupported_response_type');
    const { response_type: _rt, ...noType } = good();
    assertErrorRedirect(await s.request({ path: q(noType) }), s, 'invalid_request');
    assertErrorRedirect(await s.request({ path: q({ ...good(), scope: 'openid admin' }) }), s, 'invalid_scope');
    assertErrorRedirect(await s.request({ path: q({ ...good(), scope: ['openid', 'email'] }) }), s, 'invalid_request');
    assertErrorRedirect(await s.request({ path: q({ ...good(), prompt: 'none' }) }), s, 'login_required');
    assertErrorRedirect(await s.request({ path: q({ ...good(), prompt: 'none login' }) }), s, 'invalid_request');
    assertErrorRedirect(await s.request({ path: q({ ...good(), max_age: '-1' }) }), s, 'invalid_request');
    assertErrorRedirect(await s.request({ path: q({ ...good(), resource: 'https://elsewhere.example/' }) }), s, 'invalid_target');
    assertErrorRedirect(await s.request({ path: q({ ...good(), request: 'eyJhbGciOiJub25lIn0.e30.' }) }), s, 'request_not_supported');
  });

  it('never fetches a foreign request_uri', async () => {
    assertErrorPage(await s.request({ path: q({ client_id: pub, request_uri: 'https://attacker.example/req' }) }), 'invalid_request_uri');
    assertErrorPage(await s.request({ path: q({ client_id: pub, request_uri: 'urn:ietf:params:oauth:request_uri:nope' }) }), 'invalid_request_uri');
  });

  it('sends the user to the login page, echoes state byte-exact and ignores unknown parameters (GET and POST)', async () => {
    const state = 'a b+c/ü&=%20';
    for (const method of ['GET', 'POST']) {
      const b = s.browser();
      const params = { ...good(), state, unknown_param: 'ignored' };
      const start = method === 'GET' ? await b.get(q(params)) : await b.post('/authorize', params);
      assert.equal(start.status, 303);
      const cb = await signIn(b, start.headers.location!, 'grace@example.com');
      assert.equal(cb.status, 303);
      const url = new URL(cb.headers.location!);
      assert.equal(url.searchParams.get('state'), state);
      assert.equal(url.searchParams.get('iss'), s.issuer);
      assert.match(url.searchParams.get('code')!, /^ac_[\w-]{43}$/);
    }
  });

  it('sends no CORS headers, forbids framing, and answers a form POST with 303', async () => {
    const r = await s.request({ path: q(good()), headers: { origin: 'https://evil.example' } });
    assert.equal(r.headers['access-control-allow-origin'], undefined);
    const pre = await s.request({
      method: 'OPTIONS',
      path: '/authorize',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    const b = s.browser();
    const login = await b.get((await b.get(q(good()))).headers.location!);
    assert.match(String(login.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.match(String(login.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(login.headers['x-frame-options'], 'DENY');
    assert.equal(login.headers['access-control-allow-origin'], undefined);
  });

  it("lets the login form's redirect reach the client: its origin, or a native app's scheme, is in form-action", async () => {
    const native = (await s.publicClient({ redirect_uris: ['com.example.app:/cb'] })).client_id;
    const b = s.browser();
    const web = await b.get((await b.get(q(good()))).headers.location!);
    assert.match(String(web.headers['content-security-policy']), /form-action 'self' https:\/\/app\.example;/);
    const app = await b.get((await b.get(q({ ...good(), client_id: native, redirect_uri: 'com.example.app:/cb' }))).headers.location!);
    assert.match(String(app.headers['content-security-policy']), /form-action 'self' com\.example\.app:;/);
    const cb = await b.submit(app, { email: 'grace@example.com', password: 'correct horse battery staple' });
    assert.match(cb.headers.location!, /^com\.example\.app:\/cb\?code=ac_/);
  });

  it('signs in again for prompt=login and max_age=0, and not for prompt=none with a session', async () => {
    const b = s.browser();
    const first = await signIn(b, (await b.get(q(good()))).headers.location!, 'grace@example.com');
    assert.equal(first.status, 303);
    const silent = await b.get(q({ ...good(), prompt: 'none' }));
    assert.equal(silent.status, 303);
    assert.ok(new URL(silent.headers.location!).searchParams.get('code'));
    for (const extra of [{ prompt: 'login' }, { max_age: '0' }] as Record<string, string>[]) {
      const again = await b.get(q({ ...good(), ...extra }));
      assert.match(again.headers.location!, /^\/login\?flow=/);
    }
    const plain = await b.get(q(good()));
    assert.ok(new URL(plain.headers.location!).searchParams.get('code'), 'an existing session is reused without prompt');
  });
});
