import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint } from 'jose';
import * as oauth from 'oauth4webapi';
import { ManualClock } from '../../src/kernel/clock.js';
import { type NewGrant, startRefreshFamily } from '../../src/oauth/token/refresh.js';
import { makeProof, proofKey } from './dpop-helpers.js';
import { basic, insecure, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

/** Starts a grant the way the authorization_code grant will (that grant is another issue). */
function grant(s: OAuthTestServer, g: Partial<NewGrant> & { clientId: string }) {
  return startRefreshFamily(
    s.tenant.tenant,
    { sub: 'user_1', scopes: ['read', 'write'], resources: [], jkt: null, ...g },
    s.server.ctx.oauth.ports,
    s.server.ctx.clock.now(),
  );
}

describe('refresh_token grant', () => {
  const clock = new ManualClock();
  let s: OAuthTestServer;
  let id: string;
  let secret: string;
  let auth: string;
  before(async () => {
    s = await startOAuthServer({ clock });
    const c = await serviceClient(s, { grant_types: ['refresh_token'], allowed_resources: ['https://api.example/'] });
    id = c.client_id;
    secret = c.client_secret!;
    auth = basic(id, secret);
  });
  after(() => s.close());

  const refresh = (rt: string, extra: Record<string, string> = {}, headers: Record<string, string> = { authorization: auth }) =>
    s.post('/token', { grant_type: 'refresh_token', refresh_token: rt, ...extra }, headers);

  it('rotates on every use (oauth4webapi) and narrows scope', async () => {
    const client = { client_id: id };
    const rt = await grant(s, { clientId: id });
    assert.match(rt, /^rt_[\w-]{43}$/);
    const res = await oauth.refreshTokenGrantRequest(s.as, client, oauth.ClientSecretBasic(secret), rt, {
      ...insecure,
      additionalParameters: { scope: 'read' },
    });
    const tokens = await oauth.processRefreshTokenResponse(s.as, client, res);
    assert.equal(tokens.scope, 'read');
    assert.ok(tokens.refresh_token && tokens.refresh_token !== rt);
    const claims = await s.verifyAt(tokens.access_token);
    assert.equal(claims.sub, 'user_1');
    assert.equal(claims.client_id, id);
    const next = await refresh(tokens.refresh_token!);
    assert.equal(next.status, 200);
    assert.equal(next.json().scope, 'read write');
    assert.equal(next.headers['cache-control'], 'no-store');
  });

  it('lets access tokens expire with the (injected) clock', async () => {
    const r = (await refresh(await grant(s, { clientId: id }))).json();
    assert.equal((await s.post('/introspect', { token: r.access_token }, { authorization: auth })).json().active, true);
    clock.advance((r.expires_in + 6) * 1000);
    try {
      assert.deepEqual((await s.post('/introspect', { token: r.access_token }, { authorization: auth })).json(), { active: false });
    } finally {
      clock.advance(-(r.expires_in + 6) * 1000);
    }
  });

  it('revokes the whole family when a rotated token is reused', async () => {
    const rt1 = await grant(s, { clientId: id });
    const rt2 = (await refresh(rt1)).json().refresh_token;
    const reuse = await refresh(rt1);
    assert.equal(reuse.status, 400);
    assert.equal(reuse.json().error, 'invalid_grant');
    const newest = await refresh(rt2);
    assert.equal(newest.status, 400);
    assert.equal(newest.json().error, 'invalid_grant');
  });

  it('lets exactly one of two parallel uses win', async () => {
    const rt = await grant(s, { clientId: id });
    const results = await Promise.all([refresh(rt), refresh(rt), refresh(rt)]);
    assert.equal(results.filter((r) => r.status === 200).length, 1, results.map((r) => r.text).join('\n'));
    for (const r of results.filter((x) => x.status !== 200)) assert.equal(r.json().error, 'invalid_grant');
  });

  it('keeps resources within the original grant', async () => {
    const rt = await grant(s, { clientId: id, resources: ['https://api.example/'] });
    const r = await refresh(rt, { resource: 'https://api.example/' });
    assert.equal(r.status, 200);
    assert.equal((await s.verifyAt(r.json().access_token, 'https://api.example/')).aud, 'https://api.example/');
  });

  describe('bad requests', () => {
    const cases: Array<[string, () => Promise<{ status: number; json(): { error: string } }>, number, string]> = [
      ['an unknown refresh token', () => refresh('rt_unknown'), 400, 'invalid_grant'],
      ['no refresh_token', () => s.post('/token', { grant_type: 'refresh_token' }, { authorization: auth }), 400, 'invalid_request'],
      ['a wider scope', async () => refresh(await grant(s, { clientId: id }), { scope: 'read admin' }), 400, 'invalid_scope'],
      ['a resource outside the grant', async () => refresh(await grant(s, { clientId: id }), { resource: 'https://api.example/' }), 400, 'invalid_target'],
      ['a confidential client without authentication', async () => refresh(await grant(s, { clientId: id }), { client_id: id }, {}), 401, 'invalid_client'],
      [
        "another client's refresh token",
        async () => {
          const other = await serviceClient(s, { grant_types: ['refresh_token'] });
          return refresh(await grant(s, { clientId: other.client_id }));
        },
        400,
        'invalid_grant',
      ],
      [
        'a refresh token of another tenant',
        async () => {
          const b = await s.createTenant('b.localhost');
          const c = await s.server.ctx.management.clients.create(b.tenant.id, { grant_types: ['refresh_token'] });
          const rt = await startRefreshFamily(
            b.tenant,
            { clientId: c.client_id, sub: 'u', scopes: [], resources: [], jkt: null },
            s.server.ctx.oauth.ports,
            clock.now(),
          );
          return refresh(rt);
        },
        400,
        'invalid_grant',
      ],
      [
        'a revoked refresh token',
        async () => {
          const rt = await grant(s, { clientId: id });
          await s.post('/revoke', { token: rt, token_type_hint: 'refresh_token' }, { authorization: auth });
          return refresh(rt);
        },
        400,
        'invalid_grant',
      ],
      [
        'an expired refresh token',
        async () => {
          const rt = await grant(s, { clientId: id });
          clock.advance(31 * 24 * 3600 * 1000);
          try {
            return await refresh(rt);
          } finally {
            clock.advance(-31 * 24 * 3600 * 1000);
          }
        },
        400,
        'invalid_grant',
      ],
    ];
    for (const [name, run, status, error] of cases) {
      it(`rejects ${name}`, async () => {
        const r = await run();
        assert.equal(r.status, status);
        assert.equal(r.json().error, error);
      });
    }
  });

  describe('DPoP-bound refresh tokens of public clients', () => {
    let pub: string;
    before(async () => {
      pub = (await s.createClient({ token_endpoint_auth_method: 'none', grant_types: ['refresh_token'] })).client_id;
    });
    const proofFor = async (k: Awaited<ReturnType<typeof proofKey>>) =>
      makeProof(k, { htm: 'POST', htu: `${s.issuer}/token`, iat: Math.floor(clock.now() / 1000) });

    it('works with a proof by the bound key, and binds the new access token', async () => {
      const k = await proofKey();
      const jkt = await calculateJwkThumbprint(k.jwk);
      const rt = await grant(s, { clientId: pub, jkt });
      const r = await refresh(rt, { client_id: pub }, { dpop: await proofFor(k) });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json().token_type, 'DPoP');
      assert.deepEqual((await s.verifyAt(r.json().access_token)).cnf, { jkt });
    });

    it('works for a public client through oauth4webapi (None + DPoP)', async () => {
      const client: oauth.Client = { client_id: pub };
      const pair = await oauth.generateKeyPair('ES256');
      const jkt = await calculateJwkThumbprint((await crypto.subtle.exportKey('jwk', pair.publicKey)) as never);
      const rt = await grant(s, { clientId: pub, jkt });
      const DPoP = oauth.DPoP(client, pair);
      const res = await oauth.refreshTokenGrantRequest(s.as, client, oauth.None(), rt, { ...insecure, DPoP });
      const tokens = await oauth.processRefreshTokenResponse(s.as, client, res);
      assert.equal(tokens.token_type, 'dpop');
      assert.deepEqual((await s.verifyAt(tokens.access_token)).cnf, { jkt });
      const again = await oauth.refreshTokenGrantRequest(s.as, client, oauth.None(), tokens.refresh_token!, { ...insecure, DPoP });
      assert.ok((await oauth.processRefreshTokenResponse(s.as, client, again)).access_token);
    });

    it('rejects a proof by another key with invalid_grant', async () => {
      const rt = await grant(s, { clientId: pub, jkt: await calculateJwkThumbprint((await proofKey()).jwk) });
      const r = await refresh(rt, { client_id: pub }, { dpop: await proofFor(await proofKey()) });
      assert.equal(r.status, 400);
      assert.equal(r.json().error, 'invalid_grant');
    });

    it('rejects a missing proof with invalid_dpop_proof', async () => {
      const rt = await grant(s, { clientId: pub, jkt: await calculateJwkThumbprint((await proofKey()).jwk) });
      const r = await refresh(rt, { client_id: pub }, {});
      assert.equal(r.status, 400);
      assert.equal(r.json().error, 'invalid_dpop_proof');
    });
  });
});
