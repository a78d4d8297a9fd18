/** Discovery members for the token service (RFC 8414 §2, RFC 9449 §5.1, RFC 8693, RFC 7662, RFC 7009). */
import { ASSERTION_ALGS } from '../client-auth/assertion.js';
import { DPOP_ALGS } from '../dpop/verify.js';
import { AUTH_METHODS, GRANT_TYPE } from '../types.js';

const CONFIDENTIAL_METHODS = AUTH_METHODS.filter((m) => m !== 'none');

/** `grantTypes`: the keys of the composed grant table (src/oauth/compose.ts). */
export function tokenServiceMetadata(issuer: string, grantTypes: readonly string[]): Record<string, unknown> {
  return {
    token_endpoint: `${issuer}/token`,
    grant_types_supported: [...grantTypes],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    introspection_endpoint: `${issuer}/introspect`,
    introspection_endpoint_auth_methods_supported: CONFIDENTIAL_METHODS,
    introspection_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
    revocation_endpoint: `${issuer}/revoke`,
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
    revocation_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
    // OID4VCI §12.3: wallets redeem pre-authorized codes without client authentication.
    ...(grantTypes.includes(GRANT_TYPE.preAuthorizedCode) ? { 'pre-authorized_grant_anonymous_access_supported': true } : {}),
  };
}
