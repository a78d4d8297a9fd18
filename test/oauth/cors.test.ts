/**
 * Browser apps (issue 12, item 10): clients register `allowed_origins`; /token, /revoke and
 * /userinfo answer CORS (preflight included) for exactly those origins and send no CORS header
 * to any other; hosted screens, /introspect and /v1 never do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HttpResponse } from '../helpers/http.js';
import { expectError, v1 } from '../helpers/v1.js';
import { REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from '../signin/helpers.js';

const SPA = 'https://spa.example';
const OTHER_SPA = 'http://127.0.0.1:5173';
const EVIL = 'https://evil.example';

function assertNoCors(r: HttpResponse, what: string): void {
  for (const h of Object.keys(r.headers)) assert.ok(!h.startsWith('access-control-'), `${what}: unexpected ${h}`);
}

function assertCors(r: HttpResponse, origin: string): void {
  assert.equal(r.headers['access-control-allow-origin'], origin);
  assert.match(String(r.headers.vary), /\bOrigin\b/i);
  assert.equal(r.headers['access-control-allow-credentials'], undefined, 'never credentials');
}

describe('CORS for browser apps', () => {
  let s: SigninTestServer;
  let spa: { client_id: string };
  let other: { client_id: string };
  let user: { id: string; email: string };
  before(async () => {
    s = await startSigninServer();
    user = await s.createUser('spa@example.com');
    spa = await s.publicClient({ allowed_origins: [SPA] });
    other = await s.publicClient({ allowed_origins: [OTHER_SPA] });
  });
  after(() => s.close());

  async function code(clientId: string): Promise<string> {
    const params = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid offline_access',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
    });
    const b = s.browser();
    const cb = await signIn(b, (await b.get(`/authorize?${params}`)).headers.location!, user.email);
    return new URL(cb.headers.location!).searchParams.get('code')!;
  }
  const redeem = async (clientId: string, origin?: string) =>
    s.post(
      '/token',
      { grant_type: 'authorization_code', code: await code(clientId), redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: clientId },
      origin ? { origin } : {},
    );
  const options = (path: string, origin: string, method = 'POST') =>
    s.request({
      method: 'OPTIONS',
      path,
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, dpop, content-type' },
    });

  it('validates allowed_origins on create and PATCH, and returns it in the client resource', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    for (const bad of [
      'https://spa.example/',
      'https://spa.example/app',
      'https://spa.example?x=1',
      'https://*.example.com',
      '*',
      'http://spa.example',
      'HTTPS://SPA.EXAMPLE',
      'https://spa.example:443',
      'https://user@spa.example',
      'null',
      'spa.example',
      'file:///tmp',
    ]) {
      const r = await api('POST', '/clients', { token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT], allowed_origins: [bad] });
      expectError(r, 400, 'invalid_request'); // a shape error, like a bad redirect_uri
      assert.match(r.json().error_description, /^allowed_origins\[0\]: /, bad);
    }
    const created = await api('POST', '/clients', {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT],
      allowed_origins: ['https://app.example:8443', 'http://localhost:3000', 'http://[::1]:8080'],
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json().allowed_origins, ['https://app.example:8443', 'http://localhost:3000', 'http://[::1]:8080']);
    const id = created.json().client_id;
    expectError(await api('PATCH', `/clients/${id}`, { allowed_origins: ['https://app.example/x'] }), 400, 'invalid_request');
    const patched = await api('PATCH', `/clients/${id}`, { allowed_origins: ['https://app.example'] });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual((await api('GET', `/clients/${id}`)).json().allowed_origins, ['https://app.example']);
    const plain = await api('POST', '/clients', { token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT] });
    assert.deepEqual(plain.json().allowed_origins, [], 'none by default');
  });

  it('answers a preflight from a registered origin, and not from any other', async () => {
    for (const [path, methods] of [
      ['/token', 'POST'],
      ['/revoke', 'POST'],
      ['/userinfo', 'GET, POST'],
    ] as const) {
      const ok = await options(path, SPA);
      assert.equal(ok.status, 204, `${path}: ${ok.text}`);
      assertCors(ok, SPA);
      assert.equal(ok.headers['access-control-allow-methods'], methods);
      const allowed = String(ok.headers['access-control-allow-headers']).toLowerCase();
      for (const h of ['authorization', 'dpop', 'content-type']) assert.ok(allowed.includes(h), `${path} allows ${h}`);
      assert.ok(Number(ok.headers['access-control-max-age']) > 0);

      // Any client's origin passes a preflight (it carries no client_id).
      assertCors(await options(path, OTHER_SPA), OTHER_SPA);

      const evil = await options(path, EVIL);
      assert.equal(evil.status, 204);
      assertNoCors(evil, `${path} preflight from an unregistered origin`);
      assert.match(String(evil.headers.vary), /\bOrigin\b/i);
      assert.match(String(evil.headers.allow), /OPTIONS/);
    }
  });

  it('a code + PKCE exchange from the client origin carries CORS headers; from another origin it is refused', async () => {
    const r = await redeem(spa.client_id, SPA);
    assert.equal(r.status, 200, r.text);
    assertCors(r, SPA);
    assert.match(String(r.headers['access-control-expose-headers']), /DPoP-Nonce/i);
    assert.match(String(r.headers['access-control-expose-headers']), /WWW-Authenticate/i);
    assert.ok(r.json().access_token);

    // Registered on another client of the tenant: refused before the code is spent.
    const c = await code(spa.client_id);
    const wrong = await s.post(
      '/token',
      { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: spa.client_id },
      { origin: OTHER_SPA },
    );
    expectError(wrong, 400, 'invalid_request');
    assertNoCors(wrong, 'token from another client’s origin');
    const evil = await s.post(
      '/token',
      { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: spa.client_id },
      { origin: EVIL },
    );
    expectError(evil, 400, 'invalid_request');
    assertNoCors(evil, 'token from an unregistered origin');
    // The code was not consumed by the refused attempts.
    const good = await s.post(
      '/token',
      { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: spa.client_id },
      { origin: SPA },
    );
    assert.equal(good.status, 200, good.text);

    // A server-side caller sends no Origin: no CORS headers, nothing refused.
    const server = await redeem(spa.client_id);
    assert.equal(server.status, 200, server.text);
    assertNoCors(server, 'no Origin');

    // Errors are readable by the page too.
    const bad = await s.post(
      '/token',
      { grant_type: 'authorization_code', code: 'nope', redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: spa.client_id },
      { origin: SPA },
    );
    expectError(bad, 400, 'invalid_grant');
    assertCors(bad, SPA);
  });

  it('refresh, /revoke and /userinfo answer the registered origin', async () => {
    const tokens = (await redeem(spa.client_id, SPA)).json();
    const refreshed = await s.post('/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: spa.client_id }, { origin: SPA });
    assert.equal(refreshed.status, 200, refreshed.text);
    assertCors(refreshed, SPA);

    const info = await s.request({ path: '/userinfo', headers: { origin: SPA, authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(info.status, 200, info.text);
    assertCors(info, SPA);
    assert.equal(info.json().sub, user.id);
    const denied = await s.request({ path: '/userinfo', headers: { origin: SPA } });
    assert.equal(denied.status, 401);
    assertCors(denied, SPA);
    assert.match(String(denied.headers['access-control-expose-headers']), /WWW-Authenticate/i);
    assertNoCors(
      await s.request({ path: '/userinfo', headers: { origin: EVIL, authorization: `Bearer ${tokens.access_token}` } }),
      'userinfo from an unregistered origin',
    );

    const wrong = await s.post('/revoke', { token: refreshed.json().refresh_token, client_id: spa.client_id }, { origin: EVIL });
    expectError(wrong, 400, 'invalid_request');
    assertNoCors(wrong, 'revoke from an unregistered origin');
    const revoked = await s.post('/revoke', { token: refreshed.json().refresh_token, client_id: spa.client_id }, { origin: SPA });
    assert.equal(revoked.status, 200, revoked.text);
    assertCors(revoked, SPA);
    const after = await s.post(
      '/token',
      { grant_type: 'refresh_token', refresh_token: refreshed.json().refresh_token, client_id: spa.client_id },
      { origin: SPA },
    );
    expectError(after, 400, 'invalid_grant');
  });

  it('hosted screens, /introspect, /authorize and /v1 never send CORS headers', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    assertNoCors(await api('GET', '/clients', undefined, { origin: SPA }), '/v1');
    const v1Options = await s.request({ method: 'OPTIONS', path: '/v1/clients', headers: { origin: SPA, 'access-control-request-method': 'GET' } });
    assert.equal(v1Options.status, 405);
    assert.equal(v1Options.json().error, 'method_not_allowed');
    assertNoCors(v1Options, 'OPTIONS /v1');
    assertNoCors(await s.request({ path: '/login', headers: { origin: SPA } }), '/login');
    assertNoCors(await s.request({ path: '/sessions', headers: { origin: SPA } }), '/sessions');
    assertNoCors(await s.request({ path: `/authorize?client_id=${spa.client_id}`, headers: { origin: SPA } }), '/authorize');
    assertNoCors(await s.post('/introspect', { token: 'x' }, { origin: SPA }), '/introspect');
    const introspectOptions = await s.request({ method: 'OPTIONS', path: '/introspect', headers: { origin: SPA, 'access-control-request-method': 'POST' } });
    assert.equal(introspectOptions.status, 405);
    assertNoCors(introspectOptions, 'OPTIONS /introspect');
    // Wrong methods still answer 405 with Allow, and Allow names OPTIONS where it is served.
    const get = await s.request({ path: '/token' });
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST, OPTIONS');
  });

  it('public documents answer any origin', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json']) {
      const r = await s.request({ path, headers: { origin: EVIL } });
      assert.equal(r.status, 200);
      assert.equal(r.headers['access-control-allow-origin'], '*');
    }
  });

  it('a changed allowed_origins applies at once on this instance', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const late = 'https://late.example';
    assertNoCors(await options('/token', late), 'before');
    const c = await api('POST', '/clients', { token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT], allowed_origins: [late] });
    assert.equal(c.status, 201);
    assertCors(await options('/token', late), late);
    assert.equal((await api('PATCH', `/clients/${c.json().client_id}`, { allowed_origins: [] })).status, 200);
    assertNoCors(await options('/token', late), 'after removal');
    assert.equal((await api('PATCH', `/clients/${c.json().client_id}`, { allowed_origins: [late] })).status, 200);
    assertCors(await options('/token', late), late);
    assert.equal((await api('DELETE', `/clients/${c.json().client_id}`)).status, 204);
    assertNoCors(await options('/token', late), 'after deletion');
  });

  it('does not serve CORS to an origin registered in another tenant', async () => {
    const t2 = await s.createTenant('tenant2.localhost:1');
    await s.server.ctx.management.clients.create(t2.tenant.id, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT],
      allowed_origins: ['https://t2.example'],
    });
    assertNoCors(await options('/token', 'https://t2.example'), 'origin of another tenant');
    const there = await s.request({
      method: 'OPTIONS',
      path: '/token',
      host: 'tenant2.localhost:1',
      headers: { origin: 'https://t2.example', 'access-control-request-method': 'POST' },
    });
    assertCors(there, 'https://t2.example');
    assert.ok(other.client_id);
  });
});
