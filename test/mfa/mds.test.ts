/**
 * KEYHALL_WEBAUTHN_MDS_FILE over HTTP with the software authenticator (always `none`
 * attestation): a model the BLOB reports revoked or compromised is refused at registration,
 * allowlist or not; other models register as before; under an organization allowlist, a `packed`
 * attestation (the emulator's response re-signed with a test maker's batch key) is verified
 * against the roots the BLOB lists for its AAGUID; a BLOB that does not verify is refused.
 * (With Chromium's virtual authenticator: test/mfa/attestation.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AuthenticatorEmulator, PasskeysCredentialsMemoryRepository, WebAuthnEmulator } from 'nid-webauthn-emulator';
import { loadMetadata } from '../../src/screens/mfa/metadata.js';
import { v1 } from '../helpers/v1.js';
import { decodeEntities, type SigninTestServer, signIn, startSigninServer } from '../signin/helpers.js';
import { entry, testAttestationCa, testMds } from './mds-helpers.js';

const REVOKED = '4e49442d-4155-5448-2d33-313431353932';
const FINE = '4e49442d-4155-5448-2d33-313431353933';
/** Models on the organization's allowlist: the BLOB lists the maker's root for ATTESTED, an unrelated root for MISMATCHED, nothing for UNLISTED. */
const ATTESTED = '4e49442d-4155-5448-2d33-313431353934';
const MISMATCHED = '4e49442d-4155-5448-2d33-313431353935';
const UNLISTED = '4e49442d-4155-5448-2d33-313431353936';
const aaguidBytes = (a: string) => new Uint8Array(Buffer.from(a.replace(/-/g, ''), 'hex'));
const emulator = (aaguid: string) =>
  new WebAuthnEmulator(new AuthenticatorEmulator({ aaguid: aaguidBytes(aaguid), credentialsRepository: new PasskeysCredentialsMemoryRepository() }));
const csrfOf = (html: string) => decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(html)![1]!);

