import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { AuthenticatorEmulator, PasskeysCredentialsMemoryRepository, WebAuthnEmulator } from 'nid-webauthn-emulator';
import { generate } from 'otplib';
import { ManualClock } from '../../src/kernel/clock.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { basic } from '../oauth/helpers.js';
import { type Browser, decodeEntities, REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from '../signin/helpers.js';

const EMULATOR_AAGUID = '4e49442d-4155-5448-2d33-313431353932';
const OTHER_AAGUID = 'cb69481e-8ff7-4039-93ec-0a2729a154a8';
const csrfOf = (html: string) => decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(html)![1]!);
const emulator = () => new WebAuthnEmulator(new AuthenticatorEmulator({ credentialsRepository: new PasskeysCredentialsMemoryRepository() }));

/**
 * The MFA policy at sign-in, end to end through /authorize: under `required` a user without a
 * second factor enrols one (an authenticator app, or a passkey on the challenge page) before the
 * flow completes; an organization's policy raises the tenant's; `optional` asks nobody without a
 * factor. Also: the passkey options endpoints refuse requests without the CSRF cookie and token.
 */
describe('MFA policy at sign-in (required / optional, tenant and organization)', () => {
  const clock = new ManualClock(Math.floor(Date.now() / 30_000) * 30_000 + 10_000);
  let s: SigninTestServer;
  let api: Api;
  let origin: string;
  let web: { client_id: string; client_secret: string };
  let strictOrg: string;

  before(async () => {
    s = await startSigninServer({ clock, localhost: true });
    origin = s.tenant.tenant.issuer;
    api = v1(s, s.tenant.platformApiKey);
    web = await s.webClient();
    strictOrg = (await api('POST', '/organizations', { name: 'Strict' })).json().id;
  });
  after(() => s.close());

  const events = async (type: string) => (await api('GET', `/events?types=${type}&limit=100`)).json().data as Array<{ data: Record<string, unknown> }>;
  const setTenant = async (policy: string) => assert.equal((await api('PUT', '/mfa_policy', { policy })).status, 200);

  /** /authorize → password; returns the browser and the answer to the password POST. */
  async function passwordStep(email: string, extra: Record<string, string> = {}) {
    const params = new URLSearchParams({
      client_id: web.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
      ...extra,
    });
    const b = s.browser();
    const r = await signIn(b, (await b.get(`/authorize?${params}`)).headers.location!, email);
    assert.equal(r.status, 303, r.text.slice(0, 300));
    return { b, location: r.headers.location! };
  }

  async function redeem(location: string) {
    assert.ok(location.startsWith(REDIRECT), location);
    const c = new URL(location).searchParams.get('code')!;
    const t = await s.post(
      '/token',
      { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER },
      { authorization: basic(web.client_id, web.client_secret) },
    );
    assert.equal(t.status, 200, t.text);
    return decodeJwt(t.json().id_token);
  }

  /** The enrolment page of a pending sign-in that owes a factor it does not have. */
  async function enrolPage(b: Browser, location: string) {
    assert.match(location, /^\/mfa\/challenge\?flow=flw_/);
    const page = await b.get(location);
    assert.equal(page.status, 200);
    assert.match(page.text, /id="enrol"/);
    assert.match(page.text, /id="passkey-enrol"/);
    assert.match(page.text, /id="totp-enrol"/);
    // Nothing but the enrolment: no code field, no recovery code.
    assert.doesNotMatch(page.text, /name="recovery_code"|name="code"/);
    return { page, flow: /name="flow" value="([^"]+)"/.exec(page.text)![1]!, csrf: csrfOf(page.text) };
  }

  it('optional (the default): a user without a second factor is not asked; amr ["pwd"]', async () => {
    const user = await s.createUser('plain@example.com');
    const { location } = await passwordStep(user.email);
    const claims = await redeem(location);
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['pwd']);
    assert.equal(claims.acr, 'pwd');
  });

  it('required (tenant): a user without a factor sets up an authenticator app before the flow completes; the ID token says pwd + otp + mfa', async () => {
    await setTenant('required');
    const user = await s.createUser('required@example.com');
    const { b, location } = await passwordStep(user.email);
    const { page } = await enrolPage(b, location);
    // A pending sign-in is not a session.
    assert.match((await b.get('/sessions')).headers.location ?? '', /^\/login/);
    assert.match((await b.get('/mfa')).headers.location ?? '', /^\/login/);
    const totpLink = decodeEntities(/href="(\/mfa\/totp\?[^"]+)"/.exec(page.text)![1]!);
    const start = await b.submit(await b.get(totpLink));
    assert.equal(start.status, 303, start.text.slice(0, 300));
    const enrolment = await b.get(start.headers.location!);
    const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(enrolment.text)![1]!;
    const confirmed = await b.submit(enrolment, { code: await generate({ secret, epoch: Math.floor(clock.now() / 1000) }) });
    assert.equal(confirmed.status, 200, confirmed.text.slice(0, 300));
    assert.equal([...confirmed.text.matchAll(/<li>[a-z0-9]{5}-[a-z0-9]{5}<\/li>/g)].length, 10);
    const next = decodeEntities(/<a href="([^"]+)" id="continue">/.exec(confirmed.text)![1]!);
    assert.match(next, /^\/mfa\/continue\?flow=flw_/);
    const done = await b.get(next);
    assert.equal(done.status, 303, done.text.slice(0, 300));
    const claims = await redeem(done.headers.location!);
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.acr, 'mfa');

    // From now on the user is asked for the code, like any user with a factor.
    clock.advance(30_000);
    const again = await passwordStep(user.email);
    const challenge = await again.b.get(again.location);
    assert.doesNotMatch(challenge.text, /id="enrol"/);
    const ok = await again.b.submit(challenge, { code: await generate({ secret, epoch: Math.floor(clock.now() / 1000) }) });
    assert.deepEqual((await redeem(ok.headers.location!)).amr, ['pwd', 'otp', 'mfa']);
    await setTenant('optional');
  });

  it('required: a passkey added on the enrolment page completes the sign-in (amr pwd + swk + mfa) and signs in later', async () => {
    await setTenant('required');
    const user = await s.createUser('passkey-enrol@example.com');
    const { b, location } = await passwordStep(user.email);
    const { flow, csrf } = await enrolPage(b, location);
    const options = await b.post('/mfa/passkeys/options', { csrf_token: csrf });
    assert.equal(options.status, 200, options.text);
    assert.equal(options.json().authenticatorSelection.userVerification, 'required');
    const em = emulator();
    const answer = await b.post('/mfa/passkeys', { csrf_token: csrf, flow, name: 'Phone', credential: JSON.stringify(em.createJSON(origin, options.json())) });
    assert.equal(answer.status, 303, answer.text.slice(0, 400));
    const claims = await redeem(answer.headers.location!);
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['pwd', 'swk', 'mfa']);
    const registered = (await events('passkey.registered')).filter((e) => e.data.user_id === user.id);
    assert.equal(registered.length, 1);
    assert.deepEqual(
      (await api('GET', `/users/${user.id}/passkeys`)).json().data.map((p: { name: string }) => p.name),
      ['Phone'],
    );

    // The passkey signs in on its own afterwards.
    const params = new URLSearchParams({
      client_id: web.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
    });
    const b2 = s.browser();
    const login = await b2.get((await b2.get(`/authorize?${params}`)).headers.location!);
    const c2 = csrfOf(login.text);
    const o2 = await b2.post('/login/passkey/options', { csrf_token: c2 });
    const r2 = await b2.post('/login/passkey', {
      csrf_token: c2,
      flow: /name="flow" value="([^"]+)"/.exec(login.text)![1]!,
      credential: JSON.stringify(em.getJSON(origin, o2.json())),
    });
    assert.equal(r2.status, 303, r2.text.slice(0, 300));
    assert.deepEqual((await redeem(r2.headers.location!)).amr, ['swk', 'user', 'mfa']);

    // Now that the user has a passkey, a password sign-in owes the challenge: adding another
    // passkey instead of answering it is refused.
    const owed = await passwordStep(user.email);
    const challenge = await owed.b.get(owed.location);
    assert.doesNotMatch(challenge.text, /id="enrol"/);
    const c3 = csrfOf(challenge.text);
    expectError(await owed.b.post('/mfa/passkeys/options', { csrf_token: c3 }), 403, 'forbidden');
    const sneaky = await owed.b.post('/mfa/passkeys', { csrf_token: c3, credential: '{}' });
    assert.equal(sneaky.status, 303);
    assert.match(sneaky.headers.location!, /^\/login/);
    assert.equal((await api('GET', `/users/${user.id}/passkeys`)).json().data.length, 1);
    await setTenant('optional');
  });

  it("required: a passkey the user's organization does not allow is refused on the enrolment page; the sign-in stays pending", async () => {
    await setTenant('required');
    const org = (await api('POST', '/organizations', { name: 'Keys' })).json().id;
    const user = await s.createUser('keys@example.com');
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user.id })).status, 201);
    assert.equal((await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [OTHER_AAGUID] })).status, 200);
    const { b, location } = await passwordStep(user.email);
    const { flow, csrf } = await enrolPage(b, location);
    const options = (await b.post('/mfa/passkeys/options', { csrf_token: csrf })).json();
    assert.equal(options.attestation, 'direct');
    const refused = await b.post('/mfa/passkeys', { csrf_token: csrf, flow, credential: JSON.stringify(emulator().createJSON(origin, options)) });
    assert.equal(refused.status, 403);
    assert.match(refused.text, /id="challenge-error"[^>]*>Your organization does not allow this kind of passkey/);
    assert.match(refused.text, new RegExp(EMULATOR_AAGUID));
    assert.match(refused.text, /id="enrol"/);
    assert.match((await b.get('/sessions')).headers.location ?? '', /^\/login/);
    // A malformed credential: the enrolment page again, 400.
    const bad = await b.post('/mfa/passkeys', { csrf_token: csrf, flow, credential: 'not json' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /could not be read/);
    await setTenant('optional');
  });

  it("an organization's required raises the tenant's optional for its members only; its off does not lower the tenant's required", async () => {
    const member = await s.createUser('member@example.com');
    const outsider = await s.createUser('outsider@example.com');
    assert.equal((await api('POST', `/organizations/${strictOrg}/members`, { user_id: member.id })).status, 201);
    assert.equal((await api('PUT', `/organizations/${strictOrg}/mfa_policy`, { policy: 'required' })).status, 200);
    const m = await passwordStep(member.email);
    await enrolPage(m.b, m.location);
    const o = await passwordStep(outsider.email);
    assert.deepEqual((await redeem(o.location)).amr, ['pwd']);
    // A sign-in naming the organization (?organization=) applies its policy to a non-member too.
    const named = await passwordStep(outsider.email, { organization: strictOrg });
    await enrolPage(named.b, named.location);

    assert.equal((await api('PUT', `/organizations/${strictOrg}/mfa_policy`, { policy: 'off' })).status, 200);
    assert.deepEqual((await redeem((await passwordStep(member.email)).location)).amr, ['pwd']);
    await setTenant('required');
    const still = await passwordStep(member.email);
    await enrolPage(still.b, still.location);
    await setTenant('off');
    assert.deepEqual((await redeem((await passwordStep(member.email)).location)).amr, ['pwd']);
    await setTenant('optional');
  });

  it('the passkey options endpoints refuse a request without the CSRF cookie or token (403 csrf_failed), from another browser or origin', async () => {
    await setTenant('required');
    const user = await s.createUser('csrf@example.com');
    const { b, location } = await passwordStep(user.email);
    const { csrf } = await enrolPage(b, location);
    const cookieName = [...b.cookies.keys()].find((k) => k.endsWith('keyhall_csrf'))!;
    const stranger = s.browser();
    const strangerCsrf = csrfOf((await stranger.get('/login')).text);
    for (const path of ['/login/passkey/options', '/mfa/passkeys/options', '/mfa/challenge/passkey/options']) {
      expectError(await b.post(path, {}), 403, 'csrf_failed');
      expectError(await b.post(path, { csrf_token: 'x' }), 403, 'csrf_failed');
      expectError(await b.post(path, { csrf_token: strangerCsrf }), 403, 'csrf_failed');
      expectError(await b.post(path, { csrf_token: csrf }, { origin: 'https://evil.example' }), 403, 'csrf_failed');
      // The right token without its cookie.
      const saved = b.cookies.get(cookieName)!;
      b.cookies.delete(cookieName);
      expectError(await b.post(path, { csrf_token: csrf }), 403, 'csrf_failed');
      b.cookies.set(cookieName, saved);
    }
    // With both, the options are given.
    assert.equal((await b.post('/mfa/passkeys/options', { csrf_token: csrf })).status, 200);
    assert.equal((await b.post('/login/passkey/options', { csrf_token: csrf })).status, 200);
    await setTenant('optional');
  });
});
