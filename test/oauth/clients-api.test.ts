import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { sha256Hex } from '../../src/kernel/crypto/hash.js';
import { basic, type OAuthTestServer, startOAuthServer } from './helpers.js';

describe('/v1/clients', () => {
  let s: OAuthTestServer;
  let key: string;
  before(async () => {
    s = await startOAuthServer();
    key = s.tenant.platformApiKey;
  });
  after(() => s.close());

  const api = (method: string, path: string, body?: unknown, apiKey = key) =>
    s.request({
      method,
      path: `/v1${path}`,
      headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  it('registers a client, shows the secret once and stores only its SHA-256', async () => {
    const r = await api('POST', '/clients', { client_name: 'svc', grant_types: ['client_credentials'], scope: 'read' });
    assert.equal(r.status, 201);
    const c = r.json();
    assert.match(c.client_id, /^cli_[0-9a-z]{26}$/);
    assert.match(c.client_secret, /^cs_[\w-]{43}$/);
    assert.equal(c.client_secret_expires_at, 0);
    assert.equal(c.token_endpoint_auth_method, 'client_secret_basic');
    const row = await s.server.ctx.db.kysely.selectFrom('oauth_clients').selectAll().where('id', '=', c.client_id).executeTakeFirstOrThrow();
    assert.equal(row.secret_hash, sha256Hex(c.client_secret));
    assert.ok(!JSON.stringify(row).includes(c.client_secret));
    const got = (await api('GET', `/clients/${c.client_id}`)).json();
    assert.equal(got.client_secret, undefined);
    assert.equal(got.client_name, 'svc');
    const list = (await api('GET', '/clients?limit=100')).json();
    assert.ok(list.data.some((x: { client_id: string }) => x.client_id === c.client_id));
    assert.ok(list.data.every((x: { client_secret?: string }) => x.client_secret === undefined));
    const token = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(c.client_id, c.client_secret) });
    assert.equal(token.status, 200);
  });

  it('updates metadata, rotates the secret and deletes', async () => {
    const c = (await api('POST', '/clients', { grant_types: ['client_credentials'], scope: 'read' })).json();
    const patched = await api('PATCH', `/clients/${c.client_id}`, { scope: 'read write', dpop_bound_access_tokens: true });
    assert.equal(patched.status, 200);
    assert.equal(patched.json().scope, 'read write');
    assert.equal(patched.json().dpop_bound_access_tokens, true);
    const rotated = await api('POST', `/clients/${c.client_id}/secret`);
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.json().client_secret, c.client_secret);
    assert.equal((await api('DELETE', `/clients/${c.client_id}`)).status, 204);
    assert.equal((await api('GET', `/clients/${c.client_id}`)).status, 404);
    const token = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(c.client_id, rotated.json().client_secret) });
    assert.equal(token.status, 401);
  });

  it('registers a private_key_jwt client with inline jwks and no secret', async () => {
    const { publicKey } = await generateKeyPair('EdDSA', { extractable: true });
    const r = await api('POST', '/clients', {
      token_endpoint_auth_method: 'private_key_jwt',
      grant_types: ['client_credentials'],
      jwks: { keys: [await exportJWK(publicKey)] },
    });
    assert.equal(r.status, 201);
    assert.equal(r.json().client_secret, undefined);
  });

  describe('bad registrations', () => {
    const cases: Array<[string, () => Promise<unknown>, string]> = [
      [
        'private_key_jwt without jwks or jwks_uri',
        async () => ({ token_endpoint_auth_method: 'private_key_jwt', grant_types: ['client_credentials'] }),
        'invalid_client_metadata',
      ],
      [
        'a jwks holding a private key',
        async () => {
          const { privateKey } = await generateKeyPair('EdDSA', { extractable: true });
          return { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [await exportJWK(privateKey)] } };
        },
        'invalid_request',
      ],
      [
        'a jwks_uri on a loopback address',
        async () => ({ token_endpoint_auth_method: 'private_key_jwt', grant_types: ['client_credentials'], jwks_uri: 'http://127.0.0.1/jwks' }),
        'invalid_client_metadata',
      ],
      [
        'a jwks_uri at the metadata service',
        async () => ({ token_endpoint_auth_method: 'private_key_jwt', grant_types: ['client_credentials'], jwks_uri: 'http://169.254.169.254/latest' }),
        'invalid_client_metadata',
      ],
      [
        'a file: jwks_uri',
        async () => ({ token_endpoint_auth_method: 'private_key_jwt', grant_types: ['client_credentials'], jwks_uri: 'file:///etc/passwd' }),
        'invalid_client_metadata',
      ],
      [
        'a jwks_uri with credentials',
        async () => ({ token_endpoint_auth_method: 'private_key_jwt', grant_types: ['client_credentials'], jwks_uri: 'https://user@keys.example/jwks' }),
        'invalid_client_metadata',
      ],
      [
        'both jwks and jwks_uri',
        async () => {
          const { publicKey } = await generateKeyPair('EdDSA', { extractable: true });
          return {
            token_endpoint_auth_method: 'private_key_jwt',
            grant_types: ['client_credentials'],
            jwks: { keys: [await exportJWK(publicKey)] },
            jwks_uri: 'https://keys.example/jwks',
          };
        },
        'invalid_client_metadata',
      ],
      [
        'a public client with client_credentials',
        async () => ({ token_endpoint_auth_method: 'none', grant_types: ['client_credentials'] }),
        'invalid_client_metadata',
      ],
      [
        'a public client with token exchange',
        async () => ({ token_endpoint_auth_method: 'none', grant_types: ['urn:ietf:params:oauth:grant-type:token-exchange'] }),
        'invalid_client_metadata',
      ],
      ['authorization_code without redirect_uris', async () => ({ grant_types: ['authorization_code'] }), 'invalid_redirect_uri'],
      ['a redirect_uri with a fragment', async () => ({ redirect_uris: ['https://app.example/cb#x'] }), 'invalid_request'],
      ['a javascript: redirect_uri', async () => ({ redirect_uris: ['javascript:alert(1)'] }), 'invalid_request'],
      ['a data: redirect_uri', async () => ({ redirect_uris: ['data:text/html,hi'] }), 'invalid_request'],
      ['an http redirect_uri off loopback', async () => ({ redirect_uris: ['http://app.example/cb'] }), 'invalid_request'],
      ['a redirect_uri with credentials', async () => ({ redirect_uris: ['https://u:p@app.example/cb'] }), 'invalid_request'],
      ['an unknown auth method', async () => ({ token_endpoint_auth_method: 'client_secret_jwt' }), 'invalid_request'],
      ['an unknown grant type', async () => ({ grant_types: ['password'] }), 'invalid_request'],
      [
        'an allowed resource with a fragment',
        async () => ({ grant_types: ['client_credentials'], allowed_resources: ['https://api.example/#f'] }),
        'invalid_request',
      ],
      [
        'a token_exchange policy without the grant',
        async () => ({ grant_types: ['client_credentials'], token_exchange: { subject_clients: ['*'], audiences: [] } }),
        'invalid_client_metadata',
      ],
      ['an unknown field', async () => ({ grant_types: ['client_credentials'], secret_hash: 'x' }), 'invalid_request'],
    ];
    for (const [name, body, error] of cases) {
      it(`rejects ${name}`, async () => {
        const r = await api('POST', '/clients', await body());
        assert.equal(r.status, 400, r.text);
        assert.equal(r.json().error, error);
      });
    }
  });

  describe('access', () => {
    it('needs an API key', async () => {
      assert.equal((await s.request({ path: '/v1/clients' })).status, 401);
    });
    it('needs clients:write to register', async () => {
      const minted = await api('POST', '/api_keys', { name: 'reader', scopes: ['clients:read'] });
      assert.equal(minted.status, 201, minted.text);
      const r = await api('POST', '/clients', { grant_types: ['client_credentials'] }, minted.json().key);
      assert.equal(r.status, 403);
      assert.equal(r.json().error, 'insufficient_scope');
      assert.equal((await api('GET', '/clients', undefined, minted.json().key)).status, 200);
    });
  });
});
