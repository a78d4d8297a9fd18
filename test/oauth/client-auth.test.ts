import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CryptoKey, exportJWK, type GenerateKeyPairResult, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { basic, insecure, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

describe('client authentication', () => {
  let s: OAuthTestServer;
  let key: GenerateKeyPairResult;
  let jwk: JWK;
  let jwtClient: string;
  before(async () => {
    s = await startOAuthServer();
    key = await generateKeyPair('EdDSA', { extractable: true });
    jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'EdDSA' };
    jwtClient = (await serviceClient(s, { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } })).client_id;
  });
  after(() => s.close());

  /** A client assertion with overridable claims and header. */
  async function assertion(claims: Record<string, unknown> = {}, opts: { key?: CryptoKey; alg?: string; kid?: string } = {}) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: jwtClient, sub: jwtClient, aud: s.issuer, jti: crypto.randomUUID(), iat: now, exp: now + 60, ...claims })
      .setProtectedHeader({ alg: opts.alg ?? 'EdDSA', kid: opts.kid ?? 'k1' })
      .sign(opts.key ?? key.privateKey);
  }
  const withAssertion = (a: string, extra: Record<string, string> = {}) =>
    s.post('/token', { grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: a, ...extra });

  it('accepts private_key_jwt from oauth4webapi (alg Ed25519, aud = issuer)', async () => {
    const client = { client_id: jwtClient };
    const res = await oauth.clientCredentialsGrantRequest(
      s.as,
      client,
      oauth.PrivateKeyJwt({ key: key.privateKey, kid: 'k1' }),
      new URLSearchParams(),
      insecure,
    );
    const tokens = await oauth.processClientCredentialsResponse(s.as, client, res);
    assert.equal((await s.verifyAt(tokens.access_token)).client_id, jwtClient);
  });

  it('accepts the token endpoint URL as aud, and EdDSA as alg', async () => {
    const r = await withAssertion(await assertion({ aud: `${s.issuer}/token` }));
    assert.equal(r.status, 200);
  });

  it('accepts ES256 keys', async () => {
    const es = await generateKeyPair('ES256', { extractable: true });
    const c = await serviceClient(s, { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...(await exportJWK(es.publicKey)), kid: 'e1' }] } });
    const now = Math.floor(Date.now() / 1000);
    const a = await new SignJWT({ iss: c.client_id, sub: c.client_id, aud: s.issuer, jti: 'j', exp: now + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: 'e1' })
      .sign(es.privateKey);
    assert.equal((await withAssertion(a)).status, 200);
  });

  describe('private_key_jwt failures: 401 invalid_client', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const cases: Array<[string, () => Promise<string>]> = [
      ['iss different from client_id', () => assertion({ iss: 'cli_other' })],
      ['sub different from client_id', () => assertion({ sub: 'cli_other' })],
      ['aud of another tenant', () => assertion({ aud: 'http://other.localhost' })],
      ['no exp', () => assertion({ exp: undefined })],
      ['exp 5 minutes in the past', () => assertion({ exp: now() - 300, iat: now() - 360 })],
      ['iat 2 minutes ahead', () => assertion({ iat: now() + 120 })],
      ['nbf 2 minutes ahead', () => assertion({ nbf: now() + 120 })],
      ['an exp too far ahead', () => assertion({ exp: now() + 3600 })],
      ['no jti', () => assertion({ jti: undefined })],
      ['another key', async () => assertion({}, { key: (await generateKeyPair('EdDSA')).privateKey })],
      ['an unknown kid', () => assertion({}, { kid: 'nope' })],
      [
        'HS256 keyed with the public key',
        async () => {
          const t = Math.floor(Date.now() / 1000);
          return new SignJWT({ iss: jwtClient, sub: jwtClient, aud: s.issuer, jti: 'h', exp: t + 60 })
            .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
            .sign(new TextEncoder().encode(JSON.stringify(jwk)));
        },
      ],
      [
        'alg none',
        async () => {
          const t = Math.floor(Date.now() / 1000);
          const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
          return `${enc({ alg: 'none' })}.${enc({ iss: jwtClient, sub: jwtClient, aud: s.issuer, jti: 'n', exp: t + 60 })}.`;
        },
      ],
      // Only registered keys count: a key the assertion carries in its header (private members
      // and all, or public) is never used to verify it.
      [
        'a key of its own in the header jwk (private)',
        async () => {
          const own = await generateKeyPair('EdDSA', { extractable: true });
          const t = Math.floor(Date.now() / 1000);
          return new SignJWT({ iss: jwtClient, sub: jwtClient, aud: s.issuer, jti: 'e', exp: t + 60 })
            .setProtectedHeader({ alg: 'EdDSA', jwk: await exportJWK(own.privateKey) } as never)
            .sign(own.privateKey);
        },
      ],
      [
        'a key of its own in the header jwk, named by the registered kid',
        async () => {
          const own = await generateKeyPair('EdDSA', { extractable: true });
          const t = Math.floor(Date.now() / 1000);
          return new SignJWT({ iss: jwtClient, sub: jwtClient, aud: s.issuer, jti: 'f', exp: t + 60 })
            .setProtectedHeader({ alg: 'EdDSA', kid: 'k1', jwk: await exportJWK(own.publicKey) })
            .sign(own.privateKey);
        },
      ],
      ['a value that is not a JWT', async () => 'not-a-jwt'],
    ];
    for (const [name, make] of cases) {
      it(`rejects ${name}`, async () => {
        const r = await withAssertion(await make());
        assert.equal(r.status, 401);
        assert.equal(r.json().error, 'invalid_client');
      });
    }

    it('rejects RS256 (only EdDSA, Ed25519, ES256 and PS256 are accepted)', async () => {
      const rsa = await generateKeyPair('RS256', { extractable: true });
      const c = await serviceClient(s, { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...(await exportJWK(rsa.publicKey)), kid: 'r1' }] } });
      const a = await new SignJWT({ iss: c.client_id, sub: c.client_id, aud: s.issuer, jti: 'r', exp: now() + 60 })
        .setProtectedHeader({ alg: 'RS256', kid: 'r1' })
        .sign(rsa.privateKey);
      const r = await withAssertion(a);
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
      const psKey = await importJWK(await exportJWK(rsa.privateKey), 'PS256');
      const ps = await new SignJWT({ iss: c.client_id, sub: c.client_id, aud: s.issuer, jti: 'p', exp: now() + 60 })
        .setProtectedHeader({ alg: 'PS256', kid: 'r1' })
        .sign(psKey);
      assert.equal((await withAssertion(ps)).status, 200);
    });

    it('rejects a replayed jti', async () => {
      const a = await assertion({ jti: 'once' });
      assert.equal((await withAssertion(a)).status, 200);
      const again = await withAssertion(a);
      assert.equal(again.status, 401);
      assert.equal(again.json().error, 'invalid_client');
    });

    it('rejects an assertion for a client registered with a secret', async () => {
      const c = await serviceClient(s);
      const a = await new SignJWT({ iss: c.client_id, sub: c.client_id, aud: s.issuer, jti: 'x', exp: now() + 60 })
        .setProtectedHeader({ alg: 'EdDSA' })
        .sign(key.privateKey);
      const r = await withAssertion(a);
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });

    it('rejects a wrong client_assertion_type', async () => {
      const r = await s.post('/token', { grant_type: 'client_credentials', client_assertion_type: 'urn:x', client_assertion: await assertion() });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });
  });

  describe('client secrets', () => {
    let id: string;
    let secret: string;
    before(async () => {
      const c = await serviceClient(s);
      id = c.client_id;
      secret = c.client_secret!;
    });

    it('answers a bad Basic secret with 401 invalid_client and WWW-Authenticate: Basic', async () => {
      const r = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(id, 'wrong') });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
      assert.match(String(r.headers['www-authenticate']), /^Basic /);
    });

    it('rejects an unknown client_id', async () => {
      const r = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic('cli_nope', secret) });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });

    it('accepts client_secret_post for a client registered for Basic (either secret method), and Basic for a post client', async () => {
      const r = await s.post('/token', { grant_type: 'client_credentials', client_id: id, client_secret: secret });
      assert.equal(r.status, 200);
      const post = await serviceClient(s, { token_endpoint_auth_method: 'client_secret_post' });
      const r2 = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(post.client_id, post.client_secret!) });
      assert.equal(r2.status, 200);
    });

    it('a strict client (token_endpoint_auth_method_strict) refuses the other secret method', async () => {
      const strictBasic = await serviceClient(s, { token_endpoint_auth_method_strict: true });
      assert.equal(strictBasic.token_endpoint_auth_method_strict, true);
      // /v1 shows it (the console reads it back from there).
      const shown = await s.request({
        method: 'GET',
        path: `/v1/clients/${strictBasic.client_id}`,
        headers: { authorization: `Bearer ${s.tenant.platformApiKey}` },
      });
      assert.equal(shown.json().token_endpoint_auth_method_strict, true, shown.text);
      const r = await s.post('/token', { grant_type: 'client_credentials', client_id: strictBasic.client_id, client_secret: strictBasic.client_secret! });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
      const strictPost = await serviceClient(s, { token_endpoint_auth_method: 'client_secret_post', token_endpoint_auth_method_strict: true });
      const r2 = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(strictPost.client_id, strictPost.client_secret!) });
      assert.equal(r2.status, 401);
      assert.equal(r2.json().error, 'invalid_client');
      const ok = await s.post('/token', { grant_type: 'client_credentials', client_id: strictPost.client_id, client_secret: strictPost.client_secret! });
      assert.equal(ok.status, 200);
    });

    it('a secret client still refuses none and a wrong secret by the other method', async () => {
      const none = await s.post('/token', { grant_type: 'client_credentials', client_id: id });
      assert.equal(none.status, 401);
      assert.equal(none.json().error, 'invalid_client');
      const wrong = await s.post('/token', { grant_type: 'client_credentials', client_id: id, client_secret: 'cs_wrong' });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.json().error, 'invalid_client');
    });

    it('rejects two methods in one request', async () => {
      const r = await s.post('/token', { grant_type: 'client_credentials', client_id: id, client_secret: secret }, { authorization: basic(id, secret) });
      assert.equal(r.status, 400);
      assert.equal(r.json().error, 'invalid_request');
    });

    it('rejects two Authorization headers', async () => {
      const r = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: [basic(id, secret), basic(id, secret)] });
      assert.equal(r.status, 400);
      assert.equal(r.json().error, 'invalid_request');
    });

    it('rejects a request with no client authentication', async () => {
      const r = await s.post('/token', { grant_type: 'client_credentials' });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });

    it('rejects a confidential client sending only its client_id', async () => {
      const r = await s.post('/token', { grant_type: 'client_credentials', client_id: id });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });

    it('rejects a public client sending a secret', async () => {
      const pub = await s.createClient({ token_endpoint_auth_method: 'none', grant_types: ['refresh_token'] });
      const r = await s.post('/token', { grant_type: 'refresh_token', refresh_token: 'x', client_id: pub.client_id, client_secret: 'guess' });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });

    it('stops accepting the old secret after a rotation', async () => {
      const rotated = await s.server.ctx.management.clients.rotateSecret(s.tenant.tenant.id, id);
      assert.notEqual(rotated.client_secret, secret);
      assert.equal((await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(id, secret) })).status, 401);
      assert.equal((await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(id, rotated.client_secret!) })).status, 200);
    });
  });
});
