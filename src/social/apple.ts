/**
 * Sign in with Apple's client authentication (docs/social.md, "Apple"): the client secret is a
 * JWT signed ES256 with the connection's private key (Apple's `.p8`, PKCS #8), made afresh for
 * each token request: `iss` the team id, `sub` the client id (the Services ID), `aud`
 * https://appleid.apple.com, `kid` the key id, and a lifetime far below Apple's six months.
 * Apple sends the person's name only once, in the `user` field of its first form_post answer.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

export const APPLE_AUDIENCE = 'https://appleid.apple.com';
/** How long one client secret lives: one token request needs seconds (Apple allows six months). */
export const APPLE_SECRET_TTL_SECONDS = 300;

/** Team id and key id as Apple issues them: ten upper-case letters or digits. */
export const APPLE_ID = /^[A-Z0-9]{10}$/;

export interface AppleKeyConfig {
  teamId: string;
  keyId: string;
}

/** The private key of a PEM: an EC P-256 key in PKCS #8, or undefined. */
export function appleKey(pem: string): KeyObject | undefined {
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** The client secret of one token request. */
export function appleClientSecret(pem: string, k: AppleKeyConfig, clientId: string, nowMs: number): Promise<string> {
  const key = appleKey(pem);
  if (!key) throw new Error('the stored Apple key is not an EC P-256 private key');
  const now = Math.floor(nowMs / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: k.keyId })
    .setIssuer(k.teamId)
    .setSubject(clientId)
    .setAudience(APPLE_AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + APPLE_SECRET_TTL_SECONDS)
    .sign(key);
}

/** The name in Apple's `user` field (`{"name":{"firstName","lastName"},"email"}`), or null. */
export function appleUserName(raw: string | null | undefined): string | null {
  if (!raw || raw.length > 2048) return null;
  try {
    const name = (JSON.parse(raw) as { name?: { firstName?: unknown; lastName?: unknown } }).name;
    const parts = [name?.firstName, name?.lastName].filter((p): p is string => typeof p === 'string' && p.trim() !== '').map((p) => p.trim());
    return parts.length > 0 ? parts.join(' ').slice(0, 200) : null;
  } catch {
    return null;
  }
}
