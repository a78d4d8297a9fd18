/** private_key_jwt (RFC 7523 §3, RFC 7521 §4.2): one check per function. */
import { createLocalJWKSet, decodeJwt, errors as joseErrors, type JWK, jwtVerify, type JWTPayload } from 'jose';
import { oauthErrors } from '../errors.js';
import type { ClientRecord, OAuthTenant, RemoteKeySource, ReplayCache } from '../types.js';

/** Asymmetric algorithms accepted for client assertions; never `none` or HS*. */
export const ASSERTION_ALGS = ['EdDSA', 'Ed25519', 'ES256', 'PS256'] as const;
/** Leeway for clock skew on `iat`/`nbf`/`exp`. */
const SKEW_S = 30;
/** The longest an assertion may live (exp - now): assertions are meant to be short. */
const MAX_LIFETIME_S = 600;

/** The client an assertion claims to be, read before verification to find its keys. */
export function assertionClientId(assertion: string, bodyClientId: string | undefined): string {
  let claims: JWTPayload;
  try {
    claims = decodeJwt(assertion);
  } catch {
    throw oauthErrors.invalidClient('client_assertion is not a JWT');
  }
  if (typeof claims.iss !== 'string' || claims.iss !== claims.sub) throw oauthErrors.invalidClient('iss and sub must both be the client_id');
  if (bodyClientId !== undefined && bodyClientId !== claims.iss) throw oauthErrors.invalidClient('client_id does not match the assertion');
  return claims.iss;
}

/** A client's keys; `EdDSA` and `Ed25519` name the same Ed25519 keys. */
function localKeySet(set: { keys: JWK[] }) {
  const keys = set.keys.map((k: JWK) => (k.kty === 'OKP' && (k.alg === 'EdDSA' || k.alg === 'Ed25519') ? { ...k, alg: undefined } : k));
  return createLocalJWKSet({ keys });
}

/** Inline `jwks`, or the set at `jwks_uri` (`refresh`: fetch again if allowed). */
async function clientKeySet(client: ClientRecord, remote: RemoteKeySource | undefined, refresh: boolean): Promise<{ keys: JWK[] }> {
  if (client.jwks) return client.jwks;
  if (!client.jwksUri || !remote) throw oauthErrors.invalidClient('the client has no registered keys');
  try {
    return await remote.keys(client.jwksUri, { refresh });
  } catch (err) {
    // Why the fetch failed (egress refusal, status, timeout) is for the operator's log only.
    throw oauthErrors.invalidClient("the client's jwks_uri could not be fetched").because(err, `jwks_uri ${client.jwksUri}: ${(err as Error).message}`);
  }
}

async function verifyWith(assertion: string, set: { keys: JWK[] }, client: ClientRecord, tenant: OAuthTenant, now: number): Promise<JWTPayload> {
  const { payload } = await jwtVerify(assertion, localKeySet(set), {
    algorithms: [...ASSERTION_ALGS],
    issuer: client.id,
    subject: client.id,
    audience: [tenant.issuer, `${tenant.issuer}/token`],
    requiredClaims: ['exp', 'jti'],
    clockTolerance: SKEW_S,
    currentDate: new Date(now),
  });
  return payload;
}

/** Verifies signature, iss/sub, aud and exp; a remote set lacking the key is fetched once more. */
async function verifySignatureAndClaims(
  assertion: string,
  client: ClientRecord,
  tenant: OAuthTenant,
  now: number,
  remote: RemoteKeySource | undefined,
): Promise<JWTPayload> {
  try {
    try {
      return await verifyWith(assertion, await clientKeySet(client, remote, false), client, tenant, now);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || !client.jwksUri) throw err;
      return await verifyWith(assertion, await clientKeySet(client, remote, true), client, tenant, now);
    }
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) throw oauthErrors.invalidClient(`invalid client_assertion (${err.code})`).because(err);
    throw err;
  }
}

function checkIssuedAt(claims: JWTPayload, nowS: number): void {
  if (claims.iat !== undefined && (typeof claims.iat !== 'number' || claims.iat > nowS + SKEW_S)) {
    throw oauthErrors.invalidClient('client_assertion iat is in the future');
  }
}

function checkLifetime(claims: JWTPayload, nowS: number): void {
  if ((claims.exp ?? 0) - nowS > MAX_LIFETIME_S) throw oauthErrors.invalidClient('client_assertion lives too long');
}

function checkJti(claims: JWTPayload): string {
  if (typeof claims.jti !== 'string' || claims.jti.length === 0 || claims.jti.length > 256) {
    throw oauthErrors.invalidClient('client_assertion jti is invalid');
  }
  return claims.jti;
}

async function consumeJti(replay: ReplayCache, tenant: OAuthTenant, client: ClientRecord, jti: string, exp: number, now: number) {
  const first = await replay.use(tenant.id, `assertion:${client.id}:${jti}`, (exp + SKEW_S) * 1000, now);
  if (!first) throw oauthErrors.invalidClient('client_assertion jti was already used');
}

export async function verifyClientAssertion(
  assertion: string,
  client: ClientRecord,
  tenant: OAuthTenant,
  deps: { replay: ReplayCache; now: number; remoteKeys?: RemoteKeySource | undefined },
): Promise<void> {
  const nowS = Math.floor(deps.now / 1000);
  const claims = await verifySignatureAndClaims(assertion, client, tenant, deps.now, deps.remoteKeys);
  checkIssuedAt(claims, nowS);
  checkLifetime(claims, nowS);
  const jti = checkJti(claims);
  await consumeJti(deps.replay, tenant, client, jti, claims.exp as number, deps.now);
}
