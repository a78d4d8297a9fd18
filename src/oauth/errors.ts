/**
 * OAuth error factories (RFC 6749 §5.2, RFC 6750 §3, RFC 7591 §3.2.2, RFC 8707, RFC 9449).
 * Handlers throw these; src/http/errors.ts renders every AppError the same way.
 */
import { AppError } from '../kernel/errors.js';

export const oauthErrors = {
  invalidRequest: (d?: string) => new AppError(400, 'invalid_request', d),
  /** Client authentication failed (RFC 6749 §5.2): always 401 with a Basic challenge. */
  invalidClient: (d?: string) => new AppError(401, 'invalid_client', d, { 'www-authenticate': 'Basic realm="token", charset="UTF-8"' }),
  invalidGrant: (d?: string) => new AppError(400, 'invalid_grant', d),
  unauthorizedClient: (d?: string) => new AppError(400, 'unauthorized_client', d),
  unsupportedGrantType: (d?: string) => new AppError(400, 'unsupported_grant_type', d),
  invalidScope: (d?: string) => new AppError(400, 'invalid_scope', d),
  invalidTarget: (d?: string) => new AppError(400, 'invalid_target', d),
  invalidDpopProof: (d?: string) => new AppError(400, 'invalid_dpop_proof', d),
  useDpopNonce: (nonce: string) => new AppError(400, 'use_dpop_nonce', 'Authorization server requires nonce in DPoP proof', { 'dpop-nonce': nonce }),
  unsupportedTokenType: (d?: string) => new AppError(400, 'unsupported_token_type', d),
  invalidClientMetadata: (d?: string) => new AppError(400, 'invalid_client_metadata', d),
  invalidRedirectUri: (d?: string) => new AppError(400, 'invalid_redirect_uri', d),
  /** The device grant's polling answers (RFC 8628 §3.5). */
  authorizationPending: (d?: string) => new AppError(400, 'authorization_pending', d),
  slowDown: (d?: string) => new AppError(400, 'slow_down', d),
  accessDenied: (d?: string) => new AppError(400, 'access_denied', d),
  expiredToken: (d?: string) => new AppError(400, 'expired_token', d),
  /** A request object that fails verification (RFC 9101 §6.3). */
  invalidRequestObject: (d?: string) => new AppError(400, 'invalid_request_object', d),
  /** An authorization-request error answered as JSON at /par (RFC 9126 §2.3): its own code, 400. */
  pushedRequest: (code: string, d: string) => new AppError(400, code, d),
};

/** How a resource server challenges (RFC 6750 §3, RFC 9449 §7.1, RFC 9728 §5.1). */
export interface Challenge {
  /** `Bearer` or `DPoP`. */
  scheme: 'Bearer' | 'DPoP';
  /** The protected resource metadata URL. */
  resourceMetadata: string;
  /** DPoP algorithms, announced on DPoP challenges. */
  algs?: readonly string[];
  /** The scopes to ask for (RFC 6750 §3), announced when no token came (MCP clients request these). */
  scope?: string;
}

function challengeHeader(c: Challenge, error?: string, extra: Record<string, string> = {}): string {
  const params: string[] = [];
  if (error) params.push(`error="${error}"`);
  if (c.scheme === 'DPoP' && c.algs) params.push(`algs="${c.algs.join(' ')}"`);
  params.push(`resource_metadata="${c.resourceMetadata}"`);
  for (const [k, v] of Object.entries(extra)) params.push(`${k}="${v}"`);
  if (c.scope && !error) params.push(`scope="${c.scope}"`);
  return `${c.scheme} ${params.join(', ')}`;
}

export const resourceErrors = {
  /** No credentials at all: a bare challenge with no error code (RFC 6750 §3.1). */
  missingToken: (c: Challenge) => new AppError(401, 'invalid_token', 'An access token is required', { 'www-authenticate': challengeHeader(c) }),
  invalidToken: (c: Challenge, d?: string) => new AppError(401, 'invalid_token', d, { 'www-authenticate': challengeHeader(c, 'invalid_token') }),
  invalidDpopProof: (c: Challenge, d?: string) =>
    new AppError(401, 'invalid_dpop_proof', d, { 'www-authenticate': challengeHeader({ ...c, scheme: 'DPoP' }, 'invalid_dpop_proof') }),
  useDpopNonce: (c: Challenge, nonce: string) =>
    new AppError(401, 'use_dpop_nonce', 'Resource server requires nonce in DPoP proof', {
      'www-authenticate': challengeHeader({ ...c, scheme: 'DPoP' }, 'use_dpop_nonce'),
      'dpop-nonce': nonce,
    }),
  insufficientScope: (c: Challenge, scope: string) =>
    new AppError(403, 'insufficient_scope', `requires scope ${scope}`, {
      'www-authenticate': challengeHeader(c, 'insufficient_scope', { scope }),
    }),
};
