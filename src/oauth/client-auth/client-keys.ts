/**
 * A client's registered keys (inline `jwks` or its `jwks_uri`) and the verification of a JWT the
 * client signed with one of them: client assertions (private_key_jwt) and request objects
 * (RFC 9101) resolve keys the same way.
 */
import { createLocalJWKSet, errors as joseErrors, type JWK, jwtVerify, type JWTPayload, type JWTVerifyOptions, type ProtectedHeaderParameters } from 'jose';
import type { AppError } from '../../kernel/errors.js';
import type { ClientRecord, RemoteKeySource } from '../types.js';

/** Asymmetric algorithms accepted for JWTs a client signs; never `none` or HS*. */
export const CLIENT_JWT_ALGS = ['EdDSA', 'Ed25519', 'ES256', 'PS256'] as const;

export const hasRegisteredKeys = (client: ClientRecord): boolean => client.jwks !== null || client.jwksUri !== null;

/** A client's keys; `EdDSA` and `Ed25519` name the same Ed25519 keys. */
function localKeySet(set: { keys: JWK[] }) {
  const keys = set.keys.map((k: JWK) => (k.kty === 'OKP' && (k.alg === 'EdDSA' || k.alg === 'Ed25519') ? { ...k, alg: undefined } : k));
  return createLocalJWKSet({ keys });
}

/** Inline `jwks`, or the set at `jwks_uri` (`refresh`: fetch again if allowed); `fail` makes the endpoint's error. */
async function clientKeySet(
  client: ClientRecord,
  remote: RemoteKeySource | undefined,
  refresh: boolean,
  fail: (description: string) => AppError,
): Promise<{ keys: JWK[] }> {
  if (client.jwks) return client.jwks;
  if (!client.jwksUri || !remote) throw fail('the client has no registered keys');
  try {
    return await remote.keys(client.jwksUri, { refresh });
  } catch (err) {
    // Why the fetch failed (egress refusal, status, timeout) is for the operator's log only.
    throw fail("the client's jwks_uri could not be fetched").because(err, `jwks_uri ${client.jwksUri}: ${(err as Error).message}`);
  }
}

/**
 * Verifies a JWT signed by the client (signature and the claims `options` name); a remote set
 * lacking the key is fetched once more (key rotation). JOSE failures are thrown as they are, for
 * the caller to map to its error.
 */
export async function verifyClientJwt(
  jwt: string,
  client: ClientRecord,
  remote: RemoteKeySource | undefined,
  options: JWTVerifyOptions,
  fail: (description: string) => AppError,
): Promise<{ payload: JWTPayload; protectedHeader: ProtectedHeaderParameters }> {
  const verify = async (refresh: boolean) => jwtVerify(jwt, localKeySet(await clientKeySet(client, remote, refresh, fail)), options);
  try {
    return await verify(false);
  } catch (err) {
    if (!(err instanceof joseErrors.JWKSNoMatchingKey) || !client.jwksUri) throw err;
    return await verify(true);
  }
}
