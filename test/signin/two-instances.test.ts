import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { request } from '../helpers/http.js';
import { basic } from '../oauth/helpers.js';
import { Browser, REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from './helpers.js';

/** Two instances on one database: flows, request_uris, codes and sessions are shared. */
describe('sign-in across two instances on one database', () => {
  let s: SigninTestServer;
  let second: RunningServer;
  before(async () => {
    s = await startSigninServer();
    second = await startServer(loadConfig(s.env, { port: 0, host: '127.0.0.1', bootstrap: 'false', logLevel: 'silent' }));
    await s.createUser('two@example.com');
  });
  after(async () => {
    await second.close();
    await s.close();
  });

  it('starts at one instance, finishes at the other, and a logout at one ends the session at both', async () => {
    const web = await s.webClient();
    const pushed = (
      await s.post(
        '/par',
        {
          response_type: 'code',
          client_id: web.client_id,
          redirect_uri: REDIRECT,
          scope: 'openid',
          code_challenge: await S256(VERIFIER),
          code_challenge_method: 'S256',
        },
        { authorization: basic(web.client_id, web.client_secret) },
      )
    ).json();
    const host = s.tenant.tenant.host;
    const atA = new Browser(s.port, host);
    const atB = new Browser(second.port, host);
    const toLogin = await atB.get(`/authorize?client_id=${web.client_id}&request_uri=${encodeURIComponent(pushed.request_uri)}`);
    const cb = await signIn(atA, toLogin.headers.location!, 'two@example.com');
    const code = new URL(cb.headers.location!).searchParams.get('code')!;
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER }).toString();
    const redeem = (port: number) =>
      request(port, {
        host,
        method: 'POST',
        path: '/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(web.client_id, web.client_secret) },
        body: form,
      });
    assert.equal((await redeem(second.port)).status, 200);
    assert.equal((await redeem(s.port)).json().error, 'invalid_grant', 'the code was used at the other instance');
    const reuse = await atA.get(`/authorize?client_id=${web.client_id}&request_uri=${encodeURIComponent(pushed.request_uri)}`);
    assert.equal(reuse.status, 400);

    // The session cookie works at both; a logout at B ends it at A.
    for (const [k, v] of atA.cookies) atB.cookies.set(k, v);
    assert.equal((await atB.get('/sessions')).status, 200);
    const page = await atB.get('/logout');
    assert.equal((await atB.submit(page)).status, 303);
    assert.equal((await atA.get('/sessions')).status, 303);
  });
});
