import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { basic } from '../oauth/helpers.js';
import { REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from './helpers.js';

describe('authorization_code grant', () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  let web: { client_id: string; client_secret: string };
  let other: { client_id: string; client_secret: string };
  let challenge: string;
  before(async () => {
    s = await startSigninServer({ clock });
    web = await s.webClient();
    other = await s.webClient();
    challenge = await S256(VERIFIER);
    await s.createUser('code@example.com');
  });
  after(() => s.close());

  /** Runs /authorize + login and returns a fresh code. */
  async function code(extra: Record<string, string> = {}, pkce = true): Promise<string> {
    const params = new URLSearchParams({ client_id: web.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid offline_access', ...extra });
    if (pkce) {
      params.set('code_challenge', challenge);
      params.set('code_challenge_method', 'S256');
    }
    const b = s.browser();
    const cb = await signIn(b, (await b.get(`/authorize?${params}`)).headers.location!, 'code@example.com');
    return new URL(cb.headers.location!).searchParams.get('code')!;
  }
  const redeem = (c: string, extra: Record<string, string> = {}, client = web) =>
    s.post(
      '/token',
      { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER, ...extra },
      { authorization: basic(client.client_id, client.client_secret) },
    );

  it('is single-use: a second redemption fails and revokes the tokens of the first', async () => {
    const c = await code();
    const first = await redeem(c);
    assert.equal(first.status, 200);
    assert.equal(first.headers['cache-control'], 'no-store');
    const tokens = first.json();
    assert.ok(tokens.id_token && tokens.refresh_token);
    const userinfo = () => s.request({ path: '/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal((await userinfo()).status, 200);
    const second = await redeem(c);
    assert.equal(second.status, 400);
    assert.equal(second.json().error, 'invalid_grant');
    const after = await userinfo();
    assert.equal(after.status, 401);
    assert.equal(after.json().error, 'invalid_token');
    const refresh = await s.post(
      '/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      { authorization: basic(web.client_id, web.client_secret) },
    );
    assert.equal(refresh.json().error, 'invalid_grant');
  });

  it('lets exactly one of two parallel redemptions win', async () => {
    const c = await code();
    const results = await Promise.all([redeem(c), redeem(c)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400]);
  });

  it("refuses another client's code (without consuming it), a different redirect_uri, and wrong or missing verifiers", async () => {
    const c = await code();
    const stolen = await redeem(c, {}, other);
    assert.equal(stolen.json().error, 'invalid_grant');
    assert.equal((await redeem(c)).status, 200, 'the rightful client can still redeem it');
    assert.equal((await redeem(await code(), { redirect_uri: 'https://app.example/cb2' })).json().error, 'invalid_grant');
    assert.equal((await redeem(await code(), { code_verifier: 'x'.repeat(43) })).json().error, 'invalid_grant');
    assert.equal((await redeem(await code(), { code_verifier: '' })).json().error, 'invalid_grant');
    const downgrade = await redeem(await code({}, false));
    assert.equal(downgrade.status, 400);
    assert.equal(downgrade.json().error, 'invalid_grant');
    assert.equal((await redeem(await code({}, false), { code_verifier: '' })).status, 200, 'a confidential client may skip PKCE');
  });

  it('expires after 60 s', async () => {
    const c = await code();
    clock.advance(61_000);
    assert.equal((await redeem(c)).json().error, 'invalid_grant');
  });

  it('gives no refresh token without offline_access, and /userinfo needs openid', async () => {
    const r = (await redeem(await code({ scope: 'email' }))).json();
    assert.equal(r.refresh_token, undefined);
    assert.equal(r.id_token, undefined);
    const info = await s.request({ path: '/userinfo', headers: { authorization: `Bearer ${r.access_token}` } });
    assert.equal(info.status, 403);
    assert.equal(info.json().error, 'insufficient_scope');
    const none = await s.request({ path: '/userinfo' });
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Bearer /);
    assert.doesNotMatch(String(none.headers['www-authenticate']), /error=/);
    const withOpenid = (await redeem(await code({ scope: 'openid' }))).json();
    const post = await s.request({ method: 'POST', path: '/userinfo', headers: { authorization: `Bearer ${withOpenid.access_token}` } });
    assert.equal(post.status, 200);
    assert.deepEqual(Object.keys(post.json()), ['sub'], 'only sub without profile/email');
  });
});
