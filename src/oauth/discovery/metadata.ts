/**
 * Discovery documents (RFC 8414, OpenID Connect Discovery 1.0, RFC 9728). Framework-free: each
 * function takes the tenant issuer and returns the JSON body. Every URL is on the issuer's own
 * host, and only implemented features are listed; a feature that lands adds its members to
 * `serverFeatures` below.
 */
import { DPOP_ALGS } from '../dpop/verify.js';
import { ACCESS_TOKEN_ALGS } from '../tokens/jws.js';
import { tokenServiceMetadata } from '../token/metadata.js';
import { signinMetadata } from '../authorize/metadata.js';
import { DEVICE_AUTHORIZATION_PATH } from '../device/authorization.js';
import { GRANT_TYPE } from '../types.js';

export type Metadata = Record<string, unknown>;

export const JWKS_PATH = '/.well-known/jwks.json';

/** What the composed server implements beyond the fixed members (src/oauth/compose.ts). */
export interface ServerFeatures {
  /** The grant table's keys. */
  grantTypes: readonly string[];
}

/** Members contributed by implemented features, in one place. */
const serverFeatures: Array<(issuer: string, f: ServerFeatures) => Metadata> = [
  (issuer) => ({ jwks_uri: `${issuer}${JWKS_PATH}` }),
  // Tenants sign ID tokens with RS256 by default (OpenID interop) and offer EdDSA.
  () => ({ id_token_signing_alg_values_supported: ['RS256', 'EdDSA'], subject_types_supported: ['public'] }),
  // Access tokens: EdDSA by default, or a resource server's choice (/v1/resource_servers).
  () => ({ access_token_signing_alg_values_supported: [...ACCESS_TOKEN_ALGS] }),
  // /token, /introspect, /revoke, DPoP (src/oauth/token/metadata.ts).
  (issuer, f) => tokenServiceMetadata(issuer, f.grantTypes),
  // /authorize, /par, /userinfo, /logout, ID tokens (src/oauth/authorize/metadata.ts).
  signinMetadata,
  // RFC 8628 §4: the device authorization endpoint, with the grant.
  (issuer, f) => (f.grantTypes.includes(GRANT_TYPE.deviceCode) ? { device_authorization_endpoint: `${issuer}${DEVICE_AUTHORIZATION_PATH}` } : {}),
];

/** RFC 8414 authorization server metadata; the OpenID configuration is the same document. */
export function authorizationServerMetadata(issuer: string, features: ServerFeatures): Metadata {
  return Object.assign({ issuer }, ...serverFeatures.map((f) => f(issuer, features))) as Metadata;
}

/** RFC 9728 protected resource metadata for the tenant's own resource endpoints. */
export function protectedResourceMetadata(issuer: string): Metadata {
  return {
    resource: issuer,
    authorization_servers: [issuer],
    jwks_uri: `${issuer}${JWKS_PATH}`,
    bearer_methods_supported: ['header'],
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
  };
}
