/**
 * Issue 30 points 4 and 5, and Apple: a social sign-in's upstream tokens kept in the vault (one
 * consent) and served by its API; the vault's OAuth 2.0 providers telling two upstream accounts
 * apart by the userinfo subject; Apple's form_post answer and ES256 client secret, against
 * stand-ins.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { type Browser, decodeEntities, location, REDIRECT, VERIFIER } from '../signin/helpers.js';
import { authorizeAtSp, type SsoTestServer, startSsoServer } from '../sso/helpers.js';
import { expectError } from '../helpers/v1.js';
import { AppleStandIn, GithubStandIn } from './stand-ins.js';

describe('social sign-in tokens in the vault, the vault subject from userinfo, Apple form_post', () => {
  let s: SsoTestServer;
  let gh: GithubStandIn;
  let apple: AppleStandIn;
  let app: { client_id: string };
  let provider: { provider_id: string };
  let github: { id: string };
  let appleConn: { id: string };
  let orgId: string;

  before(async () => {
    s = await startSsoServer();
    gh = await GithubStandIn.start();
    apple = await AppleStandIn.start();
    app = await s.publicClient();
    // The vault provider: the same GitHub client, its userinfo naming the account by `id`.
    const p = await s.api('POST', '/connect/providers', {
      name: 'GitHub API',
      type: 'oauth2',
      authorization_endpoint: `${gh.origin}/login/oauth/authorize`,
      token_endpoint: `${gh.origin}/login/oauth/access_token`,
      client_id: gh.clientId,
      client_secret: gh.clientSecret,
      token_endpoint_auth_method: 'client_secret_post',
      scopes: ['read:user'],
      userinfo_endpoint: `${gh.origin}/user`,
      subject_field: 'id',
    });
    assert.equal(p.status, 201, p.text);
    provider = p.json();
    assert.equal(p.json().subject_field, 'id');
    const g = await s.api('POST', '/social_connections', { ...gh.connection(), vault_provider_id: provider.provider_id });
    assert.equal(g.status, 201, g.text);
    assert.equal(g.json().vault_provider_id, provider.provider_id);
    github = g.json();
    orgId = (await s.api('POST', '/organizations', { name: 'Acme' })).json().id;
  });
  after(async () => {
    await s.close();
    await gh.close();
    await apple.close();
  });

  const failures = async () =>
    ((await s.api('GET', '/events?types=login.social_failed&limit=100')).json().data as Array<{ data: { reason: string } }>).map((e) => e.data.reason);

  async function toProvider(b: Browser, connectionId: string, extra: Record<string, string> = {}) {
    const page = await b.get(await authorizeAtSp(s, b, app.client_id, extra));
    const button = new RegExp(`id="social-${connectionId}" href="([^"]+)"`).exec(page.text);
    assert.ok(button, page.text.slice(0, 300));
    const r = await b.get(decodeEntities(button[1]!));
    assert.equal(r.status, 303);
    return r.headers.location!;
  }

  async function finish(b: Browser, callback: string) {
    const atApp = await b.get(callback);
    assert.equal(atApp.status, 303, atApp.text.slice(0, 500));
    const back = new URL(atApp.headers.location!);
    assert.equal(back.origin + back.pathname, REDIRECT);
    const tokens = await s.post('/token', {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: app.client_id,
      code_verifier: VERIFIER,
    });
    assert.equal(tokens.status, 200, tokens.text);
    return decodeJwt(tokens.json().id_token);
  }

  it('refuses a vault provider of another client, and a form_post for a query connection', async () => {
    const other = await s.api('POST', '/connect/providers', {
      name: 'Other',
      type: 'oauth2',
      authorization_endpoint: `${gh.origin}/login/oauth/authorize`,
      token_endpoint: `${gh.origin}/login/oauth/access_token`,
      client_id: 'another-client',
      client_secret: 'x',
    });
    assert.equal(other.status, 201, other.text);
    expectError(await s.api('PATCH', `/social_connections/${github.id}`, { vault_provider_id: other.json().provider_id }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/social_connections/${github.id}`, { vault_provider_id: 'cpr_unknown' }), 400, 'invalid_request');
    expectError(
      await s.api('POST', '/connect/providers', {
        name: 'Half',
        client_id: 'x',
        client_secret: 'y',
        type: 'oauth2',
        authorization_endpoint: `${gh.origin}/a`,
        token_endpoint: `${gh.origin}/t`,
        userinfo_endpoint: `${gh.origin}/user`,
      }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/connect/providers', {
        name: 'Bad path',
        client_id: 'x',
        client_secret: 'y',
        type: 'oauth2',
        authorization_endpoint: `${gh.origin}/a`,
        token_endpoint: `${gh.origin}/t`,
        userinfo_endpoint: `${gh.origin}/user`,
        subject_field: 'a..b',
      }),
      400,
      'invalid_request',
    );
    const posted = await s.browser().post(`/social/${github.id}/callback`, { code: 'c', state: 's' }, { origin: gh.origin });
    assert.equal(posted.status, 400, posted.text.slice(0, 200));
    assert.match(posted.text, /data-error="access_denied"/);
    assert.deepEqual((await failures()).slice(-1), ['invalid_callback']);
  });

  it("keeps the sign-in's GitHub tokens as the user's connected account of their only organization; an agent gets them through the vault", async () => {
    gh.people.set('ada', {
      id: 4242,
      login: 'ada',
      name: 'Ada',
      avatar: 'https://avatars.example/ada',
      emails: [{ email: 'ada@acme.example', primary: true, verified: true }],
    });
    const user = await s.createUser('ada@acme.example');
    await s.server.ctx.db.kysely.updateTable('users').set({ email_verified: 1 }).where('id', '=', user.id).execute();
    assert.equal((await s.api('POST', `/organizations/${orgId}/members`, { user_id: user.id })).status, 201);
    const b = s.browser();
    const back = gh.approve(await toProvider(b, github.id), 'ada');
    await finish(b, back.pathname + back.search);
    const accounts = (await s.api('GET', `/organizations/${orgId}/connect/accounts`)).json().data as Array<Record<string, unknown>>;
    assert.equal(accounts.length, 1);
    assert.equal(accounts[0]!.user_id, user.id);
    assert.equal(accounts[0]!.provider_id, provider.provider_id);
    assert.equal(accounts[0]!.subject, '4242');
    const t = await s.api('POST', `/organizations/${orgId}/connect/accounts/${accounts[0]!.account_id}/token`);
    assert.equal(t.status, 200, t.text);
    const me = await fetch(`${gh.origin}/user`, { headers: { authorization: `Bearer ${t.json().access_token}` } });
    assert.equal(((await me.json()) as { id: number }).id, 4242, 'the token is the upstream one of that person');
    const login = (await s.api('GET', '/events?types=login.social&limit=10')).json().data[0];
    assert.equal(login.data.connected_account_id, accounts[0]!.account_id);
    const connected = (await s.api('GET', '/events?types=connected_account.connected&limit=10')).json().data[0];
    assert.equal(connected.data.connection_id, github.id);
    assert.ok(!JSON.stringify(connected).includes(t.json().access_token), 'never a token in the events');

    // The vault's own connect flow, twice with two GitHub accounts: two accounts, told apart by the userinfo `id`.
    gh.people.set('ada-work', { id: 5151, login: 'ada-work', name: 'Ada', avatar: 'https://avatars.example/ada', emails: [] });
    for (const person of ['ada-work', 'ada']) {
      let r = await b.get(`/connect/${provider.provider_id}`);
      assert.equal(r.status, 200, r.text.slice(0, 300));
      r = await b.submit(r, { organization_id: orgId });
      const cb = gh.approve(location(r), person);
      r = await b.get(cb.pathname + cb.search);
      assert.equal(r.status, 303, r.text.slice(0, 300));
    }
    const after2 = (await s.api('GET', `/organizations/${orgId}/connect/accounts`)).json().data as Array<{ subject: string }>;
    assert.deepEqual(
      after2.map((a) => a.subject).sort(),
      ['4242', '5151'],
      'the second upstream account did not replace the first; reconnecting the first kept one',
    );
  });

  it('keeps no tokens for a user of no organization (nothing to keep them in)', async () => {
    gh.people.set('bob', {
      id: 7,
      login: 'bob',
      name: 'Bob',
      avatar: 'https://avatars.example/bob',
      emails: [{ email: 'bob@new.example', primary: true, verified: true }],
    });
    const b = s.browser();
    const back = gh.approve(await toProvider(b, github.id), 'bob');
    await finish(b, back.pathname + back.search);
    const subjects = ((await s.api('GET', `/organizations/${orgId}/connect/accounts`)).json().data as Array<{ subject: string }>).map((a) => a.subject);
    assert.ok(!subjects.includes('7'));
  });

  it("Apple: form_post answers and an ES256 client secret; the name from the first answer's user field; the browser binding holds", async () => {
    const bad = await s.api('POST', '/social_connections', {
      name: 'Apple',
      client_id: apple.clientId,
      oidc: { issuer: apple.origin },
      apple: { team_id: apple.teamId, key_id: apple.keyId, private_key: 'not a key' },
    });
    expectError(bad, 400, 'invalid_request');
    const created = await s.api('POST', '/social_connections', {
      name: 'Apple',
      client_id: apple.clientId,
      oidc: { issuer: apple.origin },
      scopes: ['openid', 'name', 'email'],
      apple: { team_id: apple.teamId, key_id: apple.keyId, private_key: apple.privateKeyPem },
    });
    assert.equal(created.status, 201, created.text);
    appleConn = created.json();
    assert.equal(created.json().response_mode, 'form_post');
    assert.deepEqual(created.json().apple, { team_id: apple.teamId, key_id: apple.keyId });
    assert.ok(!created.text.includes('PRIVATE KEY'), 'the key is never returned');
    expectError(await s.api('PATCH', `/social_connections/${appleConn.id}`, { client_secret: 'plain' }), 400, 'invalid_request');

    // The upstream posts the answer cross-site: no cookies, no CSRF token, another Origin.
    const b = s.browser();
    const post = apple.formPost(await toProvider(b, appleConn.id), 'tim', { name: { firstName: 'Tim', lastName: 'Apple' }, email: 'tim@privaterelay.example' });
    const crossSite = await s.browser().post(post.action, post.form, { origin: 'https://appleid.apple.com' });
    assert.equal(crossSite.status, 303, crossSite.text.slice(0, 300));
    const next = location(crossSite);
    assert.match(next, new RegExp(`^/social/${appleConn.id}/callback\\?code=`));
    assert.ok(!next.includes('Tim'), 'the user field travels sealed');
    // Another browser cannot finish it (the binding cookie is this browser's).
    const stolen = await s.browser().get(next);
    assert.equal(stolen.status, 400);
    assert.deepEqual((await failures()).slice(-1), ['browser_mismatch']);
    const id = await finish(b, next);
    assert.equal(id.name, 'Tim Apple');
    assert.equal(id.email, 'tim@privaterelay.example');
    assert.equal(apple.secretRefused, null);
    assert.equal(apple.lastSecret!.iss, apple.teamId);
    assert.equal(apple.lastSecret!.sub, apple.clientId);
    assert.equal(apple.lastSecret!.aud, 'https://appleid.apple.com');
    assert.equal(apple.lastSecret!.kid, apple.keyId);
    // The same answer again: its state was consumed.
    const replay = await b.get(next);
    assert.equal(replay.status, 400);
    assert.deepEqual((await failures()).slice(-1), ['state_invalid']);
  });
});
