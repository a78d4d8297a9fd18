import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { generate } from 'otplib';
import { ManualClock } from '../../src/kernel/clock.js';
import { basic } from '../oauth/helpers.js';
import { type Browser, decodeEntities, REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from '../signin/helpers.js';

/**
 * TOTP (RFC 6238) enrolment on /mfa/totp, the second factor at sign-in on /mfa/challenge, recovery
 * codes, and amr/acr in the ID token; over HTTP like a browser, with the injected clock.
 */
describe('TOTP, recovery codes and the sign-in challenge', () => {
  // Mid-step, so ±1 step is unambiguous.
  const clock = new ManualClock(Math.floor(Date.now() / 30_000) * 30_000 + 10_000);
  let s: SigninTestServer;
  let web: { client_id: string; client_secret: string };
  let secret: string;
  let recoveryCodes: string[];
  const EMAIL = 'totp@example.com';
  const code = (offsetSteps = 0) => generate({ secret, epoch: Math.floor(clock.now() / 1000) + offsetSteps * 30 });
  const events = async (type: string) =>
    (await s.request({ path: `/v1/events?types=${type}&limit=100`, headers: { authorization: `Bearer ${s.tenant.platformApiKey}` } })).json().data as Array<{
      data: Record<string, unknown>;
    }>;

  before(async () => {
    s = await startSigninServer({ clock });
    web = await s.webClient();
    await s.createUser(EMAIL);
  });
  after(() => s.close());

  /** /authorize → password; returns the browser and the answer to the password POST. */
  async function passwordStep(extra: Record<string, string> = {}) {
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
    const r = await signIn(b, (await b.get(`/authorize?${params}`)).headers.location!, EMAIL);
    return { b, r };
  }

  async function challenge(b: Browser, location: string, fields: Record<string, string>) {
    const page = await b.get(location);
    assert.equal(page.status, 200, page.text.slice(0, 300));
    const flow = /name="flow" value="([^"]+)"/.exec(page.text)?.[1];
    const csrf = decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!);
    return b.post('/mfa/challenge', { csrf_token: csrf, ...(flow ? { flow } : {}), ...fields });
  }

  async function redeem(location: string) {
    const c = new URL(location).searchParams.get('code')!;
    const t = await s.post(
      '/token',
      { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER },
      { authorization: basic(web.client_id, web.client_secret) },
    );
    assert.equal(t.status, 200, t.text);
    return decodeJwt(t.json().id_token);
  }

  it('a password-only user gets amr ["pwd"] and acr "pwd"; no challenge', async () => {
    const { r } = await passwordStep();
    assert.equal(r.status, 303);
    assert.ok(r.headers.location!.startsWith(REDIRECT), r.headers.location);
    const claims = await redeem(r.headers.location!);
    assert.deepEqual(claims.amr, ['pwd']);
    assert.equal(claims.acr, 'pwd');
  });

  it('enrols on /mfa/totp: inline SVG QR under the strict CSP, no external reference; a wrong code is refused; the first code confirms and shows 10 recovery codes once', async () => {
    const b = s.browser();
    const login = await signIn(b, '/login?return_to=%2Fmfa', EMAIL);
    assert.equal(login.headers.location, '/mfa');
    const start = await b.submit(await b.get('/mfa/totp'));
    assert.equal(start.status, 303);
    assert.equal(start.headers.location, '/mfa/totp');
    const page = await b.get('/mfa/totp');
    assert.equal(page.status, 200);
    const csp = page.headers['content-security-policy'] as string;
    assert.match(csp, /^default-src 'none'; style-src 'nonce-[A-Za-z0-9_-]+'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/);
    assert.match(page.text, /<div class="qr" id="totp-qr"><svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*viewBox=/);
    // Nothing on the page is fetched from elsewhere: no src/href to another origin, no <img>, no script.
    assert.doesNotMatch(page.text, /<img|<script|src="http|href="http|url\(/);
    secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(page.text)![1]!;
    const uri = decodeEntities(/id="totp-uri"|href="(otpauth:[^"]+)"/.exec(page.text.slice(page.text.indexOf('href="otpauth')))![1]!);
    assert.match(uri, new RegExp(`^otpauth://totp/.+\\?secret=${secret}&`));

    const wrong = await b.submit(page, { code: String((Number(await code()) + 1) % 1_000_000).padStart(6, '0') });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /not right/);
    const ok = await b.submit(await b.get('/mfa/totp'), { code: await code() });
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
    assert.equal(ok.headers['cache-control'], 'no-store');
    recoveryCodes = [...ok.text.matchAll(/<li>([a-z0-9]{5}-[a-z0-9]{5})<\/li>/g)].map((m) => m[1]!);
    assert.equal(recoveryCodes.length, 10);
    assert.equal(new Set(recoveryCodes).size, 10);
    const overview = await b.get('/mfa');
    assert.match(overview.text, /id="totp-on"/);
    assert.match(overview.text, /10 unused recovery codes/);
    for (const c of recoveryCodes) assert.ok(!overview.text.includes(c), 'codes are never shown again');
    assert.equal((await events('mfa.totp.enrolled')).length, 1);
  });

  it('the same code twice in one step is refused (the step was used at enrolment); the next step passes; amr pwd+otp+mfa, acr mfa', async () => {
    const first = await passwordStep();
    assert.equal(first.r.status, 303);
    assert.match(first.r.headers.location!, /^\/mfa\/challenge\?flow=flw_/);
    // The pending session is not a session: /sessions sends the browser to the login page.
    assert.match((await first.b.get('/sessions')).headers.location ?? '', /^\/login/);
    const replay = await challenge(first.b, first.r.headers.location!, { code: await code() });
    assert.equal(replay.status, 401);
    assert.match(replay.text, /already used/);
    clock.advance(30_000);
    const ok = await challenge(first.b, first.r.headers.location!, { code: await code() });
    assert.equal(ok.status, 303, ok.text.slice(0, 300));
    const claims = await redeem(ok.headers.location!);
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.acr, 'mfa');
    // The same code again, in another sign-in in the same step: refused.
    const second = await passwordStep();
    const again = await challenge(second.b, second.r.headers.location!, { code: await code() });
    assert.equal(again.status, 401);
    const failed = await events('mfa.challenge.failed');
    assert.ok(failed.length >= 2);
  });

  it('accepts ±1 step of clock skew, not 2', async () => {
    clock.advance(60_000);
    const a = await passwordStep();
    assert.equal((await challenge(a.b, a.r.headers.location!, { code: await code(-2) })).status, 401);
    const ok = await challenge(a.b, a.r.headers.location!, { code: await code(-1) });
    assert.equal(ok.status, 303);
    clock.advance(60_000);
    const b = await passwordStep();
    assert.equal((await challenge(b.b, b.r.headers.location!, { code: await code(2) })).status, 401);
    assert.equal((await challenge(b.b, b.r.headers.location!, { code: await code(1) })).status, 303);
  });

  it('a recovery code works once', async () => {
    // A new attempt window (every attempt counts against the per-user limit).
    clock.advance(16 * 60_000);
    const a = await passwordStep();
    const ok = await challenge(a.b, a.r.headers.location!, { recovery_code: recoveryCodes[0]!.toUpperCase() });
    assert.equal(ok.status, 303, ok.text.slice(0, 300));
    assert.deepEqual((await redeem(ok.headers.location!)).amr, ['pwd', 'otp', 'mfa']);
    const b = await passwordStep();
    const again = await challenge(b.b, b.r.headers.location!, { recovery_code: recoveryCodes[0]! });
    assert.equal(again.status, 401);
    assert.equal((await events('mfa.recovery_code.used')).length, 1);
  });

  it('attempts are limited per user (429 with Retry-After), whatever the browser', async () => {
    clock.advance(16 * 60_000);
    const a = await passwordStep();
    let last;
    for (let i = 0; i < 10; i++) last = await challenge(a.b, a.r.headers.location!, { code: '000000' });
    assert.equal(last!.status, 401);
    const b = await passwordStep();
    const limited = await challenge(b.b, b.r.headers.location!, { code: await code() });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    clock.advance(16 * 60_000);
    const c = await passwordStep();
    assert.equal((await challenge(c.b, c.r.headers.location!, { code: await code() })).status, 303);
  });

  it('acr_values=mfa with a password-only session asks for the second factor again (step-up)', async () => {
    const b = s.browser();
    await signIn(b, '/login', EMAIL);
    clock.advance(30_000);
    const page = await challenge(b, '/mfa/challenge', { code: await code() });
    assert.equal(page.status, 303);
    assert.equal(page.headers.location, '/sessions');
    // Signed in with two factors: a request with acr_values=mfa completes without a page.
    const params = new URLSearchParams({
      client_id: web.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
      acr_values: 'mfa',
    });
    const direct = await b.get(`/authorize?${params}`);
    assert.ok(direct.headers.location!.startsWith(REDIRECT), direct.headers.location);
    assert.equal((await redeem(direct.headers.location!)).acr, 'mfa');
    // acr_values=phr (a passkey) is not satisfied by password + TOTP: back to the login page.
    params.set('acr_values', 'phr');
    assert.match((await b.get(`/authorize?${params}`)).headers.location!, /^\/login\?flow=/);
  });
});
