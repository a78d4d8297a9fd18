import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('error rendering', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ config: { bodyLimit: 2048 } });
  });
  after(() => s.close());

  const expectError = (r: { status: number; json(): { error: string }; headers: Record<string, unknown>; text: string }, status: number, error: string) => {
    assert.equal(r.status, status, r.text);
    assert.equal(r.json().error, error);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.ok(!r.text.includes('    at '), 'no stack trace');
  };

  it('unknown route: 404 not_found', async () => {
    expectError(await s.request({ path: '/nope' }), 404, 'not_found');
    expectError(await s.request({ method: 'DELETE', path: '/v1/nothing' }), 404, 'not_found');
  });

  it('malformed JSON: 400 invalid_request', async () => {
    const r = await s.request({ method: 'POST', path: '/.well-known/jwks.json', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    expectError(r, 400, 'invalid_request');
  });

  it('wrong content type: 415 unsupported_media_type', async () => {
    const r = await s.request({ method: 'POST', path: '/.well-known/jwks.json', headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    expectError(r, 415, 'unsupported_media_type');
  });

  it('oversized body: 413 request_too_large', async () => {
    const body = JSON.stringify({ a: 'x'.repeat(5000) });
    const r = await s.request({ method: 'POST', path: '/.well-known/jwks.json', headers: { 'content-type': 'application/json' }, body });
    expectError(r, 413, 'request_too_large');
  });

  it('every response has a request id and nosniff', async () => {
    const r = await s.request({ path: '/.well-known/jwks.json' });
    assert.match(String(r.headers['x-request-id']), /^req_/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
  });
});

describe('request hygiene', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('refuses text no database stores faithfully (NUL, lone surrogates) with 400 naming the field', async () => {
    const headers = { authorization: `Bearer ${s.tenant.platformApiKey}`, 'content-type': 'application/json' };
    for (const body of ['{"name":"a\\u0000b"}', '{"name":"a\\ud800b"}', '{"name":"ok","slug":"\\udc00"}', '{"a\\u0000":"x"}']) {
      const r = await s.request({ method: 'POST', path: '/v1/organizations', headers, body });
      assert.equal(r.status, 400, body);
      assert.equal(r.json().error, 'invalid_request');
    }
    const q = await s.request({ path: '/v1/organizations?after=%00', headers });
    assert.equal(q.status, 400);
    const good = await s.request({ method: 'POST', path: '/v1/organizations', headers, body: '{"name":"Émile 😀"}' });
    assert.equal(good.status, 201, good.text);
    assert.equal(good.json().name, 'Émile 😀');
  });

  it('refuses absurdly nested bodies with 400 instead of exhausting the stack', async () => {
    const headers = { authorization: `Bearer ${s.tenant.platformApiKey}`, 'content-type': 'application/json' };
    const body = `{"name":${'['.repeat(5000)}1${']'.repeat(5000)}}`;
    const r = await s.request({ method: 'POST', path: '/v1/organizations', headers, body });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json().error, 'invalid_request');
    assert.match(r.json().error_description, /nested/);
  });

  it('answers a malformed request target with our error body', async () => {
    const r = await s.request({ path: '/v1/organizations/org_%E0%A4%A' });
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'invalid_request');
    assert.equal(r.headers['cache-control'], 'no-store');
  });

  it('refuses an absolute-form target instead of serving it as the Host tenant', async () => {
    const r = await s.request({ path: 'http://evil.test/.well-known/openid-configuration' });
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'invalid_request');
  });

  it('refuses hosts with a port inside the name', async () => {
    for (const host of [`127.0.0.1:${s.port}:443`, `127.0.0.1:${s.port}:80`, `127.0.0.1:${s.port}.`]) {
      const r = await s.request({ host, path: '/.well-known/openid-configuration' });
      assert.equal(r.status, 400, host);
    }
  });
});
