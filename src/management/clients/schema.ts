/** Wire schemas of OAuth clients, with RFC 7591 metadata names. */
import { z } from 'zod';
import { isLoopbackHost } from '../../kernel/tenancy.js';
import { isPublicJwk } from '../../oauth/jwk.js';
import { SCOPE_LIST } from '../../oauth/scope.js';
import { isResourceIndicator } from '../../oauth/token/targets.js';
import { isWebOrigin } from '../../oauth/cors.js';
import { AUTH_METHODS, GRANT_TYPE } from '../../oauth/types.js';
import { CLIENT_PROFILES, type ClientProfile } from '../../oauth/authorize/types.js';
import { CLAIM_NAME, CLAIM_SOURCE, CLAIM_TARGETS, type ClaimMapping, isReservedClaim, MAX_CLAIM_MAPPINGS } from '../../oauth/claims-mapping.js';

const absoluteUri = z.string().max(2000).refine(isResourceIndicator, 'must be an absolute URI without a fragment');

/**
 * A redirect URI (RFC 6749 §3.1.2, RFC 8252 §7): absolute, no fragment, no credentials; https,
 * or http only to a loopback host, or a private-use scheme in reverse-domain form
 * (`com.example.app:/cb`). Script-capable and local schemes (`javascript:`, `data:`, `file:`…)
 * are refused.
 */
export const redirectUri = z
  .string()
  .max(2000)
  .refine((v) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      return false;
    }
    if (v.includes('#') || u.username || u.password) return false;
    if (u.protocol === 'https:') return true;
    if (u.protocol === 'http:') return isLoopbackHost(u.host);
    return /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(u.protocol);
  }, 'must be https (http only for loopback hosts) or a reverse-domain private-use scheme, without fragment or credentials');

/** A browser origin allowed to call /token, /revoke and /userinfo (oauth/cors.ts). */
const webOrigin = z
  .string()
  .max(2000)
  .refine(isWebOrigin, 'must be an origin scheme://host[:port] (https, or http for a loopback host) without path, wildcard or trailing slash');

const publicJwk = z
  .looseObject({ kty: z.enum(['OKP', 'EC', 'RSA']), kid: z.string().max(200).optional(), alg: z.string().optional() })
  .refine(isPublicJwk, 'must hold public keys only');

const jwks = z
  .object({ keys: z.array(publicJwk).min(1).max(10) })
  .refine((s) => new Set(s.keys.map((k) => k.kid ?? '')).size === s.keys.length, 'must give each key a unique kid');

const scopeString = z.string().max(2000).regex(SCOPE_LIST, 'must be space-separated scope tokens');

export const tokenExchangePolicy = z.strictObject({
  subject_clients: z.array(z.string().max(100)).max(100).default([]),
  audiences: z.array(z.string().min(1).max(2000)).max(100).default([]),
});

/** One claims mapping (docs/authorization.md, "Claims mapping"): no registered or Keyhall claim, no expression. */
const claimMapping = z.strictObject({
  claim: z
    .string()
    .regex(CLAIM_NAME, 'must be 1 to 200 printable characters without spaces')
    .refine((c) => !isReservedClaim(c), 'is a registered or reserved claim'),
  from: z.string().regex(CLAIM_SOURCE, 'must be email, email_verified, name, picture, or metadata.<key>… / private_metadata.<key>… (up to 5 keys)'),
  tokens: z
    .array(z.enum(CLAIM_TARGETS))
    .min(1)
    .max(CLAIM_TARGETS.length)
    .refine((t) => new Set(t).size === t.length, 'must not repeat a target'),
});

const claimMappings = z
  .array(claimMapping)
  .max(MAX_CLAIM_MAPPINGS)
  .refine((ms) => new Set(ms.map((m) => m.claim)).size === ms.length, 'must map each claim once');

export const clientMetadata = z.strictObject({
  client_name: z.string().min(1).max(200).optional(),
  redirect_uris: z.array(redirectUri).max(50).optional(),
  grant_types: z
    .array(z.enum(Object.values(GRANT_TYPE) as [string, ...string[]]))
    .min(1)
    .max(10)
    .optional(),
  token_endpoint_auth_method: z.enum(AUTH_METHODS).optional(),
  token_endpoint_auth_method_strict: z.boolean().optional(),
  jwks: jwks.nullable().optional(),
  jwks_uri: z.string().min(1).max(2048).nullable().optional(),
  scope: scopeString.nullable().optional(),
  dpop_bound_access_tokens: z.boolean().optional(),
  allowed_resources: z.array(absoluteUri).max(50).optional(),
  allowed_origins: z.array(webOrigin).max(50).optional(),
  token_exchange: tokenExchangePolicy.nullable().optional(),
  // Sign-in settings (docs/signin.md): OpenID Connect Registration, RFC 9126 and RP-initiated
  // logout names, plus Keyhall's `third_party` (consent is asked only of third-party clients).
  id_token_signed_response_alg: z.enum(['RS256', 'EdDSA']).optional(),
  require_pushed_authorization_requests: z.boolean().optional(),
  post_logout_redirect_uris: z.array(redirectUri).max(50).optional(),
  third_party: z.boolean().optional(),
  // OpenID Connect Back-Channel Logout 1.0 §2.2 (checked against the egress policy like a webhook URL).
  backchannel_logout_uri: z.string().min(1).max(2048).nullable().optional(),
  backchannel_logout_session_required: z.boolean().optional(),
  // RFC 9101 §10.5 and the FAPI 2.0 Security Profile (docs/oauth.md).
  require_signed_request_object: z.boolean().optional(),
  profile: z.enum(CLIENT_PROFILES).nullable().optional(),
  // Extra claims from user fields and metadata (docs/authorization.md, "Claims mapping").
  claims: claimMappings.optional(),
});

export type ClientMetadataInput = z.infer<typeof clientMetadata>;

/** The representation returned by the API: RFC 7591 §3.2.1 names, never the secret hash. */
export interface ClientView {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: number;
  client_name: string | null;
  redirect_uris: string[];
  grant_types: string[];
  token_endpoint_auth_method: string;
  token_endpoint_auth_method_strict: boolean;
  jwks: unknown;
  jwks_uri: string | null;
  scope: string | null;
  dpop_bound_access_tokens: boolean;
  allowed_resources: string[];
  allowed_origins: string[];
  token_exchange: unknown;
  id_token_signed_response_alg: 'RS256' | 'EdDSA';
  require_pushed_authorization_requests: boolean;
  post_logout_redirect_uris: string[];
  third_party: boolean;
  backchannel_logout_uri: string | null;
  backchannel_logout_session_required: boolean;
  require_signed_request_object: boolean;
  profile: ClientProfile | null;
  claims: ClaimMapping[];
}
