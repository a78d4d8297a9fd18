/** JWK checks shared by client registration, client jwks_uri sets and DPoP proofs. */

/** Members that only private (or symmetric) keys carry (RFC 7517, RFC 7518 §6). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** True for an asymmetric public key: no private members and not a symmetric (`oct`) key. */
export function isPublicJwk(jwk: object): boolean {
  return (jwk as { kty?: unknown }).kty !== 'oct' && !PRIVATE_MEMBERS.some((m) => m in jwk);
}
