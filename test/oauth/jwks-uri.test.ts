import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type GenerateKeyPairResult, type JWK, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { insecure, type OAuthTestServer, startOAuthServer } from './helpers.js';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

describe('private_key_jwt with jwks_uri (fetched through the egress policy)', () => {
  let s: OAuthTestServer;
  let keysServer: http.Server;
  let jwksUrl: string;
  let published: JWK[] = [];
  let fetches = 0;
  let key: GenerateKeyPairResult;
  let clientId: string;

  before(async () => {
    keysServer = http.createServer((req, res) => {
      fetches++;
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
    });
    await new Promise<void>((resolve) => keysServer.listen(0, '127.0.0.1', resolve));
    const address = keysServer.address();
    jwksUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/jwks`;
    // cacheTtlMs 0: a set lacking a key may be fetched again at once (the default waits 5 s).
    s = await startOAuthServer({ config: { egressAllow: '127.0.0.1/32', cacheTtlMs: 0 } });
    key = await generateKeyPair('EdDSA', { extractable: true });
    published = [{ ...(await exportJWK(key.publicKey)), kid: 'one' }];
    clientId = (await s.createClient({ token_endpoint_auth_method: 'private_key_jwt', grant_types: ['client_credentials'], jwks_uri: jwksUrl })).client_id;
  });
  after(async () => {
    await s.close();
    await new Promise((resolve) => keysServer.close(resolve));
  });

  const assertion = async (k: GenerateKeyPairResult, kid: string, id = clientId) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: id, sub: id, aud: s.issuer, jti: crypto.randomUUID(), exp: now + 60 })
      .setProtectedHeader({ alg: 'EdDSA', kid })
      .sign(k.privateKey);
  };
  const token = async (a: string) => s.post('/token', { grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: a });

  it('authenticates with keys fetched from jwks_uri (oauth4webapi), and caches them', async () => {
    const client: oauth.Client = { client_id: clientId };
    const before = fetches;
    for (let i = 0; i < 2; i++) {
      const res = await oauth.clientCredentialsGrantRequest(
        s.as,
        client,
        oauth.PrivateKeyJwt({ key: key.privateKey, kid: 'one' }),
        new URLSearchParams(),
        insecure,
      );
      await oauth.processClientCredentialsResponse(s.as, client, res);
    }
    assert.equal(fetches - before, 1);
    assert.equal((await s.server.ctx.management.clients.get(s.tenant.tenant.id, clientId)).jwks_uri, jwksUrl);
  });

  it('fetches again when an assertion names a key the cached set lacks (rotation)', async () => {
    assert.equal((await token(await assertion(key, 'one'))).status, 200);
    const next = await generateKeyPair('EdDSA', { extractable: true });
    published = [...published, { ...(await exportJWK(next.publicKey)), kid: 'two' }];
    const before = fetches;
    const r = await token(await assertion(next, 'two'));
    assert.equal(r.status, 200, r.text);
    assert.equal(fetches - before, 1);
  });

  it('rejects an assertion signed by a key the set does not hold', async () => {
    const r = await token(await assertion(await generateKeyPair('EdDSA'), 'one'));
    assert.equal(r.status, 401);
    assert.equal(r.json().error, 'invalid_client');
  });

  it('rejects the client when its jwks_uri cannot be fetched', async () => {
    const broken = await s.createClient({
      token_endpoint_auth_method: 'private_key_jwt',
      grant_types: ['client_credentials'],
      jwks_uri: jwksUrl.replace('/jwks', '/redirect'),
    });
    const r = await token(await assertion(key, 'one', broken.client_id));
    assert.equal(r.status, 401);
    assert.equal(r.json().error, 'invalid_client');
  });

  it('authenticates a jwks_uri client at /par too', async () => {
    const web = await s.createClient({
      token_endpoint_auth_method: 'private_key_jwt',
      grant_types: ['authorization_code'],
      redirect_uris: ['https://app.example/cb'],
      jwks_uri: jwksUrl,
    });
    const r = await s.post('/par', {
      client_id: web.client_id,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await assertion(key, 'one', web.client_id),
      response_type: 'code',
      redirect_uri: 'https://app.example/cb',
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    assert.equal(r.status, 201, r.text);
    assert.match(r.json().request_uri, /^urn:ietf:params:oauth:request_uri:/);
  });
});
