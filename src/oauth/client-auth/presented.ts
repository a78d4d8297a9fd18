/** What credentials a request presents (RFC 6749 §2.3, RFC 7523 §2.2), before any look-up. */
import { oauthErrors } from '../errors.js';
import { header, param } from '../params.js';
import type { AuthMethod, OAuthHttpRequest } from '../types.js';

export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export type Presented =
  | { method: 'client_secret_basic' | 'client_secret_post'; clientId: string; secret: string }
  | { method: 'private_key_jwt'; clientId: string | undefined; assertion: string }
  | { method: 'none'; clientId: string };

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. Malformed: invalid_client. */
export function parseBasic(value: string): { clientId: string; secret: string } {
  const encoded = value.slice('basic '.length).trim();
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw oauthErrors.invalidClient('malformed Basic credentials');
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    throw oauthErrors.invalidClient('malformed Basic credentials');
  }
}

/** Finds the one authentication method used; two at once is `invalid_request`. */
export function presentedCredentials(req: OAuthHttpRequest): Presented {
  const authorization = header(req.headers, 'authorization');
  const basic = authorization && /^basic /i.test(authorization) ? parseBasic(authorization) : undefined;
  const bodyClientId = param(req.body, 'client_id');
  const bodySecret = param(req.body, 'client_secret');
  const assertion = param(req.body, 'client_assertion');
  const assertionType = param(req.body, 'client_assertion_type');
  const used = [basic, bodySecret, assertion ?? assertionType].filter((x) => x !== undefined);
  if (used.length > 1) throw oauthErrors.invalidRequest('more than one client authentication method');
  if (basic) {
    if (bodyClientId !== undefined && bodyClientId !== basic.clientId) {
      throw oauthErrors.invalidRequest('client_id does not match the Authorization header');
    }
    return { method: 'client_secret_basic', ...basic };
  }
  if (bodySecret !== undefined) {
    if (bodyClientId === undefined) throw oauthErrors.invalidClient('client_secret without client_id');
    return { method: 'client_secret_post', clientId: bodyClientId, secret: bodySecret };
  }
  if (assertion !== undefined || assertionType !== undefined) {
    if (assertionType !== JWT_BEARER_ASSERTION) throw oauthErrors.invalidClient('unsupported client_assertion_type');
    if (assertion === undefined) throw oauthErrors.invalidRequest('missing client_assertion');
    return { method: 'private_key_jwt', clientId: bodyClientId, assertion };
  }
  if (bodyClientId === undefined) throw oauthErrors.invalidClient('client authentication is required');
  return { method: 'none', clientId: bodyClientId };
}

export const usesSecret = (m: AuthMethod) => m === 'client_secret_basic' || m === 'client_secret_post';
