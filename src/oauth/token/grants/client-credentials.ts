/** client_credentials (RFC 6749 §4.4): the client acts for itself; no refresh token (§4.4.3). */
import { accessTokenOrganizationClaims, type OrganizationPort } from '../../organization.js';
import { issueAccessToken, type KeySource } from '../../tokens/access-token.js';
import { narrowScope, requestedResources } from '../targets.js';
import type { GrantContext, GrantHandler, TokenResponse } from '../types.js';

export function clientCredentialsGrant(ports: { keys: KeySource; organizations?: OrganizationPort | undefined }): GrantHandler {
  /**
   * A client bound to an organization gets its claims (org_id, org_roles, permissions), read at
   * each issuance: one statement, and only for a bound client (docs/authorization.md).
   */
  async function organizationClaims(ctx: GrantContext, audience: string[], scopes: string[]): Promise<Record<string, unknown> | undefined> {
    const grant = ctx.client.organizationGrant;
    if (!grant || !ports.organizations?.clientGrants) return undefined;
    const grants = await ports.organizations.clientGrants(ctx.tenant.id, grant.organizationId, grant.roles, audience);
    return grants ? accessTokenOrganizationClaims(grant.organizationId, grants, audience, scopes) : undefined;
  }

  async function handle(ctx: GrantContext): Promise<TokenResponse> {
    const { tenant, client, req } = ctx;
    const scopes = narrowScope(req, client.scopes);
    const audience = requestedResources(req, [...client.allowedResources, tenant.issuer]);
    const { alg, ttlSeconds } = await ctx.tokenPolicy({ audience, scopes, jkt: ctx.dpop?.jkt });
    const organization = await organizationClaims(ctx, audience, scopes);
    const at = await issueAccessToken(
      tenant,
      { sub: client.id, clientId: client.id, scopes, audience, jkt: ctx.dpop?.jkt, ttlSeconds, alg, organization },
      { keys: ports.keys, now: ctx.now },
    );
    return {
      access_token: at.token,
      token_type: at.tokenType,
      expires_in: at.expiresIn,
      ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
    };
  }
  return { publicClients: false, handle };
}
