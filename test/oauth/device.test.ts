/**
 * The device authorization grant (RFC 8628, docs/device-grant.md) over HTTP: oauth4webapi as
 * the device (its deviceAuthorizationRequest / deviceCodeGrantRequest), a cookie-keeping HTTP
 * browser approving at /activate, time moved by the injected clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { ManualClock } from '../../src/kernel/clock.js';
import { type Browser, decodeEntities, location, type SigninTestServer, signIn, startSigninServer } from '../signin/helpers.js';
import { basic, insecure } from './helpers.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const clockOf = (s: SigninTestServer) => s.server.ctx.clock;

/** What one poll of /token answers: the tokens, or the error code. */
async function poll(s: SigninTestServer, client: oauth.Client, deviceCode: string, auth = oauth.None()) {
  const response = await oauth.deviceCodeGrantRequest(s.as, client, auth, deviceCode, insecure);
  // The client's notion of now follows the server's injected clock (for the ID token's iat).
  client[oauth.clockSkew] = Math.round((clockOf(s).now() - Date.now()) / 1000);
  try {
    return { tokens: await oauth.processDeviceCodeResponse(s.as, client, response) };
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError) return { error: err.error, status: err.status };
    throw err;
  }
}

async function authorizeDevice(s: SigninTestServer, client: oauth.Client, params: Record<string, string> = { scope: 'openid email offline_access' }) {
  const r = await oauth.deviceAuthorizationRequest(s.as, client, oauth.None(), params, insecure);
  return oauth.processDeviceAuthorizationResponse(s.as, client, r);
}

/** /activate with the code, as a person would: the form (prefilled), the confirm click, sign-in if needed. */
async function enterCode(b: Browser, userCode: string) {
  const form = await b.get(`/activate?user_code=${encodeURIComponent(userCode)}`);
  assert.equal(form.status, 200);
  // The text field is prefilled; the person submits it as it stands.
  const prefilled = decodeEntities(/id="user_code"[^>]* value="([^"]*)"/.exec(form.text)![1]!);
  assert.equal(prefilled, userCode);
  return b.submit(form, { user_code: prefilled });
}

/** Enters the code, signs in, and decides on the approval page. */
async function decide(s: SigninTestServer, b: Browser, userCode: string, decision: 'allow' | 'deny', email: string) {
  let r = await enterCode(b, userCode);
  if (location(r).startsWith('/login')) r = await signIn(b, location(r), email);
  assert.match(location(r), /^\/activate\/confirm\?flow=flw_/);
  const page = await b.get(location(r));
  assert.equal(page.status, 200);
  assert.match(decodeEntities(page.text), /TV app on your device wants to access your account/);
  assert.match(page.text, /Your email address|email/i);
  const done = await b.submit(page, { decision });
  assert.equal(done.status, 200);
  assert.match(done.text, new RegExp(`data-approved="${decision === 'allow'}"`));
  return done;
}

