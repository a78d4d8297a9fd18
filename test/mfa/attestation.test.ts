/**
 * Attestation with operator trust anchors (KEYHALL_WEBAUTHN_TRUST_ANCHORS): under an AAGUID
 * allowlist the registration asks for `direct` attestation; Chromium's virtual authenticator
 * answers with a `packed` statement whose chain is its self-signed batch certificate. Accepted
 * (attestation_verified true) when the anchors hold that root, refused when they do not.
 * The same with a FIDO MDS BLOB whose entry for that AAGUID lists the root (or another one).
 * Skipped only when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { v1 } from '../helpers/v1.js';
import { type SigninTestServer, startSigninServer } from '../signin/helpers.js';
import { entry, testMds } from './mds-helpers.js';
import { CHROMIUM, launch, passwordToMfa, VIRTUAL_AAGUID, virtualAuthenticator } from './browser-helpers.js';

const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';

/** Chromium's virtual-authenticator batch certificate (self-signed: it is its own root). */
const CHROMIUM_BATCH_ROOT = `-----BEGIN CERTIFICATE-----
MIIB1TCCAXqgAwIBAgIBATAKBggqhkjOPQQDAjBgMQswCQYDVQQGEwJVUzERMA8G
A1UECgwIQ2hyb21pdW0xIjAgBgNVBAsMGUF1dGhlbnRpY2F0b3IgQXR0ZXN0YXRp
b24xGjAYBgNVBAMMEUJhdGNoIENlcnRpZmljYXRlMB4XDTE3MDcxNDAyNDAwMFoX
DTQ2MTExOTAwNTIwOVowYDELMAkGA1UEBhMCVVMxETAPBgNVBAoMCENocm9taXVt
MSIwIAYDVQQLDBlBdXRoZW50aWNhdG9yIEF0dGVzdGF0aW9uMRowGAYDVQQDDBFC
YXRjaCBDZXJ0aWZpY2F0ZTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABI1hfmXJ
UI5kvMVnOsgqZ5naPBRGaCwljEY//99Y39L6Pmw3i1PXlcSk3/tBme3Xhi8jq68C
A7S4kRugVpmU4QGjJTAjMAwGA1UdEwEB/wQCMAAwEwYLKwYBBAGC5RwCAQEEBAMC
AwgwCgYIKoZIzj0EAwIDSQAwRgIhALBVElmpfYMFXjYWrEkYrmWQFgaz0N4E1MuP
ECYPDWzaAiEAipnu30YuN7BM9faEXF4zXWOymAF0eVO72xXsRQSkrC0=
-----END CERTIFICATE-----
`;

/** An unrelated root (made with openssl for this test). */
const OTHER_ROOT = `-----BEGIN CERTIFICATE-----
MIIBoDCCAUegAwIBAgIUfpHK3/p/1bAa5zIBremIyy70GxQwCgYIKoZIzj0EAwIw
JTEjMCEGA1UEAwwaVW5yZWxhdGVkIGF0dGVzdGF0aW9uIHJvb3QwIBcNMjYxMTI0
MDA1NDQyWhgPMjEyNjEwMzEwMDU0NDJaMCUxIzAhBgNVBAMMGlVucmVsYXRlZCBh
dHRlc3RhdGlvbiByb290MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEVaeW0Q8q
tvSH4uTpeafU9zeTX8D/7aI9wJXFW1pXTe3ftCxMolFZtfBYOVVGzOhxdVcZLc+Q
d50+yKupHa86z6NTMFEwHQYDVR0OBBYEFH4NZBHAcuo/KWp1Gls8pDFrHaRqMB8G
A1UdIwQYMBaAFH4NZBHAcuo/KWp1Gls8pDFrHaRqMA8GA1UdEwEB/wQFMAMBAf8w
CgYIKoZIzj0EAwIDRwAwRAIgaFaFC0jFI+zqLADEAORYP0aSglUd8aLTsmjNXjZU
bwwCICU8bIl+Q0uB3k6LiFyb/uvjww+hPwrw6r78kQKETeF7
-----END CERTIFICATE-----
`;

