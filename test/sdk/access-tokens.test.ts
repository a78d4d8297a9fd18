/**
 * The SDK's `verifyAccessToken` against tokens from `keyhall serve` (client credentials for a
 * resource server): RS256 and EdDSA, a DPoP-bound token with its proofs, the wrong audience, an
 * expired token (through the verifier's `now` option, not by waiting), missing scope values.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, type CryptoKey, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { AccessTokenError, KeyhallClient, parseAuthorization, verifyAccessToken } from '../../packages/sdk/src/index.js';
import { type Keyhall, startKeyhall } from '../guides/guide.js';

const REPORTS = 'https://reports.example.com';
const BILLING = 'https://billing.example.com';
const API_URL = 'http://localhost:4000/reports';

async function refusal(p: Promise<unknown>): Promise<AccessTokenError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AccessTokenError, String(err));
    return err;
  }
  assert.fail('accepted');
}

describe('sdk: verifyAccessToken against tokens from keyhall serve', () => {
  let k: Keyhall;
  let client: { client_id: string; client_secret: string };
  let bound: { client_id: string; client_secret: string };
  let dpopKey: { privateKey: CryptoKey; jwk: JWK };
  before(async () => {
    k = await startKeyhall();
    const api = new KeyhallClient({ baseUrl: k.issuer, apiKey: k.apiKey });
    await api.post('/v1/resource_servers', {
      body: { name: 'Reports', identifier: REPORTS, access_token_signing_alg: 'RS256', scopes: ['reports:read', 'reports:write'] },
    });
    await api.post('/v1/resource_servers', { body: { name: 'Billing', identifier: BILLING, scopes: ['billing:read'] } });
    const body = { grant_types: ['client_credentials' as const], scope: 'reports:read billing:read', allowed_resources: [REPORTS, BILLING] };
    client = (await api.post('/v1/clients', { body: { client_name: 'Dashboard', ...body } })) as typeof client;
    bound = (await api.post('/v1/clients', { body: { client_name: 'Bound', ...body, dpop_bound_access_tokens: true } })) as typeof bound;
    const pair = await generateKeyPair('ES256', { extractable: true });
    dpopKey = { privateKey: pair.privateKey, jwk: await exportJWK(pair.publicKey) };
  });
  after(() => k?.close());

  const proof = (htm: string, htu: string, extra: Record<string, unknown> = {}) =>
    new SignJWT({ htm, htu, jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ...extra })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: dpopKey.jwk })
      .sign(dpopKey.privateKey);
  const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

  async function token(c: { client_id: string; client_secret: string }, resource: string, dpop = false): Promise<string> {
    const res = await fetch(`${k.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        ...(dpop ? { dpop: await proof('POST', `${k.issuer}/token`) } : {}),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: resource === REPORTS ? 'reports:read' : 'billing:read' }),
    });
    const json = (await res.json()) as { access_token: string; token_type: string };
    assert.equal(res.status, 200, JSON.stringify(json));
    assert.equal(json.token_type.toLowerCase(), dpop ? 'dpop' : 'bearer');
    return json.access_token;
  }

  it('accepts an RS256 token for its audience and returns the claims; the pinned algorithm refuses EdDSA', async () => {
    const rs = await token(client, REPORTS);
    assert.equal(decodeProtectedHeader(rs).alg, 'RS256');
    const claims = await verifyAccessToken(rs, { issuer: k.issuer, audience: REPORTS, requiredPermissions: ['reports:read'], algorithms: ['RS256'] });
    assert.deepEqual([claims.iss, claims.sub, claims.client_id, claims.scope], [k.issuer, client.client_id, client.client_id, 'reports:read']);

    const ed = await token(client, BILLING);
    assert.equal(decodeProtectedHeader(ed).alg, 'EdDSA');
    assert.equal((await verifyAccessToken(ed, { issuer: k.issuer, audience: BILLING })).scope, 'billing:read');
    const pinned = await refusal(verifyAccessToken(ed, { issuer: k.issuer, audience: BILLING, algorithms: ['RS256'] }));
    assert.deepEqual([pinned.status, pinned.error, pinned.wwwAuthenticate], [401, 'invalid_token', 'Bearer error="invalid_token"']);
  });

  it('refuses a token for another audience, from another issuer, and one that is not an access token', async () => {
    const ed = await token(client, BILLING);
    assert.equal((await refusal(verifyAccessToken(ed, { issuer: k.issuer, audience: REPORTS }))).error, 'invalid_token');
    assert.equal(
      (await refusal(verifyAccessToken(ed, { issuer: 'http://localhost:1', audience: BILLING, jwksUri: `${k.issuer}/.well-known/jwks.json` }))).error,
      'invalid_token',
    );
    const forged = await new SignJWT({ sub: 'x', aud: BILLING, iss: k.issuer })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setExpirationTime('5m')
      .sign(new Uint8Array(32));
    assert.equal((await refusal(verifyAccessToken(forged, { issuer: k.issuer, audience: BILLING }))).error, 'invalid_token');
  });

  it('refuses an expired token by the injected clock, and accepts it before', async () => {
    const rs = await token(client, REPORTS);
    const exp = decodeJwt(rs).exp! * 1000;
    const opts = { issuer: k.issuer, audience: REPORTS };
    assert.equal((await verifyAccessToken(rs, { ...opts, now: () => exp - 1000 })).sub, client.client_id);
    const expired = await refusal(verifyAccessToken(rs, { ...opts, now: () => exp + 1000 }));
    assert.equal(expired.error, 'invalid_token');
    assert.match(expired.error_description, /exp/);
    assert.equal((await verifyAccessToken(rs, { ...opts, now: () => exp + 1000, clockToleranceSeconds: 5 })).sub, client.client_id);
  });

  it('answers 403 insufficient_scope naming what is missing', async () => {
    const rs = await token(client, REPORTS);
    const err = await refusal(verifyAccessToken(rs, { issuer: k.issuer, audience: REPORTS, requiredPermissions: ['reports:read', 'reports:write'] }));
    assert.deepEqual([err.status, err.error, err.wwwAuthenticate], [403, 'insufficient_scope', 'Bearer error="insufficient_scope" scope="reports:write"']);
  });

  it('a DPoP-bound token needs the DPoP scheme and a fresh proof of its key for this request', async () => {
    const at = await token(bound, BILLING, true);
    assert.equal(decodeJwt(at).cnf && (decodeJwt(at).cnf as { jkt: string }).jkt, await calculateJwkThumbprint(dpopKey.jwk));
    const opts = { issuer: k.issuer, audience: BILLING };
    const good = await proof('GET', API_URL, { ath: ath(at) });
    const claims = await verifyAccessToken(at, { ...opts, dpop: { proof: good, method: 'GET', url: `${API_URL}?page=2` } });
    assert.equal(claims.sub, bound.client_id);
    assert.deepEqual(parseAuthorization(`DPoP ${at}`), { scheme: 'DPoP', token: at });

    const replay = await refusal(verifyAccessToken(at, { ...opts, dpop: { proof: good, method: 'GET', url: API_URL } }));
    assert.deepEqual([replay.error, replay.error_description], ['invalid_dpop_proof', 'the DPoP proof was already used']);
    const asBearer = await refusal(verifyAccessToken(at, opts));
    assert.deepEqual([asBearer.status, asBearer.error_description], [401, 'DPoP-bound token sent as Bearer']);
    assert.match(asBearer.wwwAuthenticate, /^DPoP error="invalid_token" algs="/);

    const cases: Array<[string, () => Promise<string | undefined>, string, string]> = [
      ['no proof', async () => undefined, 'GET', 'missing DPoP proof'],
      ['another method', () => proof('POST', API_URL, { ath: ath(at) }), 'GET', 'htm does not match the request method'],
      ['another URL', () => proof('GET', 'http://localhost:4000/other', { ath: ath(at) }), 'GET', 'htu does not match the request URL'],
      ['another token', () => proof('GET', API_URL, { ath: ath('x') }), 'GET', 'ath does not match the access token'],
      ['an old proof', () => proof('GET', API_URL, { ath: ath(at), iat: Math.floor(Date.now() / 1000) - 300 }), 'GET', 'iat is not recent'],
    ];
    for (const [name, make, method, why] of cases) {
      const err = await refusal(verifyAccessToken(at, { ...opts, dpop: { proof: await make(), method, url: API_URL } }));
      assert.deepEqual([err.status, err.error, err.error_description], [401, 'invalid_dpop_proof', why], name);
    }
    // A proof by another key.
    const other = await generateKeyPair('ES256', { extractable: true });
    const stranger = await new SignJWT({ htm: 'GET', htu: API_URL, jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ath: ath(at) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(other.publicKey) })
      .sign(other.privateKey);
    const err = await refusal(verifyAccessToken(at, { ...opts, dpop: { proof: stranger, method: 'GET', url: API_URL } }));
    assert.equal(err.error_description, 'the DPoP proof is signed by another key');

    // A proof carrying the private key, or signed with HS256, does not verify.
    const withPrivate = await new SignJWT({ htm: 'GET', htu: API_URL, jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ath: ath(at) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(dpopKey.privateKey) })
      .sign(dpopKey.privateKey);
    const hs = await new SignJWT({ htm: 'GET', htu: API_URL, jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ath: ath(at) })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: dpopKey.jwk })
      .sign(new Uint8Array(32));
    for (const bad of [withPrivate, hs]) {
      const e = await refusal(verifyAccessToken(at, { ...opts, dpop: { proof: bad, method: 'GET', url: API_URL } }));
      assert.deepEqual([e.error, e.error_description], ['invalid_dpop_proof', 'the DPoP proof does not verify']);
    }

    // An unbound token presented with the DPoP scheme is refused too.
    const plain = await token(client, BILLING);
    const unbound = await refusal(
      verifyAccessToken(plain, { ...opts, scheme: 'DPoP', dpop: { proof: await proof('GET', API_URL, { ath: ath(plain) }), method: 'GET', url: API_URL } }),
    );
    assert.equal(unbound.error_description, 'token is not DPoP-bound');
  });
});
