import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { startRefreshFamily } from '../../src/oauth/token/refresh.js';
import { ath, makeProof, proofKey } from './dpop-helpers.js';
import { basic, insecure, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

describe('introspection (RFC 7662) and revocation (RFC 7009)', () => {
  let s: OAuthTestServer;
  let rs: { id: string; secret: string; auth: string };
  let app: { id: string; auth: string };
  const token = async (auth = app.auth, headers: Record<string, string> = {}) =>
    (await s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth, ...headers })).json().access_token as string;
  const introspect = (t: string, extra: Record<string, string> = {}, headers: Record<string, string> = { authorization: rs.auth }) =>
    s.post('/introspect', { token: t, ...extra }, headers);

  before(async () => {
    s = await startOAuthServer();
    const r = await serviceClient(s);
    rs = { id: r.client_id, secret: r.client_secret!, auth: basic(r.client_id, r.client_secret!) };
    const a = await serviceClient(s, { grant_types: ['client_credentials', 'refresh_token'] });
    app = { id: a.client_id, auth: basic(a.client_id, a.client_secret!) };
  });
  after(() => s.close());

  it('describes an active access token to an authenticated client (oauth4webapi)', async () => {
    const at = await token();
    const client = { client_id: rs.id };
    const res = await oauth.introspectionRequest(s.as, client, oauth.ClientSecretBasic(rs.secret), at, insecure);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = await oauth.processIntrospectionResponse(s.as, client, res);
    assert.equal(body.active, true);
    assert.equal(body.client_id, app.id);
    assert.equal(body.sub, app.id);
    assert.equal(body.iss, s.issuer);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.scope, 'read write');
  });

  it('shows cnf.jkt for a DPoP-bound token', async () => {
    const k = await proofKey();
    const at = await token(app.auth, { dpop: await makeProof(k, { htm: 'POST', htu: `${s.issuer}/token` }) });
    const body = (await introspect(at)).json();
    assert.equal(body.token_type, 'DPoP');
    assert.deepEqual(body.cnf, { jkt: await calculateJwkThumbprint(k.jwk) });
  });

  it('resolves a token with a wrong token_type_hint', async () => {
    assert.equal((await introspect(await token(), { token_type_hint: 'refresh_token' })).json().active, true);
  });

  it('describes a refresh token only to its own client', async () => {
    const rt = await startRefreshFamily(
      s.tenant.tenant,
      { clientId: app.id, sub: 'user_1', scopes: ['read'], resources: [], jkt: null },
      s.server.ctx.oauth.ports,
      Date.now(),
    );
    const own = (await introspect(rt, {}, { authorization: app.auth })).json();
    assert.equal(own.active, true);
    assert.equal(own.token_type, 'refresh_token');
    assert.equal(own.sub, 'user_1');
    assert.deepEqual((await introspect(rt)).json(), { active: false });
  });

  describe('inactive tokens give {"active":false} only', () => {
    const forged = async (claims: Record<string, unknown>, tenantId = s.tenant.tenant.id) => {
      const k = await s.server.ctx.keystore.activeKey(tenantId, 'EdDSA');
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: s.issuer, sub: 'x', aud: s.issuer, client_id: 'x', jti: crypto.randomUUID(), iat: now, exp: now + 60, ...claims })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: k.kid })
        .sign(k.privateKey);
    };
    const cases: Array<[string, () => Promise<string>]> = [
      ['an expired token', () => forged({ iat: 1, exp: 2 })],
      ['an unknown token', async () => 'not-a-token'],
      ['an unknown refresh token', async () => 'rt_unknown'],
      [
        'a token of another tenant',
        async () => {
          const b = await s.createTenant('b.localhost');
          return forged({ iss: b.tenant.issuer }, b.tenant.id);
        },
      ],
      [
        'a revoked token',
        async () => {
          const at = await token();
          assert.equal((await s.post('/revoke', { token: at }, { authorization: app.auth })).status, 200);
          return at;
        },
      ],
    ];
    for (const [name, make] of cases) {
      it(`for ${name}`, async () => {
        const r = await introspect(await make());
        assert.equal(r.status, 200);
        assert.deepEqual(r.json(), { active: false });
      });
    }
  });

  describe('authorized by an access token (RFC 7662 §2.1)', () => {
    it("accepts a confidential client's own Bearer token", async () => {
      const own = await token(rs.auth);
      const r = await introspect(await token(), {}, { authorization: `Bearer ${own}` });
      assert.equal(r.status, 200);
      assert.equal(r.json().active, true);
    });

    it("accepts a client's own DPoP-bound token with a proof", async () => {
      const k = await proofKey();
      const own = await token(rs.auth, { dpop: await makeProof(k, { htm: 'POST', htu: `${s.issuer}/token` }) });
      const proof = await makeProof(k, { htm: 'POST', htu: `${s.issuer}/introspect`, ath: ath(own) });
      const r = await introspect(await token(), {}, { authorization: `DPoP ${own}`, dpop: proof });
      assert.equal(r.status, 200);
      assert.equal(r.json().active, true);
    });

    it("refuses a user's access token with 401 invalid_client", async () => {
      const rt = await startRefreshFamily(
        s.tenant.tenant,
        { clientId: app.id, sub: 'user_1', scopes: ['read'], resources: [], jkt: null },
        s.server.ctx.oauth.ports,
        Date.now(),
      );
      const userToken = (await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: app.auth })).json().access_token;
      const r = await introspect(await token(), {}, { authorization: `Bearer ${userToken}` });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });

    it('refuses an invalid access token with 401 invalid_token', async () => {
      const r = await introspect(await token(), {}, { authorization: 'Bearer not-a-token' });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_token');
      assert.match(String(r.headers['www-authenticate']), /^Bearer error="invalid_token"/);
    });
  });

  describe('bad introspection requests', () => {
    it('rejects an unauthenticated request with 401 invalid_client', async () => {
      const r = await introspect(await token(), {}, {});
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });
    it('rejects a public client with 401 invalid_client', async () => {
      const pub = await s.createClient({ token_endpoint_auth_method: 'none', grant_types: ['refresh_token'] });
      const r = await introspect(await token(), { client_id: pub.client_id }, {});
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });
    it('rejects a request without token', async () => {
      const r = await s.post('/introspect', {}, { authorization: rs.auth });
      assert.equal(r.status, 400);
      assert.equal(r.json().error, 'invalid_request');
    });
    it('answers GET with 405', async () => {
      assert.equal((await s.request({ path: '/introspect' })).status, 405);
    });
  });

  describe('revocation', () => {
    it('revokes a refresh token family (oauth4webapi)', async () => {
      const rt = await startRefreshFamily(
        s.tenant.tenant,
        { clientId: app.id, sub: 'u', scopes: [], resources: [], jkt: null },
        s.server.ctx.oauth.ports,
        Date.now(),
      );
      const rt2 = (await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: app.auth })).json().refresh_token;
      const [id, secret] = Buffer.from(app.auth.slice(6), 'base64').toString().split(':') as [string, string];
      const client = { client_id: id };
      const res = await oauth.revocationRequest(s.as, client, oauth.ClientSecretBasic(decodeURIComponent(secret)), rt2, insecure);
      await oauth.processRevocationResponse(res);
      const r = await s.post('/token', { grant_type: 'refresh_token', refresh_token: rt2 }, { authorization: app.auth });
      assert.equal(r.json().error, 'invalid_grant');
    });

    it('ignores a token of another client (still active)', async () => {
      const at = await token();
      assert.equal((await s.post('/revoke', { token: at }, { authorization: rs.auth })).status, 200);
      assert.equal((await introspect(at)).json().active, true);
    });

    it('answers 200 for an unknown token', async () => {
      assert.equal((await s.post('/revoke', { token: 'whatever' }, { authorization: app.auth })).status, 200);
    });

    it('rejects an unauthenticated request with 401 invalid_client', async () => {
      const r = await s.post('/revoke', { token: 'whatever' });
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'invalid_client');
    });
  });
});
