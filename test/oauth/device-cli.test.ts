/**
 * The device grant on the quick start tenant: `keyhall serve` in its own process on
 * http://localhost:<port>, KEYHALL_DEVICE_CODE_TTL_SECONDS from its environment, a client
 * registered through /v1, openid-client's device flow as the device, and the person approving at
 * /activate over HTTP (docs/device-grant.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { type Keyhall, startKeyhall } from '../guides/guide.js';
import { Browser, decodeEntities, location, signIn } from '../signin/helpers.js';

describe('device grant against `keyhall serve` (http://localhost)', () => {
  let k: Keyhall;
  let issuer = '';
  let platformKey = '';
  before(async () => {
    k = await startKeyhall({ KEYHALL_DEVICE_CODE_TTL_SECONDS: '120' });
    ({ issuer, apiKey: platformKey } = k);
  });
  after(async () => {
    const out = k.output();
    assert.equal(await k.close(), 0, out);
  });

  const api = async (path: string, body: unknown) => {
    const r = await fetch(`${issuer}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${platformKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await r.json()) as Record<string, unknown>;
    assert.ok(r.ok, JSON.stringify(json));
    return json;
  };

  it('openid-client initiates and polls; the person approves at /activate', async () => {
    assert.match(issuer, /^http:\/\/localhost:\d+$/);
    const registered = await api('/clients', {
      client_name: 'Command line',
      token_endpoint_auth_method: 'none',
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
    });
    await api('/users', { email: 'cli@example.com', name: 'Grace', password: 'correct horse battery staple' });

    const config = await client.discovery(new URL(issuer), registered.client_id as string, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    assert.equal(config.serverMetadata().device_authorization_endpoint, `${issuer}/device_authorization`);
    const d = await client.initiateDeviceAuthorization(config, { scope: 'openid email' });
    assert.equal(d.expires_in, 120, 'KEYHALL_DEVICE_CODE_TTL_SECONDS from the environment');
    assert.equal(d.verification_uri, `${issuer}/activate`);

    const port = Number(new URL(issuer).port);
    const b = new Browser(port, `localhost:${port}`);
    const form = await b.get(new URL(d.verification_uri_complete!).pathname + new URL(d.verification_uri_complete!).search);
    assert.equal(form.status, 200);
    const prefilled = decodeEntities(/id="user_code"[^>]* value="([^"]*)"/.exec(form.text)![1]!);
    assert.equal(prefilled, d.user_code);
    const login = await b.submit(form, { user_code: prefilled });
    const confirm = await signIn(b, location(login), 'cli@example.com');
    const page = await b.get(location(confirm));
    assert.match(decodeEntities(page.text), /Command line on your device wants to access your account/);
    const done = await b.submit(page, { decision: 'allow' });
    assert.match(done.text, /data-approved="true"/);

    const tokens = await client.pollDeviceAuthorizationGrant(config, d);
    assert.equal(tokens.claims()!.email, 'cli@example.com');
    assert.equal(tokens.scope, 'openid email');
  });
});
