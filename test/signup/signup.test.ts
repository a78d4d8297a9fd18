/**
 * Issue 29 points 4 and 6 over a real SMTP server (smtp-server inside the test): the sign-in
 * policy, self sign-up (open, domains, with and without a verified email first), prompt=create,
 * passwordless sign-in by code and by link, the link opened in another browser, and every refusal
 * with its status and error code (sign-up off, wrong domain, existing account, wrong, expired,
 * reused and exhausted codes, 429 with Retry-After).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { ManualClock } from '../../src/kernel/clock.js';
import type { HttpResponse } from '../helpers/http.js';
import { type Api, v1 } from '../helpers/v1.js';
import { type Received, startSmtp, waitFor } from '../email/smtp.js';
import { callbackParams, location, PASSWORD, REDIRECT, S256, type SigninTestServer, startSigninServer, VERIFIER } from '../signin/helpers.js';

const errorOf = (r: HttpResponse) => /data-error="([^"]+)"/.exec(r.text)?.[1];
const linkIn = (m: Received) => /https?:\/\/[^\s"<]+\/(?:signup\/verify|login\/email\/verify)\?token=[A-Za-z0-9_-]+/.exec(m.decoded)?.[0];
const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;

describe('sign-up and passwordless sign-in by email', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let s: SigninTestServer;
  let api: Api;
  let clientId = '';
  const clock = new ManualClock();

  const messagesTo = (to: string) => smtp.messages.filter((m) => m.to.includes(to));
  const messageTo = (to: string, n = 1) => waitFor(() => messagesTo(to)[n - 1], `message ${n} to ${to}`);
  const policy = (body: Record<string, unknown>) => api('PUT', '/signin_policy', body);
  const authorizePath = async (extra: Record<string, string> = {}) =>
    `/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email',
      state: 'st-1',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
      ...extra,
    }).toString()}`;
  const userByEmail = async (email: string) =>
    ((await api('GET', `/users?email=${encodeURIComponent(email)}`)).json().data as Array<{ id: string; email_verified: boolean }>)[0];
  const eventsOf = async (type: string) => (await api('GET', `/events?types=${type}&limit=100`)).json().data as Array<{ data: Record<string, unknown> }>;

  before(async () => {
    smtp = await startSmtp();
    s = await startSigninServer({ clock, config: { smtpUrl: smtp.url, dispatchIntervalMs: 50 } });
    api = v1(s, s.tenant.platformApiKey);
    clientId = (await s.publicClient()).client_id;
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  it('GET/PUT /v1/signin_policy: defaults (sign-up off), validation, the event', async () => {
    const got = await api('GET', '/signin_policy');
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json(), { signup: 'off', signup_domains: [], passwordless: [], require_verified_email: false, updated_at: null });
    const noDomains = await policy({ signup: 'domains' });
    assert.equal(noDomains.status, 400);
    assert.equal(noDomains.json().error, 'invalid_request');
    const badDomain = await policy({ signup: 'domains', signup_domains: ['not a domain'] });
    assert.equal(badDomain.status, 400);
    assert.equal(badDomain.json().error, 'invalid_request');
    const badMethod = await policy({ signup: 'off', passwordless: ['sms'] });
    assert.equal(badMethod.status, 400);
    const put = await policy({ signup: 'domains', signup_domains: ['Example.ORG'], passwordless: ['email_code'] });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json().signup_domains, ['example.org']);
    const events = await eventsOf('signin_policy.updated');
    assert.equal(events[0]?.data.signup, 'domains');
    const noKey = await v1(s, undefined)('GET', '/signin_policy');
    assert.equal(noKey.status, 401);
  });

  it('sign-up off: no link on the login page, /signup refused, prompt=create answers invalid_request to the client', async () => {
    await policy({ signup: 'off' });
    const b = s.browser();
    const login = location(await b.get(await authorizePath()));
    const page = await b.get(login);
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes('id="create-account"'));
    const get = await b.get('/signup');
    assert.equal(get.status, 403);
    assert.equal(errorOf(get), 'access_denied');
    // A form posted anyway (the policy changed while the page was open).
    await policy({ signup: 'open' });
    const form = await b.get('/signup');
    await policy({ signup: 'off' });
    const posted = await b.submit(form, { email: 'eve@example.com', password: PASSWORD, password_repeat: PASSWORD });
    assert.equal(posted.status, 403);
    assert.equal(errorOf(posted), 'access_denied');
    const create = await b.get(await authorizePath({ prompt: 'create' }));
    assert.equal(create.status, 303);
    const params = callbackParams(create);
    assert.equal(params.get('error'), 'invalid_request');
    assert.equal(params.get('state'), 'st-1');
    const bad = await b.get(await authorizePath({ prompt: 'create none' }));
    assert.equal(callbackParams(bad).get('error'), 'invalid_request');
    const discovery = (await s.request({ path: '/.well-known/openid-configuration' })).json();
    assert.ok((discovery.prompt_values_supported as string[]).includes('create'));
  });

  it('open sign-up through prompt=create: the account at once (unverified, a verification email sent), the code to the client', async () => {
    await policy({ signup: 'open' });
    const b = s.browser();
    const started = await b.get(await authorizePath({ prompt: 'create' }));
    assert.match(location(started), /^\/signup\?flow=flw_/);
    const form = await b.get(location(started));
    assert.equal(form.status, 200);
    const differ = await b.submit(form, { email: 'grace@example.com', password: PASSWORD, password_repeat: 'something else' });
    assert.equal(differ.status, 400);
    assert.equal(errorOf(differ), 'invalid_request');
    const short = await b.submit(form, { email: 'grace@example.com', password: 'short', password_repeat: 'short' });
    assert.equal(short.status, 400);
    const done = await b.submit(form, { email: 'Grace@Example.com', password: PASSWORD, password_repeat: PASSWORD });
    assert.equal(done.status, 303, done.text.slice(0, 400));
    const params = callbackParams(done);
    assert.ok(params.get('code'), location(done));
    assert.equal(params.get('state'), 'st-1');
    const user = await userByEmail('grace@example.com');
    assert.equal(user?.email_verified, false);
    const verification = await messageTo('grace@example.com');
    assert.match(verification.decoded, /\/verify-email\?token=vfy_/);
    const created = (await eventsOf('user.created')).find((e) => e.data.user_id === user!.id);
    assert.deepEqual(created?.data, { user_id: user!.id, signup: true, email_verified: false });

    // The login page links to sign-up now; the same address again is refused.
    const again = s.browser();
    const login = await again.get('/login');
    assert.ok(login.text.includes('id="create-account"'));
    const exists = await again.submit(await again.get('/signup'), { email: 'grace@example.com', password: PASSWORD, password_repeat: PASSWORD });
    assert.equal(exists.status, 409);
    assert.equal(errorOf(exists), 'conflict');
  });

  it('domains with a verified email first: other domains refused; the account is created only when the typed code comes back', async () => {
    await policy({ signup: 'domains', signup_domains: ['example.org'], require_verified_email: true });
    const b = s.browser();
    const started = location(await b.get(await authorizePath({ prompt: 'create' })));
    const form = await b.get(started);
    const wrong = await b.submit(form, { email: 'mallory@example.com', password: PASSWORD, password_repeat: PASSWORD });
    assert.equal(wrong.status, 400);
    assert.equal(errorOf(wrong), 'invalid_request');
    assert.match(wrong.text, /example\.org/);
    const sent = await b.submit(form, { email: 'hedy@example.org', password: PASSWORD, password_repeat: PASSWORD });
    assert.equal(sent.status, 200, sent.text.slice(0, 300));
    assert.match(sent.text, /id="code-intro"/);
    assert.equal(await userByEmail('hedy@example.org'), undefined, 'no account before the address is verified');
    const mail = await messageTo('hedy@example.org');
    assert.match(mail.header('subject') ?? '', /finish creating your account/);
    assert.ok(linkIn(mail)?.includes('/signup/verify?token=sgn_'));
    const typo = await b.submit(sent, { code: mail.code === '000000' ? '000001' : '000000' });
    assert.equal(typo.status, 400);
    assert.equal(errorOf(typo), 'invalid_grant');
    const done = await b.submit(sent, { code: mail.code! });
    assert.equal(done.status, 303, done.text.slice(0, 300));
    assert.ok(callbackParams(done).get('code'));
    assert.equal((await userByEmail('hedy@example.org'))?.email_verified, true);
    // Used: the code and the link are gone.
    const reused = await b.submit(sent, { code: mail.code! });
    assert.equal(reused.status, 400);
    assert.equal(errorOf(reused), 'invalid_grant');
    const link = await s.browser().get(pathOf(linkIn(mail)!));
    assert.equal(link.status, 400);
    assert.equal(errorOf(link), 'invalid_request');
    // An existing address gets the same answer and no email.
    const before = smtp.messages.length;
    const b2 = s.browser();
    const existing = await b2.submit(await b2.get('/signup'), { email: 'hedy@example.org', password: PASSWORD, password_repeat: PASSWORD });
    assert.equal(existing.status, 200);
    assert.match(existing.text, /id="code-intro"/);
    assert.equal(smtp.messages.length, before);
  });

  it("a sign-up's link finishes in the browser that asked; in another browser it asks for the code and signs nobody in by itself", async () => {
    await policy({ signup: 'open', require_verified_email: true });
    const b = s.browser();
    const started = location(await b.get(await authorizePath({ prompt: 'create' })));
    await b.submit(await b.get(started), { email: 'ida@example.com', password: PASSWORD, password_repeat: PASSWORD });
    const mail = await messageTo('ida@example.com');
    const done = await b.submit(await b.get(pathOf(linkIn(mail)!)));
    assert.equal(done.status, 303, done.text.slice(0, 300));
    assert.ok(callbackParams(done).get('code'), 'the same browser continues its flow to the client');

    const asker = s.browser();
    await asker.submit(await asker.get(location(await asker.get(await authorizePath({ prompt: 'create' })))), {
      email: 'joan@example.com',
      password: PASSWORD,
      password_repeat: PASSWORD,
    });
    const other = s.browser();
    const forwarded = await messageTo('joan@example.com');
    const page = await other.get(pathOf(linkIn(forwarded)!));
    assert.equal(page.status, 200);
    const asked = await other.submit(page);
    assert.equal(asked.status, 200);
    assert.match(asked.text, /another browser/);
    assert.ok(![...other.cookies.keys()].some((k) => k.includes('session')), 'no session from a forwarded link');
    assert.equal(await userByEmail('joan@example.com'), undefined);
    const typed = await other.submit(asked, { code: forwarded.code! });
    assert.equal(typed.status, 303);
    assert.equal(location(typed), '/sessions');
    assert.equal((await userByEmail('joan@example.com'))?.email_verified, true);
  });

  it('require_verified_email stops a password sign-in of an unverified user: no session, a verification email', async () => {
    await policy({ signup: 'off', require_verified_email: true });
    await s.createUser('kate@example.com');
    const b = s.browser();
    const r = await b.submit(await b.get('/login'), { email: 'kate@example.com', password: PASSWORD });
    assert.equal(r.status, 403);
    assert.match(r.text, /id="verify-email-code"/);
    assert.ok(![...b.cookies.keys()].some((k) => k.includes('session')));
    const mail = await messageTo('kate@example.com');
    assert.match(mail.decoded, /verify-email\?token=vfy_/);
  });

  it('passwordless by code: the same answer for an unknown address, the code signs in (amr otp), expired and exhausted codes refused', async () => {
    await policy({ signup: 'off', passwordless: ['email_code'] });
    await s.createUser('lise@example.com');
    const b = s.browser();
    const login = await b.get(location(await b.get(await authorizePath())));
    assert.ok(login.text.includes('id="email-code"'));
    const emailForm = (page: HttpResponse) => [...page.text.matchAll(/<form method="post" action="([^"]+)">/g)].findIndex((m) => m[1] === '/login/email');
    const stranger = s.browser();
    const unknown = await stranger.submit(
      await stranger.get(location(await stranger.get(await authorizePath()))),
      { email: 'nobody@example.com' },
      emailForm(login),
    );
    const known = await b.submit(login, { email: 'lise@example.com' }, emailForm(login));
    assert.equal(unknown.status, known.status);
    assert.equal(known.status, 200);
    const strip = (t: string) => t.replace(/nonce="[^"]*"|nonce-[A-Za-z0-9_-]+|value="[^"]*"|flw_[A-Za-z0-9_-]+|(nobody|lise)@example\.com/g, '');
    assert.equal(strip(unknown.text), strip(known.text));
    await s.server.ctx.emailSignin.idle();
    const mail = await messageTo('lise@example.com');
    assert.equal(linkIn(mail), undefined, 'no link unless magic_link is on');
    assert.match(mail.code ?? '', /^\d{6}$/);
    assert.equal(messagesTo('nobody@example.com').length, 0);
    const done = await b.submit(known, { code: mail.code! });
    assert.equal(done.status, 303, done.text.slice(0, 300));
    const code = callbackParams(done).get('code')!;
    const token = await s.post('/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: VERIFIER });
    assert.equal(token.status, 200, token.text);
    const claims = decodeJwt(token.json().id_token as string);
    assert.deepEqual(claims.amr, ['otp']);

    // Expired after 10 minutes.
    const b2 = s.browser();
    const page2 = await b2.submit(await b2.get('/login'), { email: 'lise@example.com' }, emailForm(login));
    await s.server.ctx.emailSignin.idle();
    const mail2 = await messageTo('lise@example.com', 2);
    clock.advance(10 * 60_000 + 1);
    const expired = await b2.submit(page2, { code: mail2.code! });
    assert.equal(expired.status, 400);
    assert.equal(errorOf(expired), 'invalid_grant');

    // Five wrong codes use the challenge up; the right one is refused after.
    const b3 = s.browser();
    const page3 = await b3.submit(await b3.get('/login'), { email: 'lise@example.com' }, emailForm(login));
    await s.server.ctx.emailSignin.idle();
    const mail3 = await messageTo('lise@example.com', 3);
    const wrongCode = mail3.code === '123456' ? '654321' : '123456';
    let last: HttpResponse | undefined;
    for (let i = 0; i < 5; i++) last = await b3.submit(page3, { code: wrongCode });
    assert.equal(last!.status, 400);
    assert.match(last!.text, /Too many wrong codes/);
    const late = await b3.submit(page3, { code: mail3.code! });
    assert.equal(late.status, 400);
    assert.equal(errorOf(late), 'invalid_grant');
  });

  it('passwordless by magic link: signs in the asking browser only; the requests per address are limited (429 + Retry-After)', async () => {
    await policy({ signup: 'off', passwordless: ['email_code', 'magic_link'] });
    await s.createUser('mary@example.com');
    const b = s.browser();
    const login = await b.get(location(await b.get(await authorizePath())));
    const emailForm = [...login.text.matchAll(/<form method="post" action="([^"]+)">/g)].findIndex((m) => m[1] === '/login/email');
    await b.submit(login, { email: 'mary@example.com' }, emailForm);
    await s.server.ctx.emailSignin.idle();
    const mail = await messageTo('mary@example.com');
    const link = linkIn(mail)!;
    assert.ok(link.includes('/login/email/verify?token=mgl_'));
    // Another browser: the code is asked for, nothing signed in.
    const other = s.browser();
    const asked = await other.submit(await other.get(pathOf(link)));
    assert.equal(asked.status, 200);
    assert.match(asked.text, /another browser/);
    assert.ok(![...other.cookies.keys()].some((k) => k.includes('session')));
    // The asking browser: the link continues its flow to the client.
    const done = await b.submit(await b.get(pathOf(link)));
    assert.equal(done.status, 303, done.text.slice(0, 300));
    assert.ok(callbackParams(done).get('code'));

    let limited: HttpResponse | undefined;
    for (let i = 0; i < 6 && limited?.status !== 429; i++) {
      const x = s.browser();
      limited = await x.submit(await x.get('/login'), { email: 'mary@example.com' }, emailForm);
    }
    assert.equal(limited!.status, 429);
    assert.equal(errorOf(limited!), 'rate_limited');
    assert.ok(Number(limited!.headers['retry-after']) > 0);
  });
});
