/**
 * Verifies an access token issued by this tenant (RFC 9068 §4): signature by a published tenant
 * key, `typ at+jwt`, `iss`, `aud` (when the caller names one), `exp`/`nbf`, and not revoked.
 */
import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, type JWK, jwtVerify, type JWTPayload } from 'jose';
import type { OAuthTenant, RevokedTokenStore } from '../types.js';
import { AT_TYP, type KeySource } from './access-token.js';

/** Clock skew tolerated on `exp`/`nbf`. */
const SKEW_S = 5;
/** Header members that would let a token name its own key: never honoured, always refused. */
const KEY_INJECTION = ['jwk', 'jku', 'x5u', 'x5c'];

export class TokenInvalid extends Error {}

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  client_id: string;
  jti: string;
  exp: number;
  scope?: string;
  cnf?: { jkt?: string };
  act?: unknown;
}

export interface VerifyDeps {
  keys: KeySource;
  revoked: RevokedTokenStore;
  now: number;
}

/** Verifiers per (tenant, set of kids): imported keys are reused while the JWKS is unchanged. */
const jwksCache = new Map<string, ReturnType<typeof createLocalJWKSet>>();
const JWKS_CACHE_MAX = 10_000;

async function tenantKeys(keys: KeySource, tenantId: string) {
  const published = (await keys.jwks(tenantId)).keys.filter((k: JWK) => k.alg === 'EdDSA');
  const cacheKey = `${tenantId}|${published.map((k) => k.kid).join(',')}`;
  let set = jwksCache.get(cacheKey);
  if (!set) {
    set = createLocalJWKSet({ keys: published });
    if (jwksCache.size >= JWKS_CACHE_MAX) jwksCache.clear();
    jwksCache.set(cacheKey, set);
  }
  return set;
}

function checkHeader(token: string): void {
  let header;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new TokenInvalid('malformed token');
  }
  if (KEY_INJECTION.some((m) => m in header)) throw new TokenInvalid('token header names its own key');
}

function checkShape(p: JWTPayload): AccessTokenClaims {
  if (typeof p.sub !== 'string' || typeof p.client_id !== 'string' || typeof p.jti !== 'string' || typeof p.exp !== 'number') {
    throw new TokenInvalid('token lacks required claims');
  }
  return p as AccessTokenClaims;
}

export async function verifyAccessToken(
  token: string,
  tenant: OAuthTenant,
  deps: VerifyDeps,
  opts: { audience?: string } = {},
): Promise<AccessTokenClaims> {
  checkHeader(token);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, await tenantKeys(deps.keys, tenant.id), {
      algorithms: ['EdDSA', 'Ed25519'],
      typ: AT_TYP,
      issuer: tenant.issuer,
      ...(opts.audience !== undefined ? { audience: opts.audience } : {}),
      requiredClaims: ['exp', 'iat', 'jti', 'sub'],
      clockTolerance: SKEW_S,
      currentDate: new Date(deps.now),
    }));
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) throw new TokenInvalid(`invalid token (${err.code})`);
    throw err;
  }
  const claims = checkShape(payload);
  if (await deps.revoked.isRevoked(tenant.id, claims.jti)) throw new TokenInvalid('token was revoked');
  return claims;
}
