/**
 * The permission catalogue: every scope an API key may hold. docs/permissions.md mirrors it, and
 * each /v1 route declares the one permission it needs.
 */
export const PERMISSIONS = [
  'organizations:read',
  'organizations:write',
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
] as const;

export type Permission = (typeof PERMISSIONS)[number];

const known = new Set<string>(PERMISSIONS);
export const isPermission = (scope: string): scope is Permission => known.has(scope);
