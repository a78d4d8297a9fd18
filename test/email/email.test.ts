/**
 * Issue 29, points 1–3 over a real SMTP server (smtp-server inside the test): the outbox and its
 * events, verification by link and by code, password reset, and every refusal (expired by the
 * injected clock, reused, tampered, cross-tenant), 429s, SMTP 4xx retried and 5xx failed, and no
 * token, code or link in any log line.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { RESET_WINDOW_MS } from '../../src/email/service.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { sha256Hex } from '../../src/kernel/crypto/hash.js';
import { repos } from '../../src/storage/repos/index.js';
import type { HttpResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { Browser, PASSWORD } from '../signin/helpers.js';
import { type Received, startSmtp, waitFor } from './smtp.js';

const errorOf = (r: HttpResponse) => /data-error="([^"]+)"/.exec(r.text)?.[1];
/** A page's text without what differs per response (the CSP nonce). */
const stable = (text: string) => text.replace(/nonce-[A-Za-z0-9_-]+|nonce="[^"]*"/g, 'nonce');

describe('email: outbox over SMTP, verification, password reset', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let s: TestServer;
  let api: Api;
  const clock = new ManualClock();
  const logs: string[] = [];

  const createUser = async (email: string, password: string | undefined = PASSWORD) =>
    (await s.server.ctx.management.users.create(s.tenant.tenant.id, { type: 'system', id: null }, { email, ...(password ? { password } : {}) })).id;
  const browser = () => new Browser(s.port, s.tenant.tenant.host);
  const pathOf = (link: string) => {
    const u = new URL(link);
    return u.pathname + u.search;
  };
  const messageTo = (to: string, n = 1) =>
    waitFor(
      () => (smtp.messages.filter((m) => m.to.includes(to)).length >= n ? smtp.messages.filter((m) => m.to.includes(to))[n - 1] : undefined),
      `message ${n} to ${to}`,
    );
  const outboxRow = (id: string) => repos(s.server.ctx.db.kysely, s.server.ctx.db.dialect).emailOutbox.find(s.tenant.tenant.id, id);
  const eventsOf = async (type: string) => (await api('GET', `/events?types=${type}&limit=100`)).json().data as Array<{ data: Record<string, unknown> }>;

  before(async () => {
    smtp = await startSmtp();
    const logStream = new PassThrough();
    logStream.on('data', (c: Buffer) => logs.push(...c.toString('utf8').split('\n').filter(Boolean)));
    s = await startTestServer({ clock, logStream, config: { smtpUrl: smtp.url, logLevel: 'info', emailRetrySchedule: '0,60,60', dispatchIntervalMs: 50 } });
    api = v1(s, s.tenant.platformApiKey);
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  let verifyLink: Received;

  it('sends a verification email through SMTP: a link and a code, Message-ID kept, the body dropped once sent, email.sent', async () => {
    const id = await createUser('ada@example.com');
    const r = await api('POST', `/users/${id}/verification_email`);
    assert.equal(r.status, 202, r.text);
    const { email_id } = r.json();
    verifyLink = await messageTo('ada@example.com');
    assert.match(verifyLink.link ?? '', /\/verify-email\?token=vfy_/);
    assert.match(verifyLink.code ?? '', /^\d{6}$/);
    assert.match(verifyLink.header('subject') ?? '', /Confirm your email address/);
    assert.match(verifyLink.raw, /Content-Type: text\/html/i);
    await waitFor(async () => ((await outboxRow(email_id))?.status === 'sent' ? true : undefined), 'sent status');
    const row = (await outboxRow(email_id))!;
    assert.equal(row.message, null, 'the rendered message is gone once sent');
    assert.equal(verifyLink.header('message-id'), row.messageId);
    const listed = (await api('GET', '/email_outbox')).json().data as Array<Record<string, unknown>>;
    const mine = listed.find((e) => e.id === email_id)!;
    assert.deepEqual([mine.status, mine.template, mine.to, mine.transport], ['sent', 'verify_email', 'ada@example.com', 'smtp']);
    const sent = (await eventsOf('email.sent')).find((e) => e.data.email_id === email_id);
    assert.ok(sent, 'email.sent recorded');
    const text = JSON.stringify(sent);
    assert.ok(!text.includes('vfy_') && !text.includes(verifyLink.code!), 'the event carries neither link nor code');
  });

  it('the link page confirms on POST only; the link is single-use; user.email_verified', async () => {
    const b = browser();
    const page = await b.get(pathOf(verifyLink.link!));
    assert.equal(page.status, 200);
    const userId = (await api('GET', '/users?email=ada%40example.com')).json().data[0].id;
    assert.equal((await api('GET', `/users/${userId}`)).json().email_verified, false, 'opening the link alone changes nothing');
    const done = await b.submit(page);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /id="verified"/);
    assert.equal((await api('GET', `/users/${userId}`)).json().email_verified, true);
    assert.ok((await eventsOf('user.email_verified')).some((e) => e.data.user_id === userId && e.data.via === 'link'));
    const again = await b.get(pathOf(verifyLink.link!));
    assert.equal(again.status, 400);
    assert.equal(errorOf(again), 'invalid_request');
    const replay = await b.post('/verify-email', {
      csrf_token: /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!,
      token: new URL(verifyLink.link!).searchParams.get('token')!,
    });
    assert.equal(replay.status, 400);
    assert.equal(errorOf(replay), 'invalid_request');
    expectError(await api('POST', `/users/${userId}/verification_email`), 409, 'conflict');
    expectError(await api('POST', '/users/user_doesnotexist/verification_email'), 404, 'not_found');
  });

  it('the code works once; a wrong code is refused', async () => {
    const id = await createUser('bob@example.com');
    await api('POST', `/users/${id}/verification_email`);
    const m = await messageTo('bob@example.com');
    const b = browser();
    const form = await b.get('/verify-email/code');
    assert.equal(form.status, 200);
    const wrong = await b.submit(form, { email: 'bob@example.com', code: m.code === '000000' ? '000001' : '000000' });
    assert.equal(wrong.status, 400);
    assert.equal(errorOf(wrong), 'invalid_request');
    const ok = await b.submit(form, { email: 'bob@example.com', code: m.code! });
    assert.equal(ok.status, 200, ok.text);
    assert.equal((await api('GET', `/users/${id}`)).json().email_verified, true);
    assert.ok((await eventsOf('user.email_verified')).some((e) => e.data.user_id === id && e.data.via === 'code'));
    const reused = await b.submit(form, { email: 'bob@example.com', code: m.code! });
    assert.equal(reused.status, 400);
  });

  it('refuses expired (clock), tampered and cross-tenant links, and expired codes', async () => {
    const id = await createUser('cyd@example.com');
    await api('POST', `/users/${id}/verification_email`);
    const m = await messageTo('cyd@example.com');
    const path = pathOf(m.link!);
    const tampered = path.slice(0, -2) + (path.endsWith('AA') ? 'BB' : 'AA');
    const t = await browser().get(tampered);
    assert.equal(t.status, 400);
    assert.equal(errorOf(t), 'invalid_request');
    await s.createTenant(`other.test:${s.port}`);
    const cross = await new Browser(s.port, `other.test:${s.port}`).get(path);
    assert.equal(cross.status, 400);
    assert.equal(errorOf(cross), 'invalid_request');
    // The code lives 10 minutes, the link 24 hours.
    clock.advance(11 * 60_000);
    const b = browser();
    const form = await b.get('/verify-email/code');
    const late = await b.submit(form, { email: 'cyd@example.com', code: m.code! });
    assert.equal(late.status, 400);
    assert.equal((await browser().get(path)).status, 200, 'the link still works after 11 minutes');
    clock.advance(24 * 3600_000);
    const expired = await browser().get(path);
    assert.equal(expired.status, 400);
    assert.equal(errorOf(expired), 'invalid_request');
    assert.equal((await api('GET', `/users/${id}`)).json().email_verified, false);
  });

  it('password reset: Forgot password? → email → new password; every session revoked; user.password_reset; the link is single-use', async () => {
    const id = await createUser('dee@example.com');
    const signedIn = browser();
    const login = await signedIn.get('/login?return_to=%2Fsessions');
    assert.match(login.text, /href="\/login\/forgot\?return_to=%2Fsessions" id="forgot-password"/);
    assert.equal((await signedIn.submit(login, { email: 'dee@example.com', password: PASSWORD })).status, 303);
    assert.equal((await signedIn.get('/sessions')).status, 200);

    // A refresh token of the user (its family as the token endpoint stores it).
    const ctx = s.server.ctx;
    const client = await ctx.management.clients.create(s.tenant.tenant.id, {
      redirect_uris: ['https://app.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
    });
    const family = {
      id: 'rtf_email_test',
      tenantId: s.tenant.tenant.id,
      clientId: client.client_id,
      sub: id,
      scopes: ['openid', 'offline_access'],
      resources: [],
      jkt: null,
      extra: null,
      generation: 0,
      createdAt: clock.now(),
      expiresAt: clock.now() + 86_400_000,
      revokedAt: null,
    };
    await repos(ctx.db.kysely, ctx.db.dialect).refreshTokens.createFamily(family, sha256Hex('rt_email_test'), family.expiresAt);

    const b = browser();
    const forgot = await b.get('/login/forgot');
    assert.equal(forgot.status, 200);
    const sent = await b.submit(forgot, { email: 'Dee@Example.com' });
    assert.equal(sent.status, 200);
    const m = await messageTo('dee@example.com');
    assert.match(m.link ?? '', /\/reset-password\?token=rst_/);
    assert.match(m.header('subject') ?? '', /Reset your password/);

    const page = await b.get(pathOf(m.link!));
    assert.equal(page.status, 200);
    const differ = await b.submit(page, { password: 'a new password 1', password_repeat: 'another one 2' });
    assert.equal(differ.status, 400);
    const short = await b.submit(page, { password: 'short', password_repeat: 'short' });
    assert.equal(short.status, 400);
    assert.match(short.text, /between 8 and 256/);
    const done = await b.submit(page, { password: 'a brand new password', password_repeat: 'a brand new password' });
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /id="reset-done"/);

    assert.equal((await signedIn.get('/sessions')).status, 303, 'the old session is gone');
    const reset = (await eventsOf('user.password_reset')).find((e) => e.data.user_id === id);
    assert.ok(reset);
    assert.equal(reset.data.sessions_revoked, 1);
    // Each ended session is recorded with its reason, which back-channel logout follows (docs/signin.md).
    const ended = (await eventsOf('session.revoked')).filter((e) => e.data.user_id === id);
    assert.equal(ended.length, 1);
    assert.equal(ended[0]!.data.reason, 'password_change');
    const presented = await repos(ctx.db.kysely, ctx.db.dialect).refreshTokens.find(s.tenant.tenant.id, sha256Hex('rt_email_test'));
    assert.ok(presented?.family.revokedAt, 'the refresh token family is revoked');
    const old = await browser().get('/login');
    assert.notEqual((await browser().submit(old, { email: 'dee@example.com', password: PASSWORD })).status, 303, 'the old password no longer works');
    const fresh = browser();
    assert.equal((await fresh.submit(await fresh.get('/login'), { email: 'dee@example.com', password: 'a brand new password' })).status, 303);

    const reused = await b.submit(page, { password: 'yet another password', password_repeat: 'yet another password' });
    assert.equal(reused.status, 400);
    assert.equal(errorOf(reused), 'invalid_request');
    assert.equal((await b.get(pathOf(m.link!))).status, 400);
  });

  it('a reset for an unknown address answers the same status and body, sends nothing, and takes about as long', async () => {
    clock.advance(RESET_WINDOW_MS);
    const ask = async (email: string) => {
      const b = browser();
      const form = await b.get('/login/forgot');
      const started = performance.now();
      const r = await b.submit(form, { email });
      return { r, ms: performance.now() - started };
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 6; i++) {
      await createUser(`timing${i}@example.com`);
      const k = await ask(`timing${i}@example.com`);
      const u = await ask(`nobody${i}@example.com`);
      assert.equal(k.r.status, 200);
      assert.equal(u.r.status, u.r.status);
      assert.equal(stable(u.r.text), stable(k.r.text));
      assert.deepEqual(Object.keys(u.r.headers).sort(), Object.keys(k.r.headers).sort());
      known.push(k.ms);
      unknown.push(u.ms);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    assert.ok(Math.abs(median(known) - median(unknown)) < 40, `known ${median(known)} ms, unknown ${median(unknown)} ms`);
    await messageTo('timing5@example.com');
    assert.ok(!smtp.messages.some((m) => m.to.some((t) => t.startsWith('nobody'))), 'no message to an unknown address');
  });

  it('limits resets per address and per IP: 429 with Retry-After', async () => {
    clock.advance(RESET_WINDOW_MS);
    const b = browser();
    const form = await b.get('/login/forgot');
    for (let i = 0; i < 3; i++) assert.equal((await b.submit(form, { email: 'limited@example.com' })).status, 200);
    const limited = await b.submit(form, { email: 'limited@example.com' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    for (let i = 0; i < 17; i++) assert.equal((await b.submit(form, { email: `ip${i}@example.com` })).status, 200);
    const byIp = await b.submit(form, { email: 'fresh@example.com' });
    assert.equal(byIp.status, 429, 'the IP has used its 20');
    assert.ok(Number(byIp.headers['retry-after']) > 0);
    clock.advance(RESET_WINDOW_MS);
    assert.equal((await b.submit(form, { email: 'fresh@example.com' })).status, 200, 'a new window');
  });

  it('retries an SMTP 4xx with the same Message-ID and fails a 5xx at once (email.failed)', async () => {
    const sender = s.server.ctx.emailSender;
    smtp.answer(451);
    const id = await createUser('eve@example.com');
    const { email_id } = (await api('POST', `/users/${id}/verification_email`)).json();
    const row = await waitFor(async () => {
      const r = await outboxRow(email_id);
      return r && r.attempts >= 1 && r.status === 'pending' ? r : undefined;
    }, 'a retried attempt');
    assert.match(row.lastError ?? '', /451/);
    assert.ok(row.message !== null, 'kept until sent');
    smtp.answer('ok');
    clock.advance(61_000);
    await sender.tick();
    await sender.idle();
    const m = await messageTo('eve@example.com');
    assert.equal(m.header('message-id'), row.messageId);
    assert.equal((await outboxRow(email_id))!.status, 'sent');

    smtp.answer(550);
    const id2 = await createUser('fay@example.com');
    const second = (await api('POST', `/users/${id2}/verification_email`)).json().email_id as string;
    const failed = await waitFor(async () => {
      const r = await outboxRow(second);
      return r?.status === 'failed' ? r : undefined;
    }, 'a failed message');
    smtp.answer('ok');
    assert.equal(failed.attempts, 1, 'a 5xx is not retried');
    assert.equal(failed.message, null);
    const ev = (await eventsOf('email.failed')).find((e) => e.data.email_id === second);
    assert.ok(ev);
    assert.match(String(ev.data.last_error), /550/);
  });

  it('sends from the tenant sender (/v1/email_settings)', async () => {
    const initial = (await api('GET', '/email_settings')).json();
    assert.equal(initial.transport, 'smtp');
    assert.equal(initial.from_address, null);
    expectError(await api('PUT', '/email_settings', { from_address: 'not an address', from_name: null, reply_to: null }), 400, 'invalid_request');
    expectError(await api('PUT', '/email_settings', { from_address: null, from_name: 'Evil\r\nBcc: x@y.z', reply_to: null }), 400, 'invalid_request');
    const put = await api('PUT', '/email_settings', { from_address: 'hello@acme.example', from_name: 'Acme', reply_to: 'support@acme.example' });
    assert.equal(put.status, 200, put.text);
    const id = await createUser('gus@example.com');
    await api('POST', `/users/${id}/verification_email`);
    const m = await messageTo('gus@example.com');
    assert.match(m.header('from') ?? '', /^"?Acme"? <hello@acme\.example>$/);
    assert.equal(m.header('reply-to'), 'support@acme.example');
    assert.match(m.header('subject') ?? '', /for Acme/);
    assert.match(m.header('message-id') ?? '', /@acme\.example>$/);
  });

  it('writes no token, code or link to any log line', () => {
    assert.ok(logs.length > 10, `${logs.length} log lines captured`);
    const secrets = smtp.messages.flatMap((m) => [m.link && new URL(m.link).searchParams.get('token'), m.code]).filter((x): x is string => !!x);
    assert.ok(secrets.length > 5);
    for (const line of logs) {
      for (const secret of secrets) assert.ok(!line.includes(secret), `a log line carries a secret: ${line.slice(0, 200)}`);
      assert.ok(!/vfy_|rst_|verify-email\?|reset-password\?/.test(line), `a log line carries a link: ${line.slice(0, 200)}`);
    }
  });
});
