/**
 * Invitations to an organization (issue 29 point 5, docs/invitations.md) over a real SMTP server
 * (smtp-server inside the test): /v1 create, list, resend, revoke; the emailed link's page for a
 * new invitee (the account is created, verified and signed in), an existing one (sign in, then
 * accept) and a browser signed in as another address (asked to switch); member.added with roles;
 * every refusal with its status and code: expired (injected clock), reused, revoked, tampered,
 * cross-tenant, another address, an organization-bound key outside its organization.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { sha256Hex } from '../../src/kernel/crypto/hash.js';
import type { HttpResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { Browser, PASSWORD } from '../signin/helpers.js';
import { startSmtp, waitFor } from './smtp.js';

const errorOf = (r: HttpResponse) => /data-error="([^"]+)"/.exec(r.text)?.[1];
const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;
const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

describe('invitations: /v1, the email, the accept page', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let s: TestServer;
  let api: Api;
  let orgA: string;
  let orgB: string;
  const clock = new ManualClock();

  const browser = () => new Browser(s.port, s.tenant.tenant.host);
  const linkTo = (to: string, n = 1) => waitFor(() => smtp.messages.filter((m) => m.to.includes(to))[n - 1]?.link, `invitation ${n} to ${to}`);
  const eventsOf = async (type: string) => (await api('GET', `/events?types=${type}&limit=100`)).json().data as Array<{ data: Record<string, unknown> }>;
  const invite = async (orgId: string, body: Record<string, unknown>) => {
    const r = await api('POST', `/organizations/${orgId}/invitations`, body);
    assert.equal(r.status, 201, r.text);
    return r.json() as { id: string; roles: string[]; status: string; email: string; expires_at: string };
  };
  const refused = (r: HttpResponse, status: number, error: string, words: RegExp) => {
    assert.equal(r.status, status, r.text.slice(0, 300));
    assert.equal(errorOf(r), error);
    assert.match(r.text, words);
  };

  before(async () => {
    smtp = await startSmtp();
    s = await startTestServer({ clock, config: { smtpUrl: smtp.url, dispatchIntervalMs: 50 } });
    api = v1(s, s.tenant.platformApiKey);
    orgA = (await api('POST', '/organizations', { name: 'Acme' })).json().id;
    orgB = (await api('POST', '/organizations', { name: 'Beta' })).json().id;
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  it("invites a new address with the default role: 201, the email's link, the secret stored only hashed, invitation.created", async () => {
    const inv = await invite(orgA, { email: 'New.Person@Example.com' });
    assert.match(inv.id, /^inv_/);
    assert.deepEqual([inv.email, inv.roles, inv.status], ['new.person@example.com', ['member'], 'pending']);
    assert.equal(Date.parse(inv.expires_at) - clock.now(), 7 * 86_400_000, 'seven days by default');
    const link = await linkTo('new.person@example.com');
    assert.match(link, /\/invitations\/accept\?token=ivt_/);
    const m = smtp.messages.find((x) => x.link === link)!;
    assert.match(m.header('subject') ?? '', /you are invited to join Acme/);
    const row = await s.server.ctx.db.kysely.selectFrom('organization_invitations').selectAll().where('id', '=', inv.id).executeTakeFirstOrThrow();
    assert.equal(row.token_hash, sha256Hex(tokenOf(link)));
    assert.ok(!JSON.stringify(row).includes(tokenOf(link)));
    const created = (await eventsOf('invitation.created')).find((e) => e.data.invitation_id === inv.id);
    assert.deepEqual(created?.data.roles, ['member']);
    assert.ok(!JSON.stringify(created).includes(tokenOf(link)), 'the event carries no link');
    const listed = (await api('GET', `/organizations/${orgA}/invitations`)).json();
    assert.deepEqual(
      listed.data.map((i: { id: string }) => i.id),
      [inv.id],
    );
  });

  it('a new invitee creates the account from the link: verified, signed in, a member with the roles; the link then refuses', async () => {
    const link = await linkTo('new.person@example.com');
    const b = browser();
    const page = await b.get(pathOf(link));
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /action="\/invitations\/accept\/new"/);
    const differ = await b.submit(page, { password: 'a good password', password_repeat: 'another password' });
    assert.equal(differ.status, 400);
    assert.match(differ.text, /The two passwords differ/);
    const short = await b.submit(page, { password: 'short', password_repeat: 'short' });
    assert.equal(short.status, 400);
    assert.match(short.text, /between 8 and 256/);
    const done = await b.submit(page, { password: 'a good password', password_repeat: 'a good password' });
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /id="joined">You are now a member of Acme/);
    assert.equal((await b.get('/sessions')).status, 200, 'signed in');
    const user = (await api('GET', '/users?email=new.person%40example.com')).json().data[0];
    assert.equal(user.email_verified, true, 'the link proved the address');
    const member = (await api('GET', `/organizations/${orgA}/members`)).json().data.find((x: { user_id: string }) => x.user_id === user.id);
    assert.deepEqual(member.roles, ['member']);
    const added = (await eventsOf('member.added')).find((e) => e.data.user_id === user.id);
    assert.deepEqual(added?.data.roles, ['member']);
    assert.ok((await eventsOf('invitation.accepted')).some((e) => e.data.user_id === user.id && e.data.organization_id === orgA));
    const listed = (await api('GET', `/organizations/${orgA}/invitations`)).json().data[0];
    assert.deepEqual([listed.status, listed.accepted_by], ['accepted', user.id]);
    refused(await browser().get(pathOf(link)), 400, 'invalid_request', /already accepted/);
    refused(await b.submit(page, { password: 'a good password', password_repeat: 'a good password' }), 400, 'invalid_request', /already accepted/);
  });

  it('an existing account signs in first (back to the link), then accepts: member with the invited roles', async () => {
    await api('POST', '/users', { email: 'ada@example.com', password: PASSWORD });
    const inv = await invite(orgA, { email: 'ada@example.com', roles: ['admin'] });
    const link = await linkTo('ada@example.com');
    const b = browser();
    const page = await b.get(pathOf(link));
    assert.equal(page.status, 200);
    const loginHref = /href="([^"]+)" id="sign-in"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    assert.equal(new URL(loginHref, 'http://x').searchParams.get('return_to'), pathOf(link));
    const login = await b.get(loginHref);
    // The password form is only for an address without an account: a forged one is refused.
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(login.text)![1]!;
    const forged = await b.post('/invitations/accept/new', {
      csrf_token: csrf,
      token: tokenOf(link),
      password: 'a good password',
      password_repeat: 'a good password',
    });
    refused(forged, 409, 'conflict', /sign in to accept the invitation/);
    const signedIn = await b.submit(login, { email: 'ada@example.com', password: PASSWORD });
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.headers.location, pathOf(link));
    const accept = await b.get(pathOf(link));
    assert.match(accept.text, /id="accept"/);
    const done = await b.submit(accept);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /id="joined"/);
    const user = (await api('GET', '/users?email=ada%40example.com')).json().data[0];
    const member = (await api('GET', `/organizations/${orgA}/members`)).json().data.find((x: { user_id: string }) => x.user_id === user.id);
    assert.deepEqual(member.roles, ['admin']);
    assert.ok((await eventsOf('invitation.accepted')).some((e) => e.data.invitation_id === inv.id));
    expectError(await api('POST', `/organizations/${orgA}/invitations`, { email: 'ada@example.com' }), 409, 'conflict');
  });

  it('signed in as another address: the page asks to switch; accepting anyway is 403; switching signs out and continues', async () => {
    await api('POST', '/users', { email: 'bob@example.com', password: PASSWORD });
    await invite(orgB, { email: 'carol@example.com' });
    const link = await linkTo('carol@example.com');
    const b = browser();
    assert.equal((await b.submit(await b.get('/login'), { email: 'bob@example.com', password: PASSWORD })).status, 303);
    const page = await b.get(pathOf(link));
    assert.equal(page.status, 200);
    assert.match(page.text, /id="other-account">You are signed in as bob@example\.com, but this invitation is for carol@example\.com/);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
    refused(await b.post('/invitations/accept', { csrf_token: csrf, token: tokenOf(link) }), 403, 'forbidden', /for another email address/);
    const switched = await b.submit(page);
    assert.equal(switched.status, 303);
    assert.equal(switched.headers.location, pathOf(link));
    assert.equal((await b.get('/sessions')).status, 303, 'signed out');
    const next = await b.get(pathOf(link));
    assert.match(next.text, /action="\/invitations\/accept\/new"/, 'carol has no account: the page creates it');
    const done = await b.submit(next, { password: 'carols password', password_repeat: 'carols password' });
    assert.match(done.text, /You are now a member of Beta/);
  });

  it('refuses tampered, cross-tenant, expired (clock), revoked and resent-over links: 400 invalid_request with the reason', async () => {
    const inv = await invite(orgA, { email: 'dan@example.com', expires_in: 3600 });
    const link = await linkTo('dan@example.com');
    const path = pathOf(link);
    refused(await browser().get(path.slice(0, -2) + (path.endsWith('AA') ? 'BB' : 'AA')), 400, 'invalid_request', /not valid/);
    refused(await browser().get('/invitations/accept?token=nonsense'), 400, 'invalid_request', /not valid/);
    await s.createTenant(`other.test:${s.port}`);
    refused(await new Browser(s.port, `other.test:${s.port}`).get(path), 400, 'invalid_request', /not valid/);

    const held = browser();
    const page = await held.get(path);
    assert.equal(page.status, 200);
    clock.advance(3601_000);
    refused(await browser().get(path), 400, 'invalid_request', /has expired/);
    assert.equal((await api('GET', `/organizations/${orgA}/invitations`)).json().data.find((i: { id: string }) => i.id === inv.id).status, 'expired');

    // A resend renews an expired invitation: a new link, the old one no longer works.
    const resent = await api('POST', `/organizations/${orgA}/invitations/${inv.id}/resend`);
    assert.equal(resent.status, 200, resent.text);
    assert.equal(resent.json().status, 'pending');
    const second = await linkTo('dan@example.com', 2);
    assert.notEqual(second, link);
    refused(await browser().get(path), 400, 'invalid_request', /not valid/);
    assert.equal((await browser().get(pathOf(second))).status, 200);

    const gone = await api('DELETE', `/organizations/${orgA}/invitations/${inv.id}`);
    assert.equal(gone.status, 204);
    refused(await browser().get(pathOf(second)), 400, 'invalid_request', /withdrawn/);
    refused(await held.submit(page, { password: 'a good password', password_repeat: 'a good password' }), 400, 'invalid_request', /not valid/);
    assert.ok((await eventsOf('invitation.revoked')).some((e) => e.data.invitation_id === inv.id));
    expectError(await api('DELETE', `/organizations/${orgA}/invitations/${inv.id}`), 409, 'conflict');
    expectError(await api('POST', `/organizations/${orgA}/invitations/${inv.id}/resend`), 409, 'conflict');
    expectError(await api('DELETE', `/organizations/${orgB}/invitations/${inv.id}`), 404, 'not_found');
    expectError(await api('POST', `/organizations/${orgA}/invitations/inv_doesnotexist/resend`), 404, 'not_found');
  });

  it('refuses bad requests: 400 for an address, a role or expires_in; 404 for an organization; 409 for a pending duplicate; 403 csrf', async () => {
    expectError(await api('POST', `/organizations/${orgA}/invitations`, { email: 'not an address' }), 400, 'invalid_request');
    expectError(await api('POST', `/organizations/${orgA}/invitations`, { email: 'eve@example.com', roles: ['nosuchrole'] }), 400, 'invalid_request');
    expectError(await api('POST', `/organizations/${orgA}/invitations`, { email: 'eve@example.com', expires_in: 10 }), 400, 'invalid_request');
    expectError(await api('POST', `/organizations/${orgA}/invitations`, { email: 'eve@example.com', role: 'admin' }), 400, 'invalid_request');
    expectError(await api('POST', '/organizations/org_doesnotexist/invitations', { email: 'eve@example.com' }), 404, 'not_found');
    expectError(await api('GET', '/organizations/org_doesnotexist/invitations'), 404, 'not_found');
    await invite(orgA, { email: 'eve@example.com' });
    expectError(await api('POST', `/organizations/${orgA}/invitations`, { email: 'EVE@example.com' }), 409, 'conflict');
    const link = await linkTo('eve@example.com');
    const b = browser();
    await b.get(pathOf(link));
    const forged = await b.post('/invitations/accept/new', { token: tokenOf(link), password: 'a good password', password_repeat: 'a good password' });
    assert.equal(forged.status, 403);
    assert.equal(errorOf(forged), 'csrf_failed');
  });

  it('an organization-bound key invites only into its own organization (403 forbidden elsewhere)', async () => {
    const minted = await api('POST', `/organizations/${orgB}/api_keys`, { name: 'b', scopes: ['members:read', 'members:write'] });
    const orgKey = v1(s, minted.json().key);
    const own = await orgKey('POST', `/organizations/${orgB}/invitations`, { email: 'fay@example.com' });
    assert.equal(own.status, 201, own.text);
    assert.equal((await orgKey('GET', `/organizations/${orgB}/invitations`)).status, 200);
    expectError(await orgKey('POST', `/organizations/${orgA}/invitations`, { email: 'fay@example.com' }), 403, 'forbidden');
    expectError(await orgKey('GET', `/organizations/${orgA}/invitations`), 403, 'forbidden');
    expectError(await orgKey('POST', `/organizations/${orgA}/invitations/${own.json().id}/resend`), 403, 'forbidden');
    const readOnly = v1(s, (await api('POST', `/organizations/${orgB}/api_keys`, { name: 'r', scopes: ['members:read'] })).json().key);
    expectError(await readOnly('POST', `/organizations/${orgB}/invitations`, { email: 'gil@example.com' }), 403, 'insufficient_scope');
    // An organization's invitations go with it.
    assert.equal((await api('DELETE', `/organizations/${orgB}`)).status, 204);
    const left = await s.server.ctx.db.kysely.selectFrom('organization_invitations').select('id').where('organization_id', '=', orgB).execute();
    assert.deepEqual(left, []);
  });
});
