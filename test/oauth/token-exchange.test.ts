import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { startRefreshFamily } from '../../src/oauth/token/refresh.js';
import { AT_TYPE, basic, insecure, type OAuthTestServer, serviceClient, startOAuthServer, TOKEN_EXCHANGE } from './helpers.js';

const API_B = 'https://api-b.example/';

describe('token exchange (RFC 8693)', () => {
  let s: OAuthTestServer;
  let appId: string;
  let userToken: string;
  let exchanger: { id: string; secret: string; auth: string };
  before(async () => {
    s = await startOAuthServer();
    const app = await serviceClient(s, { grant_types: ['refresh_token', 'client_credentials'] });
    appId = app.client_id;
    const rt = await startRefreshFamily(
      s.tenant.tenant,
      { clientId: appId, sub: 'user_1', scopes: ['read', 'write'], resources: [], jkt: null },
      s.server.ctx.oauth.ports,
      Date.now(),
    );
    userToken = (await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: basic(appId, app.client_secret!) })).json()
      .access_token;
    const ex = await serviceClient(s, { grant_types: [TOKEN_EXCHANGE], token_exchange: { subject_clients: [appId], audiences: [API_B, 'urn:logical:b'] } });
    exchanger = { id: ex.client_id, secret: ex.client_secret!, auth: basic(ex.client_id, ex.client_secret!) };
  });
  after(() => s.close());

  const exchange = (form: Record<string, string | string[]>, auth = exchanger.auth) =>
    s.post('/token', { grant_type: TOKEN_EXCHANGE, subject_token: userToken, subject_token_type: AT_TYPE, ...form }, { authorization: auth });

  it('exchanges a subject token for a narrowed one carrying act (oauth4webapi)', async () => {
    const client = { client_id: exchanger.id };
    const res = await oauth.genericTokenEndpointRequest(
      s.as,
      client,
      oauth.ClientSecretBasic(exchanger.secret),
      TOKEN_EXCHANGE,
      new URLSearchParams({ subject_token: userToken, subject_token_type: AT_TYPE, resource: API_B, scope: 'read' }),
      insecure,
    );
    const tokens = await oauth.processGenericTokenEndpointResponse(s.as, client, res);
    assert.equal(tokens.issued_token_type, AT_TYPE);
    assert.equal(tokens.scope, 'read');
    const claims = await s.verifyAt(tokens.access_token, API_B);
    assert.equal(claims.sub, 'user_1');
    assert.equal(claims.aud, API_B);
    assert.equal(claims.client_id, exchanger.id);
    assert.deepEqual(claims.act, { sub: exchanger.id, client_id: exchanger.id });
  });

  it('takes the actor from an actor_token and nests act for chains', async () => {
    const actor = await serviceClient(s);
    const actorToken = (await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(actor.client_id, actor.client_secret!) })).json()
      .access_token;
    const first = await exchange({ actor_token: actorToken, actor_token_type: AT_TYPE, audience: 'urn:logical:b' });
    assert.equal(first.status, 200, first.text);
    const firstToken = first.json().access_token;
    assert.deepEqual((await s.verifyAt(firstToken, 'urn:logical:b')).act, { sub: actor.client_id, client_id: actor.client_id });

    const next = await serviceClient(s, { grant_types: [TOKEN_EXCHANGE], token_exchange: { subject_clients: [exchanger.id], audiences: [] } });
    const second = await s.post(
      '/token',
      { grant_type: TOKEN_EXCHANGE, subject_token: firstToken, subject_token_type: AT_TYPE },
      { authorization: basic(next.client_id, next.client_secret!) },
    );
    assert.equal(second.status, 200, second.text);
    const claims = await s.verifyAt(second.json().access_token);
    assert.equal(claims.sub, 'user_1');
    assert.deepEqual(claims.act, { sub: next.client_id, client_id: next.client_id, act: { sub: actor.client_id, client_id: actor.client_id } });
  });

  describe('bad requests', () => {
    const forged = async (claims: Record<string, unknown>, tenantId = s.tenant.tenant.id) => {
      const k = await s.server.ctx.keystore.activeKey(tenantId, 'EdDSA');
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: s.issuer,
        sub: 'user_1',
        aud: s.issuer,
        client_id: appId,
        jti: crypto.randomUUID(),
        iat: now,
        exp: now + 60,
        scope: 'read',
        ...claims,
      })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: k.kid })
        .sign(k.privateKey);
    };
    const cases: Array<[string, () => Promise<{ status: number; json(): { error: string } }>, string]> = [
      ['an invalid subject_token', () => exchange({ subject_token: 'garbage' }), 'invalid_request'],
      ['an expired subject_token', async () => exchange({ subject_token: await forged({ iat: 1, exp: 2 }) }), 'invalid_request'],
      [
        'a subject_token of another tenant',
        async () => {
          const b = await s.createTenant('b.localhost');
          return exchange({ subject_token: await forged({ iss: b.tenant.issuer }, b.tenant.id) });
        },
        'invalid_request',
      ],
      ['an unsupported subject_token_type', () => exchange({ subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }), 'invalid_request'],
      ['no subject_token_type', () => exchange({ subject_token_type: '' }), 'invalid_request'],
      ['no subject_token', () => exchange({ subject_token: '' }), 'invalid_request'],
      ['an actor_token without its type', () => exchange({ actor_token: userToken }), 'invalid_request'],
      ['an actor_token_type without actor_token', () => exchange({ actor_token_type: AT_TYPE }), 'invalid_request'],
      ['an actor not allowed by may_act', async () => exchange({ subject_token: await forged({ may_act: { sub: 'someone_else' } }) }), 'invalid_request'],
      ['a subject token of a client outside the policy', async () => exchange({ subject_token: await forged({ client_id: 'cli_other' }) }), 'invalid_request'],
      ['an unsupported requested_token_type', () => exchange({ requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }), 'invalid_request'],
      ['a disallowed audience', () => exchange({ audience: 'urn:logical:c' }), 'invalid_target'],
      ['a disallowed resource', () => exchange({ resource: 'https://api-c.example/' }), 'invalid_target'],
      ["a scope wider than the subject token's", () => exchange({ scope: 'read admin' }), 'invalid_scope'],
      [
        'a client without the grant',
        async () => {
          const c = await serviceClient(s);
          return exchange({}, basic(c.client_id, c.client_secret!));
        },
        'unauthorized_client',
      ],
      [
        'a client without a token-exchange policy',
        async () => {
          const c = await serviceClient(s, { grant_types: [TOKEN_EXCHANGE] });
          return exchange({}, basic(c.client_id, c.client_secret!));
        },
        'unauthorized_client',
      ],
    ];
    for (const [name, run, error] of cases) {
      it(`rejects ${name}`, async () => {
        const r = await run();
        assert.equal(r.status, 400);
        assert.equal(r.json().error, error);
      });
    }
  });
});
