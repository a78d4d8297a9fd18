import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fetchVia } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { holderKey, membershipOffer, orgWithMember, receiveCredential, verifierFor } from './helpers.js';

describe('OID4VCI pre-authorized code flow with the OWF wallet client', () => {
  let s: TestServer;
  before(async () => {
    // An https issuer, as in production; http://localhost is covered by wallet-cli.test.ts.
    s = await startTestServer({ tenantHost: 'issuer.test' });
  });
  after(() => s.close());

  it('issues a dc+sd-jwt membership credential that an independent verifier accepts, then refuses after revoke', async () => {
    const o = await orgWithMember(s);
    const offer = await membershipOffer(o);
    assert.match(offer.tx_code!, /^\d{6}$/);
    const key = await holderKey();
    const { res } = await receiveCredential(s, offer.credential_offer_link, offer.tx_code, key);
    assert.equal(res.ok, true, JSON.stringify(res));
    const credential = (res as { credentialResponse: { credentials: Array<{ credential: string }> } }).credentialResponse.credentials[0]!.credential;
    const { sdjwt } = await verifierFor(s.tenant.tenant.issuer, fetchVia(s.port));
    const presentation = await sdjwt.present(credential, { email: true } as never);
    const verified = await sdjwt.verify(presentation);
    assert.equal(verified.payload.iss, s.tenant.tenant.issuer);
    assert.equal(verified.payload.vct, 'urn:keyhall:credential:OrganizationMembership');
    assert.equal((verified.payload as Record<string, unknown>).email, o.email);
    assert.equal((verified.payload as Record<string, unknown>).role, undefined, 'undisclosed claim stays hidden');
    assert.deepEqual((verified.payload.cnf as { jwk: Record<string, unknown> }).jwk, { kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x });

    const list = await o.api('GET', `/organizations/${o.orgId}/credentials`);
    assert.equal(list.status, 200, list.text);
    const vc = list.json().data[0];
    assert.equal(vc.subject, key.didJwk);
    const revoked = await o.api('POST', `/organizations/${o.orgId}/credentials/${vc.id}/revoke`);
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(revoked.json().status, 'revoked');
    await assert.rejects(sdjwt.verify(presentation), /Status is not valid/);
  });
});
