import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { generate } from 'otplib';
import { ManualClock } from '../../src/kernel/clock.js';
import type { HttpResponse } from '../helpers/http.js';
import { type Browser, decodeEntities, PASSWORD, REDIRECT, signIn, VERIFIER } from '../signin/helpers.js';
import { authorizeAtSp, oidcConnection, type SsoTestServer, signInUpstream, startSsoServer, upstreamUser } from './helpers.js';

/**
 * Issue 26, "Linking an account explicitly" (docs/sso.md): SSO never links a tenant administrator
 * by email; the administrator signs in with their own method and links the upstream identity from
 * /sessions (a CSRF-checked POST with a fresh login), after which SSO signs them in, still owing
 * their own second factor.
 */
describe('SSO: linking an account explicitly from /sessions', () => {
  // Mid-step, so every TOTP code is unambiguous; advanced a step before each code is reused.
  const clock = new ManualClock(Math.floor(Date.now() / 30_000) * 30_000 + 10_000);
  const dns = new Map<string, string[]>();
  let s: SsoTestServer;
  let app: { client_id: string };
  let org: string;
  let conn: { id: string };
  let adminId: string;
  let adminSecret: string;
  let admin: Browser;

  before(async () => {
    s = await startSsoServer({}, { txtResolver: async (name) => dns.get(name) ?? [], clock });
    app = await s.publicClient();
  });
  after(() => s.close());

  const code = (secret: string) => generate({ secret, epoch: Math.floor(clock.now() / 1000) });
  const events = async (type: string) =>
    (await s.api('GET', `/events?types=${type}&limit=100`)).json().data as Array<{
      organization_id: string | null;
      actor: { type: string; id: string };
      data: Record<string, unknown>;
    }>;
  const failures = async () => (await events('sso.login.failed')).map((e) => e.data.reason);
  const identities = (userId: string) =>
    s.server.ctx.db.kysely.selectFrom('sso_identities').select(['connection_id', 'subject']).where('user_id', '=', userId).execute();
  const csrfOf = (page: HttpResponse) => decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!);

  /** Passes the TOTP challenge a sign-in was sent to; returns the answer to the challenge POST. */
  async function challenge(b: Browser, location: string, secret: string): Promise<HttpResponse> {
    const page = await b.get(location);
    assert.equal(page.status, 200, page.text.slice(0, 300));
    const flow = /name="flow" value="([^"]+)"/.exec(page.text)?.[1];
    const returnTo = /name="return_to" value="([^"]+)"/.exec(page.text)?.[1];
    const r = await b.post('/mfa/challenge', {
      csrf_token: csrfOf(page),
      ...(flow ? { flow } : {}),
      ...(returnTo ? { return_to: decodeEntities(returnTo) } : {}),
      code: await code(secret),
    });
    clock.advance(30_000);
    return r;
  }

  /** Password sign-in on /login coming back to /sessions, with the TOTP challenge when `secret`. */
  async function passwordSignIn(b: Browser, email: string, secret?: string): Promise<void> {
    const r = await signIn(b, '/login?return_to=%2Fsessions', email);
    assert.equal(r.status, 303, r.text.slice(0, 300));
    if (!secret) return assert.equal(r.headers.location, '/sessions');
    assert.match(r.headers.location!, /^\/mfa\/challenge/);
    const done = await challenge(b, r.headers.location!, secret);
    assert.equal(done.status, 303, done.text.slice(0, 300));
  }

  /** The /sessions page's Link form for the connection, submitted: the answer (a 303 to the IdP when all is well). */
  async function clickLink(b: Browser, connectionId: string): Promise<HttpResponse> {
    const page = await b.get('/sessions');
    assert.equal(page.status, 200);
    assert.match(page.text, new RegExp(`action="/sso/${connectionId}/link"`), 'the page offers the connection');
    return b.post(`/sso/${connectionId}/link`, { csrf_token: csrfOf(page) });
  }

  /** An SSO sign-in through /authorize at the SP: the answer to the callback. */
  async function ssoSignIn(b: Browser, upstreamEmail: string): Promise<HttpResponse> {
    const login = await authorizeAtSp(s, b, app.client_id);
    const flow = new URL(login, s.issuer).searchParams.get('flow')!;
    const callback = await signInUpstream(s, await b.get(`/sso/${conn.id}/start?flow=${encodeURIComponent(flow)}`), upstreamEmail);
    return b.get(callback.pathname + callback.search);
  }

  it('setup: an organization that proved bank.test by DNS, its OIDC connection, and a tenant administrator with TOTP whose SSO sign-in is refused', async () => {
    adminId = (await s.server.ctx.admins.grant(s.tenant.tenant.id, 'root@bank.test', PASSWORD)).user.id;
    const b = s.browser();
    await passwordSignIn(b, 'root@bank.test');
    await b.submit(await b.get('/mfa/totp'));
    const page = await b.get('/mfa/totp');
    adminSecret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(page.text)![1]!;
    assert.equal((await b.submit(page, { code: await code(adminSecret) })).status, 200);
    clock.advance(30_000);

    org = (await s.api('POST', '/organizations', { name: 'Bank IT', domain: 'bank.test' })).json().id;
    const record = (await s.api('GET', `/organizations/${org}/domain_verification`)).json().dns;
    dns.set(record.name, [record.value]);
    assert.equal((await s.api('POST', `/organizations/${org}/domain_verification`, { method: 'dns' })).json().verified, true);
    conn = await oidcConnection(s, org);
    await upstreamUser(s, 'root@bank.test');

    const refused = await ssoSignIn(s.browser(), 'root@bank.test');
    assert.equal(refused.status, 400);
    assert.match(refused.text, /access_denied/);
    assert.deepEqual(await failures(), ['administrator_link_refused']);
  });

  it('the link endpoint is never a GET, needs the CSRF token, a session, and a fresh login', async () => {
    admin = s.browser();
    await passwordSignIn(admin, 'root@bank.test', adminSecret);
    const get = await admin.get(`/sso/${conn.id}/link`);
    assert.equal(get.status, 405, 'a GET does nothing');
    assert.equal(get.headers.location, undefined);

    const noCsrf = await admin.post(`/sso/${conn.id}/link`, {});
    assert.equal(noCsrf.status, 403);
    assert.match(noCsrf.text, /csrf_failed/);
    const forged = await admin.post(`/sso/${conn.id}/link`, { csrf_token: csrfOf(await admin.get('/sessions')) }, { origin: 'https://evil.example' });
    assert.equal(forged.status, 403);
    assert.match(forged.text, /csrf_failed/);

    const anonymous = s.browser();
    const anonPage = await anonymous.get('/login');
    const noSession = await anonymous.post(`/sso/${conn.id}/link`, { csrf_token: csrfOf(anonPage) });
    assert.equal(noSession.status, 303);
    assert.equal(noSession.headers.location, '/login?return_to=%2Fsessions');

    const page = await admin.get('/sessions');
    clock.advance(5 * 60_000 + 1_000);
    const stale = await admin.post(`/sso/${conn.id}/link`, { csrf_token: csrfOf(page) });
    assert.equal(stale.status, 303);
    assert.equal(stale.headers.location, '/login?return_to=%2Fsessions&reauth=1');

    const unknown = await admin.post('/sso/sso_nope/link', { csrf_token: csrfOf(page) });
    assert.equal(unknown.status, 303, 'still stale: re-authentication comes first');
    assert.deepEqual(await identities(adminId), [], 'nothing was linked');
    assert.equal(
      await s.server.ctx.db.kysely
        .selectFrom('upstream_round_trips')
        .select('state_hash')
        .where('upstream_id', '=', conn.id)
        .execute()
        .then((r) => r.length),
      1,
      'no round trip started (only the refused sign-in of the setup)',
    );
  });

  it('the administrator links the connection from /sessions, and SSO then signs them in after their own TOTP', async () => {
    await passwordSignIn(admin, 'root@bank.test', adminSecret);
    const sessionCookie = [...admin.cookies].find(([k]) => k.includes('session'))!;
    const toIdp = await clickLink(admin, conn.id);
    const callback = await signInUpstream(s, toIdp, 'root@bank.test');
    const back = await admin.get(callback.pathname + callback.search);
    assert.equal(back.status, 303, back.text.slice(0, 300));
    assert.equal(back.headers.location, '/sessions');
    assert.deepEqual(
      [...admin.cookies].find(([k]) => k.includes('session')),
      sessionCookie,
      'the session is unchanged',
    );

    const page = await admin.get('/sessions');
    assert.match(page.text, new RegExp(`<table id="sso-linked"><tbody><tr data-connection="${conn.id}"><td>Upstream</td><td>Bank IT</td>`));
    assert.doesNotMatch(page.text, new RegExp(`action="/sso/${conn.id}/link"`), 'no longer offered');
    assert.equal((await identities(adminId)).length, 1);
    const linked = await events('sso.identity.linked');
    assert.equal(linked.length, 1);
    assert.deepEqual(linked[0]!.data, { user_id: adminId, connection_id: conn.id });
    assert.deepEqual(linked[0]!.actor, { type: 'user', id: adminId });
    assert.equal(linked[0]!.organization_id, org);
    const members = (await s.api('GET', `/organizations/${org}/members`)).json().data as Array<{ user_id: string }>;
    assert.ok(!members.some((m) => m.user_id === adminId), 'linking adds no membership');

    // A new browser: SSO is a first factor only; the administrator's TOTP is still owed.
    const b = s.browser();
    const pending = await ssoSignIn(b, 'root@bank.test');
    assert.equal(pending.status, 303, pending.text.slice(0, 300));
    assert.match(pending.headers.location!, /^\/mfa\/challenge\?flow=flw_/);
    assert.equal((await b.get('/sessions')).status, 303, 'a pending session is no session');
    const done = await challenge(b, pending.headers.location!, adminSecret);
    assert.equal(done.status, 303, done.text.slice(0, 300));
    assert.ok(done.headers.location!.startsWith(REDIRECT), done.headers.location);
    const codeParam = new URL(done.headers.location!).searchParams.get('code')!;
    const t = await s.post('/token', {
      grant_type: 'authorization_code',
      code: codeParam,
      redirect_uri: REDIRECT,
      client_id: app.client_id,
      code_verifier: VERIFIER,
    });
    assert.equal(t.status, 200, t.text);
    const id = decodeJwt(t.json().id_token);
    assert.equal(id.sub, adminId);
    assert.deepEqual(id.amr, ['fed', 'otp', 'mfa']);
  });

  it('an upstream identity already linked to another user is refused and audited', async () => {
    const bob = await s.createUser('bob@bank.test');
    const b = s.browser();
    await passwordSignIn(b, 'bob@bank.test');
    const callback = await signInUpstream(s, await clickLink(b, conn.id), 'root@bank.test');
    const r = await b.get(callback.pathname + callback.search);
    assert.equal(r.status, 400);
    assert.match(r.text, /access_denied/);
    assert.match(r.text, /already linked to another account/);
    assert.equal((await failures()).at(-1), 'identity_in_use');
    assert.deepEqual(await identities(bob.id), []);
    assert.equal((await identities(adminId)).length, 1, "the administrator's link stays");
  });

  it("a finish in a browser whose session is now another user's is refused, and links nothing", async () => {
    const carol = await s.createUser('carol@bank.test');
    await upstreamUser(s, 'carol@bank.test');
    const b = s.browser();
    await passwordSignIn(b, 'carol@bank.test');
    const toIdp = await clickLink(b, conn.id);
    // Meanwhile, in the same browser, someone else signs in.
    await s.createUser('dave@bank.test');
    await passwordSignIn(b, 'dave@bank.test');
    const callback = await signInUpstream(s, toIdp, 'carol@bank.test');
    const r = await b.get(callback.pathname + callback.search);
    assert.equal(r.status, 400);
    assert.match(r.text, /access_denied/);
    assert.equal((await failures()).at(-1), 'link_session_mismatch');
    assert.equal(
      await s.server.ctx.db.kysely
        .selectFrom('sso_identities')
        .select('user_id')
        .where('connection_id', '=', conn.id)
        .execute()
        .then((rows) => rows.length),
      1,
      'only the administrator is linked',
    );

    // Signed out meanwhile: refused the same way.
    const b2 = s.browser();
    await passwordSignIn(b2, 'carol@bank.test');
    const toIdp2 = await clickLink(b2, conn.id);
    const logout = await b2.get('/logout');
    await b2.submit(logout);
    const callback2 = await signInUpstream(s, toIdp2, 'carol@bank.test');
    const r2 = await b2.get(callback2.pathname + callback2.search);
    assert.equal(r2.status, 400);
    assert.equal((await failures()).at(-1), 'link_session_mismatch');
    assert.deepEqual(await identities(carol.id), []);
  });

  it('unlinking: needs CSRF and a fresh login, is audited, and SSO by email is refused again afterwards', async () => {
    await passwordSignIn(admin, 'root@bank.test', adminSecret);
    const page = await admin.get('/sessions');
    expectCsrf(await admin.post('/sso/identities/unlink', { connection_id: conn.id }));
    const notLinked = await admin.post('/sso/identities/unlink', { csrf_token: csrfOf(page), connection_id: 'sso_other' });
    assert.equal(notLinked.status, 404);
    assert.match(notLinked.text, /not_found/);

    const r = await admin.post('/sso/identities/unlink', { csrf_token: csrfOf(page), connection_id: conn.id });
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/sessions');
    assert.deepEqual(await identities(adminId), []);
    const unlinked = await events('sso.identity.unlinked');
    assert.deepEqual(unlinked.at(-1)!.data, { user_id: adminId, connection_id: conn.id });
    assert.match((await admin.get('/sessions')).text, new RegExp(`action="/sso/${conn.id}/link"`), 'offered again');

    const again = await ssoSignIn(s.browser(), 'root@bank.test');
    assert.equal(again.status, 400);
    assert.equal((await failures()).at(-1), 'administrator_link_refused');
  });

  it('a user whose only sign-in is that link cannot unlink it (409); a stale login signs in again first', async () => {
    // Created by SSO (bank.test is proved): no password, no passkey.
    await upstreamUser(s, 'erin@bank.test');
    const b = s.browser();
    const r = await ssoSignIn(b, 'erin@bank.test');
    assert.ok(r.headers.location!.startsWith(REDIRECT), r.headers.location);
    const page = await b.get('/sessions');
    assert.match(page.text, /id="sso-linked"/);
    const refused = await b.submit(
      page,
      {},
      [...page.text.matchAll(/<form method="post" action="([^"]+)">/g)].findIndex((m) => m[1] === '/sso/identities/unlink'),
    );
    assert.equal(refused.status, 409);
    assert.match(refused.text, /conflict/);

    clock.advance(5 * 60_000 + 1_000);
    const stale = await b.post('/sso/identities/unlink', { csrf_token: csrfOf(page), connection_id: conn.id });
    assert.equal(stale.status, 303);
    assert.equal(stale.headers.location, '/login?return_to=%2Fsessions&reauth=1');
  });

  function expectCsrf(r: HttpResponse) {
    assert.equal(r.status, 403);
    assert.match(r.text, /csrf_failed/);
  }
});
