/**
 * ID tokens (OIDC Core §2, §3.1.3.6): RS256 by default (interop, oidcc-basic), EdDSA per client.
 * Signed with the tenant's active key of that algorithm.
 */
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import type { KeySource } from '../tokens/access-token.js';
import { acrOf } from '../authorize/acr.js';
import type { OAuthTenant } from '../types.js';

export type IdTokenAlg = 'RS256' | 'EdDSA';
export const ID_TOKEN_ALGS: IdTokenAlg[] = ['RS256', 'EdDSA'];

export interface IdTokenInput {
  sub: string;
  clientId: string;
  alg: IdTokenAlg;
  /** Epoch ms of the user's login. */
  authTime: number;
  nonce: string | null;
  accessToken?: string;
  sessionId?: string | null;
  /** Profile claims (OIDC Core §5.1) the granted scopes release; protocol claims win. */
  profile?: Record<string, unknown>;
  ttlSeconds: number;
  /** RFC 8176 methods of the login; `acr` is derived from them. */
  amr?: string[];
  /** The social connection the login came from (docs/social.md). */
  idp?: string;
}

/** `at_hash`: left half of the hash of the access token, with the hash of the JWS alg (SHA-256 for RS256, SHA-512 for Ed25519). */
export function atHash(accessToken: string, alg: IdTokenAlg): string {
  const digest = createHash(alg === 'EdDSA' ? 'sha512' : 'sha256')
    .update(accessToken, 'ascii')
    .digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export async function signIdToken(tenant: OAuthTenant, input: IdTokenInput, deps: { keys: KeySource; now: number }): Promise<string> {
  const key = await deps.keys.activeKey(tenant.id, input.alg);
  const iat = Math.floor(deps.now / 1000);
  const claims: Record<string, unknown> = { ...input.profile, auth_time: Math.floor(input.authTime / 1000) };
  if (input.nonce !== null) claims.nonce = input.nonce;
  if (input.accessToken) claims.at_hash = atHash(input.accessToken, input.alg);
  if (input.sessionId) claims.sid = input.sessionId;
  if (input.amr) {
    claims.amr = input.amr;
    claims.acr = acrOf(input.amr);
  }
  if (input.idp) claims.idp = input.idp;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: input.alg, typ: 'JWT', kid: key.kid })
    .setIssuer(tenant.issuer)
    .setSubject(input.sub)
    .setAudience(input.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + input.ttlSeconds)
    .sign(key.privateKey);
}