describe('device authorization grant (RFC 8628)', () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  let device: oauth.Client;
  before(async () => {
    s = await startSigninServer({ clock });
    const c = await s.createClient({ token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], client_name: 'TV app' });
    device = { client_id: c.client_id, token_endpoint_auth_method: 'none' };
    await s.createUser('tv@example.com');
  });
  after(() => s.close());

  it('discovery lists the endpoint and the grant; the answer has the RFC members', async () => {
    const meta = (await s.request({ path: '/.well-known/openid-configuration' })).json();
    assert.equal(meta.device_authorization_endpoint, `${s.issuer}/device_authorization`);
    assert.ok(meta.grant_types_supported.includes(DEVICE_GRANT));
    const d = await authorizeDevice(s, device);
    assert.match(d.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(d.verification_uri, `${s.issuer}/activate`);
    assert.equal(d.verification_uri_complete, `${s.issuer}/activate?user_code=${d.user_code}`);
    assert.equal(d.expires_in, 600);
    assert.equal(d.interval, 5);
    assert.match(d.device_code, /^dc_/);
  });

  it('answers authorization_pending, slow_down (interval + 5 s), then the tokens once the person approves; the code is single-use', async () => {
    const d = await authorizeDevice(s, device);
    assert.equal((await poll(s, device, d.device_code)).error, 'authorization_pending');
    // Polled again at once: slow_down, and the interval is now 10 s.
    const fast = await poll(s, device, d.device_code);
    assert.deepEqual([fast.status, fast.error], [400, 'slow_down']);
    clock.advance(6_000);
    assert.equal((await poll(s, device, d.device_code)).error, 'slow_down', 'six seconds is still sooner than the raised interval');
    clock.advance(16_000);
    assert.equal((await poll(s, device, d.device_code)).error, 'authorization_pending');

    // Opening verification_uri_complete decides nothing.
    const b = s.browser();
    const form = await b.get(`/activate?user_code=${d.user_code}`);
    assert.match(form.text, new RegExp(`value="${d.user_code}"`));
    clock.advance(20_000);
    assert.equal((await poll(s, device, d.device_code)).error, 'authorization_pending');

    await decide(s, b, d.user_code, 'allow', 'tv@example.com');
    clock.advance(20_000);
    const { tokens } = await poll(s, device, d.device_code);
    assert.ok(tokens?.access_token && tokens.id_token && tokens.refresh_token, JSON.stringify(tokens));
    assert.equal(tokens.scope, 'openid email offline_access');
    const at = await s.verifyAt(tokens.access_token);
    assert.equal(at.client_id, device.client_id);
    const jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const { payload: id } = await jwtVerify(tokens.id_token, jwks, { issuer: s.issuer, audience: device.client_id, currentDate: new Date(clock.now()) });
    assert.equal(id.sub, at.sub);
    assert.equal(id.email, 'tv@example.com');

    // Used: /token refuses the device_code again, and /activate the user code.
    clock.advance(20_000);
    const again = await poll(s, device, d.device_code);
    assert.deepEqual([again.status, again.error], [400, 'invalid_grant']);
    const reused = await enterCode(s.browser(), d.user_code);
    assert.equal(reused.status, 400);
    assert.match(reused.text, /data-error="invalid_user_code"/);

    // The refresh token works like any other.
    const refreshed = await s.post('/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string, client_id: device.client_id });
    assert.equal(refreshed.status, 200, refreshed.text);
  });

  it('a denied request answers access_denied; the flow cannot be decided twice', async () => {
    const d = await authorizeDevice(s, device);
    assert.equal((await poll(s, device, d.device_code)).error, 'authorization_pending');
    const b = s.browser();
    let r = await enterCode(b, d.user_code);
    r = await signIn(b, location(r), 'tv@example.com');
    const page = await b.get(location(r));
    const denied = await b.submit(page, { decision: 'deny' });
    assert.match(denied.text, /data-approved="false"/);
    const replay = await b.submit(page, { decision: 'allow' });
    assert.equal(replay.status, 400);
    assert.match(replay.text, /data-error="invalid_request"/);
    clock.advance(6_000);
    const answer = await poll(s, device, d.device_code);
    assert.deepEqual([answer.status, answer.error], [400, 'access_denied']);
  });

  it('after expires_in: expired_token at /token, and /activate refuses the user code', async () => {
    const d = await authorizeDevice(s, device, { scope: 'openid' });
    assert.equal((await poll(s, device, d.device_code)).error, 'authorization_pending');
    clock.advance(600_000);
    const answer = await poll(s, device, d.device_code);
    assert.deepEqual([answer.status, answer.error], [400, 'expired_token']);
    const r = await enterCode(s.browser(), d.user_code);
    assert.equal(r.status, 400);
    assert.match(r.text, /data-error="invalid_user_code"/);
  });

  it('a user code is accepted in any case and without its hyphen; a signed-in browser goes straight to the approval page', async () => {
    const d = await authorizeDevice(s, device, { scope: 'openid' });
    const b = s.browser();
    await decide(s, b, d.user_code.toLowerCase().replace('-', ''), 'allow', 'tv@example.com');
    const e = await authorizeDevice(s, device, { scope: 'openid' });
    const r = await enterCode(b, e.user_code);
    assert.match(location(r), /^\/activate\/confirm\?flow=flw_/);
  });

  it('refuses what the client may not ask for, with the OAuth error of each', async () => {
    const codeOnly = await s.publicClient();
    const noGrant = await s.post('/device_authorization', { client_id: codeOnly.client_id, scope: 'openid' });
    assert.deepEqual([noGrant.status, noGrant.json().error], [400, 'unauthorized_client']);
    const unknown = await s.post('/device_authorization', { client_id: 'cli_nope' });
    assert.deepEqual([unknown.status, unknown.json().error], [401, 'invalid_client']);
    const scope = await s.post('/device_authorization', { client_id: device.client_id, scope: 'openid admin' });
    assert.deepEqual([scope.status, scope.json().error], [400, 'invalid_scope']);
    const resource = await s.post('/device_authorization', { client_id: device.client_id, resource: 'https://api.example/' });
    assert.deepEqual([resource.status, resource.json().error], [400, 'invalid_target']);
    const get = await s.request({ path: '/device_authorization' });
    assert.equal(get.status, 405);

    const missing = await s.post('/token', { grant_type: DEVICE_GRANT, client_id: device.client_id });
    assert.deepEqual([missing.status, missing.json().error], [400, 'invalid_request']);
    const bogus = await s.post('/token', { grant_type: DEVICE_GRANT, client_id: device.client_id, device_code: 'dc_nope' });
    assert.deepEqual([bogus.status, bogus.json().error], [400, 'invalid_grant']);
    const d = await authorizeDevice(s, device, { scope: 'openid' });
    const web = await s.webClient({ grant_types: [DEVICE_GRANT] });
    const other = await s.post('/token', { grant_type: DEVICE_GRANT, device_code: d.device_code }, { authorization: basic(web.client_id, web.client_secret) });
    assert.deepEqual([other.status, other.json().error], [400, 'invalid_grant'], "another client's device_code");
    const notRegistered = await s.post('/token', { grant_type: DEVICE_GRANT, client_id: codeOnly.client_id, device_code: d.device_code });
    assert.deepEqual([notRegistered.status, notRegistered.json().error], [400, 'unauthorized_client']);

    // A confidential client authenticates at /device_authorization as at /token.
    const wrongSecret = await s.post('/device_authorization', { scope: 'openid' }, { authorization: basic(web.client_id, 'wrong') });
    assert.deepEqual([wrongSecret.status, wrongSecret.json().error], [401, 'invalid_client']);
    const ok = await s.post('/device_authorization', { scope: 'openid' }, { authorization: basic(web.client_id, web.client_secret) });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers['cache-control'], 'no-store');
  });

  it('the clients API takes the grant type', async () => {
    const r = await s.request({
      method: 'POST',
      path: '/v1/clients',
      headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Console', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT] }),
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json().grant_types, [DEVICE_GRANT]);
  });

  it('the /activate form needs its CSRF token', async () => {
    const r = await s.browser().post('/activate', { user_code: 'BCDF-GHJK' });
    assert.equal(r.status, 403);
    assert.match(r.text, /data-error="csrf_failed"/);
  });
});

