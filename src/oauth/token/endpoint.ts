/** POST /token (RFC 6749 §3.2): client authentication, DPoP, then the grant's handler. */
import { authenticateClient, clientAuthDeps } from '../client-auth/authenticate.js';
import { DpopError, DpopNonceError, singleProof, verifyDpopProof, type VerifiedDpop } from '../dpop/verify.js';
import { oauthErrors } from '../errors.js';
import { param } from '../params.js';
import type { ClientRecord, OAuthHttpRequest, OAuthTenant } from '../types.js';
import { GRANTS } from './grants/index.js';
import type { GrantHandler, GrantTable, OAuthDeps, TokenResponse } from './types.js';

export const TOKEN_PATH = '/token';

function grantHandler(grants: GrantTable, grantType: string): GrantHandler {
  const handler = grants.get(grantType);
  if (!handler) throw oauthErrors.unsupportedGrantType(`unsupported grant_type`);
  return handler;
}

function checkClientMayUse(client: ClientRecord, grantType: string, handler: GrantHandler): void {
  if (client.authMethod === 'none' && !handler.publicClients) throw oauthErrors.unauthorizedClient('public clients may not use this grant');
  if (!client.grantTypes.includes(grantType)) throw oauthErrors.unauthorizedClient('grant_type not registered for this client');
}

/** Verifies the DPoP proof of a /token request, if one is sent (RFC 9449 §5). */
export async function tokenRequestProof(req: OAuthHttpRequest, tenant: OAuthTenant, deps: OAuthDeps, now: number): Promise<VerifiedDpop | undefined> {
  try {
    const proof = singleProof(req.headers.dpop);
    if (!proof) return undefined;
    const expectation = { method: 'POST', url: `${tenant.issuer}${req.path}`, tenantId: tenant.id, now, nonces: deps.dpopNonces };
    return await verifyDpopProof(proof, expectation, deps.replay);
  } catch (err) {
    if (err instanceof DpopError) throw oauthErrors.invalidDpopProof(err.message);
    if (err instanceof DpopNonceError) throw oauthErrors.useDpopNonce(err.nonce);
    throw err;
  }
}

function checkDpopRequired(client: ClientRecord, dpop: VerifiedDpop | undefined): void {
  if (client.dpopBound && !dpop) throw oauthErrors.invalidRequest('this client must send a DPoP proof');
}

export async function handleTokenRequest(
  req: OAuthHttpRequest,
  tenant: OAuthTenant,
  deps: OAuthDeps,
  grants: GrantTable = GRANTS,
): Promise<TokenResponse> {
  const now = deps.clock.now();
  const grantType = param(req.body, 'grant_type');
  if (grantType === undefined) throw oauthErrors.invalidRequest('missing parameter grant_type');
  const client = await authenticateClient(req, tenant, clientAuthDeps(deps, now));
  const handler = grantHandler(grants, grantType);
  checkClientMayUse(client, grantType, handler);
  const dpop = await tokenRequestProof(req, tenant, deps, now);
  checkDpopRequired(client, dpop);
  const settings = deps.lifetimes ? await deps.lifetimes.forTenant(tenant.id) : deps.settings;
  return handler.handle({ tenant, client, req, dpop, deps: { ...deps, settings }, now });
}
