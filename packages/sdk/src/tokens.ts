/**
 * Access-token verification for an API that Keyhall issues tokens for (RFC 9068 JWT access
 * tokens, EdDSA or RS256 per resource server), with DPoP-bound tokens (RFC 9449 §7: the token's
 * `cnf.jkt` and a proof signed by that key). Signing keys come from the issuer's JWKS, found
 * through its discovery document and cached (jose's remote key set: fetched once, again when an
 * unknown `kid` appears, as after a `keyhall keys rotate`).
 */
import { calculateJwkThumbprint, createRemoteJWKSet, decodeProtectedHeader, EmbeddedJWK, type JWTPayload, jwtVerify } from 'jose';

export type AccessTokenAlgorithm = 'EdDSA' | 'RS256';

/** Algorithms accepted for DPoP proofs: Keyhall's own list (asymmetric only). */
const DPOP_ALGS = ['EdDSA', 'Ed25519', 'ES256', 'PS256'];
/** How far a proof's `iat` may be from the clock, in seconds. */
const DPOP_IAT_WINDOW_S = 60;

export interface DpopRequest {
  /** The request's `DPoP` header (one compact JWS). */
  proof: string | undefined;
  /** The request method (`GET`). */
  method: string;
  /** The URL the client called, as it called it: the proof's `htu` must name it (query and fragment ignored). */
  url: string;
}

export interface VerifyAccessTokenOptions {
  /** The Keyhall tenant's issuer (`https://id.example.com`). */
  issuer: string;
  /** This API's resource identifier: the token's `aud` must contain it. */
  audience: string;
  /**
   * Permissions the token must all carry (403 `insufficient_scope` otherwise): its `permissions`
   * when it has them (a token from an organization sign-in: what the user's roles there give for
   * this API, within the scopes asked for), otherwise its `scope` values.
   */
  requiredPermissions?: readonly string[];
  /** The organization the token must be for (`org_id`; 403 `insufficient_scope` otherwise). */
  organization?: string;
  /** Accepted signature algorithms: pin the one your resource server uses (default both). */
  algorithms?: readonly AccessTokenAlgorithm[];
  /** The JWKS URL (default: `jwks_uri` of the issuer's discovery document). */
  jwksUri?: string;
  /** The request's DPoP proof; required for a DPoP-bound token, refused with a Bearer one. */
  dpop?: DpopRequest;
  /** How the token was presented (`Authorization: Bearer|DPoP`): a bound token must come as DPoP. */
  scheme?: 'Bearer' | 'DPoP';
  /** The current time in milliseconds (default `Date.now()`). */
  now?: () => number;
  /** How far `exp`/`nbf`/`iat` may be off, in seconds (default 0). */
  clockToleranceSeconds?: number;
}

/** The verified claims of an access token. */
export interface AccessTokenClaims extends JWTPayload {
  iss: string;
  sub: string;
  client_id?: string;
  scope?: string;
  cnf?: { jkt?: string };
  /** An organization sign-in's organization, the user's roles there, and their permissions for this API (docs/authorization.md). */
  org_id?: string;
  org_roles?: string[];
  permissions?: string[];
}

/** Why a request's token is not accepted: the status, the RFC 6750 error and the challenge to send. */
export class AccessTokenError extends Error {
  override readonly name = 'AccessTokenError';
  readonly status: 401 | 403;
  constructor(
    readonly error: 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof',
    readonly error_description: string,
    /** The `WWW-Authenticate` value to answer with. */
    readonly wwwAuthenticate: string,
  ) {
    super(`${error}: ${error_description}`);
    this.status = error === 'insufficient_scope' ? 403 : 401;
  }
}

const challenge = (scheme: 'Bearer' | 'DPoP', error: string, extra = '') =>
  `${scheme} error="${error}"${extra}${scheme === 'DPoP' ? ` algs="${DPOP_ALGS.join(' ')}"` : ''}`;

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
const discovered = new Map<string, Promise<string>>();
/** DPoP proof ids seen within their acceptance window: a replayed proof is refused. */
const seenProofs = new Map<string, number>();

async function jwksUriOf(issuer: string): Promise<string> {
  let uri = discovered.get(issuer);
  if (!uri) {
    uri = (async () => {
      const res = await fetch(`${issuer}/.well-known/openid-configuration`);
      if (!res.ok) throw new Error(`discovery at ${issuer} answered ${res.status}`);
      const { jwks_uri } = (await res.json()) as { jwks_uri?: unknown };
      if (typeof jwks_uri !== 'string') throw new Error(`discovery at ${issuer} has no jwks_uri`);
      return jwks_uri;
    })();
    discovered.set(issuer, uri);
    uri.catch(() => discovered.delete(issuer));
  }
  return uri;
}

function keySet(uri: string): ReturnType<typeof createRemoteJWKSet> {
  let set = keySets.get(uri);
  if (!set) keySets.set(uri, (set = createRemoteJWKSet(new URL(uri))));
  return set;
}

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  let binary = '';
  for (const b of digest) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const withoutQuery = (url: string) => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
};

