import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { makeProof, type ProofKey, proofKey, rawJwt } from './dpop-helpers.js';
import { basic, insecure, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

describe('DPoP at /token (RFC 9449)', () => {
  let s: OAuthTestServer;
  let key: ProofKey;
  let auth: string;
  let htu: string;
  before(async () => {
    s = await startOAuthServer();
    key = await proofKey();
    const c = await serviceClient(s);
    auth = basic(c.client_id, c.client_secret!);
    htu = `${s.issuer}/token`;
  });
  after(() => s.close());

  const tokenWith = (dpop: string | string[] | undefined) =>
    s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth, ...(dpop !== undefined ? { dpop } : {}) });

  it('binds the access token to the proof key with oauth4webapi (token_type DPoP, cnf.jkt)', async () => {
    const c = await serviceClient(s);
    const client: oauth.Client = { client_id: c.client_id };
    const pair = await oauth.generateKeyPair('EdDSA');
    const DPoP = oauth.DPoP(client, pair);
    const res = await oauth.clientCredentialsGrantRequest(s.as, client, oauth.ClientSecretBasic(c.client_secret!), new URLSearchParams(), {
      ...insecure,
      DPoP,
    });
    const tokens = await oauth.processClientCredentialsResponse(s.as, client, res);
    assert.equal(tokens.token_type, 'dpop');
    const claims = await s.verifyAt(tokens.access_token);
    const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
    assert.deepEqual(claims.cnf, { jkt: await calculateJwkThumbprint(jwk as never) });
  });

  it('accepts iat 10 s off either way, and htu with a query or fragment', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const claims of [{ iat: now - 10 }, { iat: now + 10 }, { htu: `${htu}?x=1` }, { htu: `${htu}#f` }]) {
      const r = await tokenWith(await makeProof(key, { htm: 'POST', htu, ...claims }));
      assert.equal(r.status, 200, JSON.stringify(claims));
      assert.equal(r.json().token_type, 'DPoP');
    }
  });

  it('requires a proof from a dpop_bound_access_tokens client', async () => {
    const c = await serviceClient(s, { dpop_bound_access_tokens: true });
    const r = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(c.client_id, c.client_secret!) });
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'invalid_request');
  });

  describe('each bad proof gives 400 invalid_dpop_proof', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const good = () => ({ htm: 'POST', htu });
    const cases: Array<[string, () => Promise<string | string[]>]> = [
      ['two DPoP headers', async () => [await makeProof(key, good()), await makeProof(key, good())]],
      ['a proof that is not a JWT', async () => 'not-a-jwt'],
      ['typ other than dpop+jwt', () => makeProof(key, good(), { typ: 'JWT' })],
      ['alg none', async () => rawJwt({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk }, { ...good(), jti: 'n', iat: now() })],
      [
        'alg HS256',
        async () => {
          return new SignJWT({ ...good(), jti: 'h', iat: now() })
            .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.jwk } as never)
            .sign(new TextEncoder().encode('0123456789abcdef0123456789abcdef'));
        },
      ],
      [
        'a private d in jwk',
        async () => {
          const priv = await crypto.subtle.exportKey('jwk', key.pair.privateKey);
          return makeProof(key, good(), { jwk: priv });
        },
      ],
      ['a bad signature', async () => makeProof(key, good(), {}, (await proofKey()).pair.privateKey)],
      ['no jti', () => makeProof(key, { ...good(), jti: undefined })],
      ['no htm', () => makeProof(key, { ...good(), htm: undefined })],
      ['no htu', () => makeProof(key, { ...good(), htu: undefined })],
      ['no iat', () => makeProof(key, { ...good(), iat: undefined })],
      ['a wrong htm', () => makeProof(key, { ...good(), htm: 'GET' })],
      ['htu with another path', () => makeProof(key, { ...good(), htu: `${s.issuer}/other` })],
      ['htu of another tenant', () => makeProof(key, { ...good(), htu: 'http://other.localhost/token' })],
      ['iat an hour ahead', () => makeProof(key, { ...good(), iat: now() + 3600 })],
      ['iat an hour ago', () => makeProof(key, { ...good(), iat: now() - 3600 })],
    ];
    for (const [name, make] of cases) {
      it(`rejects ${name}`, async () => {
        const r = await tokenWith(await make());
        assert.equal(r.status, 400);
        assert.equal(r.json().error, 'invalid_dpop_proof');
      });
    }

    it('rejects a replayed jti', async () => {
      const p = await makeProof(key, good());
      assert.equal((await tokenWith(p)).status, 200);
      const again = await tokenWith(p);
      assert.equal(again.status, 400);
      assert.equal(again.json().error, 'invalid_dpop_proof');
    });
  });
});
