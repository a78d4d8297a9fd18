/**
 * Attestation trust anchors for passkey registration (KEYHALL_WEBAUTHN_TRUST_ANCHORS: a PEM file of
 * root certificates). @simplewebauthn/server verifies the attestation signature with the
 * statement's leaf certificate; this module decides whether that chain is anchored: every
 * certificate is within its validity period and signed by the next (which must be a CA), and the
 * chain either contains an anchor (byte for byte: authenticators whose batch certificate is itself
 * the root) or ends in a certificate an anchor issued and signed (Chromium's virtual
 * authenticator: its batch certificate, the anchor, signs each attestation certificate).
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import type { Config } from '../../config/index.js';

/** The PEM certificate blocks of a file's text. */
export function pemCertificates(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** The configured anchors (none when unset). An unreadable file or one without a certificate stops the start. */
export function loadTrustAnchors(config: Pick<Config, 'webauthnTrustAnchors'>): X509Certificate[] {
  if (!config.webauthnTrustAnchors) return [];
  const certificates = pemCertificates(fs.readFileSync(config.webauthnTrustAnchors, 'utf8')).map((pem) => new X509Certificate(pem));
  if (certificates.length === 0) throw new Error(`KEYHALL_WEBAUTHN_TRUST_ANCHORS: no PEM certificate in ${config.webauthnTrustAnchors}`);
  return certificates;
}

const valid = (c: X509Certificate, now: number) => Date.parse(c.validFrom) <= now && now <= Date.parse(c.validTo);
/** Issued and signed by `issuer`, which must be a CA. */
const signedBy = (c: X509Certificate, issuer: X509Certificate) => c.checkIssued(issuer) && c.verify(issuer.publicKey);
/**
 * A certificate inside the presented chain may issue only if it is a CA. An anchor is trusted as
 * the operator configured it: Chromium's virtual-authenticator batch certificate, for one, issues
 * its attestation certificates without being marked a CA.
 */
const signedByCa = (c: X509Certificate, issuer: X509Certificate) => issuer.ca && signedBy(c, issuer);

/** Whether an attestation statement's x5c chain (leaf first, DER) verifies to one of the anchors at `now`. */
export function chainVerifies(x5c: Uint8Array[], anchors: X509Certificate[], now: number): boolean {
  if (x5c.length === 0 || anchors.length === 0) return false;
  let chain: X509Certificate[];
  try {
    chain = x5c.map((der) => new X509Certificate(Buffer.from(der)));
  } catch {
    return false;
  }
  for (let i = 0; i < chain.length; i++) {
    const cert = chain[i]!;
    if (!valid(cert, now)) return false;
    if (anchors.some((a) => a.raw.equals(cert.raw))) return true;
    const next = chain[i + 1];
    if (next && !signedByCa(cert, next)) return false;
  }
  const last = chain[chain.length - 1]!;
  return anchors.some((a) => valid(a, now) && signedBy(last, a));
}
