/** private_key_jwt (RFC 7523 §3, RFC 7521 §4.2): one check per function. */
import { decodeJwt, errors as joseErrors, type JWTPayload } from 'jose';
import { oauthErrors } from '../errors.js';
import type { ClientRecord, OAuthTenant, RemoteKeySource, ReplayCache } from '../types.js';
import { CLIENT_JWT_ALGS, verifyClientJwt } from './client-keys.js';

/** Asymmetric algorithms accepted for client assertions; never `none` or HS*. */
export const ASSERTION_ALGS = CLIENT_JWT_ALGS;
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

/** Verifies signature, iss/sub, aud and exp with the client's registered keys. */
async function verifySignatureAndClaims(
  assertion: string,
  client: ClientRecord,
  tenant: OAuthTenant,
  now: number,
  remote: RemoteKeySource | undefined,
  issuerAudienceOnly: boolean,
): Promise<JWTPayload> {
  try {
    const options = {
      algorithms: [...ASSERTION_ALGS],
      issuer: client.id,
      subject: client.id,
      // FAPI 2.0 §5.3.2.1: the issuer alone, never an endpoint URL (audience injection).
      audience: issuerAudienceOnly ? tenant.issuer : [tenant.issuer, `${tenant.issuer}/token`],
      requiredClaims: ['exp', 'jti'],
      clockTolerance: SKEW_S,
      currentDate: new Date(now),
    };
    return (await verifyClientJwt(assertion, client, remote, options, oauthErrors.invalidClient)).payload;
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
  deps: { replay: ReplayCache; now: number; remoteKeys?: RemoteKeySource | undefined; issuerAudienceOnly?: boolean },
): Promise<void> {
  const nowS = Math.floor(deps.now / 1000);
  const claims = await verifySignatureAndClaims(assertion, client, tenant, deps.now, deps.remoteKeys, deps.issuerAudienceOnly === true);
  checkIssuedAt(claims, nowS);
  checkLifetime(claims, nowS);
  const jti = checkJti(claims);
  await consumeJti(deps.replay, tenant, client, jti, claims.exp as number, deps.now);
}
