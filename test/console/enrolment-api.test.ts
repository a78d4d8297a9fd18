import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import { ManualClock } from '../../src/kernel/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient, PASSWORD } from './helpers.js';

// /console/api/mfa (docs/console.md "Second factors from the console"): the hosted MfaService
// behind JSON routes, for the administrator the setup link has just signed in.
describe('console second-factor enrolment API', () => {
  let s: TestServer;
  const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
  const v1 = (method: string, path: string, body?: unknown) =>
    s.request({
      method,
      path,
      headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const code = (secret: string) => generate({ secret, epoch: Math.floor(clock.now() / 1000) });

  /** A new administrator through a fresh setup link, signed in by it. */
  const setUp = async (email: string) => {
    const token = await s.server.ctx.admins.issueSetupToken(s.tenant.tenant.id);
    const c = new ConsoleClient(s);
    c.csrf = (await c.call('GET', `/console/api/setup?token=${token}`)).json().csrf_token;
    const made = await c.call('POST', '/console/api/setup', { token, email, password: PASSWORD });
    assert.equal(made.status, 201, made.text);
    return { c, user: made.json().user as { id: string }, required: made.json().second_factor_required as boolean };
  };

  before(async () => {
    s = await startTestServer({ clock });
  });
  after(() => s.close());

  it('TOTP right after setup: start, wrong and malformed codes refused, confirm, recovery codes once, audited as the administrator', async () => {
    const { c, user } = await setUp('totp@console.test');
    const state = await c.call('GET', '/console/api/mfa');
    assert.equal(state.status, 200, state.text);
    assert.deepEqual(
      { ...state.json(), passkeys: state.json().passkeys.length },
      { second_factor_required: false, fresh: true, passkeys: 0, totp: false, recovery_codes: 0 },
    );

    const early = await c.call('POST', '/console/api/mfa/totp/confirm', { code: '123456' });
    assert.equal(early.status, 400, 'no enrolment started');
    assert.equal(early.json().error, 'invalid_request');

    const started = await c.call('POST', '/console/api/mfa/totp');
    assert.equal(started.status, 200, started.text);
    const { secret, otpauth_uri: uri, qr_svg: svg } = started.json();
    assert.match(secret, /^[A-Z2-7]+=*$/);
    assert.match(uri, /^otpauth:\/\/totp\//);
    assert.match(svg, /^<svg/);

    const wrong = await c.call('POST', '/console/api/mfa/totp/confirm', { code: '000000' === (await code(secret)) ? '111111' : '000000' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.json().error, 'invalid_request');
    const missing = await c.call('POST', '/console/api/mfa/totp/confirm', {});
    assert.equal(missing.status, 400);
    assert.equal(missing.json().error, 'invalid_request');
    const extra = await c.call('POST', '/console/api/mfa/totp/confirm', { code: '123456', admin: true });
    assert.equal(extra.status, 400);
    assert.equal(extra.json().error, 'invalid_request');

    const ok = await c.call('POST', '/console/api/mfa/totp/confirm', { code: await code(secret) });
    assert.equal(ok.status, 200, ok.text);
    const codes = ok.json().recovery_codes as string[];
    assert.equal(codes.length, 10);
    const after = (await c.call('GET', '/console/api/mfa')).json();
    assert.equal(after.totp, true);
    assert.equal(after.recovery_codes, 10);
    assert.ok(!JSON.stringify(after).includes(codes[0]!), 'the codes are never shown again');

    const again = await c.call('POST', '/console/api/mfa/totp');
    assert.equal(again.status, 409);
    assert.equal(again.json().error, 'conflict');

    const events = (await v1('GET', '/v1/events?types=mfa.totp.enrolled')).json().data as Array<{ actor: unknown; data: { user_id: string } }>;
    assert.deepEqual(events.find((e) => e.data.user_id === user.id)?.actor, { type: 'user', id: user.id });
  });

  it('refuses a passkey response it cannot read and a request without the CSRF header', async () => {
    const { c } = await setUp('passkey@console.test');
    const options = await c.call('POST', '/console/api/mfa/passkeys/options');
    assert.equal(options.status, 200, options.text);
    assert.equal(options.json().authenticatorSelection.userVerification, 'required');
    assert.ok(options.json().challenge);
    const bogus = await c.call('POST', '/console/api/mfa/passkeys', { credential: { id: 'x', response: { clientDataJSON: 'nope' } } });
    assert.equal(bogus.status, 400);
    assert.equal(bogus.json().error, 'invalid_request');
    const noCredential = await c.call('POST', '/console/api/mfa/passkeys', { name: 'Laptop' });
    assert.equal(noCredential.status, 400);
    assert.equal(noCredential.json().error, 'invalid_request');
    const notJson = await c.call('POST', '/console/api/mfa/passkeys', 'credential=x', { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(notJson.status, 415);
    assert.equal(notJson.json().error, 'unsupported_media_type');
    const noCsrf = await c.call('POST', '/console/api/mfa/passkeys/options', undefined, { 'x-csrf-token': undefined });
    assert.equal(noCsrf.status, 403);
    assert.equal(noCsrf.json().error, 'csrf_failed');
    const crossSite = await c.call('POST', '/console/api/mfa/totp', undefined, { origin: 'https://evil.example' });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.json().error, 'csrf_failed');
  });

  it('a login older than 5 minutes may look but not add a factor (403); no session: 401; not an administrator: 403', async () => {
    const { c } = await setUp('stale@console.test');
    clock.advance(5 * 60_000 + 1000);
    for (const path of ['/console/api/mfa/totp', '/console/api/mfa/passkeys/options']) {
      const r = await c.call('POST', path);
      assert.equal(r.status, 403, path);
      assert.equal(r.json().error, 'forbidden');
      assert.match(r.json().error_description, /sign in again/);
    }
    const look = await c.call('GET', '/console/api/mfa');
    assert.equal(look.status, 200);
    assert.equal(look.json().fresh, false);

    const anonymous = new ConsoleClient(s);
    const none = await anonymous.call('GET', '/console/api/mfa');
    assert.equal(none.status, 401);
    assert.equal(none.json().error, 'login_required');

    assert.equal((await v1('POST', '/v1/users', { email: 'plain-mfa@console.test', password: PASSWORD })).status, 201);
    const plain = new ConsoleClient(s);
    await plain.signIn('plain-mfa@console.test');
    const forbidden = await plain.call('GET', '/console/api/mfa');
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.json().error, 'forbidden');
  });

  it('too many wrong codes: 429 rate_limited with Retry-After', async () => {
    const { c } = await setUp('limited@console.test');
    const { secret } = (await c.call('POST', '/console/api/mfa/totp')).json();
    const bad = (await code(secret)) === '000000' ? '111111' : '000000';
    let last;
    for (let i = 0; i < 11; i++) last = await c.call('POST', '/console/api/mfa/totp/confirm', { code: bad });
    assert.equal(last!.status, 429);
    assert.equal(last!.json().error, 'rate_limited');
    assert.ok(Number(last!.headers['retry-after']) > 0);
  });

  it('under an MFA policy of required, setup signs in owing a second factor: only enrolment works until one is added', async () => {
    assert.equal((await v1('PUT', '/v1/mfa_policy', { policy: 'required' })).status, 200);
    try {
      const { c, required } = await setUp('required@console.test');
      assert.equal(required, true);
      const session = await c.call('GET', '/console/api/session');
      assert.equal(session.status, 401);
      assert.equal(session.json().error, 'login_required');
      const state = await c.call('GET', '/console/api/mfa');
      assert.equal(state.status, 200, state.text);
      assert.equal(state.json().second_factor_required, true);

      const { secret } = (await c.call('POST', '/console/api/mfa/totp')).json();
      const ok = await c.call('POST', '/console/api/mfa/totp/confirm', { code: await code(secret) });
      assert.equal(ok.status, 200, ok.text);
      const now = await c.call('GET', '/console/api/session');
      assert.equal(now.status, 200, now.text);
      assert.equal(now.json().user.email, 'required@console.test');
      // With a factor, the pending route is closed: a second enrolment needs a usable, fresh session.
      assert.equal((await c.call('GET', '/console/api/mfa')).json().second_factor_required, false);
    } finally {
      assert.equal((await v1('PUT', '/v1/mfa_policy', { policy: 'optional' })).status, 200);
    }
  });
});
