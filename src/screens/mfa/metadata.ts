/**
 * The FIDO Metadata Service BLOB (KEYHALL_WEBAUTHN_MDS_FILE), verified offline at start:
 *
 * - the JWT's `x5c` chain verifies to an MDS root: by default the roots @simplewebauthn/server
 *   ships for MDS (GlobalSign Root CA - R3 and Root R46), or those of KEYHALL_WEBAUTHN_MDS_ROOT;
 *   every certificate within its validity period, each signed by the next, issuers CAs. No CRL is
 *   fetched (offline by design: the library's verifyMDSBlob fetches them, so it is not used);
 * - the JWS signature verifies with the leaf certificate's key (jose);
 * - `nextUpdate` is read: a BLOB past it is logged as stale (at start and once when it becomes
 *   stale while running) and still used — its roots do not stop being roots, but its status
 *   reports may be out of date, so refresh the file;
 * - per AAGUID: the metadata statement's `attestationRootCertificates` (trust anchors for that
 *   authenticator model's attestations) and whether a status report refuses it (revoked or
 *   compromised).
 *
 * A file that does not verify stops the start. docs/passkeys.md.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../kernel/logging.js';
import { chainVerifies, pemCertificates } from './trust.js';

/** Status reports that refuse an authenticator model (the library's "compromised" list, and REVOKED). */
export const REFUSING_STATUSES = new Set([
  'REVOKED',
  'USER_VERIFICATION_BYPASS',
  'ATTESTATION_KEY_COMPROMISE',
  'USER_KEY_REMOTE_COMPROMISE',
  'USER_KEY_PHYSICAL_COMPROMISE',
]);

/** JWS algorithms of MDS BLOBs (RSA and ECDSA; never `none` or HMAC). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

export interface MdsEntry {
  /** The statement's attestation roots (empty when the entry has no statement). */
  roots: X509Certificate[];
  /** The first status report that refuses the model, or null. */
  refusedStatus: string | null;
}

export interface FidoMetadata {
  /** The BLOB's serial number. */
  no: number;
  /** `nextUpdate` as epoch ms (start of that day, UTC). */
  nextUpdate: number;
  /** Entries by lower-case AAGUID. */
  entries: Map<string, MdsEntry>;
}

const payloadSchema = z
  .object({
    no: z.number().int(),
    nextUpdate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    entries: z.array(
      z
        .object({
          aaguid: z.string().optional(),
          metadataStatement: z
            .object({ attestationRootCertificates: z.array(z.string()).default([]) })
            .loose()
            .optional(),
          statusReports: z.array(z.object({ status: z.string() }).loose()).default([]),
        })
        .loose(),
    ),
  })
  .loose();

const der = (base64: string) => Buffer.from(base64, 'base64');

/** The MDS roots: KEYHALL_WEBAUTHN_MDS_ROOT's certificates, or the library's defaults. */
export async function mdsRoots(config: Pick<Config, 'webauthnMdsRoot'>): Promise<X509Certificate[]> {
  // The library is loaded only when an MDS file is configured (src/screens/mfa/service.ts).
  const pems = config.webauthnMdsRoot
    ? pemCertificates(fs.readFileSync(config.webauthnMdsRoot, 'utf8'))
    : (await import('@simplewebauthn/server')).SettingsService.getRootCertificates({ identifier: 'mds' });
  if (pems.length === 0) throw new Error(`KEYHALL_WEBAUTHN_MDS_ROOT: no PEM certificate in ${config.webauthnMdsRoot}`);
  return pems.map((pem) => new X509Certificate(pem));
}

/** Verifies a BLOB (the JWT text) against the roots at `now`; throws with the reason when it does not verify. */
export async function verifyMdsBlob(blob: string, roots: X509Certificate[], now: number): Promise<FidoMetadata> {
  let x5c: Buffer[];
  try {
    const header = decodeProtectedHeader(blob.trim());
    if (!Array.isArray(header.x5c) || header.x5c.length === 0) throw new Error('no x5c header');
    x5c = header.x5c.map(der);
  } catch (err) {
    throw new Error(`not a FIDO MDS BLOB (a JWT with an x5c header): ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!chainVerifies(x5c, roots, now)) throw new Error("the BLOB's certificate chain does not verify to an MDS root (or a certificate is expired)");
  let payload: z.infer<typeof payloadSchema>;
  try {
    const { payload: bytes } = await compactVerify(blob.trim(), new X509Certificate(x5c[0]!).publicKey, { algorithms: ALGORITHMS });
    payload = payloadSchema.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (err) {
    throw new Error(`the BLOB's signature or contents are invalid: ${err instanceof Error ? err.message : String(err)}`);
  }
  const entries = new Map<string, MdsEntry>();
  for (const e of payload.entries) {
    if (!e.aaguid) continue; // U2F and UAF entries (AAID, attestationCertificateKeyIdentifiers)
    const roots = (e.metadataStatement?.attestationRootCertificates ?? []).map((c) => new X509Certificate(der(c)));
    const refused = e.statusReports.find((r) => REFUSING_STATUSES.has(r.status));
    entries.set(e.aaguid.toLowerCase(), { roots, refusedStatus: refused?.status ?? null });
  }
  return { no: payload.no, nextUpdate: Date.parse(`${payload.nextUpdate}T00:00:00Z`), entries };
}

/** Logs a BLOB past its nextUpdate; true when it did (so the caller reports it once). */
export function warnIfStale(m: FidoMetadata, now: number, log: Pick<Logger, 'warn'> | undefined): boolean {
  if (now < m.nextUpdate) return false;
  log?.warn(
    { mds_no: m.no, next_update: new Date(m.nextUpdate).toISOString().slice(0, 10) },
    'KEYHALL_WEBAUTHN_MDS_FILE is past its nextUpdate: download a fresh BLOB (status reports may be out of date)',
  );
  return true;
}

/** KEYHALL_WEBAUTHN_MDS_FILE read and verified (undefined when unset). */
export async function loadMetadata(
  config: Pick<Config, 'webauthnMdsFile' | 'webauthnMdsRoot'>,
  now: number,
  log?: Pick<Logger, 'warn' | 'info'>,
): Promise<FidoMetadata | undefined> {
  if (!config.webauthnMdsFile) return undefined;
  const blob = fs.readFileSync(config.webauthnMdsFile, 'utf8');
  let m: FidoMetadata;
  try {
    m = await verifyMdsBlob(blob, await mdsRoots(config), now);
  } catch (err) {
    throw new Error(`KEYHALL_WEBAUTHN_MDS_FILE ${config.webauthnMdsFile}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!warnIfStale(m, now, log))
    log?.info({ mds_no: m.no, entries: m.entries.size, next_update: new Date(m.nextUpdate).toISOString().slice(0, 10) }, 'FIDO MDS BLOB verified');
  return m;
}
