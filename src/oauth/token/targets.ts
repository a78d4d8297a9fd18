/** Scope narrowing (RFC 6749 §3.3) and resource indicators (RFC 8707 §2). */
import { oauthErrors } from '../errors.js';
import { params, param } from '../params.js';
import { parseScope } from '../scope.js';
import type { AccessTokenAlg } from '../tokens/jws.js';
import type { OAuthHttpRequest, OAuthTenant, ResourceServerStore } from '../types.js';

/** The requested scopes, each within `allowed`; none requested means all of `allowed`. */
export function narrowScope(req: OAuthHttpRequest, allowed: readonly string[]): string[] {
  const requested = parseScope(param(req.body, 'scope'), oauthErrors.invalidScope);
  if (requested === undefined) return [...allowed];
  const outside = requested.filter((s) => !allowed.includes(s));
  if (outside.length > 0) throw oauthErrors.invalidScope(`scope not allowed: ${outside.join(' ')}`);
  return requested;
}

/** A resource indicator (RFC 8707 §2): an absolute URI without a fragment. */
export function isResourceIndicator(value: string): boolean {
  return URL.canParse(value) && !value.includes('#');
}

/** Throws what `invalid` makes unless `resource` is a resource indicator. */
export function checkResourceSyntax(resource: string, invalid: (description: string) => Error = oauthErrors.invalidTarget): void {
  if (!URL.canParse(resource)) throw invalid('resource must be an absolute URI');
  if (resource.includes('#')) throw invalid('resource must not contain a fragment');
}

/** The `resource` parameters, each well formed and in `allowed`. */
export function requestedResources(req: OAuthHttpRequest, allowed: readonly string[]): string[] {
  const resources = params(req.body, 'resource');
  for (const r of resources) {
    checkResourceSyntax(r);
    if (!allowed.includes(r)) throw oauthErrors.invalidTarget(`resource not allowed for this client: ${r}`);
  }
  return resources;
}

/** How an access token is signed and how long it lives, from the resource it is for. */
export interface AccessTokenPolicy {
  alg: AccessTokenAlg;
  ttlSeconds: number;
}

/** OpenID and grant scopes: about the user or the grant, not defined by resource servers. */
const PROTOCOL_SCOPES = new Set(['openid', 'profile', 'email', 'address', 'phone', 'offline_access']);

/**
 * The policy of a token for `audience`. No resource (or only unregistered ones): EdDSA and the
 * tenant's lifetime, with no look-up when no resource is named. A registered resource server:
 * its algorithm and lifetime; the scopes must be ones it defines (`invalid_scope`) and the token
 * DPoP-bound if it requires (`invalid_request`). A registered resource server must be the only
 * resource of the request (`invalid_target`; as oidc-provider does): one token has one signing
 * algorithm and one lifetime.
 */
export async function accessTokenPolicy(
  tenant: OAuthTenant,
  target: { audience: readonly string[]; scopes: readonly string[]; jkt: string | null | undefined },
  defaults: { ttlSeconds: number },
  store: ResourceServerStore | undefined,
): Promise<AccessTokenPolicy> {
  const fallback: AccessTokenPolicy = { alg: 'EdDSA', ttlSeconds: defaults.ttlSeconds };
  if (target.audience.length === 0 || !store) return fallback;
  const found = (await Promise.all(target.audience.map((a) => store.findByIdentifier(tenant.id, a)))).filter((rs) => rs !== undefined);
  if (found.length === 0) return fallback;
  if (target.audience.length > 1) throw oauthErrors.invalidTarget('a registered resource server must be the only resource of a token request');
  const rs = found[0]!;
  const undefinedScopes = target.scopes.filter((s) => !PROTOCOL_SCOPES.has(s) && !rs.scopes.includes(s));
  if (undefinedScopes.length > 0) throw oauthErrors.invalidScope(`scope not defined by the resource server: ${undefinedScopes.join(' ')}`);
  if (rs.dpopRequired && !target.jkt) throw oauthErrors.invalidRequest('the resource server requires DPoP-bound access tokens');
  return { alg: rs.signingAlg, ttlSeconds: rs.accessTokenTtlSeconds ?? defaults.ttlSeconds };
}
