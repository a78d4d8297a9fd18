import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { type Keyhall, startKeyhall } from '../guides/guide.js';
import { GithubStandIn } from './stand-ins.js';

const REDIRECT = 'http://localhost:5173/callback';
const VERIFIER = 'a-quick-start-verifier-of-enough-length-0123456789';

describe('social sign-in on the quick start tenant (http://localhost:<port>, `keyhall serve` in its own process)', () => {
  let k: Keyhall;
  let issuer = '';
  let platformKey = '';
  let gh: GithubStandIn;
  before(async () => {
    gh = await GithubStandIn.start();
    k = await startKeyhall({ KEYHALL_EGRESS_ALLOW: '127.0.0.1/32' });
    ({ issuer, apiKey: platformKey } = k);
  });
  after(async () => {
    const out = k.output();
    assert.equal(await k.close(), 0, out);
    await gh.close();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${platformKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };

  /** A browser: keeps cookies, follows nothing. */
  const jar = new Map<string, string>();
  async function visit(url: string): Promise<Response> {
    const r = await fetch(new URL(url, issuer), { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return r;
  }

  it('a GitHub-like provider signs a new user in through the login page button', async () => {
    assert.match(issuer, /^http:\/\/localhost:\d+$/);
    const conn = await api('POST', '/social_connections', gh.connection());
    assert.equal(conn.status, 201, JSON.stringify(conn.json));
    assert.equal(conn.json.redirect_uri, `${issuer}/social/${conn.json.id}/callback`);
    const client = await api('POST', '/clients', {
      client_name: 'Quick start app',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'none',
    });
    assert.equal(client.status, 201, JSON.stringify(client.json));
    gh.people.set('octocat', {
      id: 1,
      login: 'octocat',
      name: 'Mona',
      avatar: 'https://avatars.example/u/1',
      emails: [{ email: 'mona@example.com', primary: true, verified: true }],
    });

    const challenge = createHash('sha256').update(VERIFIER).digest('base64url');
    const query = new URLSearchParams({
      client_id: String(client.json.client_id),
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid email profile',
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const toLogin = await visit(`/authorize?${query}`);
    assert.equal(toLogin.status, 303);
    const page = await visit(toLogin.headers.get('location')!);
    const html = await page.text();
    assert.match(html, /Continue with GitHub/);
    const href = new RegExp(`id="social-${conn.json.id}" href="([^"]+)"`).exec(html)![1]!.replace(/&amp;/g, '&');
    const toGh = await visit(href);
    assert.equal(toGh.status, 303);
    const callback = gh.approve(toGh.headers.get('location')!, 'octocat');
    const atApp = await visit(callback.pathname + callback.search);
    assert.equal(atApp.status, 303, await atApp.text());
    const back = new URL(atApp.headers.get('location')!);
    assert.equal(back.origin + back.pathname, REDIRECT);
    const tokens = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        client_id: String(client.json.client_id),
        code_verifier: VERIFIER,
      }),
    });
    assert.equal(tokens.status, 200);
    const id = decodeJwt(((await tokens.json()) as { id_token: string }).id_token);
    assert.equal(id.iss, issuer);
    assert.equal(id.idp, conn.json.id);
    assert.deepEqual(id.amr, ['fed']);
    assert.equal(id.email, 'mona@example.com');
    const identities = await api('GET', `/users/${id.sub}/identities`);
    assert.equal((identities.json.data as Array<{ subject: string }>)[0]!.subject, '1');

    // The connection keeps its tokens in the vault: the next sign-in of the user, now a member
    // of one organization, leaves a connected account whose live token an agent gets.
    const provider = await api('POST', '/connect/providers', {
      name: 'GitHub API',
      type: 'oauth2',
      authorization_endpoint: `${gh.origin}/login/oauth/authorize`,
      token_endpoint: `${gh.origin}/login/oauth/access_token`,
      client_id: gh.clientId,
      client_secret: gh.clientSecret,
      token_endpoint_auth_method: 'client_secret_post',
      userinfo_endpoint: `${gh.origin}/user`,
      subject_field: 'id',
    });
    assert.equal(provider.status, 201, JSON.stringify(provider.json));
    const linked = await api('PATCH', `/social_connections/${conn.json.id}`, { vault_provider_id: provider.json.provider_id });
    assert.equal(linked.status, 200, JSON.stringify(linked.json));
    const org = await api('POST', '/organizations', { name: 'Octo' });
    assert.equal((await api('POST', `/organizations/${org.json.id}/members`, { user_id: id.sub })).status, 201);
    jar.clear();
    const again = await visit(`/authorize?${query}`);
    const login = await (await visit(again.headers.get('location')!)).text();
    const start = new RegExp(`id="social-${conn.json.id}" href="([^"]+)"`).exec(login)![1]!.replace(/&amp;/g, '&');
    const back2 = gh.approve((await visit(start)).headers.get('location')!, 'octocat');
    assert.equal((await visit(back2.pathname + back2.search)).status, 303);
    const accounts = (await api('GET', `/organizations/${org.json.id}/connect/accounts`)).json.data as Array<{
      account_id: string;
      subject: string;
      user_id: string;
    }>;
    assert.equal(accounts.length, 1);
    assert.deepEqual([accounts[0]!.subject, accounts[0]!.user_id], ['1', id.sub]);
    const live = await api('POST', `/organizations/${org.json.id}/connect/accounts/${accounts[0]!.account_id}/token`);
    assert.equal(live.status, 200, JSON.stringify(live.json));
    const me = await fetch(`${gh.origin}/user`, { headers: { authorization: `Bearer ${String(live.json.access_token)}` } });
    assert.equal(((await me.json()) as { login: string }).login, 'octocat');
  });
});
