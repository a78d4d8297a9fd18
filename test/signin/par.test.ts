import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint } from 'jose';
import { ManualClock } from '../../src/kernel/clock.js';
import { basic } from '../oauth/helpers.js';
import { makeProof, proofKey } from '../oauth/dpop-helpers.js';
import { REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from './helpers.js';

describe('/par (RFC 9126)', () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  let a: { client_id: string; client_secret: string };
  let b: { client_id: string; client_secret: string };
  let challenge: string;
  before(async () => {
    s = await startSigninServer({ clock });
    a = await s.webClient();
    b = await s.webClient();
    challenge = await S256(VERIFIER);
    await s.createUser('par@example.com');
  });
  after(() => s.close());

  const push = (client: { client_id: string; client_secret: string }, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    s.post(
      '/par',
      {
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 'pushed-state',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...extra,
      },
      { authorization: basic(client.client_id, client.client_secret), ...headers },
    );
  const authorizeWith = (clientId: string, requestUri: string, extra = '') =>
    `/authorize?client_id=${encodeURIComponent(clientId)}&request_uri=${encodeURIComponent(requestUri)}${extra}`;

  it('returns 201 with a single-use urn request_uri and expires_in, no-store', async () => {
    const r = await push(a);
    assert.equal(r.status, 201);
    assert.equal(r.headers['cache-control'], 'no-store');
    const body = r.json();
    assert.match(body.request_uri, /^urn:ietf:params:oauth:request_uri:[\w-]{43}$/);
    assert.equal(body.expires_in, 60);
  });

  it('rejects GET, a missing client authentication, a missing code_challenge, a request_uri in the body, a bad redirect_uri or scope', async () => {
    assert.equal((await s.request({ path: '/par' })).status, 405);
    const noAuth = await s.post('/par', {
      response_type: 'code',
      client_id: a.client_id,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    assert.equal(noAuth.status, 401);
    assert.equal(noAuth.json().error, 'invalid_client');
    const noPkce = await push(a, { code_challenge: '', code_challenge_method: '' });
    assert.equal(noPkce.status, 400);
    assert.equal(noPkce.json().error, 'invalid_request');
    const plain = await push(a, { code_challenge_method: 'plain' });
    assert.equal(plain.json().error, 'invalid_request');
    const nested = await push(a, { request_uri: 'urn:ietf:params:oauth:request_uri:x' });
    assert.equal(nested.status, 400);
    assert.equal(nested.json().error, 'invalid_request');
    const badRedirect = await push(a, { redirect_uri: 'https://evil.example/cb' });
    assert.equal(badRedirect.status, 400);
    assert.equal(badRedirect.json().error, 'invalid_request');
    const badScope = await push(a, { scope: 'openid root' });
    assert.equal(badScope.status, 400);
    assert.equal(badScope.json().error, 'invalid_scope');
  });

  it('works with client_id and request_uri alone, survives reloads before completion, and is single-use after', async () => {
    const uri = (await push(a)).json().request_uri;
    const br = s.browser();
    const first = await br.get(authorizeWith(a.client_id, uri, '&state=from-query&redirect_uri=https%3A%2F%2Fevil.example%2F'));
    assert.equal(first.status, 303);
    const reload = await br.get(authorizeWith(a.client_id, uri));
    assert.equal(reload.status, 303, 'reloading before completion works');
    const cb = await signIn(br, reload.headers.location!, 'par@example.com');
    const url = new URL(cb.headers.location!);
    assert.equal(url.origin + url.pathname, REDIRECT, 'query parameters do not override pushed ones');
    assert.equal(url.searchParams.get('state'), 'pushed-state');
    const reused = await br.get(authorizeWith(a.client_id, uri));
    assert.equal(reused.status, 400);
    assert.equal(reused.headers.location, undefined);
    assert.match(reused.text, /data-error="invalid_request_uri"/);
    // The other flow of the same request_uri (the first load) cannot complete any more either.
    const stale = await signIn(br, first.headers.location!, 'par@example.com');
    assert.equal(stale.status, 400);
    assert.equal(stale.headers.location, undefined);
    assert.match(stale.text, /data-error="invalid_request_uri"/);
  });

  it("refuses another client's request_uri and an expired one", async () => {
    const uri = (await push(a)).json().request_uri;
    const other = await s.request({ path: authorizeWith(b.client_id, uri) });
    assert.equal(other.status, 400);
    assert.match(other.text, /data-error="invalid_request_uri"/);
    clock.advance(61_000);
    const expired = await s.request({ path: authorizeWith(a.client_id, uri) });
    assert.equal(expired.status, 400);
    assert.match(expired.text, /data-error="invalid_request_uri"/);
  });

  it('binds the code to the DPoP key of the PAR request (dpop_jkt) and refuses a mismatch', async () => {
    const key = await proofKey();
    const jkt = await calculateJwkThumbprint(key.jwk);
    const proof = () => makeProof(key, { htm: 'POST', htu: `${s.issuer}/par`, iat: Math.floor(clock.now() / 1000) });
    const other = await proofKey();
    const mismatch = await push(a, { dpop_jkt: await calculateJwkThumbprint(other.jwk) }, { dpop: await proof() });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.json().error, 'invalid_request');

    const uri = (await push(a, { dpop_jkt: jkt }, { dpop: await proof() })).json().request_uri;
    const br = s.browser();
    const cb = await signIn(br, (await br.get(authorizeWith(a.client_id, uri))).headers.location!, 'par@example.com');
    const code = new URL(cb.headers.location!).searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER };
    const withoutProof = await s.post('/token', form, { authorization: basic(a.client_id, a.client_secret) });
    assert.equal(withoutProof.status, 400);
    assert.equal(withoutProof.json().error, 'invalid_grant');
  });
});
