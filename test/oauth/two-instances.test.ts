import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { loadConfig } from '../../src/config/index.js';
import { startRefreshFamily } from '../../src/oauth/token/refresh.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { request } from '../helpers/http.js';
import { makeProof, proofKey } from './dpop-helpers.js';
import { basic, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

/** Two instances on one database: replay caches, rotation and the deny-list are shared. */
describe('two instances on one database', () => {
  let s: OAuthTestServer;
  let second: RunningServer;
  let auth: string;
  let clientId: string;
  before(async () => {
    s = await startOAuthServer();
    second = await startServer(loadConfig(s.env, { port: 0, host: '127.0.0.1', bootstrap: 'false', logLevel: 'silent' }));
    const c = await serviceClient(s, { grant_types: ['client_credentials', 'refresh_token'] });
    clientId = c.client_id;
    auth = basic(c.client_id, c.client_secret!);
  });
  after(async () => {
    await second.close();
    await s.close();
  });

  /** The same tenant (Host) served by the second instance. */
  const post2 = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    request(second.port, {
      method: 'POST',
      path,
      host: `127.0.0.1:${s.port}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });

  it('refuses at one instance a DPoP proof used at the other', async () => {
    const proof = await makeProof(await proofKey(), { htm: 'POST', htu: `${s.issuer}/token` });
    assert.equal((await s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth, dpop: proof })).status, 200);
    const r = await post2('/token', { grant_type: 'client_credentials' }, { authorization: auth, dpop: proof });
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'invalid_dpop_proof');
  });

  it('refuses at one instance a client assertion used at the other', async () => {
    const key = await generateKeyPair('EdDSA', { extractable: true });
    const c = await serviceClient(s, { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...(await exportJWK(key.publicKey)), kid: 'k' }] } });
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ iss: c.client_id, sub: c.client_id, aud: s.issuer, jti: 'shared', exp: now + 60 })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'k' })
      .sign(key.privateKey);
    const form = {
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    };
    assert.equal((await s.post('/token', form)).status, 200);
    const r = await post2('/token', form);
    assert.equal(r.status, 401);
    assert.equal(r.json().error, 'invalid_client');
  });

  it('detects at one instance the reuse of a refresh token rotated at the other', async () => {
    const rt1 = await startRefreshFamily(s.tenant.tenant, { clientId, sub: 'u', scopes: [], resources: [], jkt: null }, s.server.ctx.oauth.ports, Date.now());
    const rt2 = (await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt1 }, { authorization: auth })).json().refresh_token;
    const reuse = await post2('/token', { grant_type: 'refresh_token', refresh_token: rt1 }, { authorization: auth });
    assert.equal(reuse.json().error, 'invalid_grant');
    assert.equal((await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt2 }, { authorization: auth })).json().error, 'invalid_grant');
  });

  it('lets exactly one of two parallel uses win across instances', async () => {
    const rt = await startRefreshFamily(s.tenant.tenant, { clientId, sub: 'u', scopes: [], resources: [], jkt: null }, s.server.ctx.oauth.ports, Date.now());
    const results = await Promise.all([
      s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth }),
      post2('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth }),
    ]);
    assert.equal(results.filter((r) => r.status === 200).length, 1);
  });

  it('sees at one instance an access token revoked at the other', async () => {
    const at = (await s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth })).json().access_token;
    assert.equal((await s.post('/introspect', { token: at }, { authorization: auth })).json().active, true);
    assert.equal((await post2('/revoke', { token: at }, { authorization: auth })).status, 200);
    assert.deepEqual((await s.post('/introspect', { token: at }, { authorization: auth })).json(), { active: false });
  });
});
