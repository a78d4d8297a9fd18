import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { generate } from 'otplib';
import { ManualClock } from '../../src/kernel/clock.js';
import { expectError, v1 } from '../helpers/v1.js';
import { type Browser, decodeEntities, PASSWORD, REDIRECT, S256, signIn, VERIFIER } from '../signin/helpers.js';
import { authorizeAtSp, oidcConnection, type SsoTestServer, signInUpstream, startSsoServer, upstreamUser } from './helpers.js';

/**
 * Issue 26, findings 1, 2 and 6 (docs/sso.md, "Trust boundaries"): an organization's IdP is
 * believed only about the emails of the domains that organization proved; it never links a
 * tenant administrator; it never skips the user's own second factor unless the connection trusts
 * the IdP's MFA; and a single-factor session never satisfies an organization that requires MFA.
 */
describe('SSO trust boundaries: domains, administrators, email_verified and MFA', () => {
  // Mid-step, so every TOTP code is unambiguous; advanced a step before each code is reused.
  const clock = new ManualClock(Math.floor(Date.now() / 30_000) * 30_000 + 10_000);
  const dns = new Map<string, string[]>();
  let s: SsoTestServer;
  let app: { client_id: string };

  before(async () => {
    s = await startSsoServer({}, { txtResolver: async (name) => dns.get(name) ?? [], clock });
    app = await s.publicClient();
  });
  after(() => s.close());

  const code = (secret: string) => generate({ secret, epoch: Math.floor(clock.now() / 1000) });
  const failures = async () =>
    ((await s.api('GET', '/events?types=sso.login.failed&limit=100')).json().data as Array<{ data: { reason: string } }>).map((e) => e.data.reason);
  const redeem = async (location: string) => {
    const c = new URL(location).searchParams.get('code');
    assert.ok(c, `a code at the application: ${location}`);
    const t = await s.post('/token', { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, client_id: app.client_id, code_verifier: VERIFIER });
    assert.equal(t.status, 200, t.text);
    return t.json() as { id_token: string; access_token: string };
  };

  /** Enrols TOTP for a password user on `host` over HTTP, as a browser does; returns the secret. */
  async function enrolTotp(email: string, host?: string): Promise<string> {
    const b = s.browser(host);
    assert.equal((await signIn(b, '/login?return_to=%2Fmfa', email)).headers.location, '/mfa');
    await b.submit(await b.get('/mfa/totp'));
    const page = await b.get('/mfa/totp');
    const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(page.text)![1]!;
    const ok = await b.submit(page, { code: await code(secret) });
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
    clock.advance(30_000);
    return secret;
  }

  /** /authorize at the SP → /sso/{connection}/start → the upstream: the callback URL. */
  async function toCallback(b: Browser, connection: string, email: string, extra: Record<string, string> = {}): Promise<URL> {
    const login = await authorizeAtSp(s, b, app.client_id, extra);
    const flow = new URL(login, s.issuer).searchParams.get('flow')!;
    return signInUpstream(s, await b.get(`/sso/${connection}/start?flow=${encodeURIComponent(flow)}`), email);
  }

  async function challenge(b: Browser, location: string, totp: string) {
    const page = await b.get(location);
    assert.equal(page.status, 200, page.text.slice(0, 300));
    const flow = /name="flow" value="([^"]+)"/.exec(page.text)?.[1];
    const csrf = decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!);
    return b.post('/mfa/challenge', { csrf_token: csrf, ...(flow ? { flow } : {}), code: totp });
  }

  const signedIn = async (b: Browser) => (await b.get('/sessions')).status === 200;

  let adminSecret: string;
  let bankOrg: string;
  let bankConn: { id: string };

  it('setup: a tenant administrator with a password and TOTP, MFA required by the tenant', async () => {
    await s.server.ctx.admins.grant(s.tenant.tenant.id, 'root@bank.test', PASSWORD);
    adminSecret = await enrolTotp('root@bank.test');
    assert.equal((await s.api('PUT', '/mfa_policy', { policy: 'required' })).status, 200);
    assert.match(adminSecret, /^[A-Z2-7]+$/);
  });

  it('finding 1, key only: a narrow platform key cannot verify a domain manually, nor mint a key that could; its IdP cannot link the administrator', async () => {
    const narrow = (await s.api('POST', '/api_keys', { name: 'narrow', scopes: ['organizations:read', 'organizations:write', 'sso:read', 'sso:write'] })).json()
      .key as string;
    const n = v1(s, narrow);
    const org = (await n('POST', '/organizations', { name: 'Evil', domain: 'bank.test' })).json().id as string;
    const manual = await n('POST', `/organizations/${org}/domain_verification`, { method: 'manual' });
    expectError(manual, 403, 'insufficient_scope');
    assert.match(manual.json().error_description, /domains:verify/);
    assert.equal((await n('GET', `/organizations/${org}`)).json().domain_verified, false);
    // Nobody can give domains:verify to a narrower key, not even a full-privilege caller.
    expectError(await s.api('POST', '/api_keys', { name: 'x', scopes: ['domains:verify', 'organizations:write'] }), 400, 'invalid_scope');

    const conn = await oidcConnection(s, org);
    await upstreamUser(s, 'root@bank.test');
    const b = s.browser();
    const before = (await failures()).length;
    const callback = await toCallback(b, conn.id, 'root@bank.test');
    const r = await b.get(callback.pathname + callback.search);
    assert.equal(r.status, 400);
    assert.match(r.text, /access_denied/);
    assert.equal(await signedIn(b), false, 'no session at the SP');
    // Nor any other account of that domain: the organization has not proved it owns bank.test.
    await s.createUser('alice@bank.test');
    await upstreamUser(s, 'alice@bank.test');
    const c2 = await toCallback(b, conn.id, 'alice@bank.test');
    assert.equal((await b.get(c2.pathname + c2.search)).status, 400);
    assert.equal(await signedIn(b), false);
    assert.deepEqual((await failures()).slice(before), ['administrator_link_refused', 'email_conflict']);
  });

  it('finding 1, org-bound key: manual verification is forbidden; by DNS the domain is proved, yet the administrator is never linked', async () => {
    bankOrg = (await s.api('POST', '/organizations', { name: 'Bank IT', domain: 'bank.test' })).json().id;
    const orgKey = (
      await s.api('POST', `/organizations/${bankOrg}/api_keys`, { name: 'it', scopes: ['organizations:read', 'organizations:write', 'sso:read', 'sso:write'] })
    ).json().key as string;
    const k = v1(s, orgKey);
    expectError(await k('POST', `/organizations/${bankOrg}/domain_verification`, { method: 'manual' }), 403, 'forbidden');
    expectError(await s.api('POST', `/organizations/${bankOrg}/api_keys`, { name: 'x', scopes: ['domains:verify'] }), 400, 'invalid_scope');
    const challengeRecord = (await k('GET', `/organizations/${bankOrg}/domain_verification`)).json().dns;
    dns.set(challengeRecord.name, [challengeRecord.value]);
    const ok = await k('POST', `/organizations/${bankOrg}/domain_verification`, { method: 'dns' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().verified, true);
    const verified = (await s.api('GET', `/events?organization_id=${bankOrg}&types=organization.domain_verified`)).json().data;
    assert.equal(verified[0].actor.type, 'api_key', 'audited with the actor');

    bankConn = await oidcConnection(s, bankOrg);
    const b = s.browser();
    const before = (await failures()).length;
    const callback = await toCallback(b, bankConn.id, 'root@bank.test');
    const r = await b.get(callback.pathname + callback.search);
    assert.equal(r.status, 400);
    assert.match(r.text, /administrator/);
    assert.equal(await signedIn(b), false);
    assert.deepEqual((await failures()).slice(before), ['administrator_link_refused']);
    const admin = (await s.api('GET', '/users?email=root@bank.test')).json().data[0];
    const members = (await s.api('GET', `/organizations/${bankOrg}/members`)).json().data as Array<{ user_id: string }>;
    assert.ok(!members.some((m) => m.user_id === admin.id), 'the administrator did not become a member');
  });

  it("finding 1: a linked user with TOTP passes Keyhall's second factor after SSO; amr fed+otp+mfa", async () => {
    assert.equal((await s.api('PUT', '/mfa_policy', { policy: 'optional' })).status, 200);
    await s.createUser('teller@bank.test');
    const secret = await enrolTotp('teller@bank.test');
    await upstreamUser(s, 'teller@bank.test');
    const b = s.browser();
    const callback = await toCallback(b, bankConn.id, 'teller@bank.test');
    const pending = await b.get(callback.pathname + callback.search);
    assert.equal(pending.status, 303);
    assert.match(pending.headers.location!, /^\/mfa\/challenge\?flow=flw_/);
    assert.equal(await signedIn(b), false, 'a pending session is no session');
    const wrong = await challenge(b, pending.headers.location!, String((Number(await code(secret)) + 1) % 1_000_000).padStart(6, '0'));
    assert.equal(wrong.status, 401);
    const done = await challenge(b, pending.headers.location!, await code(secret));
    assert.equal(done.status, 303, done.text.slice(0, 300));
    const id = decodeJwt((await redeem(done.headers.location!)).id_token);
    assert.deepEqual(id.amr, ['fed', 'otp', 'mfa']);
    assert.equal(id.acr, 'mfa');
    const ok = (await s.api('GET', '/events?types=sso.login.succeeded&limit=100')).json().data as Array<{ data: Record<string, unknown> }>;
    assert.deepEqual(ok.at(-1)!.data.amr, ['fed']);
    assert.equal(ok.at(-1)!.data.second_factor_pending, true);
    clock.advance(30_000);
  });

  it("the IdP's MFA counts only when the connection trusts it: fed+mfa without Keyhall's factor", async () => {
    // The upstream user passes TOTP at the upstream (another Keyhall tenant): its ID token says amr mfa.
    const upstreamSecret = await enrolTotp('teller@bank.test', s.idp.tenant.host);
    const teller = 'teller@bank.test';
    async function viaUpstreamMfa(b: Browser): Promise<URL> {
      const login = await authorizeAtSp(s, b, app.client_id);
      const flow = new URL(login, s.issuer).searchParams.get('flow')!;
      const toIdp = await b.get(`/sso/${bankConn.id}/start?flow=${encodeURIComponent(flow)}`);
      const upstream = new URL(toIdp.headers.location!);
      const ub = s.browser(s.idp.tenant.host);
      const toLogin = await ub.get(upstream.pathname + upstream.search);
      const pending = await signIn(ub, toLogin.headers.location!, teller);
      assert.match(pending.headers.location!, /^\/mfa\/challenge/);
      const page = await ub.get(pending.headers.location!);
      const csrf = decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!);
      const upFlow = /name="flow" value="([^"]+)"/.exec(page.text)![1]!;
      const back = await ub.post('/mfa/challenge', { csrf_token: csrf, flow: upFlow, code: await code(upstreamSecret) });
      assert.equal(back.status, 303, back.text.slice(0, 300));
      clock.advance(30_000);
      return new URL(back.headers.location!);
    }
    // Not trusted (the default): the IdP's mfa counts for nothing, Keyhall's TOTP is still owed.
    const b1 = s.browser();
    const c1 = await viaUpstreamMfa(b1);
    const r1 = await b1.get(c1.pathname + c1.search);
    assert.match(r1.headers.location!, /^\/mfa\/challenge/);

    assert.equal((await s.api('PATCH', `/organizations/${bankOrg}/sso/connections/${bankConn.id}`, { trust_idp_mfa: true })).json().trust_idp_mfa, true);
    const b2 = s.browser();
    const c2 = await viaUpstreamMfa(b2);
    const r2 = await b2.get(c2.pathname + c2.search);
    assert.equal(r2.status, 303);
    assert.ok(r2.headers.location!.startsWith(REDIRECT), r2.headers.location);
    const id = decodeJwt((await redeem(r2.headers.location!)).id_token);
    assert.deepEqual(id.amr, ['fed', 'mfa']);

    // Trusted, but this login's IdP session had one factor: the IdP's word is only amr fed.
    await upstreamUser(s, 'clerk@bank.test');
    const b3 = s.browser();
    const c3 = await toCallback(b3, bankConn.id, 'clerk@bank.test');
    const r3 = await b3.get(c3.pathname + c3.search);
    assert.equal(r3.status, 303);
    assert.ok(r3.headers.location!.startsWith(REDIRECT), 'clerk has no factor and the policy is optional: no challenge');
    const clerk = decodeJwt((await redeem(r3.headers.location!)).id_token);
    assert.deepEqual(clerk.amr, ['fed']);
    assert.equal(clerk.email_verified, true, 'a new user in the DNS-proved domain, verified by the IdP');
    assert.equal((await s.api('PATCH', `/organizations/${bankOrg}/sso/connections/${bankConn.id}`, { trust_idp_mfa: false })).status, 200);
    expectError(await s.api('PATCH', `/organizations/${bankOrg}/sso/connections/${bankConn.id}`, { trust_idp_mfa: 'yes' }), 400, 'invalid_request');
  });

  it('finding 2: an organization without the domain cannot make Keyhall assert an email as verified', async () => {
    const org = (await s.api('POST', '/organizations', { name: 'No domain at all' })).json().id as string;
    const conn = await oidcConnection(s, org);
    await upstreamUser(s, 'ceo@victim-bank.test');
    const b = s.browser();
    const callback = await toCallback(b, conn.id, 'ceo@victim-bank.test');
    const r = await b.get(callback.pathname + callback.search);
    assert.equal(r.status, 303, r.text.slice(0, 300));
    const tokens = await redeem(r.headers.location!);
    const id = decodeJwt(tokens.id_token);
    assert.equal(id.email, 'ceo@victim-bank.test');
    assert.equal(id.email_verified, false);
    const info = await s.request({ path: '/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(info.status, 200, info.text);
    assert.equal(info.json().email_verified, false);
    assert.equal((await s.api('GET', `/users/${id.sub}`)).json().email_verified, false);
  });

  it('finding 6: a password-only session does not satisfy an organization that requires MFA', async () => {
    await s.createUser('pat@example.test');
    const strict = (await s.api('POST', '/organizations', { name: 'Strict' })).json().id as string;
    assert.equal((await s.api('PUT', `/organizations/${strict}/mfa_policy`, { policy: 'required' })).status, 200);
    const b = s.browser();
    assert.equal((await signIn(b, '/login?return_to=%2Fsessions', 'pat@example.test')).headers.location, '/sessions');
    // The same session completes a flow that names no organization...
    const plain = await b.get(`/authorize?${await authorizeQuery()}`);
    assert.ok(plain.headers.location!.startsWith(REDIRECT), plain.headers.location);
    // ...but not one for the organization that requires MFA: sign in again (then the challenge).
    const forStrict = await b.get(`/authorize?${await authorizeQuery({ organization: strict })}`);
    assert.equal(forStrict.status, 303);
    assert.match(forStrict.headers.location!, /^\/login\?flow=flw_/);
    const silent = await b.get(`/authorize?${await authorizeQuery({ organization: strict, prompt: 'none' })}`);
    const back = new URL(silent.headers.location!);
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('error'), 'login_required');
    assert.equal(back.searchParams.get('code'), null);
    // Signing in again for that organization asks for the second factor (here: enrolment).
    const again = await signIn(b, forStrict.headers.location!, 'pat@example.test');
    assert.match(again.headers.location!, /^\/mfa\/challenge\?flow=flw_/);
  });

  async function authorizeQuery(extra: Record<string, string> = {}) {
    return new URLSearchParams({
      client_id: app.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid email',
      state: 's',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
      ...extra,
    });
  }
});
