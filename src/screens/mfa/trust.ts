/**
 * Attestation trust anchors for passkey registration: the operator's PEM roots
 * (KEYHALL_WEBAUTHN_TRUST_ANCHORS) replace the library's defaults for every attestation format,
 * so an attestation statement verifies only if its chain ends at one of them. Process-wide, like
 * the configuration it comes from.
 */
import fs from 'node:fs';
import { SettingsService } from '@simplewebauthn/server';
import type { Config } from '../../config/index.js';

const FORMATS = ['packed', 'fido-u2f', 'tpm', 'android-key', 'android-safetynet', 'apple'] as const;

/** The PEM certificate blocks of a file's text. */
export function pemCertificates(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** Installs the configured anchors; true when there are any. Throws on an unreadable or empty file (a startup error). */
export function configureAttestationTrust(config: Pick<Config, 'webauthnTrustAnchors'>): boolean {
  if (!config.webauthnTrustAnchors) return false;
  const certificates = pemCertificates(fs.readFileSync(config.webauthnTrustAnchors, 'utf8'));
  if (certificates.length === 0) throw new Error(`KEYHALL_WEBAUTHN_TRUST_ANCHORS: no PEM certificate in ${config.webauthnTrustAnchors}`);
  for (const identifier of FORMATS) SettingsService.setRootCertificates({ identifier, certificates });
  return true;
}
