import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { HttpResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { v1 } from '../helpers/v1.js';
import { PASSWORD } from '../signin/helpers.js';
import { connectClient, MCP_REDIRECT, MemoryProvider, signInThroughBrowser, toolJson } from './helpers.js';

/** Client ID Metadata Documents served from a loopback URL (allowed by KEYHALL_EGRESS_ALLOW). */
describe('/mcp with a client identified by a Client ID Metadata Document', () => {
  let s: TestServer;
  let docs: http.Server;
  let base: string;
  let fetches = 0;
  const served = new Map<string, { body: unknown; headers?: Record<string, string> }>();

  before(async () => {
    docs = http.createServer((req, res) => {
      fetches++;
      const doc = served.get(req.url ?? '');
      if (!doc) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json', ...doc.headers }).end(typeof doc.body === 'string' ? doc.body : JSON.stringify(doc.body));
    });
    await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
    s = await startTestServer({ config: { egressAllow: '127.0.0.1/32' } });
    const ctx = s.server.ctx;
    await ctx.management.users.create(s.tenant.tenant.id, { type: 'system', id: null }, { email: 'grace@example.com', password: PASSWORD, name: 'Grace' });
  });
  after(async () => {
    await s.close();
    docs.close();
  });

  const serve = (path: string, body: unknown, headers?: Record<string, string>) => {
    served.set(path, { body, headers });
    return `${base}${path}`;
  };
  const authorize = (clientId: string) =>
    s.request({
      path: `/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: MCP_REDIRECT, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 'st' })}`,
    });
  const errorOf = (r: HttpResponse) => /data-error="([^"]+)"/.exec(r.text)?.[1];

  it('advertises documents in the authorization server metadata, with S256 and the registration endpoint', async () => {
    const meta = (await s.request({ path: '/.well-known/oauth-authorization-server' })).json();
    assert.equal(meta.client_id_metadata_document_supported, true);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    assert.equal(meta.registration_endpoint, `${s.tenant.tenant.issuer}/register`);
    assert.equal(meta.authorization_response_iss_parameter_supported, true);
  });

  it('signs in an SDK client whose client_id is its document URL, and calls whoami', async () => {
    const url = serve(
      '/agent/client.json',
      { client_id: `${base}/agent/client.json`, client_name: 'Loopback agent', redirect_uris: [MCP_REDIRECT], token_endpoint_auth_method: 'none' },
      { 'cache-control': 'max-age=600' },
    );
    // The SDK only offers https document URLs itself; an agent that already has its URL client_id uses it as is.
    const provider = new MemoryProvider({ client_id: url });
    const first = connectClient(s.tenant.tenant.issuer, provider);
    await assert.rejects(first.connect(), UnauthorizedError);
    assert.equal(provider.authorizationUrl!.searchParams.get('client_id'), url);
    const { code, consented } = await signInThroughBrowser(s.port, provider.authorizationUrl!, 'grace@example.com');
    assert.equal(consented, true);
    await first.transport.finishAuth(code);
    const { client, connect } = connectClient(s.tenant.tenant.issuer, provider);
    await connect();
    const me = toolJson(await client.callTool({ name: 'whoami', arguments: {} }));
    assert.equal(me.client_id, url);
    assert.equal(me.email, 'grace@example.com');
    await client.close();
    // Listed (and deletable) like any client; registered once, audited.
    const api = v1(s, s.tenant.platformApiKey);
    const listed = (await api('GET', '/clients')).json();
    assert.ok(listed.data.some((c: { client_id: string; third_party: boolean }) => c.client_id === url && c.third_party));
    const events = (await api('GET', '/events?types=mcp.client.registered')).json();
    assert.equal(events.data.filter((e: { data: { client_id: string } }) => e.data.client_id === url).length, 1);
  });

  it('caches a document as its Cache-Control says', async () => {
    const url = serve('/cached/client.json', { client_id: `${base}/cached/client.json`, redirect_uris: [MCP_REDIRECT] }, { 'cache-control': 'max-age=600' });
    const before = fetches;
    assert.equal((await authorize(url)).status, 303);
    assert.equal((await authorize(url)).status, 303);
    assert.equal(fetches - before, 1);
  });

  it('refuses a document whose client_id differs from its URL', async () => {
    const url = serve('/liar/client.json', { client_id: `${base}/someone-else.json`, redirect_uris: [MCP_REDIRECT] });
    const r = await authorize(url);
    assert.equal(r.status, 400);
    assert.equal(errorOf(r), 'invalid_client');
    assert.match(r.text, /client_id differs from the URL/);
  });

  it('takes redirect URIs only from the document', async () => {
    const url = serve('/narrow/client.json', { client_id: `${base}/narrow/client.json`, redirect_uris: ['http://127.0.0.1:9/other'] });
    const r = await authorize(url);
    assert.equal(r.status, 400);
    assert.equal(errorOf(r), 'invalid_request');
    assert.match(r.text, /redirect_uri is not registered/);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['not JSON', 'nope', /not JSON/],
    ['a client secret', { redirect_uris: [MCP_REDIRECT], client_secret: 'x' }, /client_secret/],
    ['a confidential auth method', { redirect_uris: [MCP_REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }, /public clients/],
    ['no redirect URIs', { redirect_uris: [] }, /redirect_uris/],
  ];
  for (const [name, body, message] of bad) {
    it(`refuses a document with ${name}`, async () => {
      const path = `/bad-${name.replace(/\W/g, '-')}.json`;
      const url = serve(path, typeof body === 'string' ? body : { client_id: `${base}${path}`, ...(body as object) });
      const r = await authorize(url);
      assert.equal(r.status, 400);
      assert.equal(errorOf(r), 'invalid_client');
      assert.match(r.text, message);
    });
  }

  it('refuses a document larger than the limit and one at a non-allowlisted address', async () => {
    const big = serve('/big.json', JSON.stringify({ client_id: `${base}/big.json`, redirect_uris: [MCP_REDIRECT], pad: 'x'.repeat(20_000) }));
    const r = await authorize(big);
    assert.equal(errorOf(r), 'invalid_client');
    assert.match(r.text, /larger than/);
    const r2 = await authorize('http://10.0.0.1/client.json');
    assert.equal(r2.status, 400);
    assert.equal(errorOf(r2), 'invalid_client');
    assert.match(r2.text, /egress policy/);
  });

  it('ignores URL client_ids when the tenant turns documents off', async () => {
    const url = serve('/off/client.json', { client_id: `${base}/off/client.json`, redirect_uris: [MCP_REDIRECT] });
    const api = v1(s, s.tenant.platformApiKey);
    assert.equal((await api('PUT', '/mcp/settings', { client_id_metadata_documents: false })).status, 200);
    const meta = (await s.request({ path: '/.well-known/oauth-authorization-server' })).json();
    assert.equal(meta.client_id_metadata_document_supported, false);
    const r = await authorize(url);
    assert.equal(errorOf(r), 'invalid_client');
    assert.match(r.text, /unknown client_id/);
    assert.equal((await api('PUT', '/mcp/settings', { client_id_metadata_documents: true })).status, 200);
  });
});
