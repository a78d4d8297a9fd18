import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getJson, request } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('tenants by host', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await s.createTenant(`localhost:${s.port}`);
    await s.createTenant('auth.acme.test');
  });
  after(() => s.close());

  it('serves two tenants on one process with their own issuers and keys', async () => {
    const a = await getJson(`http://127.0.0.1:${s.port}/.well-known/openid-configuration`);
    const b = await getJson(`http://localhost:${s.port}/.well-known/openid-configuration`);
    assert.equal(a.issuer, `http://127.0.0.1:${s.port}`);
    assert.equal(b.issuer, `http://localhost:${s.port}`);
    const ka = await getJson(`http://127.0.0.1:${s.port}/.well-known/jwks.json`);
    const kb = await getJson(`http://localhost:${s.port}/.well-known/jwks.json`);
    const kidsA = ka.keys.map((k: { kid: string }) => k.kid);
    const kidsB = kb.keys.map((k: { kid: string }) => k.kid);
    assert.equal(kidsA.length, 2);
    assert.equal(kidsB.length, 2);
    assert.deepEqual(
      kidsA.filter((k: string) => kidsB.includes(k)),
      [],
    );
  });

  it('answers an unknown host with 404 unknown_tenant, never a default tenant', async () => {
    for (const host of ['unknown.test', `evil.test:${s.port}`, `127.0.0.2:${s.port}`]) {
      const r = await request(s.port, { host, path: '/.well-known/openid-configuration' });
      assert.equal(r.status, 404, host);
      assert.equal(r.json().error, 'unknown_tenant');
      assert.equal(r.headers['access-control-allow-origin'], undefined);
    }
    const r = await request(s.port, { host: 'unknown.test', path: '/no/such/route' });
    assert.equal(r.json().error, 'unknown_tenant');
  });

  it('resolves mixed case, a trailing dot and a default port to the same tenant', async () => {
    for (const host of ['AUTH.Acme.TEST', 'auth.acme.test.', 'auth.acme.test:443', 'auth.acme.test:80']) {
      const r = await request(s.port, { host, path: '/.well-known/openid-configuration' });
      assert.equal(r.status, 200, host);
      assert.equal(r.json().issuer, 'https://auth.acme.test');
    }
  });

  it('refuses a malformed Host header with 400 invalid_request', async () => {
    const r = await request(s.port, { host: 'bad host!', path: '/.well-known/jwks.json' });
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'invalid_request');
  });

  it('ignores X-Forwarded-Host when no proxy is trusted', async () => {
    const r = await request(s.port, {
      host: 'unknown.test',
      path: '/.well-known/openid-configuration',
      headers: { 'x-forwarded-host': 'auth.acme.test', forwarded: 'host=auth.acme.test' },
    });
    assert.equal(r.status, 404);
    const r2 = await request(s.port, {
      host: 'auth.acme.test',
      path: '/.well-known/openid-configuration',
      headers: { 'x-forwarded-host': `localhost:${s.port}` },
    });
    assert.equal(r2.json().issuer, 'https://auth.acme.test');
  });

  it('serves health checks on any host', async () => {
    const r = await request(s.port, { host: 'whatever.test', path: '/healthz' });
    assert.equal(r.status, 200);
    const ready = await request(s.port, { host: 'whatever.test', path: '/readyz' });
    assert.equal(ready.status, 200);
    assert.equal(ready.json().status, 'ok');
  });
});

describe('tenants behind a trusted proxy', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ config: { trustProxy: '127.0.0.1' } });
    await s.createTenant('auth.acme.test');
  });
  after(() => s.close());

  it('honours X-Forwarded-Host from the trusted proxy', async () => {
    const r = await request(s.port, {
      host: 'internal:8080',
      path: '/.well-known/openid-configuration',
      headers: { 'x-forwarded-host': 'auth.acme.test', 'x-forwarded-proto': 'https' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.json().issuer, 'https://auth.acme.test');
  });
});
