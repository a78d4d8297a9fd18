/** POST /token (RFC 6749 §3.2): client authentication, DPoP, then the grant's handler. */
import { authenticateClient, clientAuthDeps } from '../client-auth/authenticate.js';
import { authorizationServerProof } from '../dpop/proofs.js';
import type { VerifiedDpop } from '../dpop/verify.js';
import { oauthErrors } from '../errors.js';
import { param } from '../params.js';
import type { ClientRecord, OAuthHttpRequest, OAuthTenant } from '../types.js';
import { accessTokenPolicy } from './targets.js';
import type { GrantContext, GrantHandler, GrantTable, OAuthDeps, TokenResponse } from './types.js';

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

function checkDpopRequired(client: ClientRecord, dpop: VerifiedDpop | undefined): void {
  if (client.dpopBound && !dpop) throw oauthErrors.invalidRequest('this client must send a DPoP proof');
}

export async function handleTokenRequest(
  req: OAuthHttpRequest,
  tenant: OAuthTenant,
  deps: OAuthDeps,
  grants: GrantTable,
): Promise<TokenResponse> {
  const now = deps.clock.now();
  const grantType = param(req.body, 'grant_type');
  if (grantType === undefined) throw oauthErrors.invalidRequest('missing parameter grant_type');
  const client = await authenticateClient(req, tenant, clientAuthDeps(deps, now));
  const handler = grantHandler(grants, grantType);
  checkClientMayUse(client, grantType, handler);
  const dpop = await authorizationServerProof(req, tenant, deps, now);
  checkDpopRequired(client, dpop);
  const lifetimes = deps.lifetimes ? await deps.lifetimes.forTenant(tenant.id) : deps.settings;
  const tokenPolicy = (target: Parameters<GrantContext['tokenPolicy']>[0]) =>
    accessTokenPolicy(tenant, target, { ttlSeconds: lifetimes.accessTokenTtlSeconds }, deps.resourceServers);
  return handler.handle({ tenant, client, req, dpop, lifetimes, now, tokenPolicy });
}