/** RFC 9449 §4.3 for a resource server: the proof is for this request and this token, by the bound key. */
async function checkProof(token: string, jkt: string, dpop: DpopRequest, nowMs: number): Promise<void> {
  const fail = (why: string): never => {
    throw new AccessTokenError('invalid_dpop_proof', why, challenge('DPoP', 'invalid_dpop_proof'));
  };
  const proof = dpop.proof;
  if (!proof) return fail('missing DPoP proof');
  if (proof.includes(',') || !/^[\w-]+\.[\w-]+\.[\w-]+$/.test(proof)) return fail('the DPoP proof is not one JWT');
  let payload: JWTPayload;
  try {
    // The signature by the header's `jwk` (jose refuses a private key there), `typ`, the algorithm.
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: DPOP_ALGS, currentDate: new Date(nowMs) }));
  } catch {
    return fail('the DPoP proof does not verify');
  }
  const header = decodeProtectedHeader(proof);
  if (payload.htm !== dpop.method) fail('htm does not match the request method');
  if (typeof payload.htu !== 'string' || !URL.canParse(payload.htu) || withoutQuery(payload.htu) !== withoutQuery(dpop.url))
    fail('htu does not match the request URL');
  if (typeof payload.iat !== 'number' || Math.abs(nowMs / 1000 - payload.iat) > DPOP_IAT_WINDOW_S) fail('iat is not recent');
  if (payload.ath !== (await sha256(token))) fail('ath does not match the access token');
  if ((await calculateJwkThumbprint(header.jwk!)) !== jkt) fail('the DPoP proof is signed by another key');
  if (typeof payload.jti !== 'string' || payload.jti.length === 0) fail('the DPoP proof has no jti');
  // Entries are added in time order: drop the expired ones from the front.
  for (const [id, until] of seenProofs) {
    if (until >= nowMs) break;
    seenProofs.delete(id);
  }
  const id = `${jkt}:${payload.jti}`;
  if (seenProofs.has(id)) fail('the DPoP proof was already used');
  seenProofs.set(id, nowMs + 2 * DPOP_IAT_WINDOW_S * 1000);
}

/**
 * Verifies an access token for this API and returns its claims: the signature by the issuer's
 * current keys with a pinned algorithm, `typ: at+jwt` (an ID token is not an access token), `iss`,
 * `aud`, `exp`/`nbf`, the DPoP binding, then the required scope values. Throws `AccessTokenError`.
 */
export async function verifyAccessToken(token: string, options: VerifyAccessTokenOptions): Promise<AccessTokenClaims> {
  const nowMs = (options.now ?? Date.now)();
  const scheme = options.scheme ?? (options.dpop ? 'DPoP' : 'Bearer');
  const jwks = keySet(options.jwksUri ?? (await jwksUriOf(options.issuer)));
  let claims: AccessTokenClaims;
  try {
    const { payload } = await jwtVerify(token, jwks, {
      issuer: options.issuer,
      audience: options.audience,
      algorithms: [...(options.algorithms ?? ['EdDSA', 'RS256'])],
      typ: 'at+jwt',
      requiredClaims: ['sub', 'exp'],
      currentDate: new Date(nowMs),
      clockTolerance: options.clockToleranceSeconds ?? 0,
    });
    claims = payload as AccessTokenClaims;
  } catch (err) {
    const why = err instanceof Error && 'code' in err ? `${String(err.code)}: ${err.message}` : 'the token does not verify';
    throw new AccessTokenError('invalid_token', why, challenge(scheme, 'invalid_token'));
  }
  const jkt = claims.cnf?.jkt;
  if (jkt) {
    if (scheme !== 'DPoP' || !options.dpop) throw new AccessTokenError('invalid_token', 'DPoP-bound token sent as Bearer', challenge('DPoP', 'invalid_token'));
    await checkProof(token, jkt, options.dpop, nowMs);
  } else if (scheme === 'DPoP') {
    throw new AccessTokenError('invalid_token', 'token is not DPoP-bound', challenge('DPoP', 'invalid_token'));
  }
  if (options.organization !== undefined && claims.org_id !== options.organization) {
    throw new AccessTokenError('insufficient_scope', 'the token is not for this organization', challenge(scheme, 'insufficient_scope'));
  }
  const granted = new Set(Array.isArray(claims.permissions) ? claims.permissions : (claims.scope ?? '').split(' ').filter(Boolean));
  const missing = (options.requiredPermissions ?? []).filter((p) => !granted.has(p));
  if (missing.length > 0) {
    throw new AccessTokenError('insufficient_scope', `missing ${missing.join(' ')}`, challenge(scheme, 'insufficient_scope', ` scope="${missing.join(' ')}"`));
  }
  return claims;
}

/** `Authorization: Bearer <token>` or `DPoP <token>` (scheme case-insensitive), or undefined. */
export function parseAuthorization(value: string | null | undefined): { scheme: 'Bearer' | 'DPoP'; token: string } | undefined {
  const m = /^(bearer|dpop) +([\w\-.~+/]+=*)$/i.exec(value ?? '');
  if (!m) return undefined;
  return { scheme: m[1]!.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: m[2]! };
}
