import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { ManualClock } from '../../src/kernel/clock.js';
import { fetchVia } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { holderKey, membershipOffer, orgWithMember, receiveCredential, verifierFor } from './helpers.js';

const DAY = 24 * 3600 * 1000;

describe('credentials outlive a key rotation', () => {
  let s: TestServer;
  const clock = new ManualClock();
  before(async () => {
    s = await startTestServer({ clock, tenantHost: 'issuer.test' });
  });
  after(() => s.close());

  it("a rotated key stays in jwt-vc-issuer until the last credential it signed expires, not only for the rotation's overlap", async () => {
    const o = await orgWithMember(s);
    const offer = await membershipOffer(o);
    const key = await holderKey();
    // The wallet dates its proof by the real clock: the server's stands there too when it checks.
    clock.set(Date.now());
    const { res } = await receiveCredential(s, offer.credential_offer_link, offer.tx_code, key);
    assert.equal(res.ok, true, JSON.stringify(res));
    const credential = (res as { credentialResponse: { credentials: Array<{ credential: string }> } }).credentialResponse.credentials[0]!.credential;
    const signer = decodeProtectedHeader(credential.split('~')[0]!).kid!;

    await s.server.ctx.tenants.rotateKeys(s.tenant.tenant.id, ['EdDSA']);
    clock.advance(s.config.keyOverlapSeconds * 1000 + DAY * 3);

    const jwks = (await (await fetchVia(s.port)(`${s.tenant.tenant.issuer}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
    assert.equal(
      jwks.keys.some((k) => k.kid === signer),
      false,
      'the token JWKS dropped the key after its overlap',
    );
    const { meta } = await verifierFor(s.tenant.tenant.issuer, fetchVia(s.port));
    const published = meta.jwks.keys.find((k) => k.kid === signer);
    assert.ok(published, 'jwt-vc-issuer still lists the key that signed a live credential');
    assert.equal(meta.jwks.keys.length, 3, 'the active keys (EdDSA, RS256) and the retired signer');
    // The issuer signature checks out with the published key (the status list, signed at the
    // advanced test time, is not what this checks).
    const { payload } = await compactVerify(credential.split('~')[0]!, await importJWK(published, 'EdDSA'));
    assert.equal(JSON.parse(Buffer.from(payload).toString()).iss, s.tenant.tenant.issuer);

    // The membership credential lives a year; a day after it expired the key is gone.
    clock.advance(366 * DAY);
    const later = await verifierFor(s.tenant.tenant.issuer, fetchVia(s.port));
    assert.equal(
      later.meta.jwks.keys.some((k) => k.kid === signer),
      false,
    );
    assert.equal(later.meta.jwks.keys.length, 2);
  });
});
