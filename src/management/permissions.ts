/**
 * The permission catalogue: every scope an API key may hold. docs/permissions.md mirrors it, and
 * each /v1 route declares the one permission it needs.
 */
export const PERMISSIONS = [
  'organizations:read',
  'organizations:write',
  'domains:verify',
  'users:read',
  'users:write',
  'members:read',
  'members:write',
  'api_keys:read',
  'api_keys:write',
  'clients:read',
  'clients:write',
  'clients:register',
  'resource_servers:read',
  'resource_servers:write',
  'webhooks:read',
  'webhooks:write',
  'directory:read',
  'directory:write',
  'connect_providers:read',
  'connect_providers:write',
  'sso:read',
  'sso:write',
  'connected_accounts:read',
  'connected_accounts:write',
  'connected_accounts:token',
  'webauthn_policy:read',
  'webauthn_policy:write',
  'mfa_policy:read',
  'mfa_policy:write',
  'credentials:issue',
  'credentials:read',
  'credentials:revoke',
  'events:read',
  'branding:read',
  'branding:write',
  'roles:read',
  'roles:write',
  'social:read',
  'social:write',
  'imports:write',
  'exports:read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

const known = new Set<string>(PERMISSIONS);
export const isPermission = (scope: string): scope is Permission => known.has(scope);

/**
 * Permissions only a platform key holding every permission may carry (and a console
 * administrator, who acts with every permission): `domains:verify` takes an actor's word that an
 * organization owns a domain, which makes that organization's IdP authoritative for its emails
 * (docs/sso.md, "Trust boundaries").
 */
export const FULL_PRIVILEGE_ONLY: readonly Permission[] = ['domains:verify'];

/** Whether a key (its binding and scopes) holds every permission of the catalogue as a platform key. */
export const holdsEveryPermission = (key: { organizationId: string | null; scopes: Iterable<string> }): boolean => {
  const held = new Set(key.scopes);
  return key.organizationId === null && PERMISSIONS.every((p) => held.has(p));
};
