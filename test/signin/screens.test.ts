import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { request } from '../helpers/http.js';
import { v1 } from '../helpers/v1.js';
import { Browser, PASSWORD, REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from './helpers.js';

describe('hosted login, sessions, consent and logout', () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  let pub: string;
  let challenge: string;
  let user: { id: string; email: string };
  before(async () => {
    s = await startSigninServer({
      clock,
      config: {
        loginMaxFailuresPerAccount: 3,
        loginMaxFailuresPerIp: 8,
        loginFailureWindowSeconds: 600,
        sessionIdleSeconds: 3600,
        sessionMaxSeconds: 4 * 3600,
      },
    });
    pub = (await s.publicClient({ client_name: 'Public App' })).client_id;
    challenge = await S256(VERIFIER);
    user = await s.createUser('lin@example.com');
  });
  after(() => s.close());

  const authorizePath = (extra: Record<string, string> = {}) =>
    `/authorize?${new URLSearchParams({ client_id: pub, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid profile', state: 's1', code_challenge: challenge, code_challenge_method: 'S256', ...extra })}`;
  const sessionCookie = (b: Browser) => b.cookies.get('keyhall_session');

  it('sets a host-only HttpOnly SameSite=Lax session cookie (no __Host- on an http loopback issuer) with a new value at every login', async () => {
    const b = s.browser();
    const r = await signIn(b, '/login', user.email);
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/sessions');
    const set = b.setCookies.find((c) => c.startsWith('keyhall_session='))!;
    assert.match(set, /; HttpOnly/i);
    assert.match(set, /; SameSite=Lax/i);
    assert.match(set, /; Path=\//i);
    assert.doesNotMatch(set, /Domain=/i);
    assert.doesNotMatch(set, /Secure/i);
    const first = sessionCookie(b)!;
    await signIn(b, '/login', user.email);
    const second = sessionCookie(b)!;
    assert.notEqual(first, second);
    // The previous session ended with the new login.
    const replay = await request(s.port, { host: s.tenant.tenant.host, path: '/sessions', headers: { cookie: `keyhall_session=${first}` } });
    assert.equal(replay.status, 303);
    assert.match(replay.headers.location!, /^\/login/);
  });

  it('uses __Host- cookies with Secure on an https issuer', async () => {
    const t = await s.createTenant('secure.localhost', 'https://secure.localhost');
    const r = await request(s.port, { host: t.tenant.host, path: '/login' });
    assert.equal(r.status, 200);
    assert.match(r.headers['set-cookie']![0]!, /^__Host-keyhall_csrf=[^;]+; Max-Age|^__Host-keyhall_csrf=[^;]+;.*Secure/);
    assert.match(r.headers['set-cookie']![0]!, /; Secure/);
    assert.match(r.headers['set-cookie']![0]!, /; Path=\//);
  });

  it('refuses a form post without the CSRF token, with a foreign token, or from another origin (403)', async () => {
    const b = s.browser();
    const page = await b.get('/login');
    const missing = await b.post('/login', { email: user.email, password: PASSWORD });
    assert.equal(missing.status, 403);
    assert.match(missing.text, /data-error="csrf_failed"/);
    const other = s.browser();
    const otherPage = await other.get('/login');
    const foreignToken = /name="csrf_token" value="([^"]+)"/.exec(otherPage.text)![1]!;
    const foreign = await b.post('/login', { email: user.email, password: PASSWORD, csrf_token: foreignToken });
    assert.equal(foreign.status, 403);
    const evil = await b.post(
      '/login',
      { email: user.email, password: PASSWORD, csrf_token: /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]! },
      { origin: 'https://evil.example' },
    );
    assert.equal(evil.status, 403);
    for (const path of ['/logout', '/sessions/revoke', '/login/consent']) assert.equal((await b.post(path, { session_id: 'all' })).status, 403, path);
  });

  it('answers an unknown email and a wrong password the same way', async () => {
    const b = s.browser();
    const page = await b.get('/login');
    const unknown = await b.submit(page, { email: 'nobody@example.com', password: 'wrong password' });
    const wrong = await b.submit(page, { email: user.email, password: 'wrong password' });
    assert.equal(unknown.status, 401);
    assert.equal(wrong.status, 401);
    const strip = (t: string) => t.replace(/value="[^"]*@example\.com"/, '').replace(/nonce="[^"]+"/, '');
    assert.equal(strip(unknown.text), strip(wrong.text));
    assert.match(wrong.text, /The email or password is incorrect\./);
  });

  it('limits failed logins per account with 429 + Retry-After, and the limit lifts when the window ends', async () => {
    const victim = await s.createUser('victim@example.com');
    const b = s.browser();
    const page = await b.get('/login');
    for (let i = 0; i < 3; i++) assert.equal((await b.submit(page, { email: victim.email, password: 'guess' })).status, 401);
    const limited = await b.submit(page, { email: victim.email, password: PASSWORD });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0 && Number(limited.headers['retry-after']) <= 600);
    clock.advance(601_000);
    const ok = await b.submit(page, { email: victim.email, password: PASSWORD });
    assert.equal(ok.status, 303, 'no permanent lockout');
  });

  it('limits password spraying per IP', async () => {
    clock.advance(601_000);
    const b = s.browser();
    const page = await b.get('/login');
    for (let i = 0; i < 8; i++) assert.equal((await b.submit(page, { email: `spray${i}@example.com`, password: 'Winter2026!' })).status, 401);
    const limited = await b.submit(page, { email: 'spray-next@example.com', password: 'Winter2026!' });
    assert.equal(limited.status, 429);
    assert.ok(limited.headers['retry-after']);
    clock.advance(601_000);
  });

  it('follows only relative same-tenant return_to values', async () => {
    for (const [value, expected] of [
      ['/sessions', '/sessions'],
      ['//evil.example/x', '/sessions'],
      ['https://evil.example/', '/sessions'],
      ['/\\evil.example', '/sessions'],
      ['/login?x=1', '/login?x=1'],
    ] as const) {
      const b = s.browser();
      const page = await b.get(`/login?return_to=${encodeURIComponent(value)}`);
      const r = await b.submit(page, { email: user.email, password: PASSWORD });
      assert.equal(r.headers.location, expected, value);
    }
  });

  it('does not accept a session cookie of another tenant', async () => {
    const other = await s.createTenant(`localhost:${s.port}`);
    const a = s.browser();
    await signIn(a, '/login', user.email);
    const atA = await a.get('/sessions');
    assert.equal(atA.status, 200);
    const atB = await request(s.port, { host: other.tenant.host, path: '/sessions', headers: { cookie: `keyhall_session=${sessionCookie(a)}` } });
    assert.equal(atB.status, 303);
    assert.equal(atB.headers.location, '/login?return_to=%2Fsessions');
  });

  it('lists sessions and revokes one, all, or through DELETE /v1/users/{id}/sessions', async () => {
    const laptop = s.browser();
    const phone = s.browser();
    await signIn(laptop, '/login', user.email);
    await signIn(phone, '/login', user.email);
    const list = await laptop.get('/sessions');
    assert.equal(list.status, 200);
    const ids = [...list.text.matchAll(/data-session="(ses_[0-9a-z]+)"/g)].map((m) => m[1]!);
    assert.ok(ids.length >= 2);
    const phoneId = /data-session="(ses_[0-9a-z]+)"/.exec((await phone.get('/sessions')).text.split('(this device)')[0]!.split('<tr').pop()!)?.[1];
    assert.ok(phoneId);
    const revoke = await laptop.submit(list, { session_id: phoneId! });
    assert.equal(revoke.status, 303);
    assert.equal((await phone.get('/sessions')).status, 303, 'the revoked session is gone on the next request');
    assert.equal((await laptop.get('/sessions')).status, 200);

    const api = v1(s, s.tenant.platformApiKey);
    assert.equal((await api('DELETE', `/users/${user.id}/sessions`)).status, 204);
    assert.equal((await laptop.get('/sessions')).status, 303);
    const events = (await api('GET', '/events?limit=100&types=session.revoked')).json().data;
    assert.ok(events.length >= 2);
  });

  it('ends sessions after the idle and the absolute timeout', async () => {
    const b = s.browser();
    await signIn(b, '/login', user.email);
    clock.advance(3601_000);
    assert.equal((await b.get('/sessions')).status, 303, 'idle timeout');
    await signIn(b, '/login', user.email);
    for (let i = 0; i < 5; i++) {
      clock.advance(3000_000);
      await b.get('/sessions');
    }
    assert.equal((await b.get('/sessions')).status, 303, 'absolute timeout even when active');
  });

  it('asks a third-party client for consent once, remembers it, and asks again after revocation', async () => {
    const third = (await s.publicClient({ client_name: 'Third <Party>' })).client_id;
    await s.clientSettings(third, { thirdParty: true });
    const b = s.browser();
    const path = authorizePath({ client_id: third });
    const toConsent = await signIn(b, (await b.get(path)).headers.location!, user.email);
    assert.match(toConsent.headers.location!, /^\/login\/consent\?flow=/);
    const consent = await b.get(toConsent.headers.location!);
    assert.match(consent.text, /Third &lt;Party&gt; wants to access your account/);
    const allowed = await b.submit(consent, { decision: 'allow' });
    assert.ok(new URL(allowed.headers.location!).searchParams.get('code'));
    const again = await b.get(path);
    assert.ok(new URL(again.headers.location!).searchParams.get('code'), 'consent remembered');
    const sessions = await b.get('/sessions');
    const revokeForm = [...sessions.text.matchAll(/<form method="post" action="([^"]+)">/g)].findIndex((m) => m[1] === '/sessions/consents/revoke');
    await b.submit(sessions, {}, revokeForm);
    const asked = await b.get(path);
    assert.match(asked.headers.location!, /^\/login\/consent/);
    const denied = await b.submit(await b.get(asked.headers.location!), { decision: 'deny' });
    const url = new URL(denied.headers.location!);
    assert.equal(url.searchParams.get('error'), 'access_denied');
    assert.equal(url.searchParams.get('state'), 's1');
    assert.equal(url.searchParams.get('iss'), s.issuer);
    const silent = await b.get(authorizePath({ client_id: third, prompt: 'none' }));
    assert.equal(new URL(silent.headers.location!).searchParams.get('error'), 'consent_required');
  });

  it('shows the consent page to a first-party client only for prompt=consent', async () => {
    const b = s.browser();
    const first = await signIn(b, (await b.get(authorizePath())).headers.location!, user.email);
    assert.ok(new URL(first.headers.location!).searchParams.get('code'), 'first-party: no consent page');
    const asked = await b.get(authorizePath({ prompt: 'consent' }));
    assert.match(asked.headers.location!, /^\/login\/consent\?flow=/);
    const allowed = await b.submit(await b.get(asked.headers.location!), { decision: 'allow' });
    assert.ok(new URL(allowed.headers.location!).searchParams.get('code'));
  });

  it('signs out from the sessions page, and DELETE /v1/users/{id}/sessions is 404 for an unknown user', async () => {
    const b = s.browser();
    await signIn(b, '/login', user.email);
    const page = await b.get('/sessions');
    const forms = [...page.text.matchAll(/<form method="post" action="([^"]+)">/g)].map((m) => m[1]);
    const out = await b.submit(page, {}, forms.lastIndexOf('/logout'));
    assert.equal(out.status, 303);
    assert.equal(out.headers.location, '/login/signed-out');
    assert.equal((await b.get('/sessions')).status, 303);
    assert.equal((await b.get('/login/signed-out')).status, 200);
    const missing = await v1(s, s.tenant.platformApiKey)('DELETE', '/users/user_00000000000000000000000000/sessions');
    assert.equal(missing.status, 404);
  });

  it('brands the login page from the organization the flow names, escaping everything', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Acme' })).json();
    const patched = await api('PATCH', `/organizations/${org.id}`, {
      brand_display_name: 'Acme <script>alert(1)</script>',
      brand_primary_color: '#ff5500',
      brand_logo_url: 'https://cdn.acme.example/logo.png',
    });
    assert.equal(patched.status, 200, patched.text);
    const b = s.browser();
    const page = await b.get((await b.get(authorizePath({ organization: org.id, login_hint: 'hint"@example.com' }))).headers.location!);
    assert.match(page.text, /Acme &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(page.text, /<script>/);
    assert.match(page.text, /--brand: #ff5500/);
    assert.match(page.text, /<img src="https:\/\/cdn\.acme\.example\/logo\.png"/);
    assert.match(page.text, /value="hint&quot;@example\.com"/);
    assert.match(String(page.headers['content-security-policy']), /img-src https:\/\/cdn\.acme\.example/);
  });

  it('logs out through the end_session_endpoint with id_token_hint and a registered post_logout_redirect_uri', async () => {
    const web = await s.webClient();
    await s.clientSettings(web.client_id, { postLogoutRedirectUris: ['https://app.example/bye'] });
    const b = s.browser();
    const params = new URLSearchParams({ client_id: web.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' });
    const cb = await signIn(b, (await b.get(`/authorize?${params}`)).headers.location!, user.email);
    const code = new URL(cb.headers.location!).searchParams.get('code')!;
    const { basic } = await import('../oauth/helpers.js');
    const idToken = (
      await s.post('/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { authorization: basic(web.client_id, web.client_secret) })
    ).json().id_token;
    const before = sessionCookie(b)!;

    const unregistered = await b.get(`/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' })}`);
    assert.equal(unregistered.status, 400);
    assert.equal(unregistered.headers.location, undefined);
    const forged = await b.get(
      `/logout?${new URLSearchParams({ id_token_hint: `${idToken.slice(0, -4)}AAAA`, post_logout_redirect_uri: 'https://app.example/bye' })}`,
    );
    assert.equal(forged.status, 400);

    const confirm = await b.get(`/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://app.example/bye', state: 'st' })}`);
    assert.equal(confirm.status, 200);
    assert.equal(sessionCookie(b), before, 'GET changes nothing');
    const out = await b.submit(confirm);
    assert.equal(out.status, 303);
    assert.equal(out.headers.location, 'https://app.example/bye?state=st');
    const replay = await request(s.port, { host: s.tenant.tenant.host, path: '/sessions', headers: { cookie: `keyhall_session=${before}` } });
    assert.equal(replay.status, 303, 'a post-logout replay of the cookie is rejected');
    const events = (await v1(s, s.tenant.platformApiKey)('GET', '/events?limit=100&types=logout,login.succeeded,login.failed')).json().data;
    assert.ok(events.some((e: { type: string }) => e.type === 'logout'));
    assert.ok(events.some((e: { type: string }) => e.type === 'login.failed'));
  });
});
