import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ath, makeProof, proofKey } from '../oauth/dpop-helpers.js';
import { basic } from '../oauth/helpers.js';
import type { HttpResponse } from '../helpers/http.js';
import { expectError, v1, type Api } from '../helpers/v1.js';
import { startSigninServer, type SigninTestServer } from '../signin/helpers.js';
import { ACCEPT, callTool, mcpUserToken, rpc } from './mcp-helpers-server.js';

describe('/mcp refusals: no token, another audience, missing scope, DPoP binding, foreign Origin', () => {
  let s: SigninTestServer;
  let metadataUrl: string;
  before(async () => {
    s = await startSigninServer();
    metadataUrl = `${s.issuer}/.well-known/oauth-protected-resource/mcp`;
    await s.createUser('ada@example.com');
  });
  after(() => s.close());

  const challenge = (r: HttpResponse) => String(r.headers['www-authenticate'] ?? '');

  it('publishes RFC 9728 metadata for /mcp', async () => {
    const r = await s.request({ path: '/.well-known/oauth-protected-resource/mcp' });
    assert.equal(r.status, 200);
    const m = r.json();
    assert.equal(m.resource, `${s.issuer}/mcp`);
    assert.deepEqual(m.authorization_servers, [s.issuer]);
    assert.deepEqual(m.scopes_supported, ['mcp:read', 'mcp:connected_accounts', 'mcp:credentials', 'offline_access']);
    assert.deepEqual(m.bearer_methods_supported, ['header']);
    assert.ok(m.dpop_signing_alg_values_supported.includes('ES256'));
  });

  it('answers a request without a token with a Bearer challenge naming the metadata and the scopes', async () => {
    const r = await rpc(s, undefined, 'tools/list');
    expectError(r, 401, 'invalid_token');
    assert.equal(challenge(r), `Bearer resource_metadata="${metadataUrl}", scope="mcp:read mcp:connected_accounts mcp:credentials offline_access"`);
  });

  it('refuses a token for another audience with invalid_token', async () => {
    const t = await mcpUserToken(s, 'ada@example.com', 'mcp:read', `${s.issuer}/other`);
    const r = await rpc(s, `Bearer ${t}`, 'tools/list');
    expectError(r, 401, 'invalid_token');
    assert.match(challenge(r), /^Bearer error="invalid_token", resource_metadata="[^"]+\/oauth-protected-resource\/mcp"/);
    // The tenant's default audience (no resource) is not /mcp either.
    const c = await s.createClient({ grant_types: ['client_credentials'], scope: 'mcp:read' });
    const plain = (await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(c.client_id, c.client_secret!) })).json().access_token;
    expectError(await rpc(s, `Bearer ${plain}`, 'tools/list'), 401, 'invalid_token');
  });

  it("refuses a tool call without the tool's scope with 403 insufficient_scope naming it", async () => {
    const t = await mcpUserToken(s, 'ada@example.com', 'mcp:read');
    assert.equal((await callTool(s, t, 'whoami')).isError, false);
    const r = await rpc(s, `Bearer ${t}`, 'tools/call', { name: 'get_connected_account_token', arguments: { account_id: 'acct_00000000000000000000000000' } });
    expectError(r, 403, 'insufficient_scope');
    assert.match(challenge(r), /^Bearer error="insufficient_scope", resource_metadata="[^"]+", scope="mcp:connected_accounts"$/);
    const offer = await rpc(s, `Bearer ${t}`, 'tools/call', { name: 'create_credential_offer', arguments: {} });
    expectError(offer, 403, 'insufficient_scope');
    assert.match(challenge(offer), /scope="mcp:credentials"/);
  });

  it('refuses a DPoP-bound token sent as Bearer, and accepts it with a proof', async () => {
    const c = await s.createClient({ grant_types: ['client_credentials'], scope: 'mcp:read', allowed_resources: [`${s.issuer}/mcp`] });
    const key = await proofKey();
    const proof = await makeProof(key, { htm: 'POST', htu: `${s.issuer}/token` });
    const bound = await s.post(
      '/token',
      { grant_type: 'client_credentials', resource: `${s.issuer}/mcp` },
      { authorization: basic(c.client_id, c.client_secret!), dpop: proof },
    );
    assert.equal(bound.json().token_type, 'DPoP', bound.text);
    const token = bound.json().access_token as string;
    const r = await rpc(s, `Bearer ${token}`, 'tools/list');
    expectError(r, 401, 'invalid_token');
    assert.match(r.json().error_description, /DPoP-bound token sent as Bearer/);
    assert.match(challenge(r), /^DPoP error="invalid_token"/);
    const ok = await rpc(s, `DPoP ${token}`, 'tools/list', {}, { dpop: await makeProof(key, { htm: 'POST', htu: `${s.issuer}/mcp`, ath: ath(token) }) });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().result.tools.length, 5);
  });

  it("refuses a browser request from a foreign Origin (DNS rebinding) and accepts the tenant's own", async () => {
    const t = await mcpUserToken(s, 'ada@example.com', 'mcp:read');
    expectError(await rpc(s, `Bearer ${t}`, 'tools/list', {}, { origin: 'http://evil.example' }), 403, 'forbidden');
    assert.equal((await rpc(s, `Bearer ${t}`, 'tools/list', {}, { origin: new URL(s.issuer).origin })).status, 200);
  });

  it('refuses a metadata document at a loopback URL unless the egress allow setting allows it', async () => {
    const clientId = 'http://127.0.0.1:9/agent/client.json';
    const r = await s.request({
      path: `/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1:9/callback' })}`,
    });
    assert.equal(r.status, 400);
    assert.equal(/data-error="([^"]+)"/.exec(r.text)?.[1], 'invalid_client');
    assert.match(r.text, /client metadata document: refused by the egress policy/);
  });

  it('answers GET /mcp with 405 (stateless: no server-sent event stream)', async () => {
    const r = await s.request({ path: '/mcp', headers: { accept: ACCEPT } });
    assert.equal(r.status, 405);
  });
});

