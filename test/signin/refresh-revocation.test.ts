import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v1 } from '../helpers/v1.js';
import { basic } from '../oauth/helpers.js';
import { createDirectory, PATCH, USER } from '../scim/helpers.js';
import { type Browser, callbackParams, REDIRECT, type SigninTestServer, signIn, startSigninServer } from './helpers.js';

/**
 * Security review 2, finding 3: refresh tokens end with the user's sessions (sign-out everywhere,
 * DELETE /v1/users/{id}/sessions, SCIM deprovisioning), with the user, and with the consent.
 */
describe('refresh tokens are revoked with the sessions, the user and the consent', () => {
  let s: SigninTestServer;
  let web: { client_id: string; client_secret: string };
  let tp: { client_id: string; client_secret: string };
  before(async () => {
    s = await startSigninServer();
    web = await s.webClient({ client_name: 'First Party' });
    tp = await s.webClient({ client_name: 'Third Party' });
    await s.clientSettings(tp.client_id, { thirdParty: true });
  });
  after(() => s.close());

  const api = () => v1(s, s.tenant.platformApiKey);

  /** Signs in (if needed) and completes a code flow with offline_access; returns the refresh token. */
  async function refreshToken(b: Browser, email: string, client = web): Promise<string> {
    const path = `/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid offline_access profile', state: 'x' })}`;
    let r = await b.get(path);
    if (/^\/login\?/.test(r.headers.location ?? '')) r = await signIn(b, r.headers.location!, email);
    if (/^\/login\/consent/.test(r.headers.location ?? '')) r = await b.submit(await b.get(r.headers.location!), { decision: 'allow' });
    const code = callbackParams(r).get('code')!;
    const t = await s.post(
      '/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      { authorization: basic(client.client_id, client.client_secret) },
    );
    assert.equal(t.status, 200, t.text);
    assert.ok(t.json().refresh_token);
    return t.json().refresh_token as string;
  }
  const refresh = (rt: string, client = web) =>
    s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: basic(client.client_id, client.client_secret) });
  const refused = async (rt: string, client = web) => {
    const r = await refresh(rt, client);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json().error, 'invalid_grant');
  };

  it("DELETE /v1/users/{id}/sessions revokes the user's refresh tokens (and only theirs)", async () => {
    const user = await s.createUser('grace@example.com');
    const other = await s.createUser('other@example.com');
    const rt = await refreshToken(s.browser(), user.email);
    const kept = await refreshToken(s.browser(), other.email);
    assert.equal((await api()('DELETE', `/users/${user.id}/sessions`)).status, 204);
    await refused(rt);
    assert.equal((await refresh(kept)).status, 200, 'another user keeps theirs');
  });

  it('"Sign out everywhere" on /sessions revokes the refresh tokens', async () => {
    const user = await s.createUser('everywhere@example.com');
    const b = s.browser();
    const rt = await refreshToken(b, user.email);
    const page = await b.get('/sessions');
    const forms = [...page.text.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)];
    const all = forms.findIndex((m) => m[1] === '/sessions/revoke' && /name="session_id" value="all"/.test(m[2]!));
    assert.ok(all >= 0);
    assert.equal((await b.submit(page, {}, all)).status, 303);
    await refused(rt);
  });

  it('deleting the user revokes their refresh tokens (also one rotated before)', async () => {
    const user = await s.createUser('deleted@example.com');
    const rt = await refreshToken(s.browser(), user.email);
    const rotated = await refresh(rt);
    assert.equal(rotated.status, 200);
    assert.equal((await api()('DELETE', `/users/${user.id}`)).status, 204);
    await refused(rotated.json().refresh_token);
  });

  it("withdrawing a consent revokes that client's refresh tokens for the user, not other clients'", async () => {
    const user = await s.createUser('consent@example.com');
    const b = s.browser();
    const third = await refreshToken(b, user.email, tp);
    const first = await refreshToken(b, user.email);
    const page = await b.get('/sessions');
    const forms = [...page.text.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)];
    const revoke = forms.findIndex((m) => m[1] === '/sessions/consents/revoke' && m[2]!.includes(tp.client_id));
    assert.ok(revoke >= 0);
    assert.equal((await b.submit(page, {}, revoke)).status, 303);
    await refused(third, tp);
    assert.equal((await refresh(first)).status, 200);
  });

  it('SCIM deprovisioning (deactivation) revokes the refresh tokens of a user the directory created', async () => {
    const d = await createDirectory(s);
    const u = (await d.scim('POST', '/Users', { schemas: [USER], userName: 'leaver@acme.example' })).json();
    const userId = (await d.api('GET', '/users?email=leaver@acme.example')).json().data[0].id;
    assert.equal((await d.api('PATCH', `/users/${userId}`, { password: 'correct horse battery staple' })).status, 200);
    const rt = await refreshToken(s.browser(), 'leaver@acme.example');
    const off = await d.scim('PATCH', `/Users/${u.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    assert.equal(off.status, 200, off.text);
    await refused(rt);
  });
});
