/**
 * Signed request objects (RFC 9101 JAR) at /authorize and /par: a JWS the client signed with one
 * of its registered keys (inline `jwks` or `jwks_uri`, as for private_key_jwt), carrying the
 * authorization request. Only the parameters inside the verified object are used (§6.3). Every
 * failure is `invalid_request_object`, shown as a page at /authorize (the object's redirect_uri
 * is not trusted before it verifies) and a JSON 400 at /par. One check per function.
 */
import { decodeProtectedHeader, errors as joseErrors, type JWTPayload, type ProtectedHeaderParameters } from 'jose';
import { AppError } from '../../kernel/errors.js';
import { CLIENT_JWT_ALGS, verifyClientJwt } from '../client-auth/client-keys.js';
import { oauthErrors } from '../errors.js';
import type { RawParams } from '../params.js';
import type { ClientRecord, OAuthTenant, RemoteKeySource } from '../types.js';
import { authorizeErrors as E } from './errors.js';

/** Asymmetric algorithms only, as for client assertions: `none` and HS* are refused. */
export const REQUEST_OBJECT_ALGS = CLIENT_JWT_ALGS;
/** Leeway for clock skew on `iat`/`nbf`/`exp`. */
const SKEW_S = 30;
/** The longest a request object may live, and the oldest `nbf`/`iat` it may carry (FAPI: 60 minutes). */
const MAX_LIFETIME_S = 3600;
/** The `typ` values accepted: absent, `JWT`, or RFC 9101's `oauth-authz-req+jwt`. */
const TYPES = new Set(['jwt', 'oauth-authz-req+jwt']);
/** Claims of the JWT itself, not authorization parameters. */
const JWT_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'sub']);
const MAX_LENGTH = 16 * 1024;

export interface RequestObjectDeps {
  now: number;
  remoteKeys?: RemoteKeySource | undefined;
}

function readHeader(jwt: string): ProtectedHeaderParameters {
  if (jwt.length > MAX_LENGTH) throw E.badRequestObject('the request object is too large');
  const parts = jwt.split('.').length;
  if (parts === 5) throw E.badRequestObject('encrypted request objects are not supported; sign it (JWS)');
  if (parts !== 3) throw E.badRequestObject('the request object is not a compact JWS');
  try {
    return decodeProtectedHeader(jwt);
  } catch {
    throw E.badRequestObject('the request object header cannot be read');
  }
}

function checkHeader(h: ProtectedHeaderParameters): void {
  if (typeof h.alg !== 'string' || h.alg.toLowerCase() === 'none') throw E.badRequestObject('unsigned request objects (alg none) are refused');
  if (!(REQUEST_OBJECT_ALGS as readonly string[]).includes(h.alg)) {
    throw E.badRequestObject(`request object alg must be one of ${REQUEST_OBJECT_ALGS.join(', ')}`);
  }
  if (h.typ !== undefined && !TYPES.has(h.typ.toLowerCase().replace(/^application\//, ''))) {
    throw E.badRequestObject('request object typ must be oauth-authz-req+jwt');
  }
}

const JOSE_REASONS: Record<string, string> = {
  ERR_JWT_EXPIRED: 'the request object has expired',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: "the request object's signature does not verify with the client's keys",
  ERR_JWKS_NO_MATCHING_KEY: 'the request object is not signed with a key registered for the client',
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: 'the request object names no kid and the client has several keys',
};

/** Signature with the client's keys; `iss` is the client, `aud` this issuer, `exp` present and not passed. */
async function verifySignature(jwt: string, client: ClientRecord, tenant: OAuthTenant, deps: RequestObjectDeps): Promise<JWTPayload> {
  const options = {
    algorithms: [...REQUEST_OBJECT_ALGS],
    issuer: client.id,
    audience: tenant.issuer,
    requiredClaims: ['exp'],
    clockTolerance: SKEW_S,
    currentDate: new Date(deps.now),
  };
  try {
    return (await verifyClientJwt(jwt, client, deps.remoteKeys, options, oauthErrors.invalidRequestObject)).payload;
  } catch (err) {
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw E.badRequestObject(`request object claim ${err.claim} is invalid (${err.reason})`);
    if (err instanceof joseErrors.JOSEError) throw E.badRequestObject(JOSE_REASONS[err.code] ?? `the request object does not verify (${err.code})`);
    if (err instanceof AppError && err.code === 'invalid_request_object') throw E.badRequestObject(err.description ?? 'invalid request object');
    throw err;
  }
}

/** `exp` not too far ahead, `nbf` and `iat` neither in the future nor older than an hour. */
function checkTimes(claims: JWTPayload, now: number): void {
  const nowS = Math.floor(now / 1000);
  if ((claims.exp as number) - nowS > MAX_LIFETIME_S + SKEW_S) throw E.badRequestObject('the request object lives too long (exp more than an hour ahead)');
  for (const name of ['nbf', 'iat'] as const) {
    const v = claims[name];
    if (v === undefined) continue;
    if (typeof v !== 'number' || v > nowS + SKEW_S) throw E.badRequestObject(`request object ${name} is in the future`);
    if (v < nowS - MAX_LIFETIME_S) throw E.badRequestObject(`request object ${name} is more than an hour old`);
  }
}

/** RFC 9101 §6.3: the object's client_id is the request's. */
function checkClientId(claims: JWTPayload, client: ClientRecord): void {
  if (claims.client_id === undefined) throw E.badRequestObject('the request object has no client_id');
  if (claims.client_id !== client.id) throw E.badRequestObject('client_id in the request object differs from the request');
}

/** The authorization parameters of the object, as the form/query reader sees them. */
function toParams(claims: JWTPayload, client: ClientRecord): RawParams {
  if (claims.request !== undefined || claims.request_uri !== undefined) throw E.badRequestObject('a request object cannot carry request or request_uri');
  const out: RawParams = { client_id: client.id };
  for (const [name, value] of Object.entries(claims)) {
    if (JWT_CLAIMS.has(name) || name === 'client_id') continue;
    if (typeof value === 'string') out[name] = value;
    else if (typeof value === 'number' && Number.isSafeInteger(value)) out[name] = String(value);
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) out[name] = value as string[];
    // Other values (`claims` objects, booleans) are parameters Keyhall does not support: ignored, as unknown parameters are.
  }
  return out;
}

/**
 * Verifies the `request` parameter of `client` and returns the authorization parameters it
 * carries (with `client_id`); throws `invalid_request_object` as a page error.
 */
export async function verifyRequestObject(jwt: string, client: ClientRecord, tenant: OAuthTenant, deps: RequestObjectDeps): Promise<RawParams> {
  checkHeader(readHeader(jwt));
  const claims = await verifySignature(jwt, client, tenant, deps);
  checkTimes(claims, deps.now);
  checkClientId(claims, client);
  return toParams(claims, client);
}