describe('/register (RFC 7591): policy, inputs, echo, listing, rate limit', () => {
  let s: SigninTestServer;
  let api: Api;
  const body = {
    client_name: 'Agent',
    redirect_uris: ['http://127.0.0.1:7777/cb'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  before(async () => {
    s = await startSigninServer();
    api = v1(s, s.tenant.platformApiKey);
  });
  after(() => s.close());

  const register = (b: unknown, headers: Record<string, string> = {}, ip?: string) =>
    s.request({
      method: 'POST',
      path: '/register',
      headers: { 'content-type': 'application/json', ...(ip ? { 'x-forwarded-for': ip } : {}), ...headers },
      body: typeof b === 'string' ? b : JSON.stringify(b),
    });

  it('needs an initial access token by default: a platform API key holding clients:register', async () => {
    assert.deepEqual((await api('GET', '/mcp/settings')).json(), { client_registration: 'initial_access_token', client_id_metadata_documents: true });
    expectError(await register(body), 401, 'invalid_token');
    const weak = (await api('POST', '/api_keys', { name: 'weak', scopes: ['clients:read'] })).json().key;
    expectError(await register(body, { authorization: `Bearer ${weak}` }), 403, 'insufficient_scope');
    expectError(await register(body, { authorization: 'Bearer sk_live_nope' }), 401, 'invalid_token');
    const iat = (await api('POST', '/api_keys', { name: 'registrar', scopes: ['clients:register'] })).json().key;
    const r = await register(body, { authorization: `Bearer ${iat}` });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers['cache-control'], 'no-store');
  });

  it('echoes every registered field; the client is third-party, listed and deletable at /v1/clients, and audited', async () => {
    assert.equal((await api('PUT', '/mcp/settings', { client_registration: 'open' })).status, 200);
    const r = await register({ ...body, scope: 'mcp:read offline_access', logo_uri: 'https://x.example/logo.png' });
    assert.equal(r.status, 201, r.text);
    const c = r.json();
    assert.deepEqual(Object.keys(c).sort(), [
      'client_id',
      'client_id_issued_at',
      'client_name',
      'grant_types',
      'redirect_uris',
      'response_types',
      'scope',
      'token_endpoint_auth_method',
    ]);
    assert.deepEqual(c.redirect_uris, body.redirect_uris);
    assert.equal(c.scope, 'mcp:read');
    assert.equal(c.token_endpoint_auth_method, 'none');
    const view = (await api('GET', `/clients/${c.client_id}`)).json();
    assert.equal(view.third_party, true);
    assert.deepEqual(view.allowed_resources, [`${s.issuer}/mcp`]);
    const events = (await api('GET', '/events?types=mcp.client.registered')).json().data as Array<{ data: { client_id: string; via: string } }>;
    assert.equal(events.find((e) => e.data.client_id === c.client_id)?.data.via, 'dynamic_registration');
    assert.equal((await api('DELETE', `/clients/${c.client_id}`)).status, 204);
    expectError(await api('GET', `/clients/${c.client_id}`), 404, 'not_found');
  });

  const bad: Array<[string, unknown, number, string]> = [
    ['no redirect_uris', { client_name: 'x' }, 400, 'invalid_redirect_uri'],
    ['an empty redirect_uris', { redirect_uris: [] }, 400, 'invalid_redirect_uri'],
    ['a javascript: redirect URI', { redirect_uris: ['javascript:alert(1)'] }, 400, 'invalid_redirect_uri'],
    ['an http redirect URI to a non-loopback host', { redirect_uris: ['http://app.example/cb'] }, 400, 'invalid_redirect_uri'],
    ['a confidential auth method', { ...body, token_endpoint_auth_method: 'client_secret_basic' }, 400, 'invalid_client_metadata'],
    ['the client_credentials grant', { ...body, grant_types: ['client_credentials'] }, 400, 'invalid_client_metadata'],
    ['only the refresh_token grant', { ...body, grant_types: ['refresh_token'] }, 400, 'invalid_client_metadata'],
    ['an implicit response type', { ...body, response_types: ['token'] }, 400, 'invalid_client_metadata'],
    ['a scope not offered', { ...body, scope: 'mcp:read admin' }, 400, 'invalid_client_metadata'],
    ['a client_name of the wrong type', { ...body, client_name: 42 }, 400, 'invalid_client_metadata'],
    ['an array body', [body], 400, 'invalid_client_metadata'],
    ['a body that is not JSON', '{"redirect_uris":', 400, 'invalid_request'],
  ];
  for (const [name, input, status, error] of bad) {
    it(`refuses ${name} (${status} ${error})`, async () => {
      await api('PUT', '/mcp/settings', { client_registration: 'open' });
      expectError(await register(input), status, error);
    });
  }

  it('refuses registration when the tenant turned it off, and drops it from discovery', async () => {
    assert.equal((await api('PUT', '/mcp/settings', { client_registration: 'off' })).status, 200);
    expectError(await register(body), 403, 'access_denied');
    const meta = (await s.request({ path: '/.well-known/oauth-authorization-server' })).json();
    assert.equal(meta.registration_endpoint, undefined);
    expectError(await api('PUT', '/mcp/settings', { client_registration: 'sometimes' }), 400, 'invalid_request');
    await api('PUT', '/mcp/settings', { client_registration: 'open' });
  });

  it('limits registrations per address', async () => {
    await api('PUT', '/mcp/settings', { client_registration: 'open' });
    let last: HttpResponse | undefined;
    for (let i = 0; i < 25; i++) {
      last = await register(body);
      if (last.status === 429) break;
      assert.equal(last.status, 201, last.text);
    }
    expectError(last!, 429, 'rate_limited');
  });
});
