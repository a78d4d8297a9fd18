/**
 * Compact JWS with Ed25519 through node:crypto, synchronously: access tokens are signed on every
 * /token request and verified on every protected request, and WebCrypto (jose) would add a
 * thread-pool round trip to each. Only our own tokens go through here; client assertions and
 * DPoP proofs (foreign keys, several algorithms) are verified with jose.
 */
import { createPublicKey, KeyObject, sign, verify } from 'node:crypto';
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

/** `header.payload.signature` with an Ed25519 private key (`alg: EdDSA`). */
export function signEdDsaJwt(header: { alg: 'EdDSA'; typ: string; kid: string }, payload: object, privateKey: unknown): string {
  const key = keyObjectOf(privateKey);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('signEdDsaJwt needs an Ed25519 private key');
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
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

/** A public Ed25519 JWK as a KeyObject (cached by its `kid`, the RFC 7638 thumbprint, and `x`). */
export function publicKeyOf(jwk: JWK): KeyObject {
  const cacheKey = `${jwk.kid}|${jwk.x}`;
  let key = publicKeys.get(cacheKey);
  if (!key) {
    key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as import('node:crypto').JsonWebKey, format: 'jwk' });
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 key');
    if (publicKeys.size >= 10_000) publicKeys.clear();
    publicKeys.set(cacheKey, key);
  }
  return key;
}

export function verifyEdDsaSignature(d: DecodedJws, key: KeyObject): boolean {
  return d.signature.length === 64 && verify(null, Buffer.from(d.signingInput), key, d.signature);
}
