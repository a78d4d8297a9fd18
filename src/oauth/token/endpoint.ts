/** POST /token (RFC 6749 §3.2): client authentication, DPoP, then the grant's handler. */
import { authenticateClient, clientAuthDeps } from '../client-auth/authenticate.js';
import { authorizationServerProof } from '../dpop/proofs.js';
import type { VerifiedDpop } from '../dpop/verify.js';
import { oauthErrors } from '../errors.js';
import { param } from '../params.js';
import type { ClientProfile } from '../authorize/types.js';
import { checkProfileClientAuth, checkProfileDpop } from '../profile.js';
import type { ClientRecord, OAuthHttpRequest, OAuthTenant } from '../types.js';
import { accessTokenPolicy } from './targets.js';
import type { ClientGrantHandler, GrantContext, GrantHandler, GrantTable, OAuthDeps, TokenResponse } from './types.js';

export const TOKEN_PATH = '/token';

function grantHandler(grants: GrantTable, grantType: string): ClientGrantHandler {
  const handler: GrantHandler | undefined = grants.get(grantType);
  if (!handler || handler.anonymous) throw oauthErrors.unsupportedGrantType(`unsupported grant_type`);
  return handler;
}

function checkClientMayUse(client: ClientRecord, grantType: string, handler: ClientGrantHandler): void {
  if (client.authMethod === 'none' && !handler.publicClients) throw oauthErrors.unauthorizedClient('public clients may not use this grant');
  if (!client.grantTypes.includes(grantType)) throw oauthErrors.unauthorizedClient('grant_type not registered for this client');
}

function checkDpopRequired(client: ClientRecord, dpop: VerifiedDpop | undefined, profile: ClientProfile | null): void {
  if (client.dpopBound && !dpop) throw oauthErrors.invalidRequest('this client must send a DPoP proof');
  checkProfileDpop(profile, dpop);
}

export async function handleTokenRequest(req: OAuthHttpRequest, tenant: OAuthTenant, deps: OAuthDeps, grants: GrantTable): Promise<TokenResponse> {
  const now = deps.clock.now();
  const grantType = param(req.body, 'grant_type');
  if (grantType === undefined) throw oauthErrors.invalidRequest('missing parameter grant_type');
  const lifetimes = async () => (deps.lifetimes ? await deps.lifetimes.forTenant(tenant.id) : deps.settings);
  const tokenPolicy = (ttlSeconds: number) => (target: Parameters<GrantContext['tokenPolicy']>[0]) =>
    accessTokenPolicy(tenant, target, { ttlSeconds }, deps.resourceServers);
  const anonymous = grants.get(grantType);
  if (anonymous?.anonymous) {
    // No client authentication (OID4VCI §6.1: the pre-authorized code is the credential).
    const dpop = await authorizationServerProof(req, tenant, deps, now);
    const l = await lifetimes();
    return anonymous.handle({ tenant, req, dpop, lifetimes: l, now, tokenPolicy: tokenPolicy(l.accessTokenTtlSeconds) });
  }
  const client = await authenticateClient(req, tenant, clientAuthDeps(deps, now));
  const profile = (await deps.clientProfile?.(tenant.id, client.id)) ?? null;
  checkProfileClientAuth(client, profile);
  const handler = grantHandler(grants, grantType);
  checkClientMayUse(client, grantType, handler);
  const dpop = await authorizationServerProof(req, tenant, deps, now);
  checkDpopRequired(client, dpop, profile);
  const l = await lifetimes();
  return handler.handle({ tenant, client, req, dpop, lifetimes: l, now, tokenPolicy: tokenPolicy(l.accessTokenTtlSeconds) });
}
