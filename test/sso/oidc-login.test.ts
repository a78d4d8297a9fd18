import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { REDIRECT, VERIFIER } from '../signin/helpers.js';
import { authorizeAtSp, oidcConnection, type SsoTestServer, signInUpstream, startSsoServer, upstreamUser } from './helpers.js';

describe('OIDC SSO: a second Keyhall tenant as the upstream OpenID Provider', () => {
  let s: SsoTestServer;
  let org: string;
  let conn: { id: string; redirectUri: string };
  let app: { client_id: string };

  before(async () => {
    s = await startSsoServer();
    org = (await s.api('POST', '/organizations', { name: 'Acme', domain: 'acme.test' })).json().id;
    conn = await oidcConnection(s, org);
    app = await s.publicClient();
  });
  after(() => s.close());

  const events = async (types: string) =>
    (await s.api('GET', `/events?organization_id=${org}&types=${types}&limit=100`)).json().data as Array<{
      type: string;
      data: Record<string, unknown>;
      actor: { type: string; id: string };
    }>;
  const failures = async () => (await events('sso.login.failed')).map((e) => e.data.reason);
  const redeem = (code: string) =>
    s.post('/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.client_id, code_verifier: VERIFIER });

  /** /authorize at the SP → /sso/{id}/start → the upstream → back: the callback URL, not yet followed. */
  async function toCallback(b: ReturnType<SsoTestServer['browser']>, email: string): Promise<URL> {
    const login = await authorizeAtSp(s, b, app.client_id);
    const flow = new URL(login, s.issuer).searchParams.get('flow')!;
    return signInUpstream(s, await b.get(`/sso/${conn.id}/start?flow=${encodeURIComponent(flow)}`), email);
  }

  it('signs in end to end: JIT user and membership, a code at the application, audited', async () => {
    await upstreamUser(s, 'grace@acme.test', { name: 'Grace Hopper' });
    const b = s.browser();
    const callback = await toCallback(b, 'grace@acme.test');
    assert.equal(callback.origin + callback.pathname, conn.redirectUri);
    assert.equal(callback.searchParams.get('iss'), s.idpIssuer, 'the upstream sends iss (RFC 9207)');
    const atApp = await b.get(callback.pathname + callback.search);
    assert.equal(atApp.status, 303, atApp.text);
    const back = new URL(atApp.headers.location!);
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('state'), 'app-state');
    assert.equal(back.searchParams.get('iss'), s.issuer);
    const tokens = await redeem(back.searchParams.get('code')!);
    assert.equal(tokens.status, 200, tokens.text);
    const id = decodeJwt(tokens.json().id_token);
    assert.equal(id.email, 'grace@acme.test');
    // acme.test is not a domain the organization verified: its IdP is not believed about it.
    assert.equal(id.email_verified, false);
    assert.equal(id.name, 'Grace Hopper');
    const user = (await s.api('GET', `/users/${id.sub}`)).json();
    assert.equal(user.email, 'grace@acme.test');
    assert.equal(user.has_password, false);
    const members = (await s.api('GET', `/organizations/${org}/members`)).json().data;
    assert.deepEqual(
      members.map((m: { user_id: string; role: string }) => [m.user_id, m.role]),
      [[id.sub, 'member']],
    );
    const added = await events('member.added');
    assert.equal(added.length, 1);
    assert.deepEqual(added[0]!.data, { organization_id: org, user_id: id.sub, role: 'member', connection_id: conn.id });
    const ok = await events('sso.login.succeeded');
    assert.equal(ok.length, 1);
    assert.equal(ok[0]!.data.connection_id, conn.id);
    assert.equal(ok[0]!.data.user_id, id.sub);
    assert.deepEqual(ok[0]!.actor, { type: 'user', id: id.sub });
    assert.ok(!JSON.stringify(ok).includes(callback.searchParams.get('code')!), 'never the upstream code');

    // Signed in at the SP: the session cookie works on /sessions.
    assert.equal((await b.get('/sessions')).status, 200);
  });

  it('a later login updates the profile and adds no second member or user', async () => {
    const upstreamId = (await s.idpApi('GET', '/users?email=grace@acme.test')).json().data[0].id;
    assert.equal((await s.idpApi('PATCH', `/users/${upstreamId}`, { name: 'Rear Admiral Hopper' })).status, 200);
    const b = s.browser();
    const callback = await toCallback(b, 'grace@acme.test');
    const atApp = await b.get(callback.pathname + callback.search);
    const tokens = (await redeem(new URL(atApp.headers.location!).searchParams.get('code')!)).json();
    assert.equal(decodeJwt(tokens.id_token).name, 'Rear Admiral Hopper');
    assert.equal((await events('member.added')).length, 1);
    assert.equal((await s.api('GET', '/users?email=grace@acme.test')).json().data.length, 1);
    assert.equal((await events('sso.login.succeeded')).length, 2);
  });

  it('refuses a replayed callback, another browser, a forged iss, a bad code and an upstream error, each audited', async () => {
    await upstreamUser(s, 'ada@acme.test');
    const b = s.browser();
    const callback = await toCallback(b, 'ada@acme.test');
    // Another browser (no binding cookie) cannot use it — and does not burn it.
    const stranger = s.browser();
    const r1 = await stranger.get(callback.pathname + callback.search);
    assert.equal(r1.status, 400);
    assert.match(r1.text, /access_denied/);
    assert.match(r1.text, /another browser/);
    // A forged iss (RFC 9207 mix-up defence): refused before the code is redeemed.
    const forged = new URL(callback);
    forged.searchParams.set('iss', 'http://evil.localhost');
    // The state is consumed by this attempt: the genuine callback is then a replay.
    const r2 = await b.get(forged.pathname + forged.search);
    assert.equal(r2.status, 400);
    const r3 = await b.get(callback.pathname + callback.search);
    assert.equal(r3.status, 400);
    assert.match(r3.text, /expired or was already used/);

    // A code that is not the upstream's.
    const c2 = await toCallback(b, 'ada@acme.test');
    c2.searchParams.set('code', 'ac_forged');
    assert.equal((await b.get(c2.pathname + c2.search)).status, 400);

    // The IdP answers with an error.
    const c3 = await toCallback(b, 'ada@acme.test');
    const err = new URL(c3.origin + c3.pathname);
    err.search = new URLSearchParams({ error: 'access_denied', state: c3.searchParams.get('state')!, iss: s.idpIssuer }).toString();
    assert.equal((await b.get(err.pathname + err.search)).status, 400);

    // A successful login still works, and a replay of it is refused.
    const c4 = await toCallback(b, 'ada@acme.test');
    assert.equal((await b.get(c4.pathname + c4.search)).status, 303);
    assert.equal((await b.get(c4.pathname + c4.search)).status, 400);

    assert.deepEqual(await failures(), ['browser_mismatch', 'invalid_response', 'state_invalid', 'token_error', 'upstream_error', 'state_invalid']);
    const failed = await events('sso.login.failed');
    assert.ok(failed.every((e) => e.data.connection_id === conn.id));
    assert.ok(!JSON.stringify(failed).includes(callback.searchParams.get('code')!));
  });

  it('stores an email the IdP did not verify as unverified, and links an existing user only when the organization owns the verified domain', async () => {
    const before = (await failures()).length;
    await upstreamUser(s, 'unverified@acme.test', { verified: false });
    const b = s.browser();
    const c1 = await toCallback(b, 'unverified@acme.test');
    const r = await b.get(c1.pathname + c1.search);
    assert.equal(r.status, 303, r.text.slice(0, 300));
    const created = (await s.api('GET', '/users?email=unverified@acme.test')).json().data;
    assert.equal(created.length, 1);
    assert.equal(created[0].email_verified, false);

    // A local account with the same email exists; the domain is not verified: no takeover.
    await s.api('POST', '/users', { email: 'linus@acme.test', password: 'a long password 1' });
    await upstreamUser(s, 'linus@acme.test');
    const b2 = s.browser();
    const c2 = await toCallback(b2, 'linus@acme.test');
    const r2 = await b2.get(c2.pathname + c2.search);
    assert.equal(r2.status, 400);
    assert.match(r2.text, /cannot be linked/);
    assert.deepEqual((await failures()).slice(before), ['email_conflict']);
  });

  it('refuses a disabled or unknown connection at the start', async () => {
    const other = await oidcConnection(s, org, { enabled: false });
    const b = s.browser();
    const r = await b.get(`/sso/${other.id}/start`);
    assert.equal(r.status, 400);
    assert.match(r.text, /disabled/);
    assert.equal((await b.get('/sso/sso_00000000000000000000000000/start')).status, 404);
    const expired = await b.get(`/sso/${conn.id}/start?flow=flw_nope`);
    assert.equal(expired.status, 400);
  });
});
