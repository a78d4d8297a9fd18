/**
 * DPoP proofs as endpoints take them: the one mapping of check failures to OAuth errors (400 at
 * the authorization server, RFC 9449 §5; 401 with a DPoP challenge at resource servers, §7.1),
 * and the proof of a /token or /par request.
 */
import type { AppError } from '../../kernel/errors.js';
import { type Challenge, oauthErrors, resourceErrors } from '../errors.js';
import type { OAuthHttpRequest, OAuthTenant, ReplayCache } from '../types.js';
import type { DpopNonces } from './nonce.js';
import { DpopError, DpopNonceError, singleProof, type VerifiedDpop, verifyDpopProof } from './verify.js';

export interface DpopFailures {
  invalidProof(description: string): AppError;
  useNonce(nonce: string): AppError;
}

/** At /token and /par. */
export const authorizationServerFailures: DpopFailures = { invalidProof: oauthErrors.invalidDpopProof, useNonce: oauthErrors.useDpopNonce };

/** At a protected resource, with its challenge. */
export const resourceServerFailures = (c: Challenge): DpopFailures => ({
  invalidProof: (d) => resourceErrors.invalidDpopProof(c, d),
  useNonce: (nonce) => resourceErrors.useDpopNonce(c, nonce),
});

/** Runs DPoP checks, turning their failures into the endpoint's errors. */
export async function withDpopFailures<T>(failures: DpopFailures, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (err instanceof DpopError) throw failures.invalidProof(err.message);
    if (err instanceof DpopNonceError) throw failures.useNonce(err.nonce);
    throw err;
  }
}

/** The verified DPoP proof of a /token or /par request, if one was sent (RFC 9449 §5, §10.1). */
export function authorizationServerProof(
  req: OAuthHttpRequest,
  tenant: OAuthTenant,
  deps: { replay: ReplayCache; dpopNonces?: DpopNonces | undefined },
  now: number,
): Promise<VerifiedDpop | undefined> {
  return withDpopFailures(authorizationServerFailures, async () => {
    const proof = singleProof(req.headers.dpop);
    if (!proof) return undefined;
    const expectation = { method: 'POST', url: `${tenant.issuer}${req.path}`, tenantId: tenant.id, now, nonces: deps.dpopNonces };
    return verifyDpopProof(proof, expectation, deps.replay);
  });
}
