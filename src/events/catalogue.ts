/**
 * The event catalogue: every audit event type Keyhall emits. `webhook: true` marks the types
 * delivered to webhook endpoints (the spec's catalogue); every other type is available only from
 * GET /v1/events. docs/events.md mirrors this list.
 */
export const EVENT_TYPES = {
  'api_key.created': { webhook: true, description: 'an API key was minted' },
  'api_key.revoked': { webhook: false, description: 'an API key was revoked' },
  'organization.created': { webhook: false, description: 'an organization was created' },
  'organization.updated': { webhook: false, description: 'an organization was changed' },
  'organization.domain_verified': { webhook: false, description: "an organization's domain was verified (DNS TXT record or a platform key)" },
  'organization.deleted': { webhook: false, description: 'an organization was deleted' },
  'user.created': { webhook: false, description: 'a user was created' },
  'user.updated': { webhook: false, description: 'a user was changed (password changes included, never the password)' },
  'user.deleted': { webhook: false, description: 'a user was deleted' },
  'member.added': { webhook: true, description: 'a user was added to an organization' },
  'member.removed': { webhook: true, description: 'a user was removed from an organization' },
  'member.role_changed': { webhook: true, description: "a member's role changed" },
  'webhook_endpoint.created': { webhook: false, description: 'a webhook endpoint was registered' },
  'webhook_endpoint.deleted': { webhook: false, description: 'a webhook endpoint was removed' },
  'token.exchanged': { webhook: false, description: 'a token was exchanged (RFC 8693 delegation or impersonation)' },
  'refresh_token.reused': { webhook: false, description: 'a rotated refresh token was presented again; its family was revoked' },
  'token.revoked': { webhook: false, description: 'a token was revoked at /revoke' },
  'credential.issued': { webhook: true, description: 'a verifiable credential was issued' },
  'credential.revoked': { webhook: true, description: "a credential's status-list bit was flipped" },
  'directory.connection.created': { webhook: false, description: 'a directory (SCIM) connection was created' },
  'directory.connection.updated': { webhook: false, description: "a directory connection's name, role mapping or rate limit changed" },
  'directory.connection.deleted': { webhook: false, description: 'a directory connection was deleted (its members stay)' },
  'directory.token.created': { webhook: false, description: "a SCIM token was minted (the connection's previous token is revoked)" },
  'directory.user.created': { webhook: false, description: 'a SCIM user was provisioned' },
  'directory.user.updated': { webhook: false, description: 'a SCIM user was changed' },
  'directory.user.deactivated': { webhook: false, description: 'a SCIM user was set active:false (membership removed)' },
  'directory.user.reactivated': { webhook: false, description: 'a SCIM user was set active:true again (membership restored)' },
  'directory.user.deleted': { webhook: false, description: 'a SCIM user was deleted (membership removed)' },
  'directory.group.created': { webhook: false, description: 'a SCIM group was created' },
  'directory.group.updated': { webhook: false, description: 'a SCIM group was renamed or its members changed' },
  'directory.group.deleted': { webhook: false, description: 'a SCIM group was deleted' },
  'sso.connection.created': { webhook: false, description: 'an SSO connection was created' },
  'sso.connection.updated': { webhook: false, description: 'an SSO connection was changed (never its secret, only that it changed)' },
  'sso.connection.deleted': { webhook: false, description: 'an SSO connection was deleted (the users it created stay)' },
  'sso.login.succeeded': { webhook: false, description: 'a user signed in through an SSO connection (a new session)' },
  'sso.login.failed': { webhook: false, description: 'an SSO sign-in was refused (reason code and connection; never the assertion or token)' },
  'login.succeeded': { webhook: false, description: 'a user signed in on a hosted login page (a new session)' },
  'login.failed': { webhook: false, description: 'a sign-in failed (unknown email or wrong password; same answer to the user)' },
  'logout': { webhook: false, description: 'a user signed out (their session ended)' },
  'session.revoked': { webhook: false, description: 'a session was revoked (by its user on /sessions, or through /v1)' },
  'consent.granted': { webhook: false, description: 'a user approved a third-party client' },
  'consent.revoked': { webhook: false, description: "a user withdrew a client's consent" },
  // Tenant-wide (organization_id null): webhook endpoints belong to organizations, so it is
  // read from GET /v1/events only.
  'resource_server.created': { webhook: false, description: 'a resource server (API) was registered' },
  'resource_server.updated': { webhook: false, description: "a resource server's settings changed" },
  'resource_server.deleted': { webhook: false, description: 'a resource server was removed' },
  // Tenant-wide: an operator changed the tenant's host or issuer (`keyhall tenant update`).
  // A deleted tenant's feed goes with it, so `tenant.deleted` is written to the process log only.
  'tenant.updated': { webhook: false, description: "the tenant's host or issuer was changed (keyhall tenant update)" },
  'signing_key.rotated': { webhook: false, description: "a new signing key became active (the algorithm's previous key was retired)" },
} as const satisfies Record<string, { webhook: boolean; description: string }>;

export type EventType = keyof typeof EVENT_TYPES;

export const WEBHOOK_EVENT_TYPES = (Object.keys(EVENT_TYPES) as EventType[]).filter((t) => EVENT_TYPES[t].webhook);

export const isEventType = (t: string): t is EventType => Object.hasOwn(EVENT_TYPES, t);

export type ActorType = 'api_key' | 'user' | 'scim' | 'system';

export interface Actor {
  type: ActorType;
  id: string | null;
}
