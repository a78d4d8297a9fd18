import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v1 } from '../helpers/v1.js';
import { basic, serviceClient } from '../oauth/helpers.js';
import { type Browser, callbackParams, REDIRECT, type SigninTestServer, signIn, startSigninServer } from './helpers.js';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * Security review 2, finding 6: a code is redeemable only while the session it was issued in is
 * live, and an access token (`typ: at+jwt`) is not an id_token_hint.
 */
describe('codes are bound to their session; id_token_hint must be an ID token', () => {
  let s: SigninTestServer;
  let web: { client_id: string; client_secret: string };
  before(async () => {
    s = await startSigninServer();
    web = await s.webClient();
  });
  after(() => s.close());

  async function codeFor(b: Browser, email: string): Promise<string> {
    const r1 = await b.get(
      `/authorize?${new URLSearchParams({ client_id: web.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'x' })}`,
    );
    const r2 = r1.headers.location?.startsWith('/login') ? await signIn(b, r1.headers.location, email) : r1;
    return callbackParams(r2).get('code')!;
  }
  const redeem = (code: string) =>
    s.post('/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { authorization: basic(web.client_id, web.client_secret) });
  const refused = async (code: string) => {
    const r = await redeem(code);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json().error, 'invalid_grant');
  };

  it('refuses a code whose session was logged out', async () => {
    const user = await s.createUser('logout@example.com');
    const b = s.browser();
    const code = await codeFor(b, user.email);
    assert.equal((await b.submit(await b.get('/logout'))).status, 303);
    await refused(code);
  });

  it('refuses a code whose session was revoked through /v1, and one whose user was deleted', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const user = await s.createUser('revoked@example.com');
    const code = await codeFor(s.browser(), user.email);
    assert.equal((await api('DELETE', `/users/${user.id}/sessions`)).status, 204);
    await refused(code);

    const gone = await s.createUser('gone@example.com');
    const orphan = await codeFor(s.browser(), gone.email);
    assert.equal((await api('DELETE', `/users/${gone.id}`)).status, 204);
    await refused(orphan);
  });

  it('still redeems a code whose session is live', async () => {
    const user = await s.createUser('live@example.com');
    const r = await redeem(await codeFor(s.browser(), user.email));
    assert.equal(r.status, 200, r.text);
  });

  it('does not take an access token (typ at+jwt) as id_token_hint at /logout or /authorize, even one whose aud is the client', async () => {
    const user = await s.createUser('hint@example.com');
    const b = s.browser();
    const t = await redeem(await codeFor(b, user.email));
    assert.equal(t.status, 200, t.text);
    const { access_token: userAt, id_token: idt } = t.json();
    // A token-exchange client whose policy allows the web client's id as an audience gets an
    // access token with the user's sub and aud = that client, signed by the tenant's keys.
    const ex = await serviceClient(s, { grant_types: [TOKEN_EXCHANGE], token_exchange: { subject_clients: [web.client_id], audiences: [web.client_id] } });
    const x = await s.post(
      '/token',
      { grant_type: TOKEN_EXCHANGE, subject_token: userAt, subject_token_type: AT_TYPE, audience: web.client_id },
      { authorization: basic(ex.client_id, ex.client_secret!) },
    );
    assert.equal(x.status, 200, x.text);
    const at = x.json().access_token as string;

    assert.equal((await b.get(`/logout?id_token_hint=${idt}`)).status, 200, 'an ID token is a hint');
    assert.equal((await b.get(`/logout?id_token_hint=${at}`)).status, 400);
    const r = await b.get(
      `/authorize?${new URLSearchParams({ client_id: web.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'x', prompt: 'none', id_token_hint: at })}`,
    );
    assert.equal(callbackParams(r).get('error'), 'invalid_request');
    assert.equal(callbackParams(r).get('code'), null);
  });
});