describe('device user codes: ten wrong ones from one address in ten minutes', () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  before(async () => {
    s = await startSigninServer({ clock, config: { deviceCodeTtlSeconds: 3600 } });
  });
  after(() => s.close());

  it('then 429 with Retry-After (even for a right code) until the window ends', async () => {
    const c = await s.createClient({ token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT], client_name: 'TV app' });
    const client = { client_id: c.client_id, token_endpoint_auth_method: 'none' } as const;
    const d = await authorizeDevice(s, client, { scope: 'openid' });
    const b = s.browser();
    for (let i = 0; i < 10; i++) {
      const wrong = await enterCode(b, 'BBBB-BBBB');
      assert.equal(wrong.status, 400, `attempt ${i + 1}`);
      assert.match(wrong.text, /data-error="invalid_user_code"/);
    }
    const limited = await enterCode(b, d.user_code);
    assert.equal(limited.status, 429);
    assert.match(limited.text, /data-error="rate_limited"/);
    const retry = Number(limited.headers['retry-after']);
    assert.ok(retry > 0 && retry <= 600, `Retry-After ${retry}`);
    clock.advance(retry * 1000);
    const r = await enterCode(b, d.user_code);
    assert.equal(r.status, 303);
    assert.match(location(r), /^\/login\?flow=flw_/);
  });
});

describe('device user codes: a per-client limit on undecided ones (SECURITY-CHECKLIST §21)', () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  before(async () => {
    s = await startSigninServer({ clock, config: { deviceCodeTtlSeconds: 600, deviceMaxUndecidedPerClient: 3 } });
  });
  after(() => s.close());

  const request = (clientId: string) => s.post('/device_authorization', { client_id: clientId, scope: 'openid' });

  it('refuses a client with 429 slow_down while it has that many waiting or expired unused, other clients unaffected', async () => {
    const c = await s.createClient({ token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT], client_name: 'TV app' });
    const other = await s.createClient({ token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT], client_name: 'Other TV app' });
    const codes = [];
    for (let i = 0; i < 3; i++) {
      const r = await request(c.client_id);
      assert.equal(r.status, 200, r.text);
      codes.push(r.json().user_code as string);
    }
    const refused = await request(c.client_id);
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json().error, 'slow_down');
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal((await request(other.client_id)).status, 200, 'the limit is per client');
    // Expired unused codes still count within the hour…
    clock.advance(601_000);
    assert.equal((await request(c.client_id)).status, 429);
    // …and a decided one does not: denying one frees a place.
    clock.advance(3_000_000);
    const fresh = await request(c.client_id);
    assert.equal(fresh.status, 200, 'an hour on, the old ones are out of the window');
    await s.createUser('dana@example.com');
    await decide(s, s.browser(), fresh.json().user_code, 'deny', 'dana@example.com');
    for (let i = 0; i < 3; i++) assert.equal((await request(c.client_id)).status, 200);
    const again = await request(c.client_id);
    assert.equal(again.status, 429);
    assert.equal(again.json().error, 'slow_down');
  });
});
