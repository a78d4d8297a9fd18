/** A test FIDO MDS: its own root CA → intermediate → BLOB signer, and BLOBs signed with it (jose). */
import { createHash, KeyObject, sign, webcrypto } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { decodeAttestationObject, isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';
import * as x509 from '@peculiar/x509';
import { CompactSign } from 'jose';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface TestMds {
  rootPem: string;
  /** The signer chain as x5c (leaf first, base64 DER). */
  x5c: string[];
  /** A BLOB (JWT) of these entries, signed by the signer. */
  blob(entries: unknown[], opts?: { nextUpdate?: string; no?: number; payload?: Record<string, unknown> }): Promise<string>;
  /** The signer's private key, for tests that sign something else. */
  signerKey: webcrypto.CryptoKey;
}

type KeyPair = webcrypto.CryptoKeyPair;
const keys = () => webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']) as Promise<KeyPair>;

export async function testMds(opts: { now?: number; leafNotAfter?: number; intermediateIsCa?: boolean } = {}): Promise<TestMds> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);
  const now = opts.now ?? Date.now();
  const notBefore = new Date(now - DAY);
  const notAfter = new Date(now + 365 * DAY);
  const [rootKeys, caKeys, leafKeys] = await Promise.all([keys(), keys(), keys()]);
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=Test FIDO MDS Root',
    notBefore,
    notAfter,
    keys: rootKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const ca = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'CN=Test FIDO MDS CA',
    issuer: root.subject,
    notBefore,
    notAfter,
    publicKey: caKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(opts.intermediateIsCa ?? true, 0, true)],
  });
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '03',
    subject: 'CN=Test FIDO MDS BLOB signer',
    issuer: ca.subject,
    notBefore,
    notAfter: opts.leafNotAfter ? new Date(opts.leafNotAfter) : notAfter,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  });
  const x5c = [leaf, ca].map((c) => Buffer.from(c.rawData).toString('base64'));
  return {
    rootPem: root.toString('pem'),
    x5c,
    signerKey: leafKeys.privateKey,
    blob: async (entries, o = {}) =>
      new CompactSign(
        new TextEncoder().encode(
          JSON.stringify({
            legalHeader: 'test',
            no: o.no ?? 1,
            nextUpdate: o.nextUpdate ?? new Date(now + 30 * DAY).toISOString().slice(0, 10),
            entries,
            ...o.payload,
          }),
        ),
      )
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT', x5c })
        .sign(leafKeys.privateKey),
  };
}

/** An MDS entry for an AAGUID: its attestation roots (base64 DER or PEM) and status reports. */
export function entry(aaguid: string, roots: string[], statuses: string[] = ['FIDO_CERTIFIED']) {
  const b64 = (c: string) => c.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
  return {
    aaguid,
    metadataStatement: { aaguid, description: `test authenticator ${aaguid}`, attestationRootCertificates: roots.map(b64), attestationTypes: ['basic_full'] },
    statusReports: statuses.map((status) => ({ status, effectiveDate: '2026-01-01' })),
    timeOfLastStatusChange: '2026-01-01',
  };
}

/**
 * An authenticator maker's attestation CA and one batch certificate under it, and a way to turn a
 * software authenticator's `none` registration response into a `packed` one signed with that
 * batch key (x5c = [batch certificate]), as a hardware authenticator would send it.
 */
export async function testAttestationCa(now = Date.now()) {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);
  const [rootKeys, batchKeys] = await Promise.all([keys(), keys()]);
  const notBefore = new Date(now - DAY);
  const notAfter = new Date(now + 365 * DAY);
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '11',
    name: 'CN=Test Authenticator Attestation Root, O=Test Authenticators, C=US',
    notBefore,
    notAfter,
    keys: rootKeys,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  const batch = await x509.X509CertificateGenerator.create({
    serialNumber: '12',
    subject: 'C=US, O=Test Authenticators, OU=Authenticator Attestation, CN=Test Batch Certificate',
    issuer: root.subject,
    notBefore,
    notAfter,
    publicKey: batchKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  });
  const batchKey = KeyObject.from(batchKeys.privateKey);
  return {
    rootPem: root.toString('pem'),
    /** The response with a `packed` attestation statement over its authenticator data and client data. */
    packed(response: RegistrationResponseJSON): RegistrationResponseJSON {
      const authData = decodeAttestationObject(isoBase64URL.toBuffer(response.response.attestationObject)).get('authData');
      const clientDataHash = createHash('sha256').update(isoBase64URL.toBuffer(response.response.clientDataJSON)).digest();
      const sig = sign('sha256', Buffer.concat([authData, clientDataHash]), { key: batchKey, dsaEncoding: 'der' });
      const attStmt = new Map<string, unknown>([
        ['alg', -7],
        ['sig', new Uint8Array(sig)],
        ['x5c', [new Uint8Array(batch.rawData)]],
      ]);
      const attestationObject = isoCBOR.encode(
        new Map<string, unknown>([
          ['fmt', 'packed'],
          ['attStmt', attStmt],
          ['authData', authData],
        ]) as never,
      );
      return { ...response, response: { ...response.response, attestationObject: isoBase64URL.fromBuffer(attestationObject) } };
    },
  };
}
