/**
 * KEYHALL_WEBAUTHN_MDS_FILE over HTTP with the software authenticator (always `none`
 * attestation): a model the BLOB reports revoked or compromised is refused at registration,
 * allowlist or not; other models register as before; a BLOB that does not verify is refused.
 * (Attestation chains to the BLOB's per-AAGUID roots: test/mfa/attestation.test.ts, chromium.)
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
import { entry, testMds } from './mds-helpers.js';

const REVOKED = '4e49442d-4155-5448-2d33-313431353932';
const FINE = '4e49442d-4155-5448-2d33-313431353933';
const aaguidBytes = (a: string) => new Uint8Array(Buffer.from(a.replace(/-/g, ''), 'hex'));
const emulator = (aaguid: string) => new WebAuthnEmulator(new AuthenticatorEmulator({ aaguid: aaguidBytes(aaguid), credentialsRepository: new PasskeysCredentialsMemoryRepository() }));
const csrfOf = (html: string) => decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(html)![1]!);

describe('FIDO MDS BLOB at registration (nid-webauthn-emulator)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keyhall-mds-'));
  let s: SigninTestServer;
  let mds: Awaited<ReturnType<typeof testMds>>;

  before(async () => {
    mds = await testMds();
    writeFileSync(path.join(dir, 'root.pem'), mds.rootPem);
    writeFileSync(path.join(dir, 'blob.jwt'), await mds.blob([entry(REVOKED, [], ['FIDO_CERTIFIED', 'REVOKED']), entry(FINE, [])]));
    s = await startSigninServer({ localhost: true, config: { webauthnMdsFile: path.join(dir, 'blob.jwt'), webauthnMdsRoot: path.join(dir, 'root.pem') } });
  });
  after(() => s.close());

  async function register(email: string, aaguid: string) {
    await s.createUser(email);
    const b = s.browser();
    assert.equal((await signIn(b, '/login?return_to=%2Fmfa', email)).headers.location, '/mfa');
    const csrf = csrfOf((await b.get('/mfa')).text);
    const options = await b.post('/mfa/passkeys/options', { csrf_token: csrf });
    assert.equal(options.status, 200, options.text);
    return b.post('/mfa/passkeys', { csrf_token: csrf, credential: JSON.stringify(emulator(aaguid).createJSON(s.tenant.tenant.issuer, options.json())) });
  }

  it('refuses a model the BLOB reports revoked (no allowlist needed) and audits passkey.rejected; another model registers', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const refused = await register('revoked@example.com', REVOKED);
    assert.equal(refused.status, 403);
    assert.match(refused.text, /reported revoked or compromised \(REVOKED\)/);
    const rejected = (await api('GET', '/events?types=passkey.rejected')).json().data;
    assert.equal(rejected.length, 1);
    assert.deepEqual({ ...rejected[0].data, user_id: undefined }, { user_id: undefined, aaguid: REVOKED, organization_id: null, reason: 'authenticator_revoked', status: 'REVOKED' });

    const ok = await register('fine@example.com', FINE);
    assert.equal(ok.status, 303, ok.text.slice(0, 300));
    const registered = (await api('GET', '/events?types=passkey.registered')).json().data;
    assert.equal(registered[0].data.aaguid, FINE);
    // `none` attestation without an allowlist: nothing verified, as without a BLOB.
    assert.equal(registered[0].data.attestation_verified, false);
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
    writeFileSync(path.join(dir, 'tampered.jwt'), `${h}.${Buffer.from(JSON.stringify({ no: 9, nextUpdate: '2099-01-01', entries: [] })).toString('base64url')}.${sig}`);
    await assert.rejects(loadMetadata({ webauthnMdsFile: path.join(dir, 'tampered.jwt'), webauthnMdsRoot: path.join(dir, 'root.pem') }, Date.now()), /KEYHALL_WEBAUTHN_MDS_FILE .*signature or contents are invalid/);
    await assert.rejects(loadMetadata({ webauthnMdsFile: path.join(dir, 'missing.jwt') }, Date.now()), /ENOENT/);
    assert.equal(await loadMetadata({}, Date.now()), undefined);
  });
});
