import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from 'jose';
import { sha256Hex } from '../../src/kernel/crypto/hash.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { repos } from '../../src/storage/repos/index.js';
import { fail500, ok, type Receiver, startReceiver } from '../helpers/receiver.js';
import { expectError, v1 } from '../helpers/v1.js';
import { basic } from '../oauth/helpers.js';
import { type Browser, callbackParams, REDIRECT, type SigninTestServer, signIn, startSigninServer } from './helpers.js';

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * OpenID Connect Back-Channel Logout 1.0 (issue 32, points 2 and 5): every kind of session end
 * sends each client that received tokens in the session a signed Logout Token, through the
 * egress policy, retried on KEYHALL_LOGOUT_RETRY_SCHEDULE.
 */
describe('back-channel logout', () => {
  const clock = new ManualClock(Date.parse('2026-11-28T09:00:00Z'));
  let s: SigninTestServer;
  let receiver: Receiver;
  let rp: { client_id: string; client_secret: string };
  let quiet: { client_id: string; client_secret: string };
  let jwks: ReturnType<typeof createLocalJWKSet>;
  const api = () => v1(s, s.tenant.platformApiKey);

  before(async () => {
    // The receiver listens on 127.0.0.1: the operator allowlists it, as docs/webhooks.md says.
    s = await startSigninServer({ clock, config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000, webhookTimeoutMs: 2000 } });
    receiver = await startReceiver();
    rp = await s.webClient({ client_name: 'Relying Party', backchannel_logout_uri: `${receiver.url}/rp`, backchannel_logout_session_required: true });
    quiet = await s.webClient({ client_name: 'No back channel' });
    jwks = createLocalJWKSet((await s.request({ path: '/.well-known/jwks.json' })).json() as JSONWebKeySet);
  });
  after(async () => {
    await receiver.close();
    await s.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.respond = ok;
  });

  /** Signs in (if needed) and redeems a code for `client`; the token response. */
  async function tokens(b: Browser, email: string, client = rp, password?: string) {
    const scope = 'openid offline_access';
    const path = `/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope, state: 'x', nonce: 'n-1' })}`;
    let r = await b.get(path);
    if (/^\/login\?/.test(r.headers.location ?? '')) r = await signIn(b, r.headers.location!, email, password);
    const code = callbackParams(r).get('code')!;
    const t = await s.post(
      '/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      { authorization: basic(client.client_id, client.client_secret) },
    );
    assert.equal(t.status, 200, t.text);
    return t.json() as { id_token: string; refresh_token?: string; access_token: string };
  }

  const sidOf = (idToken: string) => decodeJwt(idToken).sid as string;

  /** Runs the dispatcher once and returns the logout tokens the receiver got, verified. */
  async function delivered(n: number) {
    await s.server.ctx.logoutDispatcher.tick();
    assert.equal(receiver.received.length, n, 'logout tokens received');
    return Promise.all(
      receiver.received.map(async (got) => {
        assert.equal(got.path, '/hook/rp');
        assert.match(String(got.headers['content-type']), /^application\/x-www-form-urlencoded/);
        const form = new URLSearchParams(got.body);
        assert.deepEqual([...form.keys()], ['logout_token']);
        const token = form.get('logout_token')!;
        const { payload, protectedHeader } = await jwtVerify(token, jwks, {
          issuer: s.issuer,
          audience: rp.client_id,
          typ: 'logout+jwt',
          currentDate: new Date(clock.now()),
          requiredClaims: ['iat', 'exp', 'jti', 'sid', 'sub', 'events'],
        });
        assert.equal(protectedHeader.alg, 'RS256');
        assert.deepEqual(payload.events, { [EVENT]: {} });
        assert.equal(payload.iat, Math.floor(clock.now() / 1000));
        assert.equal('nonce' in payload, false, 'a logout token never carries a nonce');
        return payload;
      }),
    );
  }

  async function reasons(userId: string): Promise<Record<string, string>> {
    const r = await api()('GET', '/events?limit=100&types=session.revoked');
    assert.equal(r.status, 200, r.text);
    const out: Record<string, string> = {};
    for (const e of r.json().data as { data: { user_id: string; session_id: string; reason: string } }[]) {
      if (e.data.user_id === userId) out[e.data.session_id] = e.data.reason;
    }
    return out;
  }

  it('is announced in discovery, and the client registration keeps its metadata', async () => {
    const m = (await s.request({ path: '/.well-known/openid-configuration' })).json();
    assert.equal(m.backchannel_logout_supported, true);
    assert.equal(m.backchannel_logout_session_supported, true);
    assert.ok(m.claims_supported.includes('sid'));
    const view = (await api()('GET', `/clients/${rp.client_id}`)).json();
    assert.equal(view.backchannel_logout_uri, `${receiver.url}/rp`);
    assert.equal(view.backchannel_logout_session_required, true);
    const other = (await api()('GET', `/clients/${quiet.client_id}`)).json();
    assert.equal(other.backchannel_logout_uri, null);
    assert.equal(other.backchannel_logout_session_required, false);
  });

  it('refuses a backchannel_logout_uri the egress policy forbids (400 invalid_client_metadata), at creation and change', async () => {
    for (const uri of ['http://10.0.0.7/logout', 'http://169.254.169.254/latest', 'https://[::1]/logout', 'ftp://rp.example/logout', 'not a url']) {
      const r = await api()('POST', '/clients', { redirect_uris: [REDIRECT], backchannel_logout_uri: uri });
      expectError(r, 400, 'invalid_client_metadata');
      assert.match(r.json().error_description, /^backchannel_logout_uri: /);
    }
    const r = await api()('PATCH', `/clients/${quiet.client_id}`, { backchannel_logout_uri: 'http://192.168.1.1/logout' });
    expectError(r, 400, 'invalid_client_metadata');
    assert.equal((await api()('GET', `/clients/${quiet.client_id}`)).json().backchannel_logout_uri, null, 'nothing was stored');
    // A wrong type is refused by the request schema, like every /v1 field.
    const wrongType = await api()('POST', '/clients', { redirect_uris: [REDIRECT], backchannel_logout_session_required: 'yes' });
    expectError(wrongType, 400, 'invalid_request');
  });

  it('ID tokens carry the session id (sid)', async () => {
    await s.createUser('sid@example.com');
    const t = await tokens(s.browser(), 'sid@example.com');
    assert.match(sidOf(t.id_token), /^ses_/);
  });

  it('RP-initiated logout: the RP gets a logout token naming the user and the session; a client without a back channel gets none', async () => {
    const user = await s.createUser('rpi@example.com');
    const b = s.browser();
    const t = await tokens(b, user.email);
    await tokens(b, user.email, quiet); // the same session, another client
    const page = await b.get(`/logout?${new URLSearchParams({ id_token_hint: t.id_token })}`);
    assert.equal(page.status, 200);
    assert.equal((await b.submit(page)).status, 303);
    const [payload] = await delivered(1);
    assert.equal(payload!.sub, user.id);
    assert.equal(payload!.sid, sidOf(t.id_token));
    assert.deepEqual(await reasons(user.id), { [sidOf(t.id_token)]: 'logout' });
    // Delivered once: a later pass sends nothing again.
    receiver.received.length = 0;
    clock.advance(3600_000);
    assert.equal(await s.server.ctx.logoutDispatcher.tick(), 0);
    assert.equal(receiver.received.length, 0);
  });

  it("the user's own sessions page: ending another session sends its logout token", async () => {
    const user = await s.createUser('own@example.com');
    const phone = s.browser();
    const laptop = s.browser();
    const t = await tokens(phone, user.email);
    await tokens(laptop, user.email);
    const page = await laptop.get('/sessions');
    const forms = [...page.text.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)];
    const end = forms.findIndex((m) => m[1] === '/sessions/revoke' && m[2]!.includes(sidOf(t.id_token)));
    assert.ok(end >= 0, 'the phone session has an end button');
    assert.equal((await laptop.submit(page, {}, end)).status, 303);
    const [payload] = await delivered(1);
    assert.equal(payload!.sid, sidOf(t.id_token));
    assert.deepEqual(await reasons(user.id), { [sidOf(t.id_token)]: 'user' });
  });

  it('an administrator: DELETE /v1/users/{id}/sessions/{sid} and DELETE /v1/users/{id}/sessions', async () => {
    const user = await s.createUser('admin-ended@example.com');
    const one = await tokens(s.browser(), user.email);
    const two = await tokens(s.browser(), user.email);
    const three = await tokens(s.browser(), user.email);
    const listed = (await api()('GET', `/users/${user.id}/sessions`)).json().data.map((x: { id: string }) => x.id);
    assert.deepEqual([...listed].sort(), [sidOf(one.id_token), sidOf(two.id_token), sidOf(three.id_token)].sort());
    assert.equal((await api()('DELETE', `/users/${user.id}/sessions/${sidOf(one.id_token)}`)).status, 204);
    assert.deepEqual(
      (await delivered(1)).map((p) => p.sid),
      [sidOf(one.id_token)],
    );
    receiver.received.length = 0;
    assert.equal((await api()('DELETE', `/users/${user.id}/sessions`)).status, 204);
    assert.deepEqual((await delivered(2)).map((p) => p.sid).sort(), [sidOf(two.id_token), sidOf(three.id_token)].sort());
    assert.deepEqual(await reasons(user.id), { [sidOf(one.id_token)]: 'admin', [sidOf(two.id_token)]: 'admin', [sidOf(three.id_token)]: 'admin' });
    expectError(await api()('DELETE', `/users/${user.id}/sessions/${sidOf(one.id_token)}`), 404, 'not_found');
  });

  it('a password change ends every session of the user', async () => {
    const user = await s.createUser('pw@example.com');
    const t = await tokens(s.browser(), user.email);
    const patched = await api()('PATCH', `/users/${user.id}`, { password: 'a new and long password' });
    assert.equal(patched.status, 200, patched.text);
    const [payload] = await delivered(1);
    assert.equal(payload!.sid, sidOf(t.id_token));
    assert.deepEqual(await reasons(user.id), { [sidOf(t.id_token)]: 'password_change' });
    // A name change is not a sign-in change: nothing ends.
    const again = await tokens(s.browser(), user.email, rp, 'a new and long password');
    receiver.received.length = 0;
    assert.equal((await api()('PATCH', `/users/${user.id}`, { name: 'Renamed' })).status, 200);
    await delivered(0);
    assert.equal((await api()('GET', `/users/${user.id}/sessions`)).json().data[0].id, sidOf(again.id_token));
  });

  it('deleting the user ends their sessions', async () => {
    const user = await s.createUser('gone@example.com');
    const t = await tokens(s.browser(), user.email);
    assert.equal((await api()('DELETE', `/users/${user.id}`)).status, 204);
    const [payload] = await delivered(1);
    assert.equal(payload!.sub, user.id);
    assert.equal(payload!.sid, sidOf(t.id_token));
    assert.deepEqual(await reasons(user.id), { [sidOf(t.id_token)]: 'user_deleted' });
  });

  it('a failing receiver is retried on the schedule (0, 10, 60, 300, 1800 s), then the delivery is failed', async () => {
    const user = await s.createUser('retry@example.com');
    const t = await tokens(s.browser(), user.email);
    receiver.respond = fail500;
    assert.equal((await api()('DELETE', `/users/${user.id}/sessions/${sidOf(t.id_token)}`)).status, 204);
    const start = clock.now();
    const offsets = [0, 10, 70, 370, 2170];
    for (const [i, offset] of offsets.entries()) {
      if (i > 0) {
        clock.set(start + offset * 1000 - 1);
        assert.equal(await s.server.ctx.logoutDispatcher.tick(), 0, `attempt ${i + 1} is not due yet`);
      }
      clock.set(start + offset * 1000);
      assert.equal(await s.server.ctx.logoutDispatcher.tick(), 1, `attempt ${i + 1} is due`);
      assert.equal(receiver.received.length, i + 1);
    }
    // Each attempt is a fresh token (its own jti) for the same session.
    const jtis = new Set(receiver.received.map((got) => decodeJwt(new URLSearchParams(got.body).get('logout_token')!).jti));
    assert.equal(jtis.size, 5);
    const rows = await repos(s.server.ctx.db.kysely, s.server.ctx.db.dialect).logoutDeliveries.listByClient(s.tenant.tenant.id, rp.client_id);
    const row = rows.find((d) => d.sessionId === sidOf(t.id_token))!;
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 5);
    assert.equal(row.lastStatusCode, 500);
    clock.advance(24 * 3600_000);
    assert.equal(await s.server.ctx.logoutDispatcher.tick(), 0, 'no sixth attempt');
  });

  it('a receiver that recovers gets the token on the next attempt', async () => {
    const user = await s.createUser('recover@example.com');
    const t = await tokens(s.browser(), user.email);
    receiver.respond = fail500;
    assert.equal((await api()('DELETE', `/users/${user.id}/sessions`)).status, 204);
    assert.equal(await s.server.ctx.logoutDispatcher.tick(), 1);
    receiver.respond = ok;
    receiver.received.length = 0;
    clock.advance(10_000);
    const [payload] = await delivered(1);
    assert.equal(payload!.sid, sidOf(t.id_token));
    const rows = await repos(s.server.ctx.db.kysely, s.server.ctx.db.dialect).logoutDeliveries.listByClient(s.tenant.tenant.id, rp.client_id);
    assert.equal(rows.find((d) => d.sessionId === sidOf(t.id_token))!.status, 'delivered');
  });

  it("an offline_access refresh token survives its session's end; the session's other refresh tokens are revoked", async () => {
    const user = await s.createUser('offline@example.com');
    const t = await tokens(s.browser(), user.email);
    const sid = sidOf(t.id_token);
    assert.ok(t.refresh_token, 'offline_access gives a refresh token');
    // A refresh-token family without offline_access, started in the same session (bound to it
    // the way the code grant starts its families: with the session's id).
    const ctx = s.server.ctx;
    const r = repos(ctx.db.kysely, ctx.db.dialect);
    const bound = 'rt_session_bound_token_for_the_test_0123456789';
    const familyId = 'rtf_session_bound';
    await r.refreshTokens.createFamily(
      {
        id: familyId,
        tenantId: s.tenant.tenant.id,
        clientId: rp.client_id,
        sub: user.id,
        scopes: ['openid'],
        resources: [],
        jkt: null,
        extra: null,
        generation: 0,
        createdAt: clock.now(),
        expiresAt: clock.now() + 3600_000,
        revokedAt: null,
        sessionId: sid,
      },
      sha256Hex(bound),
      clock.now() + 3600_000,
    );
    const refresh = (token: string) =>
      s.post('/token', { grant_type: 'refresh_token', refresh_token: token }, { authorization: basic(rp.client_id, rp.client_secret) });
    assert.equal((await refresh(bound)).status, 200, 'usable while the session lives');

    assert.equal((await api()('DELETE', `/users/${user.id}/sessions/${sid}`)).status, 204);
    await delivered(1);
    const kept = await refresh(t.refresh_token!);
    assert.equal(kept.status, 200, kept.text);
    const revoked = await refresh(bound);
    assert.equal(revoked.status, 400);
    assert.equal(revoked.json().error, 'invalid_grant');
  });

  it('a refused destination is never contacted: the attempt is recorded as refused', async () => {
    // A row whose address the policy forbids (say, stored before the allowlist was narrowed):
    // the egress check refuses it at delivery time and nothing is sent.
    const user = await s.createUser('refused@example.com');
    const t = await tokens(s.browser(), user.email);
    const ctx = s.server.ctx;
    await ctx.db.kysely
      .updateTable('signin_client_settings')
      .set({ backchannel_logout_uri: 'http://10.255.255.1:9/logout' })
      .where('client_id', '=', rp.client_id)
      .execute();
    try {
      assert.equal((await api()('DELETE', `/users/${user.id}/sessions`)).status, 204);
      assert.equal(await ctx.logoutDispatcher.tick(), 1);
      assert.equal(receiver.received.length, 0);
      const rows = await repos(ctx.db.kysely, ctx.db.dialect).logoutDeliveries.listByClient(s.tenant.tenant.id, rp.client_id);
      const row = rows.find((d) => d.sessionId === sidOf(t.id_token))!;
      assert.match(row.lastError ?? '', /^refused: /);
      assert.equal(row.lastStatusCode, null);
    } finally {
      await ctx.db.kysely
        .updateTable('signin_client_settings')
        .set({ backchannel_logout_uri: `${receiver.url}/rp` })
        .where('client_id', '=', rp.client_id)
        .execute();
    }
  });
});

