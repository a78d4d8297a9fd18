import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { request } from '../helpers/http.js';
import { basic } from '../oauth/helpers.js';
import { Browser, PASSWORD, REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from './helpers.js';

describe('sign-in: discovery, tenant isolation, limits and timing', () => {
  let s: SigninTestServer;
  let hostB: string;
  before(async () => {
    s = await startSigninServer({ config: { loginMaxFailuresPerAccount: 1000, loginMaxFailuresPerIp: 1000 } });
    hostB = (await s.createTenant(`localhost:${s.port}`)).tenant.host;
    await s.createUser('iso@example.com');
  });
  after(() => s.close());

  it('advertises the sign-in members in discovery, all on the tenant host', async () => {
    const m = (await s.request({ path: '/.well-known/openid-configuration' })).json();
    assert.equal(m.authorization_endpoint, `${s.issuer}/authorize`);
    assert.equal(m.pushed_authorization_request_endpoint, `${s.issuer}/par`);
    assert.equal(m.userinfo_endpoint, `${s.issuer}/userinfo`);
    assert.equal(m.end_session_endpoint, `${s.issuer}/logout`);
    assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(m.response_types_supported, ['code']);
    assert.equal(m.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(m.id_token_signing_alg_values_supported, ['RS256', 'EdDSA']);
    assert.ok(m.grant_types_supported.includes('authorization_code'));
    for (const s2 of ['openid', 'profile', 'email', 'offline_access']) assert.ok(m.scopes_supported.includes(s2));
    for (const c of ['sub', 'email', 'email_verified', 'name']) assert.ok(m.claims_supported.includes(c));
    const b = (await request(s.port, { host: hostB, path: '/.well-known/openid-configuration' })).json();
    assert.equal(b.authorization_endpoint, `http://${hostB}/authorize`);
  });

  it("refuses tenant A's code, request_uri and flow at tenant B", async () => {
    const a = await s.webClient();
    const challenge = await S256(VERIFIER);
    const pushed = (
      await s.post(
        '/par',
        { response_type: 'code', client_id: a.client_id, redirect_uri: REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' },
        { authorization: basic(a.client_id, a.client_secret) },
      )
    ).json();
    const br = s.browser();
    const toLogin = (await br.get(`/authorize?client_id=${a.client_id}&request_uri=${encodeURIComponent(pushed.request_uri)}`)).headers.location!;
    // B does not know A's flow, client or request_uri.
    const flowAtB = await request(s.port, { host: hostB, path: toLogin });
    assert.equal(flowAtB.status, 400);
    assert.match(flowAtB.text, /data-error="invalid_request"/);
    const uriAtB = await request(s.port, { host: hostB, path: `/authorize?client_id=${a.client_id}&request_uri=${encodeURIComponent(pushed.request_uri)}` });
    assert.equal(uriAtB.status, 400);
    assert.equal(uriAtB.headers.location, undefined);
    const cb = await signIn(br, toLogin, 'iso@example.com');
    const code = new URL(cb.headers.location!).searchParams.get('code')!;
    const clientB = await s.server.ctx.management.clients.create((await s.server.ctx.tenantRepo.findByHost(hostB))!.id, {
      grant_types: ['authorization_code'],
      redirect_uris: [REDIRECT],
    });
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER }).toString();
    const atB = await request(s.port, {
      host: hostB,
      method: 'POST',
      path: '/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientB.client_id, clientB.client_secret!) },
      body: form,
    });
    assert.equal(atB.status, 400);
    assert.equal(atB.json().error, 'invalid_grant');
    const aAtB = await request(s.port, {
      host: hostB,
      method: 'POST',
      path: '/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(a.client_id, a.client_secret) },
      body: form,
    });
    assert.equal(aAtB.status, 401);
    assert.equal(aAtB.json().error, 'invalid_client');
    // The code is still good at A.
    assert.equal((await s.post('/token', Object.fromEntries(new URLSearchParams(form)), { authorization: basic(a.client_id, a.client_secret) })).status, 200);
  });

  it('answers a huge PAR body with 413', async () => {
    const a = await s.webClient();
    const r = await s.post(
      '/par',
      { response_type: 'code', client_id: a.client_id, redirect_uri: REDIRECT, state: 'x'.repeat(1024 * 1024 + 10) },
      { authorization: basic(a.client_id, a.client_secret) },
    );
    assert.equal(r.status, 413);
  });

  it('takes about as long for an unknown email as for a wrong password', async (t) => {
    const b = new Browser(s.port, s.tenant.tenant.host);
    const page = await b.get('/login');
    const time = async (email: string) => {
      const t0 = performance.now();
      const r = await b.submit(page, { email, password: `${PASSWORD}!` });
      assert.equal(r.status, 401);
      return performance.now() - t0;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    // Interleaved, alternating which goes first, so drift and warm-up hit both alike.
    for (let i = 0; i < 30; i++) {
      if (i % 2 === 0) {
        known.push(await time('iso@example.com'));
        unknown.push(await time(`nobody${i}@example.com`));
      } else {
        unknown.push(await time(`nobody${i}@example.com`));
        known.push(await time('iso@example.com'));
      }
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const [mk, mu] = [median(known), median(unknown)];
    t.diagnostic(`median login time: known email ${mk.toFixed(1)} ms, unknown email ${mu.toFixed(1)} ms`);
    // Without the dummy verification an unknown email answers in a small fraction of the time;
    // the bound is loose enough for a loaded CI machine.
    assert.ok(Math.abs(mk - mu) < Math.max(15, 0.5 * Math.max(mk, mu)), `medians differ too much: known ${mk.toFixed(1)} ms, unknown ${mu.toFixed(1)} ms`);
  });
});
