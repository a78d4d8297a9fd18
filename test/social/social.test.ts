import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { type Browser, decodeEntities, REDIRECT, VERIFIER } from '../signin/helpers.js';
import { authorizeAtSp, signInUpstream, type SsoTestServer, startSsoServer, upstreamUser } from '../sso/helpers.js';
import { expectError, v1 } from '../helpers/v1.js';
import { GithubStandIn, OidcStandIn } from './stand-ins.js';

describe('social sign-in: a Keyhall tenant as a Google-like OpenID provider and a GitHub-like OAuth 2.0 stand-in', () => {
  let s: SsoTestServer;
  let gh: GithubStandIn;
  let op: OidcStandIn;
  let app: { client_id: string };
  let google: { id: string; redirect_uri: string };
  let github: { id: string };
  let bent: { id: string };

  before(async () => {
    s = await startSsoServer();
    gh = await GithubStandIn.start();
    op = await OidcStandIn.start();
    app = await s.publicClient();
    // The Google-like upstream: created (its issuer discovered), its client registered there with our redirect URI, then set here.
    const created = await s.api('POST', '/social_connections', { name: 'Upstream', client_id: 'pending', oidc: { issuer: s.idpIssuer } });
    assert.equal(created.status, 201, created.text);
    google = created.json();
    const client = await s.server.ctx.management.clients.create(s.idp.tenant.id, {
      grant_types: ['authorization_code'],
      redirect_uris: [google.redirect_uri],
      client_name: 'Keyhall social',
    });
    const patched = await s.api('PATCH', `/social_connections/${google.id}`, { client_id: client.client_id, client_secret: client.client_secret });
    assert.equal(patched.status, 200, patched.text);
    const g = await s.api('POST', '/social_connections', { ...gh.connection(), display_order: 1 });
    assert.equal(g.status, 201, g.text);
    github = g.json();
    const b = await s.api('POST', '/social_connections', {
      name: 'Bent',
      client_id: op.clientId,
      client_secret: op.clientSecret,
      oidc: { issuer: op.origin },
      display_order: 2,
    });
    assert.equal(b.status, 201, b.text);
    bent = b.json();
  });
  after(async () => {
    await s.close();
    await gh.close();
    await op.close();
  });

  const events = async (type: string) =>
    (await s.api('GET', `/events?types=${type}&limit=100`)).json().data as Array<{
      type: string;
      data: Record<string, unknown>;
      actor: { type: string; id: string };
    }>;
  const failures = async () => (await events('login.social_failed')).map((e) => e.data.reason);
  const redeem = (code: string) =>
    s.post('/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.client_id, code_verifier: VERIFIER });

  /** /authorize at Keyhall → the login page → its button for `connectionId`: the redirect to the provider. */
  async function toProvider(b: Browser, connectionId: string) {
    const login = await authorizeAtSp(s, b, app.client_id);
    const page = await b.get(login);
    assert.equal(page.status, 200);
    const button = new RegExp(`id="social-${connectionId}" href="([^"]+)"`).exec(page.text);
    assert.ok(button, 'the login page has a button for the connection');
    const start = decodeEntities(button[1]!);
    assert.match(start, new RegExp(`^/social/${connectionId}/start\\?flow=flw_`));
    return b.get(start);
  }

  /** The callback answered by Keyhall: a code at the application, its tokens. */
  async function finish(b: Browser, callback: URL) {
    const atApp = await b.get(callback.pathname + callback.search);
    assert.equal(atApp.status, 303, atApp.text.slice(0, 500));
    const back = new URL(atApp.headers.location!);
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('state'), 'app-state');
    const tokens = await redeem(back.searchParams.get('code')!);
    assert.equal(tokens.status, 200, tokens.text);
    return { id: decodeJwt(tokens.json().id_token), accessToken: tokens.json().access_token as string };
  }

  async function viaGithub(b: Browser, login: string, extra: Record<string, string> = {}) {
    const toGh = await toProvider(b, github.id);
    assert.equal(toGh.status, 303);
    const authorize = new URL(toGh.headers.location!);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256', 'PKCE');
    assert.equal(authorize.searchParams.get('nonce'), null, 'no nonce: no ID token expected');
    return gh.approve(toGh.headers.location!, login, extra);
  }

  it('lists the connections without their secrets; every refusal of a bad definition is a 400', async () => {
    const list = (await s.api('GET', '/social_connections')).json().data as Array<Record<string, unknown>>;
    assert.deepEqual(
      list.map((c) => c.name),
      ['Upstream', 'GitHub', 'Bent'],
    );
    assert.ok(!JSON.stringify(list).includes(gh.clientSecret), 'never the secret');
    const one = list.find((c) => c.id === github.id)!;
    assert.equal(one.has_client_secret, true);
    assert.equal(one.kind, 'oauth2');
    assert.equal(one.redirect_uri, `${s.issuer}/social/${github.id}/callback`);
    assert.equal(list.find((c) => c.id === google.id)!.issuer, s.idpIssuer);
    const preset = await s.api('POST', '/social_connections', {
      preset: 'google',
      client_id: 'x.apps.googleusercontent.com',
      client_secret: 's',
      sign_in: false,
      sign_up: false,
    });
    assert.equal(preset.status, 201, preset.text);
    assert.equal(preset.json().name, 'Google');
    assert.equal(preset.json().issuer, 'https://accounts.google.com');
    assert.equal((await s.api('DELETE', `/social_connections/${preset.json().id}`)).status, 204);
    assert.equal((await s.api('GET', `/social_connections/${preset.json().id}`)).status, 404);
    expectError(await s.api('POST', '/social_connections', { name: 'None', client_id: 'x' }), 400, 'invalid_request');
    expectError(await s.api('POST', '/social_connections', { preset: 'github', oidc: { issuer: s.idpIssuer }, client_id: 'x' }), 400, 'invalid_request');
    expectError(await s.api('POST', '/social_connections', { preset: 'myspace', client_id: 'x' }), 400, 'invalid_request');
    // The egress policy: a private address is refused at registration.
    const privateUpstream = gh.connection('Private');
    privateUpstream.oauth2.token_endpoint = 'http://10.1.2.3/token';
    const refused = await s.api('POST', '/social_connections', privateUpstream);
    expectError(refused, 400, 'invalid_request');
    assert.match(refused.json().error_description, /token_endpoint/);
    const badPath = gh.connection('Bad path');
    badPath.oauth2.fields.subject = 'a..b';
    expectError(await s.api('POST', '/social_connections', badPath), 400, 'invalid_request');
    expectError(await s.api('PUT', '/social_settings', { account_linking: 'always' }), 400, 'invalid_request');
    assert.deepEqual((await s.api('GET', '/social_settings')).json(), { account_linking: 'verified_email', updated_at: null });
  });

  it('a new user from the OpenID provider: verified email and name, idp and amr fed in the ID token, the identity listed', async () => {
    await upstreamUser(s, 'grace@example.org', { name: 'Grace Hopper' });
    const b = s.browser();
    const toIdp = await toProvider(b, google.id);
    const authorize = new URL(toIdp.headers.location!);
    assert.ok(authorize.searchParams.get('nonce'), 'a nonce for the ID token');
    assert.equal(authorize.searchParams.get('redirect_uri'), google.redirect_uri);
    const callback = await signInUpstream(s, toIdp, 'grace@example.org');
    assert.equal(callback.searchParams.get('iss'), s.idpIssuer);
    const { id, accessToken } = await finish(b, callback);
    assert.equal(id.idp, google.id);
    assert.deepEqual(id.amr, ['fed']);
    assert.equal(id.email, 'grace@example.org');
    assert.equal(id.email_verified, true);
    assert.equal(id.name, 'Grace Hopper');
    const info = await s.request({ path: '/userinfo', headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(info.json().name, 'Grace Hopper');
    const identities = await s.api('GET', `/users/${id.sub}/identities`);
    assert.equal(identities.status, 200);
    const [identity, ...others] = identities.json().data;
    assert.equal(others.length, 0);
    assert.equal(identity.connection_id, google.id);
    assert.equal(identity.email, 'grace@example.org');
    assert.equal(identity.email_verified, true);
    assert.equal(typeof identity.linked_at, 'string');
    assert.ok(!/token/i.test(Object.keys(identity).join(',')), 'never a token');
    const login = (await events('login.social')).find((e) => e.data.user_id === id.sub)!;
    assert.equal(login.data.connection_id, google.id);
    assert.equal(login.data.created, true);
    const linked = (await events('identity.linked')).find((e) => e.data.user_id === id.sub)!;
    assert.equal(linked.data.reason, 'sign_up');

    // Returning: the same user, no second identity, no second user.
    const again = s.browser();
    const second = await finish(again, await signInUpstream(s, await toProvider(again, google.id), 'grace@example.org'));
    assert.equal(second.id.sub, id.sub);
    assert.equal((await s.api('GET', `/users/${id.sub}/identities`)).json().data.length, 1);
    assert.equal((await events('identity.linked')).filter((e) => e.data.user_id === id.sub).length, 1);
    assert.equal((await s.api('GET', '/users?email=grace@example.org')).json().data.length, 1);
  });

  it('the OAuth 2.0 stand-in: a numeric id, the verified primary address from /user/emails, the avatar as picture', async () => {
    gh.people.set('octocat', {
      id: 583231,
      login: 'octocat',
      name: 'The Octocat',
      avatar: 'https://avatars.example/u/583231',
      emails: [
        { email: 'octo@old.example', primary: false, verified: true },
        { email: 'octocat@example.com', primary: true, verified: true },
      ],
    });
    const b = s.browser();
    const { id, accessToken } = await finish(b, await viaGithub(b, 'octocat'));
    assert.equal(id.idp, github.id);
    assert.equal(id.email, 'octocat@example.com');
    assert.equal(id.email_verified, true);
    assert.equal(id.name, 'The Octocat');
    assert.equal(id.picture, 'https://avatars.example/u/583231');
    assert.equal(
      (await s.request({ path: '/userinfo', headers: { authorization: `Bearer ${accessToken}` } })).json().picture,
      'https://avatars.example/u/583231',
    );
    const [identity] = (await s.api('GET', `/users/${id.sub}/identities`)).json().data;
    assert.equal(identity.subject, '583231');
  });

  it('links automatically to the user holding the email when both sides verified it (PATCH email_verified is audited)', async () => {
    const ada = (await s.api('POST', '/users', { email: 'ada@example.com', password: 'correct horse battery staple', name: 'Ada' })).json();
    const verify = await s.api('PATCH', `/users/${ada.id}`, { email_verified: true });
    assert.equal(verify.status, 200, verify.text);
    assert.equal(verify.json().email_verified, true);
    const updated = (await events('user.updated')).find((e) => e.data.user_id === ada.id)!;
    assert.deepEqual(updated.data.fields, ['email_verified']);
    gh.people.set('ada', {
      id: 1815,
      login: 'ada',
      name: 'Ada L.',
      avatar: 'https://avatars.example/u/1815',
      emails: [{ email: 'Ada@example.com', primary: true, verified: true }],
    });
    const b = s.browser();
    const { id } = await finish(b, await viaGithub(b, 'ada'));
    assert.equal(id.sub, ada.id, 'the existing account');
    assert.equal(id.name, 'Ada', "Keyhall's own name stays");
    const linked = (await events('identity.linked')).find((e) => e.data.user_id === ada.id)!;
    assert.equal(linked.data.reason, 'verified_email');
    assert.equal(linked.data.connection_id, github.id);
  });

  it("marking a tenant administrator's email verified needs a key holding every permission", async () => {
    const adminId = (await s.server.ctx.admins.grant(s.tenant.tenant.id, 'root@example.com', 'correct horse battery staple')).user.id;
    const minted = await s.api('POST', '/api_keys', { name: 'narrow', scopes: ['users:read', 'users:write'] });
    assert.equal(minted.status, 201, minted.text);
    const narrow = v1(s, minted.json().key);
    const current = (await s.api('GET', `/users/${adminId}`)).json().email_verified as boolean;
    expectError(await narrow('PATCH', `/users/${adminId}`, { email_verified: !current }), 403, 'insufficient_scope');
    assert.equal((await s.api('GET', `/users/${adminId}`)).json().email_verified, current);
    const plain = (await s.api('POST', '/users', { email: 'plain@example.com' })).json().id;
    assert.equal((await narrow('PATCH', `/users/${plain}`, { email_verified: true })).json().email_verified, true);
    expectError(await narrow('PATCH', `/users/${plain}`, { email_verified: 'yes' }), 400, 'invalid_request');
  });

  it('refuses a link through an unverified upstream email, and any automatic link under `manual`', async () => {
    const bob = (await s.api('POST', '/users', { email: 'bob@example.com', password: 'correct horse battery staple' })).json();
    await s.api('PATCH', `/users/${bob.id}`, { email_verified: true });
    gh.people.set('mallory', {
      id: 666,
      login: 'mallory',
      name: 'Mallory',
      avatar: '',
      emails: [{ email: 'bob@example.com', primary: true, verified: false }],
    });
    const b = s.browser();
    const refused = await b.get(pathOf(await viaGithub(b, 'mallory')));
    assert.equal(refused.status, 403);
    assert.match(refused.text, /data-error="access_denied"/);
    assert.match(refused.text, /already exists/);
    assert.equal(refused.headers['set-cookie']?.some((c) => c.includes('session')) ?? false, false, 'no session');
    assert.deepEqual((await failures()).slice(-1), ['account_exists']);
    assert.equal((await s.api('GET', `/users/${bob.id}/identities`)).json().data.length, 0);

    // Verified on both sides, but the tenant links manually.
    const manual = await s.api('PUT', '/social_settings', { account_linking: 'manual' });
    assert.equal(manual.json().account_linking, 'manual');
    gh.people.set('bob', { id: 777, login: 'bob', name: 'Bob', avatar: '', emails: [{ email: 'bob@example.com', primary: true, verified: true }] });
    const b2 = s.browser();
    const notLinked = await b2.get(pathOf(await viaGithub(b2, 'bob')));
    assert.equal(notLinked.status, 403);
    assert.deepEqual((await failures()).slice(-1), ['account_exists']);
    await s.api('PUT', '/social_settings', { account_linking: 'verified_email' });
  });

  it('an unverified upstream email with no account creates the user unverified', async () => {
    gh.people.set('newbie', {
      id: 4242,
      login: 'newbie',
      name: 'New Bie',
      avatar: '',
      emails: [{ email: 'newbie@example.com', primary: true, verified: false }],
    });
    const b = s.browser();
    const { id } = await finish(b, await viaGithub(b, 'newbie'));
    assert.equal(id.email, 'newbie@example.com');
    assert.equal(id.email_verified, false);
    assert.equal((await s.api('GET', `/users/${id.sub}`)).json().email_verified, false);
  });

  it('refuses sign-up when the connection does not allow it', async () => {
    await s.api('PATCH', `/social_connections/${github.id}`, { sign_up: false });
    try {
      gh.people.set('late', { id: 9001, login: 'late', name: 'Late', avatar: '', emails: [{ email: 'late@example.com', primary: true, verified: true }] });
      const b = s.browser();
      const refused = await b.get(pathOf(await viaGithub(b, 'late')));
      assert.equal(refused.status, 403);
      assert.match(refused.text, /data-error="access_denied"/);
      assert.deepEqual((await failures()).slice(-1), ['signup_disabled']);
    } finally {
      await s.api('PATCH', `/social_connections/${github.id}`, { sign_up: true });
    }
  });

  describe('refusals: status, page and audit reason', () => {
    it('state from another browser', async () => {
      const a = s.browser();
      const callback = await viaGithub(a, 'octocat');
      const other = s.browser();
      const r = await other.get(pathOf(callback));
      assert.equal(r.status, 400);
      assert.match(r.text, /data-error="access_denied"/);
      assert.match(r.text, /another browser/);
      assert.deepEqual((await failures()).slice(-1), ['browser_mismatch']);
    });

    it('a replayed state', async () => {
      const b = s.browser();
      const callback = await viaGithub(b, 'octocat');
      await finish(b, callback);
      const before = gh.tokenRequests;
      const replay = await b.get(pathOf(callback));
      assert.equal(replay.status, 400);
      assert.match(replay.text, /data-error="access_denied"/);
      assert.deepEqual((await failures()).slice(-1), ['state_invalid']);
      assert.equal(gh.tokenRequests, before, 'the code is never redeemed again');
    });

    it('a wrong iss (RFC 9207) from the OpenID provider', async () => {
      await upstreamUser(s, 'iss@example.org');
      const b = s.browser();
      const callback = await signInUpstream(s, await toProvider(b, google.id), 'iss@example.org');
      callback.searchParams.set('iss', 'https://evil.example');
      const r = await b.get(pathOf(callback));
      assert.equal(r.status, 400);
      assert.match(r.text, /data-error="access_denied"/);
      assert.deepEqual((await failures()).slice(-1), ['invalid_callback']);
    });

    it('an ID token for another audience, or with another nonce', async () => {
      for (const bend of [{ aud: 'someone-else' }, { nonce: 'not-the-one-we-sent' }]) {
        op.bend = bend;
        const b = s.browser();
        const toOp = await toProvider(b, bent.id);
        const r = await b.get(pathOf(op.approve(toOp.headers.location!, 'eve')));
        assert.equal(r.status, 400, JSON.stringify(bend));
        assert.match(r.text, /data-error="access_denied"/);
        assert.deepEqual((await failures()).slice(-1), ['invalid_response']);
      }
      op.bend = {};
      // Unbent, the same provider signs in.
      const b = s.browser();
      const toOp = await toProvider(b, bent.id);
      const { id } = await finish(b, op.approve(toOp.headers.location!, 'eve'));
      assert.equal(id.email, 'eve@stand-in.test');
      assert.equal(id.idp, bent.id);
    });

    it('an error from the provider', async () => {
      const b = s.browser();
      const toGh = await toProvider(b, github.id);
      const state = new URL(toGh.headers.location!).searchParams.get('state')!;
      const r = await b.get(`/social/${github.id}/callback?error=access_denied&state=${state}`);
      assert.equal(r.status, 400);
      assert.match(r.text, /data-error="access_denied"/);
      assert.deepEqual((await failures()).slice(-1), ['upstream_error']);
    });

    it('an unreachable provider', async () => {
      const down = gh.connection('Down');
      down.oauth2.token_endpoint = 'http://127.0.0.1:9/token';
      const c = (await s.api('POST', '/social_connections', down)).json();
      const b = s.browser();
      const toGh = await toProvider(b, c.id);
      const r = await b.get(pathOf(gh.approve(toGh.headers.location!, 'octocat')));
      assert.equal(r.status, 502);
      assert.match(r.text, /data-error="temporarily_unavailable"/);
      assert.deepEqual((await failures()).slice(-1), ['unreachable']);
      await s.api('DELETE', `/social_connections/${c.id}`);
    });

    it('an unknown connection, and a state without a round trip', async () => {
      const r = await s.browser().get('/social/soc_00000000000000000000000000/start');
      assert.equal(r.status, 404);
      assert.match(r.text, /data-error="not_found"/);
      const none = await s.browser().get(`/social/${github.id}/callback?code=x&state=made-up`);
      assert.equal(none.status, 400);
      assert.deepEqual((await failures()).slice(-1), ['state_invalid']);
    });
  });

  it('/authorize with connection= (or kh_connection=) goes straight to the provider', async () => {
    for (const param of ['connection', 'kh_connection']) {
      const b = s.browser();
      const location = await authorizeAtSp(s, b, app.client_id, { [param]: github.id });
      const start = await b.get(location);
      assert.equal(start.status, 303, start.text.slice(0, 300));
      assert.equal(new URL(start.headers.location!).origin, gh.origin, param);
    }
    const b = s.browser();
    const bad = await b.get(
      `/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', connection: 'google' })}`,
    );
    assert.equal(bad.status, 303);
    assert.equal(new URL(bad.headers.location!).searchParams.get('error'), 'invalid_request');
  });

  it('unlinks an identity through /v1 (identity.unlinked), never the last way the user signs in', async () => {
    const user = (await s.api('GET', '/users?email=octocat@example.com')).json().data[0];
    const [identity] = (await s.api('GET', `/users/${user.id}/identities`)).json().data;
    // The identity is the user's only way to sign in (docs/account.md): a password first.
    expectError(await s.api('DELETE', `/users/${user.id}/identities/${identity.id}`), 409, 'last_sign_in_method');
    assert.equal((await s.api('PATCH', `/users/${user.id}`, { password: 'a long enough password' })).status, 200);
    assert.equal((await s.api('DELETE', `/users/${user.id}/identities/${identity.id}`)).status, 204);
    assert.equal((await s.api('GET', `/users/${user.id}/identities`)).json().data.length, 0);
    expectError(await s.api('DELETE', `/users/${user.id}/identities/${identity.id}`), 404, 'not_found');
    const unlinked = (await events('identity.unlinked')).find((e) => e.data.identity_id === identity.id)!;
    assert.equal(unlinked.data.connection_id, github.id);
  });
});

const pathOf = (u: URL) => u.pathname + u.search;
