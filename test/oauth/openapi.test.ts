import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Doc = {
  servers: { url: string }[];
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown>; requestBody?: unknown }>>;
};

describe('/openapi/oauth.json describes the protocol endpoints', () => {
  let s: TestServer;
  let doc: Doc;
  before(async () => {
    s = await startTestServer();
    const r = await s.request({ path: '/openapi/oauth.json' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['access-control-allow-origin'], '*');
    doc = r.json();
  });
  after(() => s.close());

  it('is served per tenant, with its issuer as the server', () => {
    assert.deepEqual(doc.servers, [{ url: s.tenant.tenant.issuer }]);
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/.well-known/jwks.json',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/openid-configuration',
      '/authorize',
      '/device_authorization',
      '/introspect',
      '/mcp',
      '/par',
      '/register',
      '/revoke',
      '/token',
      '/userinfo',
    ]);
  });

  it('lists the endpoints discovery advertises', async () => {
    const metadata = (await s.request({ path: '/.well-known/openid-configuration' })).json();
    for (const member of [
      'authorization_endpoint',
      'token_endpoint',
      'introspection_endpoint',
      'revocation_endpoint',
      'userinfo_endpoint',
      'pushed_authorization_request_endpoint',
      'device_authorization_endpoint',
      'jwks_uri',
    ]) {
      const path = new URL(metadata[member]).pathname;
      assert.ok(doc.paths[path], `${member} ${path}`);
    }
  });

  it('describes real routes: each operation, called bare, answers a status it documents', async () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const r = await s.request({
          method: method.toUpperCase(),
          path,
          ...(op.requestBody ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' } : {}),
        });
        assert.ok(String(r.status) in op.responses, `${method.toUpperCase()} ${path} answered ${r.status}: ${r.text.slice(0, 200)}`);
      }
    }
  });

  it('documents the /token form per grant type and the JSON-body refusal', async () => {
    const token = doc.paths['/token']!.post!;
    const form = (token.requestBody as { content: Record<string, { schema: { oneOf: unknown[]; discriminator: { propertyName: string } } }> }).content[
      'application/x-www-form-urlencoded'
    ]!;
    assert.equal(form.schema.discriminator.propertyName, 'grant_type');
    assert.equal(form.schema.oneOf.length, 5);
    const r = await s.request({ method: 'POST', path: '/token', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"client_credentials"}' });
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'invalid_request');
    assert.ok('400' in token.responses);
  });
});
