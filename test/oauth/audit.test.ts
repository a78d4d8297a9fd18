import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRefreshFamily } from '../../src/oauth/token/refresh.js';
import { v1 } from '../helpers/v1.js';
import { AT_TYPE, basic, type OAuthTestServer, serviceClient, startOAuthServer, TOKEN_EXCHANGE } from './helpers.js';

describe('OAuth audit events', () => {
  let s: OAuthTestServer;
  before(async () => {
    s = await startOAuthServer();
  });
  after(() => s.close());

  const events = async (type: string) =>
    (await v1(s, s.tenant.platformApiKey)('GET', `/events?types=${type}`)).json().data as Array<{ actor: { type: string; id: string }; data: Record<string, unknown> }>;

  it('records token exchange, refresh-token reuse and revocation in /v1/events', async () => {
    const app = await serviceClient(s, { grant_types: ['refresh_token', 'client_credentials'] });
    const auth = basic(app.client_id, app.client_secret!);
    const rt = await startRefreshFamily(s.tenant.tenant, { clientId: app.client_id, sub: 'user_9', scopes: ['read'], resources: [], jkt: null }, s.server.ctx.oauth.ports, Date.now());
    const first = (await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth })).json();
    assert.ok(first.access_token, 'refreshed');
    const reuse = await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth });
    assert.equal(reuse.json().error, 'invalid_grant');
    const reused = await events('refresh_token.reused');
    assert.equal(reused.length, 1);
    assert.equal(reused[0]!.actor.type, 'system');
    assert.equal(reused[0]!.actor.id, app.client_id);

    const ex = await serviceClient(s, { grant_types: [TOKEN_EXCHANGE], token_exchange: { subject_clients: [app.client_id], audiences: [] } });
    const exchanged = await s.post(
      '/token',
      { grant_type: TOKEN_EXCHANGE, subject_token: first.access_token, subject_token_type: AT_TYPE },
      { authorization: basic(ex.client_id, ex.client_secret!) },
    );
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal((await events('token.exchanged')).length, 1);

    const cc = (await s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth })).json().access_token;
    const revoked = await s.post('/revoke', { token: cc }, { authorization: auth });
    assert.equal(revoked.status, 200);
    assert.equal((await events('token.revoked')).length, 1);
  });
});
