/**
 * Compact JWS (EdDSA, ES256, RS256, PS256) through node:crypto, synchronously: access tokens are signed on every
 * /token request and verified on every protected request, and WebCrypto (jose) would add a
 * thread-pool round trip to each. Only our own tokens go through here; client assertions and
 * DPoP proofs (foreign keys, several algorithms) are verified with jose.
 */
import { constants, createPublicKey, KeyObject, sign, type SignKeyObjectInput, verify } from 'node:crypto';
import type { JWK } from 'jose';

const keyObjects = new WeakMap<object, KeyObject>();

function keyObjectOf(key: unknown): KeyObject {
  if (key instanceof KeyObject) return key;
  let ko = keyObjects.get(key as object);
  if (!ko) {
    ko = KeyObject.from(key as Parameters<typeof KeyObject.from>[0]);
    keyObjects.set(key as object, ko);
  }
  return ko;
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The algorithms access tokens are signed with (never `none` or HS*). */
export const ACCESS_TOKEN_ALGS = ['EdDSA', 'ES256', 'RS256', 'PS256'] as const;
export type AccessTokenAlg = (typeof ACCESS_TOKEN_ALGS)[number];

/** The key type each algorithm needs. */
const KEY_TYPE: Record<AccessTokenAlg, string> = { EdDSA: 'ed25519', ES256: 'ec', RS256: 'rsa', PS256: 'rsa' };

/** node:crypto's digest and options for an algorithm (JWS signatures: raw r||s for ECDSA, PSS salt = hash length). */
function cryptoParams(alg: AccessTokenAlg, key: KeyObject): { digest: string | null; key: SignKeyObjectInput } {
  switch (alg) {
    case 'EdDSA':
      return { digest: null, key: { key } };
    case 'ES256':
      return { digest: 'sha256', key: { key, dsaEncoding: 'ieee-p1363' } };
    case 'RS256':
      return { digest: 'sha256', key: { key, padding: constants.RSA_PKCS1_PADDING } };
    case 'PS256':
      return { digest: 'sha256', key: { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } };
  }
}

/** Encoded headers by alg, typ and kid: a key signs many tokens with the same header. Bounded. */
const encodedHeaders = new Map<string, string>();

function encodedHeader(header: { alg: AccessTokenAlg; typ: string; kid: string }): string {
  const cacheKey = `${header.alg}|${header.typ}|${header.kid}`;
  let encoded = encodedHeaders.get(cacheKey);
  if (encoded === undefined) {
    encoded = b64({ alg: header.alg, typ: header.typ, kid: header.kid });
    if (encodedHeaders.size >= 1000) encodedHeaders.clear();
    encodedHeaders.set(cacheKey, encoded);
  }
  return encoded;
}

/** `header.payload.signature` with the private key of `header.alg`. */
export function signJwt(header: { alg: AccessTokenAlg; typ: string; kid: string }, payload: object, privateKey: unknown): string {
  const key = keyObjectOf(privateKey);
  if (key.asymmetricKeyType !== KEY_TYPE[header.alg]) throw new Error(`signJwt: ${header.alg} needs a ${KEY_TYPE[header.alg]} private key`);
  const input = `${encodedHeader(header)}.${b64(payload)}`;
  const p = cryptoParams(header.alg, key);
  return `${input}.${sign(p.digest, Buffer.from(input), p.key).toString('base64url')}`;
}

/** `header.payload.signature` with an Ed25519 private key (`alg: EdDSA`). */
export function signEdDsaJwt(header: { alg: 'EdDSA'; typ: string; kid: string }, payload: object, privateKey: unknown): string {
  return signJwt(header, payload, privateKey);
}

export interface DecodedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

const COMPACT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
const MAX_TOKEN_LENGTH = 16 * 1024;

function jsonObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Splits and parses a compact JWS (strict base64url, JSON objects); undefined if malformed. */
export function decodeCompactJws(token: string): DecodedJws | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const m = COMPACT.exec(token);
  if (!m) return undefined;
  const header = jsonObject(m[1]!);
  const payload = jsonObject(m[2]!);
  if (!header || !payload) return undefined;
  return { header, payload, signingInput: `${m[1]}.${m[2]}`, signature: Buffer.from(m[3]!, 'base64url') };
}

const publicKeys = new Map<string, KeyObject>();

/**
 * A published public JWK as a KeyObject for `alg` (cached by its `kid`, the RFC 7638 thumbprint,
 * and its public members); the key type must be the algorithm's.
 */
export function publicKeyOf(jwk: JWK, alg: AccessTokenAlg = 'EdDSA'): KeyObject {
  const cacheKey = `${alg}|${jwk.kid}|${jwk.x ?? ''}|${jwk.y ?? ''}|${jwk.n ?? ''}`;
  let key = publicKeys.get(cacheKey);
  if (!key) {
    const members = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, n: jwk.n, e: jwk.e };
    key = createPublicKey({ key: members as import('node:crypto').JsonWebKey, format: 'jwk' });
    if (key.asymmetricKeyType !== KEY_TYPE[alg]) throw new Error(`not a ${KEY_TYPE[alg]} key`);
    if (alg === 'ES256' && key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error('ES256 needs a P-256 key');
    if (publicKeys.size >= 10_000) publicKeys.clear();
    publicKeys.set(cacheKey, key);
  }
  return key;
}

export function verifyEdDsaSignature(d: DecodedJws, key: KeyObject): boolean {
  return d.signature.length === 64 && verify(null, Buffer.from(d.signingInput), key, d.signature);
}

/** Verifies the signature of `d` by `key` under `alg` (the caller pins `alg` from the key, never the token). */
export function verifySignature(d: DecodedJws, alg: AccessTokenAlg, key: KeyObject): boolean {
  if (alg === 'EdDSA') return verifyEdDsaSignature(d, key);
  if (alg === 'ES256' && d.signature.length !== 64) return false;
  const p = cryptoParams(alg, key);
  try {
    return verify(p.digest, Buffer.from(d.signingInput), p.key as Parameters<typeof verify>[2], d.signature);
  } catch {
    return false;
  }
}
