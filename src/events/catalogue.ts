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
  'user.email_verified': { webhook: false, description: 'a user confirmed their email address (an emailed link or code)' },
  'user.password_reset': {
    webhook: false,
    description: 'a user set a new password through an emailed reset link; every session and refresh token of theirs was revoked',
  },
  // Email delivery (docs/email.md): identifiers only, never the body or its links.
  'email.sent': { webhook: false, description: 'an email was handed to the SMTP server or the dev mailbox (template, Message-ID; never the body)' },
  'email.failed': { webhook: false, description: 'an email could not be sent: refused by the SMTP server (5xx) or attempts used up' },
  'email_settings.updated': { webhook: false, description: "the tenant's email sender (from, reply-to) changed" },
  'user.password_rehashed': {
    webhook: false,
    description: "a user's imported password hash (bcrypt, scrypt, PBKDF2…) was replaced by argon2id at their sign-in (the format, never a hash)",
  },
  // Imports and exports (docs/import-export.md); tenant-wide.
  'import.completed': { webhook: false, description: 'a user import finished (its counts; the rejected rows are in its report)' },
  'import.failed': { webhook: false, description: 'a user import stopped (unreadable file, or interrupted by a restart)' },
  'export.completed': { webhook: false, description: "a tenant export was written (with include_secrets: users' password hashes included)" },
  // Tenant-wide (organization_id null): the console's administrators (docs/console.md).
  'tenant_admin.granted': {
    webhook: false,
    description: 'a user was made a tenant administrator (console setup link, keyhall admin create, or another administrator in the console)',
  },
  'tenant_admin.revoked': {
    webhook: false,
    description: 'a user is no longer a tenant administrator (keyhall admin remove, or another administrator in the console)',
  },
  'member.added': { webhook: true, description: 'a user was added to an organization' },
  'member.removed': { webhook: true, description: 'a user was removed from an organization' },
  // Invitations (docs/invitations.md).
  'invitation.created': { webhook: false, description: 'an email address was invited into an organization (its link emailed)' },
  'invitation.resent': { webhook: false, description: "an invitation's link was sent again (the earlier link no longer works)" },
  'invitation.accepted': {
    webhook: false,
    description: 'an invitation was accepted on the hosted page (the member.added of the same transaction makes the membership)',
  },
  'invitation.revoked': { webhook: false, description: 'an invitation was revoked: its link no longer works' },
  'member.role_changed': { webhook: true, description: "a member's roles changed (`role`: the first of `roles`)" },
  // Organizations' roles (docs/authorization.md): tenant-wide ones have organization_id null.
  'role.created': { webhook: false, description: "a role was defined (tenant-wide, or an organization's own)" },
  'role.updated': { webhook: false, description: "a role's name, description or permissions changed" },
  'role.deleted': { webhook: false, description: 'a role was deleted (its holders reassigned when ?reassign= named another)' },
  'role.settings_updated': { webhook: false, description: 'the default role for new members was set' },
  'webhook_endpoint.created': { webhook: false, description: 'a webhook endpoint was registered' },
  'webhook_endpoint.updated': { webhook: false, description: "a webhook endpoint's url or event types changed" },
  'webhook_endpoint.deleted': { webhook: false, description: 'a webhook endpoint was removed' },
  // Never delivered to webhooks: a failing endpoint's failure event would itself be a delivery
  // to the failing endpoints (a loop). Read it from GET /v1/events.
  'webhook_delivery.failed': { webhook: false, description: 'a webhook delivery used up its attempts and is failed' },
  'token.exchanged': { webhook: false, description: 'a token was exchanged (RFC 8693 delegation or impersonation)' },
  'refresh_token.reused': { webhook: false, description: 'a rotated refresh token was presented again; its family was revoked' },
  'token.revoked': { webhook: false, description: 'a token was revoked at /revoke' },
  'credential.issued': { webhook: true, description: 'a verifiable credential was issued' },
  'credential.revoked': { webhook: true, description: "a credential's status-list bit was flipped" },
  'credential.offer.created': { webhook: false, description: 'a credential offer (pre-authorized code) was made' },
  'credential.offer.expired': { webhook: false, description: 'a credential offer died unredeemed (expired, or too many wrong tx_codes)' },
  // Tenant-wide (organization_id null), like resource servers.
  'credential_type.created': { webhook: false, description: 'a credential type was defined' },
  'credential_type.deleted': { webhook: false, description: 'a credential type was removed' },
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
  'sso.identity.linked': { webhook: false, description: 'a signed-in user linked an upstream identity of an SSO connection to their own account' },
  'sso.identity.unlinked': { webhook: false, description: 'a user unlinked their upstream identities of an SSO connection' },
  'social_connection.created': { webhook: false, description: 'a social connection (Google, GitHub, any OIDC or OAuth 2.0 provider) was created' },
  'social_connection.updated': { webhook: false, description: 'a social connection was changed (never its secret, only that it changed)' },
  'social_connection.deleted': { webhook: false, description: 'a social connection was deleted (its linked identities with it; the users stay)' },
  'social_settings.updated': { webhook: false, description: "the tenant's account-linking setting changed" },
  'identity.linked': {
    webhook: false,
    description: 'an upstream identity of a social connection was linked to a user (first sign-in or automatic link by verified email)',
  },
  'identity.unlinked': { webhook: false, description: 'an upstream identity of a social connection was removed from a user' },
  'login.social': { webhook: false, description: 'a user signed in through a social connection (a new session)' },
  'login.social_failed': { webhook: false, description: 'a social sign-in was refused (reason code and connection; never a code or token)' },
  'login.succeeded': { webhook: false, description: 'a user signed in on a hosted login page (a new session)' },
  'login.failed': { webhook: false, description: 'a sign-in failed (unknown email or wrong password; same answer to the user)' },
  logout: { webhook: false, description: 'a user signed out (their session ended)' },
  'session.revoked': {
    webhook: false,
    description:
      'a session ended; `reason`: logout (RP-initiated or /logout), user (/sessions), admin (/v1), password_change, user_deleted, deprovisioned (SCIM). Its clients are sent back-channel logout tokens',
  },
  'consent.granted': { webhook: false, description: 'a user approved a third-party client' },
  'consent.revoked': { webhook: false, description: "a user withdrew a client's consent" },
  // Tenant-wide (organization_id null): webhook endpoints belong to organizations, so it is
  // read from GET /v1/events only.
  'client.created': { webhook: false, description: 'an OAuth client was registered' },
  'client.updated': { webhook: false, description: "an OAuth client's metadata changed (the fields that changed are listed, never a secret)" },
  'client.deleted': { webhook: false, description: 'an OAuth client was removed' },
  'client.secret_rotated': { webhook: false, description: "an OAuth client's secret was replaced (the old one stopped working)" },
  'client.organization_granted': { webhook: false, description: 'a client_credentials client was bound to an organization, or its roles there changed' },
  'client.organization_revoked': { webhook: false, description: "a client's binding to an organization was removed" },
  'oauth_settings.updated': { webhook: false, description: "the tenant's token lifetimes or ID-token claims policy changed" },
  'resource_server.created': { webhook: false, description: 'a resource server (API) was registered' },
  'resource_server.updated': { webhook: false, description: "a resource server's settings changed" },
  'resource_server.deleted': { webhook: false, description: 'a resource server was removed' },
  // Tenant-wide: an operator changed the tenant's host or issuer (`keyhall tenant update`).
  // A deleted tenant's feed goes with it, so `tenant.deleted` is written to the process log only.
  'tenant.updated': { webhook: false, description: "the tenant's host or issuer was changed (keyhall tenant update)" },
  'login.passkey': { webhook: false, description: 'a user signed in with a passkey (a new session)' },
  'passkey.registered': { webhook: false, description: 'a user registered a passkey' },
  'passkey.removed': { webhook: false, description: 'a passkey was removed (by its user on /mfa, or through /v1)' },
  'passkey.rejected': {
    webhook: false,
    description: "a passkey registration was refused by an organization's WebAuthn policy, or because the FIDO MDS reports its model revoked or compromised",
  },
  'passkey.counter_regressed': {
    webhook: false,
    description: "a passkey's signature counter went backwards (a cloned authenticator?); the sign-in was refused and the passkey disabled",
  },
  'mfa.totp.enrolled': { webhook: false, description: 'a user set up an authenticator app (TOTP)' },
  'mfa.totp.removed': { webhook: false, description: 'a user removed their authenticator app (TOTP)' },
  'mfa.challenge.succeeded': { webhook: false, description: 'a second factor was given at sign-in' },
  'mfa.challenge.failed': { webhook: false, description: 'a wrong second factor was given at sign-in' },
  'mfa.recovery_code.used': { webhook: false, description: 'a recovery code was used (each works once)' },
  'mfa.recovery_codes.regenerated': { webhook: false, description: "a user's recovery codes were (re)generated; earlier ones stop working" },
  'webauthn_policy.updated': { webhook: false, description: "an organization's passkey AAGUID allowlist was set or cleared" },
  'mfa_policy.updated': { webhook: false, description: "the tenant's or an organization's MFA policy (off, optional, required) was set or cleared" },
  'signin_policy.updated': { webhook: false, description: "the tenant's sign-in policy (self sign-up, passwordless sign-in, verified email required) was set" },
  // The hosted pages' language (docs/branding.md); tenant-wide.
  'branding.texts.updated': { webhook: false, description: "the tenant's own texts of the hosted pages were replaced (the number of messages per locale)" },
  'branding.locale.updated': { webhook: false, description: "the hosted pages' default language was set" },
  // The connected-accounts vault (docs/connected-accounts.md). Provider events are tenant-wide.
  'connect.provider.created': { webhook: false, description: 'an upstream provider of the vault was registered' },
  'connect.provider.updated': { webhook: false, description: "an upstream provider's settings or client secret changed" },
  'connect.provider.deleted': { webhook: false, description: 'an upstream provider was removed' },
  'connected_account.connected': { webhook: false, description: 'a user connected an upstream account (or connected it again)' },
  'connected_account.disconnected': {
    webhook: false,
    description: 'a connected account was removed (by its user or an administrator, or because its user left the organization)',
  },
  'connected_account.token_retrieved': {
    webhook: false,
    description: 'an access token was retrieved from the vault (refreshed upstream first when near expiry)',
  },
  'connected_account.token_retrieval_failed': { webhook: false, description: 'a vault token retrieval failed (unknown account, upstream refresh failed)' },
  'mcp.client.registered': {
    webhook: false,
    description: 'an MCP client registered itself at /register, or first identified itself by a Client ID Metadata Document',
  },
  'mcp.tool.called': { webhook: false, description: 'an MCP client called a tool at /mcp (tool, client, user, outcome; never the arguments)' },
  'connected_account.reauthorization_required': {
    webhook: false,
    description: 'the upstream refused the refresh token; the user must connect the account again',
  },
  'signing_key.rotated': { webhook: false, description: "a new signing key became active (the algorithm's previous key was retired)" },
} as const satisfies Record<string, { webhook: boolean; description: string }>;

export type EventType = keyof typeof EVENT_TYPES;

export const WEBHOOK_EVENT_TYPES = (Object.keys(EVENT_TYPES) as EventType[]).filter((t) => EVENT_TYPES[t].webhook);

export const isEventType = (t: string): t is EventType => Object.hasOwn(EVENT_TYPES, t);

/** Who acts: an API key, a user (the console's administrator included), a directory connection, Keyhall itself, an OAuth client. */
export const ACTOR_TYPES = ['api_key', 'user', 'scim', 'system', 'oauth_client'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export interface Actor {
  type: ActorType;
  id: string | null;
}