describe('passkey attestation verified against trust anchors (chromium)', { skip }, () => {
  let browser: Awaited<ReturnType<typeof launch>>;
  const servers: SigninTestServer[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keyhall-anchors-'));
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
  });

  /** A server trusting `pem`, a user in an organization whose allowlist holds the virtual authenticator; registers on /mfa. */
  async function registerUnder(pem: string, name: string) {
    const file = path.join(dir, `${name}.pem`);
    writeFileSync(file, pem);
    return registerWith({ webauthnTrustAnchors: file }, name);
  }

  /** The same under a FIDO MDS BLOB (signed by a test MDS root) that lists `roots` for the virtual authenticator's AAGUID. */
  async function registerUnderMds(roots: string[], name: string) {
    const mds = await testMds();
    writeFileSync(path.join(dir, `${name}-root.pem`), mds.rootPem);
    writeFileSync(path.join(dir, `${name}.jwt`), await mds.blob([entry(VIRTUAL_AAGUID, roots)]));
    return registerWith({ webauthnMdsFile: path.join(dir, `${name}.jwt`), webauthnMdsRoot: path.join(dir, `${name}-root.pem`) }, name);
  }

  async function registerWith(config: Record<string, string>, name: string) {
    const s = await startSigninServer({ localhost: true, config });
    servers.push(s);
    const api = v1(s, s.tenant.platformApiKey);
    const user = await s.createUser(`${name}@example.com`);
    const org = (await api('POST', '/organizations', { name })).json().id;
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user.id })).status, 201);
    assert.equal((await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [VIRTUAL_AAGUID] })).status, 200);
    const page = await browser.context.newPage();
    await virtualAuthenticator(browser.context, page);
    await passwordToMfa(page, s.issuer, user.email);
    await Promise.all([page.waitForSelector('[data-passkey], #mfa-error'), page.click('#passkey-register')]);
    return { s, api, user, page };
  }

  it("accepts the virtual authenticator's packed attestation when its root is a trust anchor (attestation_verified true)", async () => {
    const { api, user, page } = await registerUnder(CHROMIUM_BATCH_ROOT, 'trusted');
    assert.equal(await page.locator('#mfa-error').count(), 0);
    const list = (await api('GET', `/users/${user.id}/passkeys`)).json().data;
    assert.equal(list.length, 1);
    assert.equal(list[0].aaguid, VIRTUAL_AAGUID);
    assert.equal(list[0].attestation_verified, true);
    const registered = (await api('GET', '/events?types=passkey.registered')).json().data;
    assert.equal(registered[0].data.attestation_format, 'packed');
    await page.close();
  });

  it("KEYHALL_WEBAUTHN_MDS_FILE: the BLOB's attestation roots for the AAGUID are trust anchors (attestation_verified true)", async () => {
    const { api, user, page } = await registerUnderMds([CHROMIUM_BATCH_ROOT], 'mds-trusted');
    assert.equal(await page.locator('#mfa-error').count(), 0);
    const list = (await api('GET', `/users/${user.id}/passkeys`)).json().data;
    assert.equal(list.length, 1);
    assert.equal(list[0].attestation_verified, true);
    await page.close();
  });

  it('KEYHALL_WEBAUTHN_MDS_FILE: refused when the BLOB lists other roots for the AAGUID', async () => {
    const { api, user, page } = await registerUnderMds([OTHER_ROOT], 'mds-untrusted');
    assert.match((await page.locator('#mfa-error').textContent()) ?? '', /could not be verified/);
    assert.equal((await api('GET', `/users/${user.id}/passkeys`)).json().data.length, 0);
    assert.equal((await api('GET', '/events?types=passkey.rejected')).json().data[0].data.reason, 'attestation_not_verified');
    await page.close();
  });

  it('refuses it when the anchors do not include its root, even though the AAGUID is on the list', async () => {
    const { api, user, page } = await registerUnder(OTHER_ROOT, 'untrusted');
    assert.match((await page.locator('#mfa-error').textContent()) ?? '', /could not be verified/);
    assert.equal((await api('GET', `/users/${user.id}/passkeys`)).json().data.length, 0);
    const rejected = (await api('GET', '/events?types=passkey.rejected')).json().data;
    assert.equal(rejected[0].data.reason, 'attestation_not_verified');
    await page.close();
  });
});
