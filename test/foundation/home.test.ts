/** The page at /, the favicon and the API reference page at /v1/docs, over HTTP (docs/api.md). */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('the home page, the favicon and the API reference page', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('/ on a tenant host links to the console, discovery, the API reference and the OpenAPI documents', async () => {
    const r = await s.request({ path: '/' });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.match(String(r.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(r.headers['x-frame-options'], 'DENY');
    for (const href of [
      '/console/',
      '/.well-known/openid-configuration',
      '/.well-known/jwks.json',
      '/v1/docs',
      '/v1/openapi.json',
      '/openapi/oauth.json',
      '/openapi/scim.json',
    ]) {
      assert.ok(r.text.includes(`href="${href}"`), `links to ${href}`);
    }
    assert.ok(r.text.includes(s.tenant.tenant.issuer), 'names the issuer');
  });

  it('/ on a host without a tenant is still 404 unknown_tenant', async () => {
    const r = await s.request({ path: '/', host: 'nobody.example' });
    assert.equal(r.status, 404);
    assert.equal(r.json().error, 'unknown_tenant');
  });

  it('serves the favicon as ICO and SVG, on any host, cached for a week', async () => {
    for (const host of [s.tenant.tenant.host, 'nobody.example']) {
      const ico = await fetchRaw(s.port, '/favicon.ico', host);
      assert.equal(ico.status, 200);
      assert.equal(ico.headers['content-type'], 'image/x-icon');
      assert.equal(ico.headers['cache-control'], 'public, max-age=604800');
      // ICONDIR: reserved 0, type 1 (icon), one image; the image is a PNG.
      assert.deepEqual([...ico.body.subarray(0, 6)], [0, 0, 1, 0, 1, 0]);
      assert.equal(ico.body.subarray(22, 26).toString('latin1'), '\x89PNG');
      const svg = await fetchRaw(s.port, '/favicon.svg', host);
      assert.equal(svg.status, 200);
      assert.equal(svg.headers['content-type'], 'image/svg+xml');
      assert.equal(svg.headers['cache-control'], 'public, max-age=604800');
      assert.match(svg.body.toString('utf8'), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
  });

  it('/v1/docs is a page with a strict CSP whose scripts and styles all come from this origin', async () => {
    const r = await s.request({ path: '/v1/docs' });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    const csp = String(r.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-(eval|inline)|https?:/);
    assert.equal(r.headers['x-frame-options'], 'DENY');
    // Nothing inline, nothing from another origin.
    assert.doesNotMatch(r.text, /<script>|<style|style="|\son[a-z]+=/i);
    assert.doesNotMatch(r.text, /(src|href)="(https?:)?\/\//);
    assert.ok(r.text.includes('data-url="/v1/openapi.json"'), 'renders the management API by default');
    const assets = [...r.text.matchAll(/(?:src|href)="(\/v1\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.equal(assets.length, 4, 'two style sheets, two scripts');
    for (const path of assets) {
      const a = await fetchRaw(s.port, path, s.tenant.tenant.host);
      assert.equal(a.status, 200, path);
      assert.match(String(a.headers['content-type']), path.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      assert.equal(a.headers['cache-control'], 'public, max-age=31536000, immutable');
    }
  });

  it('/v1/docs?document= picks the OAuth or SCIM document; an unknown one is 400 invalid_request', async () => {
    const oauth = await s.request({ path: '/v1/docs?document=oauth' });
    assert.equal(oauth.status, 200);
    assert.ok(oauth.text.includes('data-url="/openapi/oauth.json"'));
    assert.ok(oauth.text.includes('href="/v1/docs?document=oauth" aria-current="page"'));
    const scim = await s.request({ path: '/v1/docs?document=scim' });
    assert.ok(scim.text.includes('data-url="/openapi/scim.json"'));
    const bad = await s.request({ path: '/v1/docs?document=../etc' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json().error, 'invalid_request');
  });

  it('an unknown asset is 404 not_found; /v1/docs needs no API key but /v1 routes still do', async () => {
    const r = await s.request({ path: '/v1/docs/assets/swagger-ui-bundle.js' });
    assert.equal(r.status, 404);
    assert.equal(r.json().error, 'not_found');
    const v1 = await s.request({ path: '/v1/organizations' });
    assert.equal(v1.status, 401);
  });
});

/** A GET with an explicit Host header, keeping the body's bytes. */
function fetchRaw(port: number, path: string, host: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}
