import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { HttpResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { v1 } from '../helpers/v1.js';
import { ERROR, scimClient } from '../scim/helpers.js';

const expect405 = (r: HttpResponse, allow: string) => {
  assert.equal(r.status, 405, r.text);
  assert.equal(r.headers.allow, allow);
  assert.equal(r.json().error, 'method_not_allowed');
  assert.match(r.json().error_description, /accepts/);
  assert.equal(r.headers['cache-control'], 'no-store');
};

describe('wrong method on a known path: 405 with Allow, on every surface', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('/v1', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    expect405(await api('PUT', '/organizations', {}), 'GET, HEAD, POST');
    const org = (await api('POST', '/organizations', { name: 'M' })).json().id;
    const r = await api('POST', `/organizations/${org}`, {});
    expect405(r, 'GET, HEAD, PATCH, DELETE');
    assert.match(r.json().error_description, /^POST is not allowed here/);
    expect405(await api('PATCH', '/api_keys/key_00000000000000000000000000'), 'DELETE');
    // An unknown path stays 404.
    const nope = await api('PUT', '/nothing');
    assert.equal(nope.status, 404);
    assert.equal(nope.json().error, 'not_found');
  });

  it('OAuth endpoints, hosted pages and .well-known', async () => {
    // /userinfo and /token answer CORS preflights (docs/oauth.md "Browser apps").
    expect405(await s.request({ method: 'DELETE', path: '/userinfo' }), 'GET, HEAD, POST, OPTIONS');
    expect405(await s.request({ method: 'PUT', path: '/authorize' }), 'GET, POST');
    expect405(await s.request({ method: 'DELETE', path: '/login' }), 'GET, HEAD, POST');
    expect405(await s.request({ method: 'GET', path: '/sessions/revoke' }), 'POST');
    const token = await s.request({ method: 'GET', path: '/token' });
    assert.equal(token.status, 405);
    assert.equal(token.headers.allow, 'POST, OPTIONS');
    assert.ok(token.json().error_description);
    const jwks = await s.request({ method: 'DELETE', path: '/.well-known/jwks.json' });
    assert.equal(jwks.status, 405);
    assert.ok(jwks.json().error_description);
  });

  it('SCIM: the SCIM error schema with Allow', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Dir' })).json().id;
    const conn = (await api('POST', `/organizations/${org}/directory/connections`, { name: 'okta' })).json().id;
    const token = (await api('POST', `/organizations/${org}/directory/scim_token`, { connection_id: conn })).json().token;
    const scim = scimClient(s, token);
    const r = await scim('PUT', '/Users');
    assert.equal(r.status, 405, r.text);
    assert.equal(r.headers.allow, 'GET, HEAD, POST');
    assert.equal(r.json().schemas[0], ERROR);
    assert.equal(r.json().status, '405');
    assert.match(r.json().detail, /PUT is not allowed/);
    assert.equal((await scim('GET', '/Nope')).status, 404);
  });
});

/** A raw request whose head may exceed Node's limit; resolves with the parsed answer. */
function rawRequest(port: number, path: string, headers: Record<string, string>): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('requests refused by the HTTP parser keep the error format', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('a 20 KB header: 431 request_too_large as JSON, Connection: close', async () => {
    const r = await rawRequest(s.port, '/.well-known/jwks.json', { host: s.tenant.tenant.host, 'x-big': 'a'.repeat(20 * 1024) });
    assert.equal(r.status, 431);
    assert.equal(r.headers.connection, 'close');
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.deepEqual(Object.keys(r.json()).sort(), ['error', 'error_description']);
    assert.equal(r.json().error, 'request_too_large');
    assert.match(r.json().error_description, /16384 bytes/);
  });

  it('a 100 KB query string: the same', async () => {
    const r = await rawRequest(s.port, `/v1/organizations?q=${'a'.repeat(100 * 1024)}`, { host: s.tenant.tenant.host });
    assert.equal(r.status, 431);
    assert.equal(r.json().error, 'request_too_large');
  });

  it('under /scim/v2: the SCIM error schema', async () => {
    const r = await rawRequest(s.port, `/scim/v2/Users?filter=${'a'.repeat(30 * 1024)}`, { host: s.tenant.tenant.host });
    assert.equal(r.status, 431);
    assert.match(String(r.headers['content-type']), /^application\/scim\+json/);
    assert.equal(r.json().schemas[0], ERROR);
    assert.equal(r.json().status, '431');
  });

  it('the server keeps serving afterwards', async () => {
    assert.equal((await s.request({ path: '/.well-known/jwks.json' })).status, 200);
  });
});
