/**
 * Verifies an access token issued by this tenant (RFC 9068 §4): a signature (EdDSA, ES256, RS256
 * or PS256) by a key the tenant publishes for that algorithm (looked up by `kid`; headers naming their own key are refused), `typ at+jwt`,
 * `iss`, `aud` (when the caller names one), `exp`/`nbf`, the required claims, and not revoked.
 * Signatures are checked synchronously with node:crypto (see jws.ts).
 */
import type { JWK } from 'jose';
import type { OAuthTenant, RevokedTokenStore } from '../types.js';
import { AT_TYP, CREDENTIAL_OFFER_CLAIM, type KeySource } from './access-token.js';
import { ACCESS_TOKEN_ALGS, type AccessTokenAlg, decodeCompactJws, type DecodedJws, publicKeyOf, verifySignature } from './jws.js';

/** Clock skew tolerated on `exp`/`nbf`/`iat`. */
const SKEW_S = 5;
/** Header members that would let a token name its own key: never honoured, always refused. */
const KEY_INJECTION = ['jwk', 'jku', 'x5u', 'x5c'];

export class TokenInvalid extends Error {}

export interface AccessTokenClaims {
  [claim: string]: unknown;
  iss: string;
  sub: string;
  aud: string | string[];
  client_id: string;
  jti: string;
  iat: number;
  exp: number;
  nbf?: number;
  scope?: string;
  cnf?: { jkt?: string };
  act?: unknown;
}

export interface VerifyDeps {
  keys: KeySource;
  revoked: RevokedTokenStore;
  now: number;
}

function decode(token: string): DecodedJws {
  const decoded = decodeCompactJws(token);
  if (!decoded) throw new TokenInvalid('malformed token');
  return decoded;
}

/** The header's algorithm among ours (`Ed25519` is EdDSA's fully-specified name); never `none`/HS*. */
function headerAlg(h: Record<string, unknown>): AccessTokenAlg {
  const alg = h.alg === 'Ed25519' ? 'EdDSA' : h.alg;
  if (!(ACCESS_TOKEN_ALGS as readonly unknown[]).includes(alg)) throw new TokenInvalid('unexpected alg');
  return alg as AccessTokenAlg;
}

function checkHeader(h: Record<string, unknown>): string {
  headerAlg(h);
  if (h.typ !== AT_TYP && h.typ !== `application/${AT_TYP}`) throw new TokenInvalid('typ must be at+jwt');
  if (KEY_INJECTION.some((m) => m in h)) throw new TokenInvalid('token header names its own key');
  if ('crit' in h) throw new TokenInvalid('unsupported crit header');
  if (typeof h.kid !== 'string') throw new TokenInvalid('token has no kid');
  return h.kid;
}

/** The tenant's published key with that `kid`, published for that algorithm. */
async function tenantKey(keys: KeySource, tenantId: string, kid: string, alg: AccessTokenAlg) {
  const jwk = (await keys.jwks(tenantId)).keys.find((k: JWK) => k.kid === kid && k.alg === alg);
  if (!jwk) throw new TokenInvalid('unknown signing key');
  return publicKeyOf(jwk, alg);
}

function checkSignature(d: DecodedJws, alg: AccessTokenAlg, key: ReturnType<typeof publicKeyOf>): void {
  if (!verifySignature(d, alg, key)) throw new TokenInvalid('bad signature');
}

function checkRequiredClaims(p: Record<string, unknown>): AccessTokenClaims {
  for (const c of ['iss', 'sub', 'client_id', 'jti'] as const) if (typeof p[c] !== 'string') throw new TokenInvalid(`token lacks ${c}`);
  for (const c of ['iat', 'exp'] as const) if (typeof p[c] !== 'number') throw new TokenInvalid(`token lacks ${c}`);
  if (typeof p.aud !== 'string' && !(Array.isArray(p.aud) && p.aud.every((a) => typeof a === 'string'))) throw new TokenInvalid('token lacks aud');
  if (p.nbf !== undefined && typeof p.nbf !== 'number') throw new TokenInvalid('malformed nbf');
  return p as AccessTokenClaims;
}

function checkIssuer(c: AccessTokenClaims, tenant: OAuthTenant): void {
  if (c.iss !== tenant.issuer) throw new TokenInvalid('wrong issuer');
}

function checkAudience(c: AccessTokenClaims, audience: string | undefined): void {
  if (audience === undefined) return;
  const aud = Array.isArray(c.aud) ? c.aud : [c.aud];
  if (!aud.includes(audience)) throw new TokenInvalid('token is for another audience');
}

function checkTimes(c: AccessTokenClaims, nowS: number): void {
  if (c.exp <= nowS - SKEW_S) throw new TokenInvalid('token expired');
  if (c.nbf !== undefined && c.nbf > nowS + SKEW_S) throw new TokenInvalid('token not yet valid');
  if (c.iat > nowS + SKEW_S) throw new TokenInvalid('token issued in the future');
}

/** A token of the pre-authorized code grant only at the credential endpoint, and only such tokens there. */
function checkUse(c: AccessTokenClaims, credentialEndpoint: boolean): void {
  const forCredentials = typeof c[CREDENTIAL_OFFER_CLAIM] === 'string';
  if (forCredentials && !credentialEndpoint) throw new TokenInvalid('this token is usable only at the credential endpoint');
  if (!forCredentials && credentialEndpoint)
    throw new TokenInvalid('the credential endpoint accepts only tokens from a credential offer (pre-authorized code grant)');
}

async function checkNotRevoked(c: AccessTokenClaims, tenant: OAuthTenant, revoked: RevokedTokenStore): Promise<void> {
  if (await revoked.isRevoked(tenant.id, c.jti)) throw new TokenInvalid('token was revoked');
}

/**
 * Tokens whose signature was verified, per tenant: a resource server presents the same token many
 * times. Only decoding and the signature are remembered; the key must still be published, and
 * every claim, time and revocation check runs on each use. Bounded; oldest entries go first.
 */
const verified = new Map<string, { kid: string; alg: AccessTokenAlg; payload: Record<string, unknown> }>();
const VERIFIED_MAX = 10_000;

async function verifiedPayload(token: string, tenant: OAuthTenant, keys: KeySource): Promise<Record<string, unknown>> {
  const cacheKey = `${tenant.id}|${token}`;
  const hit = verified.get(cacheKey);
  if (hit) {
    await tenantKey(keys, tenant.id, hit.kid, hit.alg);
    return { ...hit.payload };
  }
  const decoded = decode(token);
  const kid = checkHeader(decoded.header);
  const alg = headerAlg(decoded.header);
  checkSignature(decoded, alg, await tenantKey(keys, tenant.id, kid, alg));
  if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
  verified.set(cacheKey, { kid, alg, payload: decoded.payload });
  return { ...decoded.payload };
}

export async function verifyAccessToken(
  token: string,
  tenant: OAuthTenant,
  deps: VerifyDeps,
  opts: { audience?: string; credentialEndpoint?: boolean } = {},
): Promise<AccessTokenClaims> {
  const claims = checkRequiredClaims(await verifiedPayload(token, tenant, deps.keys));
  checkIssuer(claims, tenant);
  checkAudience(claims, opts.audience);
  checkUse(claims, opts.credentialEndpoint ?? false);
  checkTimes(claims, Math.floor(deps.now / 1000));
  await checkNotRevoked(claims, tenant, deps.revoked);
  return claims;
}
