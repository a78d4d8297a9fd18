import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompactSign, SignJWT } from 'jose';
import { mdsRoots, verifyMdsBlob, warnIfStale } from '../../src/screens/mfa/metadata.js';
import { X509Certificate } from 'node:crypto';
import { entry, testMds } from '../mfa/mds-helpers.js';

const AAGUID = '01020304-0506-0708-0102-030405060708';
const OTHER = 'cb69481e-8ff7-4039-93ec-0a2729a154a8';

/** The FIDO MDS BLOB verified offline: chain to the MDS root, JWS signature (jose), entries, nextUpdate. */
describe('FIDO MDS BLOB (offline verification)', () => {
  it('verifies a BLOB chained to the configured root: per-AAGUID roots and refusing statuses; entries without an AAGUID are skipped', async () => {
    const mds = await testMds();
    const other = await testMds();
    const blob = await mds.blob(
      [
        entry(AAGUID.toUpperCase(), [other.rootPem]),
        entry(OTHER, [], ['FIDO_CERTIFIED', 'USER_VERIFICATION_BYPASS', 'UPDATE_AVAILABLE']),
        { aaid: '4e4e#4005', statusReports: [] },
        { ...entry('00000000-0000-0000-0000-000000000001', []), statusReports: [{ status: 'REVOKED' }] },
      ],
      { no: 42, nextUpdate: '2099-01-31' },
    );
    const m = await verifyMdsBlob(blob, [new X509Certificate(mds.rootPem)], Date.now());
    assert.equal(m.no, 42);
    assert.equal(m.nextUpdate, Date.parse('2099-01-31T00:00:00Z'));
    assert.equal(m.entries.size, 3);
    assert.equal(m.entries.get(AAGUID)!.roots.length, 1);
    assert.ok(m.entries.get(AAGUID)!.roots[0]!.raw.equals(new X509Certificate(other.rootPem).raw));
    assert.equal(m.entries.get(AAGUID)!.refusedStatus, null);
    assert.equal(m.entries.get(OTHER)!.refusedStatus, 'USER_VERIFICATION_BYPASS');
    assert.equal(m.entries.get('00000000-0000-0000-0000-000000000001')!.refusedStatus, 'REVOKED');
  });

  it('refuses a BLOB whose chain does not reach the root, an expired signer, an intermediate that is not a CA, or no x5c', async () => {
    const mds = await testMds();
    const stranger = await testMds();
    const blob = await mds.blob([entry(AAGUID, [])]);
    await assert.rejects(verifyMdsBlob(blob, [new X509Certificate(stranger.rootPem)], Date.now()), /does not verify to an MDS root/);
    // The library's default MDS roots (GlobalSign) do not vouch for a test CA.
    await assert.rejects(verifyMdsBlob(blob, await mdsRoots({}), Date.now()), /does not verify to an MDS root/);
    // Two years on, every certificate has expired.
    await assert.rejects(verifyMdsBlob(blob, [new X509Certificate(mds.rootPem)], Date.now() + 2 * 365 * 86_400_000), /does not verify/);
    const expiring = await testMds({ leafNotAfter: Date.now() + 3_600_000 });
    await assert.rejects(verifyMdsBlob(await expiring.blob([]), [new X509Certificate(expiring.rootPem)], Date.now() + 2 * 3_600_000), /does not verify/);
    const notCa = await testMds({ intermediateIsCa: false });
    await assert.rejects(verifyMdsBlob(await notCa.blob([]), [new X509Certificate(notCa.rootPem)], Date.now()), /does not verify/);
    const noX5c = await new SignJWT({ no: 1, nextUpdate: '2099-01-01', entries: [] }).setProtectedHeader({ alg: 'ES256' }).sign(mds.signerKey);
    await assert.rejects(verifyMdsBlob(noX5c, [new X509Certificate(mds.rootPem)], Date.now()), /x5c/);
    await assert.rejects(verifyMdsBlob('not a jwt', [new X509Certificate(mds.rootPem)], Date.now()), /not a FIDO MDS BLOB/);
  });

  it('refuses a tampered payload, a signature by another key, an algorithm outside RSA/ECDSA, and a malformed payload', async () => {
    const mds = await testMds();
    const roots = [new X509Certificate(mds.rootPem)];
    const blob = await mds.blob([entry(AAGUID, [])]);
    const [h, , sig] = blob.split('.');
    const forged = Buffer.from(JSON.stringify({ no: 2, nextUpdate: '2099-01-01', entries: [entry(AAGUID, [], ['REVOKED'])] })).toString('base64url');
    await assert.rejects(verifyMdsBlob(`${h}.${forged}.${sig}`, roots, Date.now()), /signature or contents are invalid/);
    const other = await testMds();
    const wrongKey = await new CompactSign(new TextEncoder().encode('{"no":1,"nextUpdate":"2099-01-01","entries":[]}'))
      .setProtectedHeader({ alg: 'ES256', x5c: mds.x5c })
      .sign(other.signerKey);
    await assert.rejects(verifyMdsBlob(wrongKey, roots, Date.now()), /signature or contents are invalid/);
    const hmac = await new CompactSign(new TextEncoder().encode('{"no":1,"nextUpdate":"2099-01-01","entries":[]}'))
      .setProtectedHeader({ alg: 'HS256', x5c: mds.x5c })
      .sign(new Uint8Array(32));
    await assert.rejects(verifyMdsBlob(hmac, roots, Date.now()), /signature or contents are invalid/);
    await assert.rejects(verifyMdsBlob(await mds.blob([], { payload: { nextUpdate: 'soon' } }), roots, Date.now()), /signature or contents are invalid/);
    await assert.rejects(verifyMdsBlob(await mds.blob([{ aaguid: AAGUID, statusReports: 'revoked' }]), roots, Date.now()), /signature or contents are invalid/);
  });

  it('the default MDS roots are the ones @simplewebauthn/server ships (GlobalSign Root CA - R3 among them)', async () => {
    const subjects = (await mdsRoots({})).map((c) => c.subject);
    assert.ok(
      subjects.some((s) => /GlobalSign Root CA - R3/.test(s)),
      subjects.join(' | '),
    );
  });

  it('reports a BLOB past its nextUpdate', async () => {
    const mds = await testMds();
    const m = await verifyMdsBlob(await mds.blob([], { nextUpdate: '2026-01-31', no: 7 }), [new X509Certificate(mds.rootPem)], Date.now());
    const warnings: unknown[] = [];
    const log = { warn: (o: unknown) => void warnings.push(o) };
    assert.equal(warnIfStale(m, Date.parse('2026-01-30T23:59:59Z'), log), false);
    assert.equal(warnIfStale(m, Date.parse('2026-01-31T00:00:00Z'), log), true);
    assert.deepEqual(warnings, [{ mds_no: 7, next_update: '2026-01-31' }]);
  });
});