describe('back-channel logout through Dynamic Client Registration (/register)', () => {
  let s: SigninTestServer;
  before(async () => {
    s = await startSigninServer({ config: { egressAllow: '127.0.0.1/32' } });
    assert.equal((await v1(s, s.tenant.platformApiKey)('PUT', '/mcp/settings', { client_registration: 'open' })).status, 200);
  });
  after(() => s.close());
  const register = (body: unknown) =>
    s.request({ method: 'POST', path: '/register', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('registers a backchannel_logout_uri the egress policy allows, and refuses one it forbids (invalid_client_metadata)', async () => {
    const okay = await register({ redirect_uris: ['http://127.0.0.1:4000/cb'], backchannel_logout_uri: 'http://127.0.0.1:4000/logout' });
    assert.equal(okay.status, 201, okay.text);
    assert.equal(okay.json().backchannel_logout_uri, 'http://127.0.0.1:4000/logout');
    assert.equal(okay.json().backchannel_logout_session_required, false);
    const stored = await s.server.ctx.oauth.ports.signin.clientSettings(s.tenant.tenant.id, okay.json().client_id);
    assert.equal(stored.backchannelLogoutUri, 'http://127.0.0.1:4000/logout');
    const refused = await register({ redirect_uris: ['http://127.0.0.1:4000/cb'], backchannel_logout_uri: 'http://169.254.169.254/latest/meta-data' });
    assert.equal(refused.status, 400);
    assert.equal(refused.json().error, 'invalid_client_metadata');
    const plain = await register({ redirect_uris: ['http://127.0.0.1:4000/cb'] });
    assert.equal(plain.status, 201);
    assert.equal('backchannel_logout_uri' in plain.json(), false);
  });
});
