import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { startRefreshFamily } from '../../src/oauth/token/refresh.js';
import { AT_TYPE, type OAuthTestServer, serviceClient, startOAuthServer, TOKEN_EXCHANGE } from './helpers.js';

/** The same flows through openid-client 6, as an application would write them. */
describe('token service with openid-client', () => {
  let s: OAuthTestServer;
  let config: client.Configuration;
  let clientId: string;
  before(async () => {
    s = await startOAuthServer();
    const c = await serviceClient(s, {
      grant_types: ['client_credentials', 'refresh_token', TOKEN_EXCHANGE],
      token_endpoint_auth_method: 'client_secret_post',
      token_exchange: { subject_clients: ['*'], audiences: ['https://api.example/'] },
    });
    clientId = c.client_id;
    config = await client.discovery(new URL(s.issuer), c.client_id, c.client_secret, client.ClientSecretPost(c.client_secret!), {
      execute: [client.allowInsecureRequests],
      algorithm: 'oauth2',
    });
  });
  after(() => s.close());

  it('client_credentials with DPoP, then introspection shows the binding', async () => {
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'read' }, { DPoP });
    assert.equal(tokens.token_type, 'dpop');
    const info = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(info.active, true);
    assert.equal(info.token_type, 'DPoP');
    assert.ok((info.cnf as { jkt?: string }).jkt);
  });

  it('refresh rotation, and revocation of the family', async () => {
    const rt = await startRefreshFamily(
      s.tenant.tenant,
      { clientId, sub: 'user_1', scopes: ['read'], resources: [], jkt: null },
      s.server.ctx.oauth.ports,
      Date.now(),
    );
    const first = await client.refreshTokenGrant(config, rt);
    assert.ok(first.refresh_token && first.refresh_token !== rt);
    await client.tokenRevocation(config, first.refresh_token!);
    await assert.rejects(client.refreshTokenGrant(config, first.refresh_token!), (err: client.ResponseBodyError) => err.error === 'invalid_grant');
  });

  it('token exchange carries act', async () => {
    const subject = await client.clientCredentialsGrant(config);
    const exchanged = await client.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: subject.access_token,
      subject_token_type: AT_TYPE,
      resource: 'https://api.example/',
    });
    assert.equal(exchanged.issued_token_type, AT_TYPE);
    const claims = await s.verifyAt(exchanged.access_token, 'https://api.example/');
    assert.deepEqual(claims.act, { sub: clientId, client_id: clientId });
  });
});
