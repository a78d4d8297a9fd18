import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { Browser, callbackParams, signIn } from './helpers.js';

async function until(fn: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('back-channel logout on the quick start tenant (http://localhost:<port>, `keyhall serve` in its own process)', () => {
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let out = '';
  let issuer = '';
  let platformKey = '';
  let receiver: Receiver;
  let cleanup: () => Promise<void>;
  before(async () => {
    receiver = await startReceiver();
    // The operator allowlists the receiver's network, as for a local webhook receiver.
    const install = await freshInstallation({ KEYHALL_LOG_LEVEL: 'warn', KEYHALL_EGRESS_ALLOW: '127.0.0.1/32', KEYHALL_DISPATCH_INTERVAL_MS: '100' });
    cleanup = install.cleanup;
    child = spawnServer(['--port', '0'], install.env);
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => /API key\s+sk_live_\S+/.test(out) && /Serving 1 tenant/.test(out));
    issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(out)![1]!;
    platformKey = /API key\s+(sk_live_\S+)/.exec(out)![1]!;
  });
  after(async () => {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    await receiver.close();
    await cleanup();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${platformKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, json: (r.status === 204 ? {} : await r.json()) as Record<string, unknown> };
  };

  it('ending a session through /v1 POSTs a logout token the RP verifies against the JWKS', async () => {
    const redirect = 'http://localhost:9/cb';
    const created = await api('POST', '/clients', { redirect_uris: [redirect], backchannel_logout_uri: `${receiver.url}/rp` });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const client = created.json as { client_id: string; client_secret: string; backchannel_logout_uri: string };
    assert.equal(client.backchannel_logout_uri, `${receiver.url}/rp`);
    const refused = await api('POST', '/clients', { redirect_uris: [redirect], backchannel_logout_uri: 'http://10.1.2.3/logout' });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error, 'invalid_client_metadata');

    const user = await api('POST', '/users', { email: 'ada@example.com', password: 'correct horse battery staple' });
    assert.equal(user.status, 201, JSON.stringify(user.json));
    const port = Number(new URL(issuer).port);
    const b = new Browser(port, `localhost:${port}`);
    const start = await b.get(
      `/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: redirect, response_type: 'code', scope: 'openid', state: 's' })}`,
    );
    const cb = await signIn(b, start.headers.location!, 'ada@example.com', 'correct horse battery staple');
    const code = callbackParams(cb).get('code')!;
    const t = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect }),
    });
    assert.equal(t.status, 200);
    const idToken = ((await t.json()) as { id_token: string }).id_token;
    const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));
    const { payload: id } = await jwtVerify(idToken, jwks, { issuer, audience: client.client_id });

    assert.equal((await api('DELETE', `/users/${user.json.id as string}/sessions/${id.sid as string}`)).status, 204);
    await receiver.waitFor(1, 20_000);
    const token = new URLSearchParams(receiver.received[0]!.body).get('logout_token')!;
    const { payload } = await jwtVerify(token, jwks, {
      issuer,
      audience: client.client_id,
      typ: 'logout+jwt',
      requiredClaims: ['iat', 'exp', 'jti', 'events', 'sid'],
    });
    assert.equal(payload.sid, id.sid);
    assert.equal(payload.sub, user.json.id);
    assert.deepEqual(payload.events, { 'http://schemas.openid.net/event/backchannel-logout': {} });
    assert.equal('nonce' in payload, false);
  });
});
