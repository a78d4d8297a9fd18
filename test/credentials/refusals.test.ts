import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, SignJWT } from 'jose';
import { ManualClock } from '../../src/kernel/clock.js';
import { makeProof, proofKey } from '../oauth/dpop-helpers.js';
import { basic, type OAuthTestServer, serviceClient, startOAuthServer } from '../oauth/helpers.js';
import type { HttpResponse } from '../helpers/http.js';
import { expectError } from '../helpers/v1.js';
import { type HolderKey, holderKey, membershipOffer, type Org, orgWithMember } from './helpers.js';

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

describe('OID4VCI refusals', () => {
  let s: OAuthTestServer;
  let o: Org;
  let key: HolderKey;
  const clock = new ManualClock();
  before(async () => {
    s = await startOAuthServer({ clock });
    o = await orgWithMember(s);
    key = await holderKey();
  });
  after(() => s.close());

  const codeOf = (offer: { credential_offer: Record<string, unknown> }) =>
    (offer.credential_offer.grants as Record<string, Record<string, string>>)[PRE_AUTH]!['pre-authorized_code']!;
  const redeem = (code: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    s.post('/token', { grant_type: PRE_AUTH, 'pre-authorized_code': code, ...extra }, headers);
  const nonce = async () => {
    const r = await s.request({ method: 'POST', path: '/credentials/nonce' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['cache-control'], 'no-store');
    return r.json().c_nonce as string;
  };
  const proof = (claims: Record<string, unknown>, header: Record<string, unknown> = {}, k: HolderKey = key, signWith = k.privateKey) =>
    new SignJWT({ aud: s.issuer, iat: Math.floor(clock.now() / 1000), ...claims })
      .setProtectedHeader({ alg: k.alg, typ: 'openid4vci-proof+jwt', jwk: k.publicJwk, ...header } as never)
      .sign(signWith);
  const credential = (token: string, body: unknown, scheme = 'Bearer', headers: Record<string, string> = {}) =>
    s.request({
      method: 'POST',
      path: '/credentials/credential',
      headers: { authorization: `${scheme} ${token}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const request = async (jwt: string) => ({ credential_configuration_id: 'OrganizationMembership', proofs: { jwt: [jwt] } });
  /** A fresh offer (no tx_code) redeemed for a token. */
  const token = async () => {
    const offer = await membershipOffer(o, false);
    const r = await redeem(codeOf(offer));
    assert.equal(r.status, 200, r.text);
    return r.json().access_token as string;
  };
  const events = async (type: string) =>
    (await o.api('GET', `/events?organization_id=${o.orgId}&types=${type}&limit=100`)).json().data as Array<{ data: Record<string, unknown> }>;

  it('redeems a code once: a replay is invalid_grant', async () => {
    const offer = await membershipOffer(o);
    const first = await redeem(codeOf(offer), { tx_code: offer.tx_code! });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json().token_type, 'Bearer');
    const claims = await s.verifyAt(first.json().access_token);
    assert.equal(claims.aud, s.issuer);
    assert.equal(claims.sub, o.userId);
    expectError(await redeem(codeOf(offer), { tx_code: offer.tx_code! }), 400, 'invalid_grant');
  });

  it('counts wrong tx_codes: the fifth kills the code, and the right one no longer works', async () => {
    const offer = await membershipOffer(o);
    const wrong = offer.tx_code === '000000' ? '111111' : '000000';
    for (let i = 1; i <= 4; i++) {
      const r = await redeem(codeOf(offer), { tx_code: wrong });
      expectError(r, 400, 'invalid_grant');
      assert.equal(r.json().error_description, 'wrong tx_code');
    }
    const fifth = await redeem(codeOf(offer), { tx_code: wrong });
    expectError(fifth, 400, 'invalid_grant');
    assert.match(fifth.json().error_description, /too many wrong tx_code/);
    expectError(await redeem(codeOf(offer), { tx_code: offer.tx_code! }), 400, 'invalid_grant');
    const expired = await events('credential.offer.expired');
    assert.ok(expired.some((e) => e.data.offer_id === offer.offer_id && e.data.reason === 'tx_code_attempts'));
  });

  it('accepts the legacy user_pin and refuses a missing, unexpected or unknown code', async () => {
    const offer = await membershipOffer(o);
    expectError(await redeem(codeOf(offer)), 400, 'invalid_request');
    assert.equal((await redeem(codeOf(offer), { user_pin: offer.tx_code! })).status, 200);
    const plain = await membershipOffer(o, false);
    expectError(await redeem(codeOf(plain), { tx_code: '123456' }), 400, 'invalid_request');
    expectError(await s.post('/token', { grant_type: PRE_AUTH }), 400, 'invalid_request');
    expectError(await redeem('not-a-code'), 400, 'invalid_grant');
  });

  it('lets an offer expire after five minutes (by value and by reference)', async () => {
    const offer = await membershipOffer(o);
    const byRef = await s.request({ path: new URL(offer.credential_offer_uri).pathname });
    assert.equal(byRef.status, 200, byRef.text);
    assert.deepEqual(byRef.json(), offer.credential_offer);
    clock.advance(301_000);
    expectError(await s.request({ path: new URL(offer.credential_offer_uri).pathname }), 404, 'not_found');
    const r = await redeem(codeOf(offer), { tx_code: offer.tx_code! });
    expectError(r, 400, 'invalid_grant');
    assert.match(r.json().error_description, /expired/);
    assert.ok((await events('credential.offer.expired')).some((e) => e.data.offer_id === offer.offer_id && e.data.reason === 'expired'));
  });

  it('records credential.offer.expired once for an offer nobody presents again (the periodic sweep)', async () => {
    const offer = await membershipOffer(o);
    await s.server.offerExpiry.tick();
    assert.ok(!(await events('credential.offer.expired')).some((e) => e.data.offer_id === offer.offer_id), 'a live offer is not swept');
    clock.advance(301_000);
    await s.server.offerExpiry.tick();
    await s.server.offerExpiry.tick();
    const expired = (await events('credential.offer.expired')).filter((e) => e.data.offer_id === offer.offer_id);
    assert.equal(expired.length, 1, 'one event, however many sweeps');
    assert.equal(expired[0]!.data.reason, 'expired');
    const r = await redeem(codeOf(offer), { tx_code: offer.tx_code! });
    expectError(r, 400, 'invalid_grant');
    assert.equal(
      (await events('credential.offer.expired')).filter((e) => e.data.offer_id === offer.offer_id).length,
      1,
      'presenting the dead code adds no second event',
    );
  });

  it('takes a nonce once: a reused nonce is invalid_nonce', async () => {
    const n = await nonce();
    const jwt = await proof({ nonce: n });
    const ok = await credential(await token(), await request(jwt));
    assert.equal(ok.status, 200, ok.text);
    expectError(await credential(await token(), await request(await proof({ nonce: n }))), 400, 'invalid_nonce');
  });

  it('refuses a stale nonce and a proof without one (invalid_nonce)', async () => {
    const n = await nonce();
    clock.advance(301_000);
    expectError(await credential(await token(), await request(await proof({ nonce: n }))), 400, 'invalid_nonce');
    expectError(await credential(await token(), await request(await proof({}))), 400, 'invalid_nonce');
  });

  it('refuses a proof for another audience (invalid_proof)', async () => {
    const r = await credential(await token(), await request(await proof({ nonce: await nonce(), aud: 'https://other-issuer.example' })));
    expectError(r, 400, 'invalid_proof');
  });

  it('refuses a proof signed by another key than its header names (invalid_proof)', async () => {
    const other = await holderKey();
    expectError(await credential(await token(), await request(await proof({ nonce: await nonce() }, {}, key, other.privateKey))), 400, 'invalid_proof');
    // The same with the key named as a did:key.
    expectError(
      await credential(await token(), await request(await proof({ nonce: await nonce() }, { jwk: undefined, kid: `${key.didKey}#0` }, key, other.privateKey))),
      400,
      'invalid_proof',
    );
  });

  it('refuses a proof with another typ, alg none or a stale iat (invalid_proof)', async () => {
    const t = await token();
    expectError(await credential(t, await request(await proof({ nonce: await nonce() }, { typ: 'JWT' }))), 400, 'invalid_proof');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk })).toString('base64url')}.${Buffer.from(JSON.stringify({ aud: s.issuer, iat: Math.floor(clock.now() / 1000), nonce: await nonce() })).toString('base64url')}.`;
    expectError(await credential(t, await request(none)), 400, 'invalid_proof');
    expectError(await credential(t, await request(await proof({ nonce: await nonce(), iat: Math.floor(clock.now() / 1000) - 3600 }))), 400, 'invalid_proof');
  });

  it('refuses a proof whose jwk carries private key members, and binds no credential to that key (invalid_proof)', async () => {
    const es = await holderKey('ES256');
    const before = (await events('credential.issued')).length;
    for (const k of [key, es]) {
      const privateJwk = await exportJWK(k.privateKey);
      assert.ok(privateJwk.d, 'the exported key is private');
      const t = await token();
      const r = await credential(t, await request(await proof({ nonce: await nonce() }, { jwk: privateJwk }, k)));
      expectError(r, 400, 'invalid_proof');
      assert.match(r.json().error_description, /public key/);
      // The token still works with a proper proof: the refusal issued nothing.
      assert.equal((await credential(t, await request(await proof({ nonce: await nonce() }, {}, k)))).status, 200);
    }
    // Any private or symmetric member, not only d; and a did:jwk naming a private key.
    for (const extra of [{ p: 'AQAB' }, { k: 'AQAB' }, { dp: 'AQAB' }]) {
      expectError(
        await credential(await token(), await request(await proof({ nonce: await nonce() }, { jwk: { ...key.publicJwk, ...extra } }))),
        400,
        'invalid_proof',
      );
    }
    const privateDid = `did:jwk:${Buffer.from(JSON.stringify(await exportJWK(key.privateKey))).toString('base64url')}`;
    expectError(
      await credential(await token(), await request(await proof({ nonce: await nonce() }, { jwk: undefined, kid: `${privateDid}#0` }))),
      400,
      'invalid_proof',
    );
    const after = (await events('credential.issued')).length;
    assert.equal(after - before, 2, 'only the two proper proofs issued a credential');
  });

  it('refuses a proof that names its key twice, or by a kid that is not a did:key / did:jwk (invalid_proof)', async () => {
    expectError(await credential(await token(), await request(await proof({ nonce: await nonce() }, { kid: `${key.didKey}#0` }))), 400, 'invalid_proof');
    expectError(await credential(await token(), await request(await proof({ nonce: await nonce() }, { jwk: undefined, kid: 'key-1' }))), 400, 'invalid_proof');
    expectError(await credential(await token(), await request(await proof({ nonce: await nonce() }, { jwk: 'not a jwk' }))), 400, 'invalid_proof');
    expectError(await credential(await token(), await request('not-a-jwt')), 400, 'invalid_proof');
  });

  it('refuses an access token from client_credentials at the credential endpoint (401 invalid_token)', async () => {
    const app = await serviceClient(s);
    const cc = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(app.client_id, app.client_secret!) });
    assert.equal(cc.status, 200, cc.text);
    const r = await credential(cc.json().access_token, await request(await proof({ nonce: await nonce() })));
    expectError(r, 401, 'invalid_token');
    assert.match(String(r.headers['www-authenticate']), /^Bearer error="invalid_token"/);
    expectError(await credential('', await request(await proof({ nonce: await nonce() }))), 401, 'invalid_token');
  });

  it('does not accept a credential-offer token anywhere else (userinfo)', async () => {
    const r = await s.request({ path: '/userinfo', headers: { authorization: `Bearer ${await token()}` } });
    expectError(r, 401, 'invalid_token');
    assert.match(r.json().error_description, /only at the credential endpoint/);
  });

  it('answers malformed credential requests with the OID4VCI codes', async () => {
    const t = await token();
    const jwt = await proof({ nonce: await nonce() });
    expectError(await credential(t, { credential_configuration_id: 'NoSuchType', proofs: { jwt: [jwt] } }), 400, 'unknown_credential_configuration');
    expectError(await credential(t, { proofs: { jwt: [jwt] } }), 400, 'invalid_credential_request');
    expectError(await credential(t, { credential_configuration_id: 'OrganizationMembership' }), 400, 'invalid_proof');
    expectError(await credential(t, { credential_configuration_id: 'OrganizationMembership', proofs: { jwt: [jwt, jwt] } }), 400, 'invalid_credential_request');
    expectError(await credential(t, { credential_configuration_id: 'OrganizationMembership', proofs: { jwt: 'x' } }), 400, 'invalid_credential_request');
    expectError(await credential(t, '{not json'), 400, 'invalid_credential_request');
    expectError(await credential(t, 'a=b', 'Bearer', { 'content-type': 'application/x-www-form-urlencoded' }), 400, 'invalid_credential_request');
    expectError(await credential(t, [1]), 400, 'invalid_credential_request');
  });

  it('issues once per offer: a second request with a fresh nonce is invalid_credential_request', async () => {
    const t = await token();
    assert.equal((await credential(t, await request(await proof({ nonce: await nonce() })))).status, 200);
    expectError(await credential(t, await request(await proof({ nonce: await nonce() }))), 400, 'invalid_credential_request');
  });

  it('binds to did:key and ES256 holder keys; the subject is the holder DID', async () => {
    const es = await holderKey('ES256');
    const r: HttpResponse = await credential(
      await token(),
      await request(await proof({ nonce: await nonce() }, { jwk: undefined, kid: `${es.didKey}#${es.didKey.slice(8)}` }, es)),
    );
    assert.equal(r.status, 200, r.text);
    const issued = await events('credential.issued');
    assert.equal(issued.at(-1)!.data.subject, es.didKey);
    const dj = await credential(await token(), await request(await proof({ nonce: await nonce() }, { jwk: undefined, kid: `${key.didJwk}#0` })));
    assert.equal(dj.status, 200, dj.text);
    assert.equal((await events('credential.issued')).at(-1)!.data.subject, key.didJwk);
  });

  it('honours DPoP at /token: the bound token must come with a proof by that key', async () => {
    const dpopKey = await proofKey();
    const offer = await membershipOffer(o, false);
    const htu = `${s.issuer}/token`;
    const r = await redeem(codeOf(offer), {}, { dpop: await makeProof(dpopKey, { htm: 'POST', htu, iat: Math.floor(clock.now() / 1000) }) });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().token_type, 'DPoP');
    expectError(await credential(r.json().access_token, await request(await proof({ nonce: await nonce() }))), 401, 'invalid_token');
  });
});
