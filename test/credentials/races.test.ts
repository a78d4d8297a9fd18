import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { type OAuthTestServer, startOAuthServer } from '../oauth/helpers.js';
import { holderKey, membershipOffer, orgWithMember } from './helpers.js';

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

describe('credential races (several callers at once)', () => {
  let s: OAuthTestServer;
  before(async () => {
    s = await startOAuthServer();
  });
  after(() => s.close());

  const codeOf = (offer: { credential_offer: Record<string, unknown> }) =>
    (offer.credential_offer.grants as Record<string, Record<string, string>>)[PRE_AUTH]!['pre-authorized_code']!;

  it('redeems a code exactly once under 10 parallel requests', async () => {
    const o = await orgWithMember(s);
    const offer = await membershipOffer(o);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => s.post('/token', { grant_type: PRE_AUTH, 'pre-authorized_code': codeOf(offer), tx_code: offer.tx_code! })),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 1);
    assert.ok(answers.filter((a) => a.status !== 200).every((a) => a.status === 400 && a.json().error === 'invalid_grant'));
  });

  it('kills a code after 5 wrong tx_codes even when 12 arrive at once', async () => {
    const o = await orgWithMember(s);
    const offer = await membershipOffer(o);
    const wrong = offer.tx_code === '000000' ? '111111' : '000000';
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => s.post('/token', { grant_type: PRE_AUTH, 'pre-authorized_code': codeOf(offer), tx_code: wrong })),
    );
    assert.ok(answers.every((a) => a.status === 400 && a.json().error === 'invalid_grant'));
    const right = await s.post('/token', { grant_type: PRE_AUTH, 'pre-authorized_code': codeOf(offer), tx_code: offer.tx_code! });
    assert.equal(right.json().error, 'invalid_grant');
  });

  it('takes a nonce once under 6 parallel credential requests', async () => {
    const key = await holderKey();
    const o = await orgWithMember(s);
    const tokens = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const offer = await membershipOffer(o, false);
        return (await s.post('/token', { grant_type: PRE_AUTH, 'pre-authorized_code': codeOf(offer) })).json().access_token as string;
      }),
    );
    const nonce = (await s.request({ method: 'POST', path: '/credentials/nonce' })).json().c_nonce as string;
    const answers = await Promise.all(
      tokens.map(async (token) => {
        const proof = await new SignJWT({ aud: s.issuer, iat: Math.floor(Date.now() / 1000), nonce })
          .setProtectedHeader({ alg: 'EdDSA', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk } as never)
          .sign(key.privateKey);
        return s.request({
          method: 'POST',
          path: '/credentials/credential',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ credential_configuration_id: 'OrganizationMembership', proofs: { jwt: [proof] } }),
        });
      }),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 1);
    assert.ok(answers.filter((a) => a.status !== 200).every((a) => a.json().error === 'invalid_nonce'));
  });

  it('never leaves a valid membership credential behind a member removed during issuance', async () => {
    const key = await holderKey();
    for (let round = 0; round < 4; round++) {
      const o = await orgWithMember(s);
      const offer = await membershipOffer(o, false);
      const token = (await s.post('/token', { grant_type: PRE_AUTH, 'pre-authorized_code': codeOf(offer) })).json().access_token as string;
      const nonce = (await s.request({ method: 'POST', path: '/credentials/nonce' })).json().c_nonce as string;
      const proof = await new SignJWT({ aud: s.issuer, iat: Math.floor(Date.now() / 1000), nonce })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk } as never)
        .sign(key.privateKey);
      const [issued, removed] = await Promise.all([
        s.request({
          method: 'POST',
          path: '/credentials/credential',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ credential_configuration_id: 'OrganizationMembership', proofs: { jwt: [proof] } }),
        }),
        o.api('DELETE', `/organizations/${o.orgId}/members/${o.userId}`),
      ]);
      assert.equal(removed.status, 204, removed.text);
      assert.ok(issued.status === 200 || issued.json().error === 'credential_request_denied', issued.text);
      const records = (await o.api('GET', `/organizations/${o.orgId}/credentials`)).json().data as Array<{ status: string }>;
      assert.equal(records.length, issued.status === 200 ? 1 : 0);
      assert.ok(records.every((r) => r.status === 'revoked'));
    }
  });
});
