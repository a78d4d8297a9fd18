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
    (await v1(s, s.tenant.platformApiKey)('GET', `/events?limit=100&types=${type}`)).json().data as Array<{
      actor: { type: string; id: string };
      data: Record<string, unknown>;
    }>;

  it('records token exchange, refresh-token reuse and revocation in /v1/events', async () => {
    const app = await serviceClient(s, { grant_types: ['refresh_token', 'client_credentials'] });
    const auth = basic(app.client_id, app.client_secret!);
    const rt = await startRefreshFamily(
      s.tenant.tenant,
      { clientId: app.client_id, sub: 'user_9', scopes: ['read'], resources: [], jkt: null },
      s.server.ctx.oauth.ports,
      Date.now(),
    );
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

  it('records a refresh-token revocation at /revoke, with the family', async () => {
    const app = await serviceClient(s, { grant_types: ['refresh_token'] });
    const rt = await startRefreshFamily(
      s.tenant.tenant,
      { clientId: app.client_id, sub: 'user_7', scopes: [], resources: [], jkt: null },
      s.server.ctx.oauth.ports,
      Date.now(),
    );
    assert.equal((await s.post('/revoke', { token: rt }, { authorization: basic(app.client_id, app.client_secret!) })).status, 200);
    const revoked = (await events('token.revoked')).filter((e) => e.data.token_type === 'refresh_token' && e.actor.id === app.client_id);
    assert.equal(revoked.length, 1);
    assert.match(String(revoked[0]!.data.family_id), /^rtf_/);
    // A second revocation of the same family changes nothing and records nothing.
    await s.post('/revoke', { token: rt }, { authorization: basic(app.client_id, app.client_secret!) });
    assert.equal((await events('token.revoked')).filter((e) => e.data.family_id === revoked[0]!.data.family_id).length, 1);
  });

  it('commits a revocation and its audit row together or not at all', async () => {
    const { atomically, revoked } = s.server.ctx.oauth.ports;
    const tenantId = s.tenant.tenant.id;
    const now = Date.now();
    // A failure after the revocation (a crash before the audit row) rolls the revocation back.
    await assert.rejects(
      atomically(async (unit) => {
        await unit.revoked.revoke(tenantId, 'jti-rolled-back', now + 60_000, now);
        throw new Error('crash between the revocation and its audit row');
      }),
      /crash between/,
    );
    assert.equal(await revoked.isRevoked(tenantId, 'jti-rolled-back'), false);
    await atomically(async (unit) => {
      await unit.revoked.revoke(tenantId, 'jti-committed', now + 60_000, now);
      await unit.audit({ type: 'token.revoked', tenantId, data: { client_id: 'cli_test', token_type: 'access_token', jti: 'jti-committed' } });
    });
    assert.equal(await revoked.isRevoked(tenantId, 'jti-committed'), true);
    assert.equal((await events('token.revoked')).filter((e) => e.data.jti === 'jti-committed').length, 1);
  });

  it('records client registration, changes, secret rotation, removal and token-settings changes, with the API key as actor and no secret', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const created = await api('POST', '/clients', { client_name: 'Audited', grant_types: ['client_credentials'] });
    assert.equal(created.status, 201, created.text);
    const id = created.json().client_id as string;
    const secret = created.json().client_secret as string;
    assert.equal((await api('PATCH', `/clients/${id}`, { client_name: 'Audited 2', third_party: true })).status, 200);
    assert.equal((await api('POST', `/clients/${id}/secret`)).status, 200);
    assert.equal((await api('PUT', '/oauth/settings', { access_token_ttl_seconds: 900, refresh_token_ttl_seconds: null })).status, 200);
    assert.equal((await api('DELETE', `/clients/${id}`)).status, 204);

    const all = (await api('GET', '/events?limit=100')).json().data as Array<{
      type: string;
      actor: { type: string };
      organization_id: string | null;
      data: Record<string, unknown>;
    }>;
    const of = (type: string) => all.filter((e) => e.type === type && (e.data.client_id === id || type === 'oauth_settings.updated'));
    const [c] = of('client.created');
    assert.deepEqual(c!.data, {
      client_id: id,
      client_name: 'Audited',
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
      third_party: false,
    });
    assert.equal(c!.actor.type, 'api_key');
    assert.equal(c!.organization_id, null);
    assert.deepEqual(of('client.updated')[0]!.data, { client_id: id, changed: ['client_name', 'third_party'], secret_issued: false });
    assert.equal(of('client.secret_rotated').length, 1);
    assert.equal(of('client.deleted').length, 1);
    assert.deepEqual(of('oauth_settings.updated')[0]!.data, { changed: ['access_token_ttl_seconds'] });
    assert.equal(JSON.stringify(all).includes(secret), false, 'no event holds the client secret');
  });
});
