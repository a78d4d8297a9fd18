import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

describe('discovery documents', () => {
  let s: TestServer;
  let issuer: URL;
  before(async () => {
    s = await startTestServer();
    issuer = new URL(s.tenant.tenant.issuer);
  });
  after(() => s.close());

  for (const algorithm of ['oidc', 'oauth2'] as const) {
    it(`${algorithm} metadata passes oauth4webapi's issuer checks`, async () => {
      const response = await oauth.discoveryRequest(issuer, { algorithm, [oauth.allowInsecureRequests]: true });
      const as = await oauth.processDiscoveryResponse(issuer, response);
      assert.equal(as.issuer, s.tenant.tenant.issuer);
      assert.equal(as.jwks_uri, `${s.tenant.tenant.issuer}/.well-known/jwks.json`);
      for (const [name, value] of Object.entries(as)) {
        if (typeof value === 'string' && /^https?:/.test(value)) {
          assert.equal(new URL(value).host, issuer.host, `${name} is on the tenant host`);
        }
      }
    });
  }

  it('publishes protected resource metadata (RFC 9728) for this tenant only', async () => {
    const r = await s.request({ path: '/.well-known/oauth-protected-resource' });
    assert.equal(r.status, 200);
    const body = r.json();
    assert.equal(body.resource, s.tenant.tenant.issuer);
    assert.deepEqual(body.authorization_servers, [s.tenant.tenant.issuer]);
  });

  it('publishes a JWKS with public members only and unique kids', async () => {
    const r = await s.request({ path: '/.well-known/jwks.json' });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/jwk-set\+json/);
    const { keys } = r.json();
    assert.deepEqual(keys.map((k: { alg: string }) => k.alg).sort(), ['EdDSA', 'RS256']);
    for (const key of keys) {
      for (const m of PRIVATE_MEMBERS) assert.equal(key[m], undefined, `no ${m} in ${key.kid}`);
      assert.equal(key.use, 'sig');
    }
    const ed = keys.find((k: { alg: string }) => k.alg === 'EdDSA');
    assert.equal(ed.crv, 'Ed25519');
    const rsa = keys.find((k: { alg: string }) => k.alg === 'RS256');
    assert.equal(Buffer.from(rsa.n, 'base64url').length * 8, 2048);
    assert.equal(new Set(keys.map((k: { kid: string }) => k.kid)).size, keys.length);
  });

  it('sends CORS and cache headers on public documents, GET only', async () => {
    for (const path of [
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
      '/.well-known/jwks.json',
    ]) {
      const r = await s.request({ path, headers: { origin: 'https://app.example' } });
      assert.equal(r.headers['access-control-allow-origin'], '*', path);
      assert.match(String(r.headers['cache-control']), /max-age=\d+/, path);
      const pre = await s.request({
        method: 'OPTIONS',
        path,
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], '*');
      assert.equal(pre.headers['access-control-allow-methods'], 'GET');
      const post = await s.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(post.status, 405);
      assert.equal(post.json().error, 'method_not_allowed');
    }
  });

  it('sends no CORS headers anywhere else', async () => {
    for (const path of ['/healthz', '/readyz', '/no/such/route', '/v1/organizations']) {
      const r = await s.request({ path, headers: { origin: 'https://app.example' } });
      assert.equal(r.headers['access-control-allow-origin'], undefined, path);
      const pre = await s.request({
        method: 'OPTIONS',
        path,
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(pre.headers['access-control-allow-origin'], undefined, path);
    }
  });
});
