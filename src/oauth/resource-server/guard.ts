/**
 * The resource-server guard (RFC 6750, RFC 9068 §4, RFC 9449 §7): one function used by every
 * protected endpoint (/userinfo, /credentials/*, /mcp). Framework-free; the Fastify preHandler
 * is src/http/oauth/guard.ts.
 */
import { resourceServerFailures, withDpopFailures } from '../dpop/proofs.js';
import { DPOP_ALGS, DpopError, singleProof, verifyDpopProof } from '../dpop/verify.js';
import { type Challenge, resourceErrors } from '../errors.js';
import { hasScope } from '../scope.js';
import type { OAuthDeps } from '../token/types.js';
import { type AccessTokenClaims, TokenInvalid, verifyAccessToken } from '../tokens/verify-access-token.js';
import type { OAuthTenant } from '../types.js';

export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface ProtectedRequest {
  method: string;
  /** The endpoint URL without query (issuer + path): what a DPoP `htu` must name. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface GuardOptions {
  /** This endpoint's resource identifier: the token's `aud` must contain it. */
  resource: string;
  /** A scope the token must carry (403 `insufficient_scope` otherwise). */
  scope?: string;
  /** The OID4VCI credential endpoint: only tokens of the pre-authorized code grant (and they only here). */
  credentialEndpoint?: boolean;
  /** This endpoint's RFC 9728 metadata path (default: the tenant's `/.well-known/oauth-protected-resource`). */
  resourceMetadataPath?: string;
  /** Scopes named in the challenge to a request without a token (what a client should ask for). */
  challengeScope?: string;
}

interface Presented {
  scheme: 'Bearer' | 'DPoP';
  token: string;
}

function challengeFor(tenant: OAuthTenant, scheme: 'Bearer' | 'DPoP', opts: GuardOptions): Challenge {
  return {
    scheme,
    resourceMetadata: `${tenant.issuer}${opts.resourceMetadataPath ?? PROTECTED_RESOURCE_METADATA_PATH}`,
    algs: DPOP_ALGS,
    ...(opts.challengeScope ? { scope: opts.challengeScope } : {}),
  };
}

/** Reads `Authorization: Bearer|DPoP <token>` (scheme case-insensitive); never the query string. */
function presentedToken(req: ProtectedRequest, tenant: OAuthTenant, opts: GuardOptions): Presented {
  const values = req.headers.authorization;
  const list = values === undefined ? [] : Array.isArray(values) ? values : [values];
  if (list.length === 0) throw resourceErrors.missingToken(challengeFor(tenant, 'Bearer', opts));
  const m = list.length === 1 ? /^(bearer|dpop) +([\w\-.~+/]+=*)$/i.exec(list[0]!) : null;
  if (!m) throw resourceErrors.invalidToken(challengeFor(tenant, 'Bearer', opts), 'malformed Authorization header');
  return { scheme: m[1]!.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: m[2]! };
}

async function verifiedClaims(p: Presented, tenant: OAuthTenant, opts: GuardOptions, deps: OAuthDeps, now: number) {
  try {
    return await verifyAccessToken(
      p.token,
      tenant,
      { keys: deps.keys, revoked: deps.revoked, now },
      { audience: opts.resource, credentialEndpoint: opts.credentialEndpoint ?? false },
    );
  } catch (err) {
    if (err instanceof TokenInvalid) throw resourceErrors.invalidToken(challengeFor(tenant, p.scheme, opts), err.message);
    throw err;
  }
}

/** A bound token needs the DPoP scheme and a proof by its key; an unbound one, Bearer. */
async function checkBinding(
  req: ProtectedRequest,
  p: Presented,
  claims: AccessTokenClaims,
  tenant: OAuthTenant,
  opts: GuardOptions,
  deps: OAuthDeps,
  now: number,
) {
  const jkt = claims.cnf?.jkt;
  if (!jkt) {
    if (p.scheme === 'DPoP') throw resourceErrors.invalidToken(challengeFor(tenant, 'DPoP', opts), 'token is not DPoP-bound');
    return;
  }
  if (p.scheme !== 'DPoP') throw resourceErrors.invalidToken(challengeFor(tenant, 'DPoP', opts), 'DPoP-bound token sent as Bearer');
  await withDpopFailures(resourceServerFailures(challengeFor(tenant, 'DPoP', opts)), async () => {
    const proof = singleProof(req.headers.dpop);
    if (!proof) throw new DpopError('missing DPoP proof');
    const verified = await verifyDpopProof(
      proof,
      { method: req.method, url: req.url, accessToken: p.token, tenantId: tenant.id, now, nonces: deps.dpopNonces },
      deps.replay,
    );
    if (verified.jkt !== jkt) throw new DpopError('the DPoP proof is signed by another key');
  });
}

function checkScope(claims: AccessTokenClaims, p: Presented, tenant: OAuthTenant, opts: GuardOptions): void {
  const scope = opts.scope;
  if (scope === undefined) return;
  if (!hasScope(claims.scope, scope)) throw resourceErrors.insufficientScope(challengeFor(tenant, p.scheme, opts), scope);
}

/** Returns the verified claims of the request's access token, or throws a 401/403 AppError. */
export async function authorizeResourceRequest(req: ProtectedRequest, tenant: OAuthTenant, opts: GuardOptions, deps: OAuthDeps): Promise<AccessTokenClaims> {
  const now = deps.clock.now();
  const presented = presentedToken(req, tenant, opts);
  const claims = await verifiedClaims(presented, tenant, opts, deps, now);
  await checkBinding(req, presented, claims, tenant, opts, deps, now);
  checkScope(claims, presented, tenant, opts);
  return claims;
}