describe('FIDO MDS BLOB at registration (nid-webauthn-emulator)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keyhall-mds-'));
  let s: SigninTestServer;
  let mds: Awaited<ReturnType<typeof testMds>>;
  let maker: Awaited<ReturnType<typeof testAttestationCa>>;
  let org: string;

  before(async () => {
    mds = await testMds();
    maker = await testAttestationCa();
    const unrelated = await testAttestationCa();
    writeFileSync(path.join(dir, 'root.pem'), mds.rootPem);
    writeFileSync(
      path.join(dir, 'blob.jwt'),
      await mds.blob([
        entry(REVOKED, [], ['FIDO_CERTIFIED', 'REVOKED']),
        entry(FINE, []),
        entry(ATTESTED, [maker.rootPem]),
        entry(MISMATCHED, [unrelated.rootPem]),
      ]),
    );
    s = await startSigninServer({ localhost: true, config: { webauthnMdsFile: path.join(dir, 'blob.jwt'), webauthnMdsRoot: path.join(dir, 'root.pem') } });
    const api = v1(s, s.tenant.platformApiKey);
    org = (await api('POST', '/organizations', { name: 'Attested' })).json().id;
    assert.equal((await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [ATTESTED, MISMATCHED, UNLISTED] })).status, 200);
  });
  after(() => s.close());

  const users = new Map<string, { b: ReturnType<SigninTestServer['browser']>; csrf: string }>();
  /** Registers a passkey of the model `aaguid` for `email` (created on first use, in the organization when `member`); `packed` signs the attestation with the maker's batch key. */
  async function register(email: string, aaguid: string, opts: { member?: boolean; packed?: boolean } = {}) {
    if (!users.has(email)) {
      const user = await s.createUser(email);
      if (opts.member) assert.equal((await v1(s, s.tenant.platformApiKey)('POST', `/organizations/${org}/members`, { user_id: user.id })).status, 201);
      const b = s.browser();
      assert.equal((await signIn(b, '/login?return_to=%2Fmfa', email)).headers.location, '/mfa');
      users.set(email, { b, csrf: csrfOf((await b.get('/mfa')).text) });
    }
    const { b, csrf } = users.get(email)!;
    const options = await b.post('/mfa/passkeys/options', { csrf_token: csrf });
    assert.equal(options.status, 200, options.text);
    const response = emulator(aaguid).createJSON(s.tenant.tenant.issuer, options.json());
    return b.post('/mfa/passkeys', { csrf_token: csrf, credential: JSON.stringify(opts.packed ? maker.packed(response) : response) });
  }

  it('refuses a model the BLOB reports revoked (no allowlist needed) and audits passkey.rejected; another model registers', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const refused = await register('revoked@example.com', REVOKED);
    assert.equal(refused.status, 403);
    assert.match(refused.text, /reported revoked or compromised \(REVOKED\)/);
    const rejected = (await api('GET', '/events?types=passkey.rejected'))
      .json()
      .data.filter((e: { data: { reason: string } }) => e.data.reason === 'authenticator_revoked');
    assert.equal(rejected.length, 1);
    assert.deepEqual(
      { ...rejected[0].data, user_id: undefined },
      { user_id: undefined, aaguid: REVOKED, organization_id: null, reason: 'authenticator_revoked', status: 'REVOKED' },
    );

    const ok = await register('fine@example.com', FINE);
    assert.equal(ok.status, 303, ok.text.slice(0, 300));
    const registered = (await api('GET', '/events?types=passkey.registered')).json().data;
    assert.equal(registered[0].data.aaguid, FINE);
    // `none` attestation without an allowlist: nothing verified, as without a BLOB.
    assert.equal(registered[0].data.attestation_verified, false);
  });

  it("under an allowlist, a packed attestation chaining to the root the BLOB lists for its AAGUID is verified; another AAGUID's roots, an AAGUID the BLOB lacks, and none attestation are refused", async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const EMAIL = 'attested@example.com';
    const ok = await register(EMAIL, ATTESTED, { member: true, packed: true });
    assert.equal(ok.status, 303, ok.text.slice(0, 400));
    const registered = (await api('GET', '/events?types=passkey.registered'))
      .json()
      .data.filter((e: { data: { aaguid: string } }) => e.data.aaguid === ATTESTED);
    assert.equal(registered.length, 1);
    assert.equal(registered[0].data.attestation_format, 'packed');
    assert.equal(registered[0].data.attestation_verified, true);

    for (const [aaguid, packed] of [
      [MISMATCHED, true],
      [UNLISTED, true],
      [ATTESTED, false],
    ] as const) {
      const refused = await register(EMAIL, aaguid, { packed });
      assert.equal(refused.status, 403, `${aaguid} packed=${packed}: ${refused.text.slice(0, 300)}`);
      assert.match(refused.text, /could not be verified/);
    }
    const rejected = (await api('GET', `/events?types=passkey.rejected&organization_id=${org}`)).json().data;
    assert.deepEqual(
      rejected.map((e: { data: { aaguid: string; reason: string } }) => [e.data.aaguid, e.data.reason]),
      [
        [MISMATCHED, 'attestation_not_verified'],
        [UNLISTED, 'attestation_not_verified'],
        [ATTESTED, 'attestation_not_verified'],
      ],
    );
    // Only the verified one was stored.
    assert.deepEqual(
      (await api('GET', `/users/${registered[0].data.user_id}/passkeys`)).json().data.map((p: { aaguid: string }) => p.aaguid),
      [ATTESTED],
    );
  });

  it('a BLOB that does not verify (another root, or tampered) is refused by the loader that stops the start', async () => {
    // loadMetadata is what createContext awaits; called directly so that no half-started server
    // (its temp directory or PostgreSQL database) is left behind.
    const stranger = await testMds();
    writeFileSync(path.join(dir, 'stranger.pem'), stranger.rootPem);
    await assert.rejects(
      loadMetadata({ webauthnMdsFile: path.join(dir, 'blob.jwt'), webauthnMdsRoot: path.join(dir, 'stranger.pem') }, Date.now()),
      /KEYHALL_WEBAUTHN_MDS_FILE .*does not verify to an MDS root/,
    );
    const [h, , sig] = (await mds.blob([entry(REVOKED, [])])).split('.');
    writeFileSync(
      path.join(dir, 'tampered.jwt'),
      `${h}.${Buffer.from(JSON.stringify({ no: 9, nextUpdate: '2099-01-01', entries: [] })).toString('base64url')}.${sig}`,
    );
    await assert.rejects(
      loadMetadata({ webauthnMdsFile: path.join(dir, 'tampered.jwt'), webauthnMdsRoot: path.join(dir, 'root.pem') }, Date.now()),
      /KEYHALL_WEBAUTHN_MDS_FILE .*signature or contents are invalid/,
    );
    await assert.rejects(loadMetadata({ webauthnMdsFile: path.join(dir, 'missing.jwt') }, Date.now()), /ENOENT/);
    assert.equal(await loadMetadata({}, Date.now()), undefined);
  });
});
