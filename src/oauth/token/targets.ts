/** Scope narrowing (RFC 6749 §3.3) and resource indicators (RFC 8707 §2). */
import { oauthErrors } from '../errors.js';
import { params, param } from '../params.js';
import { parseScope } from '../scope.js';
import type { OAuthHttpRequest } from '../types.js';

/** The requested scopes, each within `allowed`; none requested means all of `allowed`. */
export function narrowScope(req: OAuthHttpRequest, allowed: readonly string[]): string[] {
  const requested = parseScope(param(req.body, 'scope'), oauthErrors.invalidScope);
  if (requested === undefined) return [...allowed];
  const outside = requested.filter((s) => !allowed.includes(s));
  if (outside.length > 0) throw oauthErrors.invalidScope(`scope not allowed: ${outside.join(' ')}`);
  return requested;
}

/** A resource indicator is an absolute URI without a fragment (RFC 8707 §2). */
export function checkResourceSyntax(resource: string, invalid: (description: string) => Error = oauthErrors.invalidTarget): void {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    throw invalid('resource must be an absolute URI');
  }
  if (url.hash || resource.includes('#')) throw invalid('resource must not contain a fragment');
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
