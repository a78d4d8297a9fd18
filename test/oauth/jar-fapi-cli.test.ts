import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import * as client from 'openid-client';
import { type Keyhall, startKeyhall } from '../guides/guide.js';
import { Browser, PASSWORD, signIn } from '../signin/helpers.js';
import { rawJwt } from './dpop-helpers.js';

const REDIRECT = 'http://127.0.0.1:9/cb';

describe('signed request objects and FAPI 2.0 on the quick start tenant (http://localhost:<port>, `keyhall serve` in its own process)', () => {
  let k: Keyhall;
  let issuer = '';
  let platformKey = '';
  before(async () => {
    k = await startKeyhall();
    ({ issuer, apiKey: platformKey } = k);
  });
  after(async () => {
    const out = k.output();
    assert.equal(await k.close(), 0, out);
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${platformKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await r.json()) as Record<string, unknown>;
    assert.ok(r.ok, JSON.stringify(json));
    return json;
  };

  it('a FAPI 2.0 client registered through /v1 signs in with a pushed, signed request object, DPoP and private_key_jwt', async () => {
    assert.match(issuer, /^http:\/\/localhost:\d+$/);
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
    const registered = await api('POST', '/clients', {
      client_name: 'Regulated app',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' }] },
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
      profile: 'fapi2',
      require_signed_request_object: true,
    });
    assert.equal(registered.profile, 'fapi2');
    assert.equal(registered.require_signed_request_object, true);
    const clientId = registered.client_id as string;
    await api('POST', '/users', { email: 'ada@example.com', name: 'Ada', password: PASSWORD });

    const meta = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    assert.equal(meta.request_parameter_supported, true);

    const host = new URL(issuer).host;
    const port = Number(new URL(issuer).port);
    // Refused on the way: an unsigned request object, and a plain (unpushed, unsigned) request.
    const b0 = new Browser(port, host);
    const none = rawJwt({ alg: 'none' }, { client_id: clientId, iss: clientId, aud: issuer, exp: Math.floor(Date.now() / 1000) + 60 });
    const refused = await b0.get(`/authorize?${new URLSearchParams({ client_id: clientId, request: none })}`);
    assert.equal(refused.status, 400);
    assert.match(refused.text, /data-error="invalid_request_object"/);
    const plain = await b0.get(`/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, state: 's' })}`);
    assert.equal(new URL(plain.headers.location!).searchParams.get('error'), 'invalid_request');

    const config = await client.discovery(new URL(issuer), clientId, { redirect_uris: [REDIRECT] }, client.PrivateKeyJwt({ key: privateKey, kid: 'k1' }), {
      execute: [client.allowInsecureRequests],
    });
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const jar = await client.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: REDIRECT,
        scope: 'openid offline_access',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      },
      { key: privateKey, kid: 'k1' },
    );
    const url = await client.buildAuthorizationUrlWithPAR(config, { request: jar.searchParams.get('request')! }, { DPoP });
    const b = new Browser(port, host);
    const start = await b.get(url.pathname + url.search);
    assert.equal(start.status, 303, start.text.slice(0, 300));
    const cb = new URL((await signIn(b, start.headers.location!, 'ada@example.com')).headers.location!);
    assert.equal(cb.searchParams.get('iss'), issuer);
    const tokens = await client.authorizationCodeGrant(config, cb, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true }, undefined, {
      DPoP,
    });
    assert.equal(tokens.token_type, 'dpop');
    assert.ok(tokens.refresh_token);
  });
});
