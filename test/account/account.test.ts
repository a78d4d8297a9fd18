/**
 * The /account page (docs/account.md) at the HTTP level: where the user is signed in (device, IP,
 * method; ending one), linked accounts (a link through a GitHub-like stand-in, refused when the
 * identity is another user's, unlink refused when it is the last way to sign in), the email
 * change (a link to the new address, the old one told; dead, reused and tampered links), and
 * /v1's session fields, unlink rule and PATCH of an email.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import type { HttpResponse } from '../helpers/http.js';
import { expectError } from '../helpers/v1.js';
import { waitFor } from '../email/smtp.js';
import { type Browser, decodeEntities, PASSWORD } from '../signin/helpers.js';
import { type SsoTestServer, startSsoServer } from '../sso/helpers.js';
import { GithubStandIn } from '../social/stand-ins.js';

const errorOf = (r: HttpResponse) => /data-error="([^"]+)"/.exec(r.text)?.[1];
const csrfOf = (page: HttpResponse) => decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!);

describe('/account: sessions, linked accounts, email change', () => {
  const clock = new ManualClock();
  let s: SsoTestServer;
  let gh: GithubStandIn;
  let github: { id: string };

  before(async () => {
    s = await startSsoServer({ dispatchIntervalMs: 50 }, { clock });
    gh = await GithubStandIn.start();
    const g = await s.api('POST', '/social_connections', gh.connection());
    assert.equal(g.status, 201, g.text);
    github = g.json();
    gh.people.set('ada-gh', {
      id: 101,
      login: 'ada-gh',
      name: 'Ada',
      avatar: 'https://avatars.test/a.png',
      emails: [{ email: 'ada@github.test', primary: true, verified: true }],
    });
    gh.people.set('eve-gh', {
      id: 202,
      login: 'eve-gh',
      name: 'Eve',
      avatar: 'https://avatars.test/a.png',
      emails: [{ email: 'eve@github.test', primary: true, verified: true }],
    });
  });
  after(async () => {
    await s.close();
    await gh.close();
  });

  const signInAt = async (b: Browser, email: string, userAgent: string) => {
    const page = await b.get('/login?return_to=%2Faccount', { 'user-agent': userAgent });
    const r = await b.post('/login', { email, password: PASSWORD, csrf_token: csrfOf(page), return_to: '/account' }, { 'user-agent': userAgent });
    assert.equal(r.status, 303, r.text.slice(0, 300));
    return r;
  };
  const events = async (type: string) => (await s.api('GET', `/events?types=${type}&limit=100`)).json().data as Array<{ data: Record<string, unknown> }>;
  const mailTo = (to: string, template: string) =>
    waitFor(async () => {
      const rows = await s.server.ctx.db.kysely
        .selectFrom('email_dev_mailbox')
        .selectAll()
        .where('recipient', '=', to)
        .where('template', '=', template)
        .orderBy('created_at', 'desc')
        .execute();
      return rows[0];
    }, `${template} to ${to}`);
  const linkIn = (text: string) => {
    const u = new URL(/https?:\/\/\S+\/account\S*/.exec(text)![0]);
    return u.pathname + u.search;
  };

  it('without a session sends the browser to sign in and back', async () => {
    const r = await s.browser().get('/account');
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/login?return_to=%2Faccount');
  });

  it('lists where the user is signed in, with device, IP and method; ending one revokes it (session.revoked, reason user)', async () => {
    const user = await s.createUser('ada@example.com');
    const laptop = s.browser();
    const phone = s.browser();
    await signInAt(laptop, user.email, 'Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0');
    await signInAt(phone, user.email, 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile/15E148 Safari/604.1');
    const page = await laptop.get('/account');
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.match(page.headers['content-security-policy'] as string, /script-src|default-src/);
    assert.match(page.text, /Where you are signed in/);
    assert.match(page.text, /Firefox on Linux \(this device\)/);
    assert.match(page.text, /Safari on iOS/);
    assert.match(page.text, /127\.0\.0\.1/);
    assert.equal([...page.text.matchAll(/data-method="password"/g)].length, 2);
    const phoneId = [...page.text.matchAll(/<tr data-session="([^"]+)">/g)].map((m) => m[1]!)[0]!;
    assert.match(phoneId, /^ses_/);

    const listed = await s.api('GET', `/users/${user.id}/sessions`);
    const data = listed.json().data as Array<Record<string, unknown>>;
    assert.deepEqual(
      data.map((d) => d.method),
      ['password', 'password'],
    );
    assert.deepEqual(data.map((d) => d.device).sort(), ['Firefox on Linux', 'Safari on iOS']);
    assert.equal(data[0]!.idp, null);

    // CSRF on every POST.
    assert.equal((await laptop.post('/account/sessions/revoke', { session_id: phoneId })).status, 403);
    const ended = await laptop.post('/account/sessions/revoke', { session_id: phoneId, csrf_token: csrfOf(page) });
    assert.equal(ended.status, 303);
    assert.equal(ended.headers.location, '/account?done=session_ended#sessions');
    assert.equal((await phone.get('/account')).status, 303, 'the phone is signed out');
    const revoked = (await events('session.revoked')).find((e) => e.data.session_id === phoneId);
    assert.equal(revoked?.data.reason, 'user');
    const after = await laptop.get('/account?done=session_ended');
    assert.match(after.text, /data-notice="session_ended"/);
    assert.ok(!after.text.includes(phoneId));
  });

  it('links a GitHub identity from /account through the provider, refuses one that is another user’s, unlinks only while a way to sign in remains', async () => {
    const user = await s.createUser('grace@example.com');
    const b = s.browser();
    await signInAt(b, user.email, 'Mozilla/5.0 Chrome/131.0 Windows');
    const page = await b.get('/account');
    assert.match(page.text, new RegExp(`data-connection="${github.id}"`));
    assert.match(page.text, /Link GitHub/);
    const toGh = await b.post('/account/identities/link', { connection_id: github.id, csrf_token: csrfOf(page) });
    assert.equal(toGh.status, 303, toGh.text.slice(0, 300));
    const callback = gh.approve(toGh.headers.location!, 'ada-gh');
    const back = await b.get(callback.pathname + callback.search);
    assert.equal(back.status, 303, back.text.slice(0, 400));
    assert.equal(back.headers.location, '/account?done=linked#identities');
    const linkedPage = await b.get('/account?done=linked');
    assert.match(linkedPage.text, /data-notice="linked"/);
    const identityId = /data-identity="([^"]+)"/.exec(linkedPage.text)![1]!;
    const linked = (await events('identity.linked')).find((e) => e.data.identity_id === identityId);
    assert.equal(linked?.data.reason, 'user');
    assert.equal(linked?.data.user_id, user.id);

    // The linked identity signs this user in; its session says so.
    const viaGh = s.browser();
    const start = await viaGh.get(`/social/${github.id}/start`);
    const cb = gh.approve(start.headers.location!, 'ada-gh');
    const signedIn = await viaGh.get(cb.pathname + cb.search);
    assert.equal(signedIn.status, 303, signedIn.text.slice(0, 300));
    const social = ((await s.api('GET', `/users/${user.id}/sessions`)).json().data as Array<Record<string, unknown>>).find((x) => x.method === 'social');
    assert.equal(social?.idp, github.id);
    assert.match((await viaGh.get('/account')).text, /data-method="social">With GitHub</);

    // The same GitHub account cannot be linked to another user.
    const other = await s.createUser('hedy@example.com');
    const ob = s.browser();
    await signInAt(ob, other.email, 'curl/8.0');
    const opage = await ob.get('/account');
    const oGh = await ob.post('/account/identities/link', { connection_id: github.id, csrf_token: csrfOf(opage) });
    const ocb = gh.approve(oGh.headers.location!, 'ada-gh');
    const refused = await ob.get(ocb.pathname + ocb.search);
    assert.equal(refused.status, 409);
    assert.equal(errorOf(refused), 'identity_in_use');
    assert.match(refused.text, /already linked to another user/);
    // An unknown connection is refused.
    const unknown = await ob.post('/account/identities/link', { connection_id: 'soc_nope', csrf_token: csrfOf(opage) });
    assert.equal(unknown.status, 404);

    // With a password, unlinking is allowed.
    const unlinked = await b.post('/account/identities/unlink', { identity_id: identityId, csrf_token: csrfOf(linkedPage) });
    assert.equal(unlinked.status, 303);
    assert.equal(unlinked.headers.location, '/account?done=unlinked#identities');
    assert.equal((await events('identity.unlinked')).filter((e) => e.data.identity_id === identityId).length, 1);
  });

  it('refuses to unlink the last way to sign in, on /account and at /v1 (409 last_sign_in_method)', async () => {
    // A user created by a first social sign-in: no password, no passkey, one identity.
    const b = s.browser();
    const start = await b.get(`/social/${github.id}/start`);
    const cb = gh.approve(start.headers.location!, 'eve-gh');
    assert.equal((await b.get(cb.pathname + cb.search)).status, 303);
    const users = (await s.api('GET', '/users?email=eve@github.test')).json().data as Array<{ id: string }>;
    const eve = users[0]!.id;
    const page = await b.get('/account');
    assert.equal(page.status, 200);
    assert.match(page.text, /data-method="social"/);
    const identityId = /data-identity="([^"]+)"/.exec(page.text)![1]!;
    const refused = await b.post('/account/identities/unlink', { identity_id: identityId, csrf_token: csrfOf(page) });
    assert.equal(refused.status, 409);
    assert.equal(errorOf(refused), 'last_sign_in_method');
    expectError(await s.api('DELETE', `/users/${eve}/identities/${identityId}`), 409, 'last_sign_in_method');
    expectError(await s.api('DELETE', `/users/${eve}/identities/idn_unknown`), 404, 'not_found');
    // A password is another way: then it goes.
    assert.equal((await s.api('PATCH', `/users/${eve}`, { password: 'another long password' })).status, 200);
    assert.equal((await s.api('DELETE', `/users/${eve}/identities/${identityId}`)).status, 204);
  });

  it('a stale login must sign in again before it links, unlinks or changes the email', async () => {
    const user = await s.createUser('stale@example.com');
    const b = s.browser();
    await signInAt(b, user.email, 'curl/8.0');
    const page = await b.get('/account');
    clock.advance(6 * 60_000);
    const r = await b.post('/account/email', { email: 'new-stale@example.com', csrf_token: csrfOf(page) });
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/login?return_to=%2Faccount&reauth=1');
  });

  it('changes the email only once the new address confirms it; the old address is told; refusals', async () => {
    const user = await s.createUser('lin@example.com');
    await s.createUser('taken@example.com');
    const b = s.browser();
    await signInAt(b, user.email, 'curl/8.0');
    let page = await b.get('/account');
    expectPageError(await b.post('/account/email', { email: 'not an address', csrf_token: csrfOf(page) }), 400, 'invalid_request');
    expectPageError(await b.post('/account/email', { email: 'LIN@example.com', csrf_token: csrfOf(page) }), 400, 'invalid_request');
    // An address another user has: the same answer, and nothing is sent.
    const taken = await b.post('/account/email', { email: 'taken@example.com', csrf_token: csrfOf(page) });
    assert.equal(taken.status, 303);
    assert.match(taken.headers.location!, /^\/account\?done=email_sent&to=taken%40example\.com/);
    const asked = await b.post('/account/email', { email: 'Lin.New@example.com', csrf_token: csrfOf(page) });
    assert.equal(asked.status, 303);
    page = await b.get(asked.headers.location!);
    assert.match(page.text, /lin\.new@example\.com/);
    assert.match(page.text, /id="current-email">lin@example\.com</, 'not changed yet');
    const mail = await mailTo('lin.new@example.com', 'email_change');
    const link = linkIn(mail.text_body);
    assert.match(link, /^\/account\/email\/verify\?token=chg_/);
    const rows = await s.server.ctx.db.kysely.selectFrom('email_dev_mailbox').select('template').where('recipient', '=', 'taken@example.com').execute();
    assert.deepEqual(rows, []);

    // Tampered: refused.
    const tampered = await b.get(link.slice(0, -3) + 'AAA');
    assert.equal(tampered.status, 400);
    assert.equal(errorOf(tampered), 'invalid_request');
    // Confirmed in another browser (the link is the proof; no session needed).
    const phone = s.browser();
    const confirm = await phone.get(link);
    assert.equal(confirm.status, 200);
    assert.match(confirm.text, /lin\.new@example\.com/);
    const done = await phone.post('/account/email/verify', { token: new URL(link, 'http://x').searchParams.get('token')!, csrf_token: csrfOf(confirm) });
    assert.equal(done.status, 303, done.text.slice(0, 300));
    const u = (await s.api('GET', `/users/${user.id}`)).json();
    assert.equal(u.email, 'lin.new@example.com');
    assert.equal(u.email_verified, true);
    const notice = await mailTo('lin@example.com', 'email_changed');
    assert.match(notice.subject, /was changed/);
    // Reused: refused.
    const reused = await phone.post('/account/email/verify', { token: new URL(link, 'http://x').searchParams.get('token')!, csrf_token: csrfOf(confirm) });
    assert.equal(reused.status, 400);
    assert.equal(errorOf(reused), 'invalid_request');
    // Expired: refused.
    page = await b.get('/account');
    await b.post('/account/email', { email: 'lin.third@example.com', csrf_token: csrfOf(page) });
    const third = linkIn((await mailTo('lin.third@example.com', 'email_change')).text_body);
    clock.advance(24 * 3600_000 + 1);
    assert.equal((await b.get(third)).status, 400);
    // Taken meanwhile: 409 email_taken when the link is confirmed.
    const fresh = s.browser();
    await signInAt(fresh, 'lin.new@example.com', 'curl/8.0');
    page = await fresh.get('/account');
    await fresh.post('/account/email', { email: 'race@example.com', csrf_token: csrfOf(page) });
    const race = linkIn((await mailTo('race@example.com', 'email_change')).text_body);
    await s.createUser('race@example.com');
    const racePage = await fresh.get(race);
    const raced = await fresh.post('/account/email/verify', { token: new URL(race, 'http://x').searchParams.get('token')!, csrf_token: csrfOf(racePage) });
    assert.equal(raced.status, 409);
    assert.equal(errorOf(raced), 'email_taken');
  });

  it('PATCH /v1/users applies a new email at once, unverified, and sends a verification message; a pending change link dies', async () => {
    const user = await s.createUser('pat@example.com');
    await s.api('PATCH', `/users/${user.id}`, { email_verified: true });
    const b = s.browser();
    await signInAt(b, user.email, 'curl/8.0');
    const page = await b.get('/account');
    await b.post('/account/email', { email: 'pat.pending@example.com', csrf_token: csrfOf(page) });
    const pending = linkIn((await mailTo('pat.pending@example.com', 'email_change')).text_body);
    const r = await s.api('PATCH', `/users/${user.id}`, { email: 'pat.admin@example.com' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().email, 'pat.admin@example.com');
    assert.equal(r.json().email_verified, false);
    const mail = await mailTo('pat.admin@example.com', 'verify_email');
    assert.match(mail.text_body, /\/verify-email\?token=vfy_/);
    assert.equal((await b.get(pending)).status, 400, 'the change asked for before is void');
    expectError(await s.api('PATCH', `/users/${user.id}`, { email: 'taken@example.com' }), 409, 'conflict');
  });
});

function expectPageError(r: HttpResponse, status: number, code: string) {
  assert.equal(r.status, status, r.text.slice(0, 300));
  assert.equal(errorOf(r), code);
}
