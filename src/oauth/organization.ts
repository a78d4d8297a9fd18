/**
 * Organization-scoped sign-in and tokens (docs/authorization.md): `/authorize?organization=org_…`
 * signs the user in to that organization (membership required), and the tokens then carry
 * `org_id`, `org_roles` and, for an access token to a resource server, `permissions`.
 * Framework-free; the composition root gives the port (roles live in the management layer).
 */

/** What a member's roles grant in an organization, read at each issuance. */
export interface OrganizationGrants {
  roles: string[];
  /** Each permission with the identifier (audience) of the resource server declaring it. */
  permissions: Array<{ identifier: string; permission: string }>;
}

export interface OrganizationPort {
  /** The user's grants in the organization, or undefined when the user is not a member. */
  grants(tenantId: string, organizationId: string, userId: string): Promise<OrganizationGrants | undefined>;
  /**
   * What a client's roles grant in the organization it is bound to, for the token's audience (one
   * statement; the resource servers come from the audience already looked up); undefined when the
   * organization no longer exists. Roles deleted since the binding are left out.
   */
  clientGrants?(tenantId: string, organizationId: string, roles: readonly string[], audience: readonly string[]): Promise<OrganizationGrants | undefined>;
  /** Records that a browser session signed in to the organization (prompt=none may not switch organization). */
  enter(tenantId: string, sessionId: string, organizationId: string): Promise<void>;
}

/** The stable claim names (docs/authorization.md). */
export const ORG_ID_CLAIM = 'org_id';
export const ORG_ROLES_CLAIM = 'org_roles';
export const PERMISSIONS_CLAIM = 'permissions';

/** The ID token's organization claims. */
export function idTokenOrganizationClaims(organizationId: string, g: OrganizationGrants): Record<string, unknown> {
  return { [ORG_ID_CLAIM]: organizationId, [ORG_ROLES_CLAIM]: g.roles };
}

/**
 * The access token's organization claims: `permissions` (for a token to resource servers) is
 * the union of the roles' permissions of those APIs, intersected with the granted scopes.
 */
export function accessTokenOrganizationClaims(organizationId: string, g: OrganizationGrants, audience: string[], scopes: string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = idTokenOrganizationClaims(organizationId, g);
  if (audience.length === 0) return claims;
  const aud = new Set(audience);
  const granted = new Set(scopes);
  claims[PERMISSIONS_CLAIM] = [...new Set(g.permissions.filter((p) => aud.has(p.identifier) && granted.has(p.permission)).map((p) => p.permission))];
  return claims;
}
