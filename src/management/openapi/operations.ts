/**
 * What the OpenAPI document says about each /v1 operation beyond its zod schemas: a stable
 * operationId (the method name of generated clients, never renamed), the description of its
 * success response, and the error statuses that depend on the operation's rules (409). The
 * statuses every operation shares are added from the route itself (document.ts): 401, 403 and
 * 429 always; 400 with a body or query, 413 and 415 with a body, 404 with a path parameter.
 *
 * Every /v1 route needs an entry (test/management/openapi.test.ts fails otherwise).
 */
export interface OperationDoc {
  operationId: string;
  /** The success response's description. */
  ok: string;
  /** Statuses beyond the shared ones (see above). */
  errors?: readonly number[];
}

/** Keyed by `METHOD /v1/path`, with path parameters as in the document (`{orgId}`). */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'POST /v1/organizations': { operationId: 'createOrganization', ok: 'The organization created', errors: [409] },
  'GET /v1/organizations': { operationId: 'listOrganizations', ok: 'A page of organizations, oldest first' },
  'GET /v1/organizations/{orgId}': { operationId: 'getOrganization', ok: 'The organization' },
  'PATCH /v1/organizations/{orgId}': { operationId: 'updateOrganization', ok: 'The organization as updated', errors: [409] },
  'GET /v1/organizations/{orgId}/domain_verification': { operationId: 'getDomainVerification', ok: "The organization's domain, whether it is verified, and the DNS TXT record that verifies it" },
  'POST /v1/organizations/{orgId}/domain_verification': { operationId: 'verifyDomain', ok: 'The domain is verified (by its DNS TXT record, or manually by a platform key holding every permission: domains:verify)', errors: [409] },
  'DELETE /v1/organizations/{orgId}': { operationId: 'deleteOrganization', ok: 'Deleted; its memberships are removed and its API keys revoked' },

  'POST /v1/users': { operationId: 'createUser', ok: 'The user created', errors: [409] },
  'GET /v1/users': { operationId: 'listUsers', ok: 'A page of users, oldest first' },
  'GET /v1/users/{userId}': { operationId: 'getUser', ok: 'The user' },
  'PATCH /v1/users/{userId}': { operationId: 'updateUser', ok: 'The user as updated', errors: [409] },
  'DELETE /v1/users/{userId}': { operationId: 'deleteUser', ok: 'Deleted, with their memberships' },
  'GET /v1/users/{userId}/passkeys': { operationId: 'listUserPasskeys', ok: "A page of the user's passkeys (no key material)" },
  'DELETE /v1/users/{userId}/passkeys/{passkeyId}': { operationId: 'deleteUserPasskey', ok: 'The passkey is removed; it can no longer sign in' },
  'GET /v1/users/{userId}/sessions': { operationId: 'listUserSessions', ok: "A page of the user's live hosted-login sessions, oldest first (never a cookie value)" },
  'DELETE /v1/users/{userId}/sessions/{sessionId}': { operationId: 'revokeUserSession', ok: 'The session is ended, at once on every instance' },
  'DELETE /v1/users/{userId}/sessions': { operationId: 'revokeUserSessions', ok: "Every hosted-login session of the user is revoked" },

  'GET /v1/organizations/{orgId}/members': { operationId: 'listOrganizationMembers', ok: 'A page of members' },
  'POST /v1/organizations/{orgId}/members': { operationId: 'addOrganizationMember', ok: 'The membership created', errors: [409] },
  'PATCH /v1/organizations/{orgId}/members/{userId}': { operationId: 'updateOrganizationMember', ok: 'The membership as updated', errors: [409] },
  'DELETE /v1/organizations/{orgId}/members/{userId}': { operationId: 'removeOrganizationMember', ok: 'The user is no longer a member; their connected accounts in the organization are disconnected (and revoked upstream where supported)' },

  'POST /v1/organizations/{orgId}/api_keys': { operationId: 'createOrganizationApiKey', ok: 'The API key created; `key` appears only in this response' },
  'GET /v1/organizations/{orgId}/api_keys': { operationId: 'listOrganizationApiKeys', ok: "A page of the organization's live API keys (never the keys themselves)" },
  'DELETE /v1/organizations/{orgId}/api_keys/{keyId}': { operationId: 'revokeOrganizationApiKey', ok: 'Revoked, at once on every instance' },
  'POST /v1/api_keys': { operationId: 'createApiKey', ok: 'The API key created; `key` appears only in this response' },
  'GET /v1/api_keys': { operationId: 'listApiKeys', ok: 'A page of live platform-bound API keys (never the keys themselves)' },
  'DELETE /v1/api_keys/{keyId}': { operationId: 'revokeApiKey', ok: 'Revoked, at once on every instance', errors: [409] },

  'GET /v1/events': { operationId: 'listEvents', ok: 'Events after the cursor, oldest first (newest first with `order=desc`); pass `next_cursor` as `after` next time' },

  'POST /v1/organizations/{orgId}/directory/connections': { operationId: 'createDirectoryConnection', ok: 'The connection created (it has no SCIM token yet)' },
  'GET /v1/organizations/{orgId}/directory/connections': { operationId: 'listDirectoryConnections', ok: "A page of the organization's directory connections" },
  'GET /v1/organizations/{orgId}/directory/connections/{connectionId}': { operationId: 'getDirectoryConnection', ok: 'The connection' },
  'PATCH /v1/organizations/{orgId}/directory/connections/{connectionId}': { operationId: 'updateDirectoryConnection', ok: 'The connection as updated' },
  'DELETE /v1/organizations/{orgId}/directory/connections/{connectionId}': { operationId: 'deleteDirectoryConnection', ok: 'Deleted; its token stops working and the members stay' },
  'GET /v1/organizations/{orgId}/directory/connections/{connectionId}/users': { operationId: 'listDirectoryUsers', ok: 'A page of the users the connection provisioned over SCIM, oldest first' },
  'GET /v1/organizations/{orgId}/directory/connections/{connectionId}/groups': { operationId: 'listDirectoryGroups', ok: 'A page of the groups the connection provisioned over SCIM, oldest first, with member counts' },
  'POST /v1/organizations/{orgId}/directory/scim_token': { operationId: 'createScimToken', ok: 'The SCIM token, shown only in this response' },

  'POST /v1/clients': { operationId: 'createClient', ok: 'The client registered; a secret-based client gets `client_secret` only here' },
  'GET /v1/clients': { operationId: 'listClients', ok: 'A page of OAuth clients' },
  'GET /v1/clients/{clientId}': { operationId: 'getClient', ok: 'The client' },
  'PATCH /v1/clients/{clientId}': { operationId: 'updateClient', ok: 'The client as updated' },
  'DELETE /v1/clients/{clientId}': { operationId: 'deleteClient', ok: 'Deleted, with its refresh tokens' },
  'POST /v1/clients/{clientId}/secret': { operationId: 'rotateClientSecret', ok: 'The client with its new `client_secret`, shown only here' },
  'GET /v1/oauth/settings': { operationId: 'getOAuthSettings', ok: "The tenant's OAuth settings and the values in effect" },
  'PUT /v1/oauth/settings': { operationId: 'setOAuthSettings', ok: 'The settings as stored and the values in effect' },
  'GET /v1/mcp/settings': { operationId: 'getMcpSettings', ok: "The tenant's MCP client-onboarding policy" },
  'PUT /v1/mcp/settings': { operationId: 'setMcpSettings', ok: 'The policy as stored' },

  'POST /v1/resource_servers': { operationId: 'createResourceServer', ok: 'The resource server registered', errors: [409] },
  'GET /v1/resource_servers': { operationId: 'listResourceServers', ok: 'A page of resource servers' },
  'GET /v1/resource_servers/{rsId}': { operationId: 'getResourceServer', ok: 'The resource server' },
  'PATCH /v1/resource_servers/{rsId}': { operationId: 'updateResourceServer', ok: 'The resource server as updated', errors: [409] },
  'DELETE /v1/resource_servers/{rsId}': { operationId: 'deleteResourceServer', ok: 'Removed' },

  'POST /v1/organizations/{orgId}/webhooks': { operationId: 'createWebhook', ok: 'The endpoint registered; `secret` appears only in this response' },
  'GET /v1/organizations/{orgId}/webhooks': { operationId: 'listWebhooks', ok: "The organization's webhook endpoints" },
  'GET /v1/organizations/{orgId}/webhooks/{webhookId}': { operationId: 'getWebhook', ok: 'The webhook endpoint' },
  'PATCH /v1/organizations/{orgId}/webhooks/{webhookId}': { operationId: 'updateWebhook', ok: 'The endpoint as updated (the URL is checked against the egress policy again)' },
  'POST /v1/organizations/{orgId}/webhooks/{webhookId}/ping': { operationId: 'pingWebhook', ok: 'A signed `ping` event is queued for this endpoint only' },
  'DELETE /v1/organizations/{orgId}/webhooks/{webhookId}': { operationId: 'deleteWebhook', ok: 'Removed; its pending deliveries are dropped' },
  'GET /v1/organizations/{orgId}/webhooks/{webhookId}/deliveries': { operationId: 'listWebhookDeliveries', ok: 'A page of deliveries, each with its attempts' },
  'POST /v1/organizations/{orgId}/webhooks/{webhookId}/deliveries/{deliveryId}/retry': { operationId: 'retryWebhookDelivery', ok: 'The delivery is queued again', errors: [409] },

  'GET /v1/organizations/{orgId}/webauthn_policy': { operationId: 'getWebauthnPolicy', ok: "The organization's passkey AAGUID allowlist (null: unrestricted)" },
  'PUT /v1/organizations/{orgId}/webauthn_policy': { operationId: 'setWebauthnPolicy', ok: 'The policy as stored' },
  'GET /v1/mfa_policy': { operationId: 'getMfaPolicy', ok: "The tenant's MFA policy (optional when never set)" },
  'PUT /v1/mfa_policy': { operationId: 'setMfaPolicy', ok: 'The policy as stored' },
  'GET /v1/organizations/{orgId}/mfa_policy': { operationId: 'getOrganizationMfaPolicy', ok: "The organization's own MFA policy (null: none) and the one in effect for its members" },
  'PUT /v1/organizations/{orgId}/mfa_policy': { operationId: 'setOrganizationMfaPolicy', ok: 'The policy as stored and the one now in effect' },
  'GET /v1/branding/texts': { operationId: 'getBrandingTexts', ok: "The messages the tenant replaces, per locale ({} when none)" },
  'PUT /v1/branding/texts': { operationId: 'setBrandingTexts', ok: 'The texts as stored' },
  'GET /v1/branding/locale': { operationId: 'getBrandingLocale', ok: "The hosted pages' default language (en when never set)" },
  'PUT /v1/branding/locale': { operationId: 'setBrandingLocale', ok: 'The default language as stored' },

  'POST /v1/connect/providers': { operationId: 'createConnectProvider', ok: 'The provider registered (its client secret is never returned)' },
  'GET /v1/connect/providers': { operationId: 'listConnectProviders', ok: 'A page of upstream providers' },
  'GET /v1/connect/providers/{providerId}': { operationId: 'getConnectProvider', ok: 'The provider' },
  'PATCH /v1/connect/providers/{providerId}': { operationId: 'updateConnectProvider', ok: 'The provider as updated' },
  'DELETE /v1/connect/providers/{providerId}': { operationId: 'deleteConnectProvider', ok: 'Removed', errors: [409] },
  'GET /v1/organizations/{orgId}/connect/accounts': { operationId: 'listConnectedAccounts', ok: "A page of the organization's connected accounts (never a token)" },
  'GET /v1/organizations/{orgId}/connect/accounts/{accountId}': { operationId: 'getConnectedAccount', ok: 'The connected account (never a token)' },
  'DELETE /v1/organizations/{orgId}/connect/accounts/{accountId}': { operationId: 'deleteConnectedAccount', ok: 'Removed; its tokens are revoked upstream where supported' },
  'POST /v1/organizations/{orgId}/connect/accounts/{accountId}/token': { operationId: 'getConnectedAccountToken', ok: "A live upstream access token (refreshed first when near expiry) while the account's user is a member of the organization; every retrieval is audited", errors: [502] },

  'POST /v1/credential_types': { operationId: 'createCredentialType', ok: 'The credential type created', errors: [409] },
  'GET /v1/credential_types': { operationId: 'listCredentialTypes', ok: 'The credential types, the built-in OrganizationMembership included' },
  'DELETE /v1/credential_types/{typeId}': { operationId: 'deleteCredentialType', ok: 'Removed; credentials already issued stay valid' },
  'POST /v1/organizations/{orgId}/credentials/offers': { operationId: 'createCredentialOffer', ok: 'The offer, by value and by reference; `tx_code` appears only in this response' },
  'GET /v1/organizations/{orgId}/credentials': { operationId: 'listCredentials', ok: "A page of the organization's issued credentials (never their disclosures)" },
  'GET /v1/organizations/{orgId}/credentials/{vcId}': { operationId: 'getCredential', ok: 'The credential record (never its disclosures)' },
  'POST /v1/organizations/{orgId}/credentials/{vcId}/revoke': { operationId: 'revokeCredential', ok: "Revoked: its status-list bit is set (idempotent)" },

  'POST /v1/organizations/{orgId}/sso/connections': { operationId: 'createSsoConnection', ok: 'The connection created (an OIDC client secret is never returned; SAML shows the IdP certificates and the SP URLs to register)' },
  'GET /v1/organizations/{orgId}/sso/connections': { operationId: 'listSsoConnections', ok: "The organization's SSO connections" },
  'GET /v1/organizations/{orgId}/sso/connections/{connectionId}': { operationId: 'getSsoConnection', ok: 'The connection' },
  'PATCH /v1/organizations/{orgId}/sso/connections/{connectionId}': { operationId: 'updateSsoConnection', ok: 'The connection as updated' },
  'DELETE /v1/organizations/{orgId}/sso/connections/{connectionId}': { operationId: 'deleteSsoConnection', ok: 'Removed' },
};

/** Tags in the order a reader meets them, with what each groups. */
export const TAGS: readonly { name: string; description: string }[] = [
  { name: 'organizations', description: 'Organizations (customers of the tenant): name, slug, domain and branding' },
  { name: 'users', description: 'Tenant-wide user accounts' },
  { name: 'members', description: 'Who belongs to an organization, and with which role' },
  { name: 'api keys', description: 'Platform- and organization-bound API keys for /v1' },
  { name: 'events', description: 'The audit trail as a cursor feed' },
  { name: 'webhooks', description: 'Webhook endpoints and their delivery log' },
  { name: 'directory', description: 'Directory sync (SCIM 2.0) connections and their tokens' },
  { name: 'clients', description: 'OAuth 2.0 / OpenID Connect clients and token settings' },
  { name: 'resource servers', description: 'APIs that accept Keyhall access tokens' },
  { name: 'connect providers', description: 'Upstream OAuth providers of the connected-accounts vault' },
  { name: 'connected accounts', description: "Users' connected upstream accounts and live access tokens from the vault" },
  { name: 'credentials', description: 'Verifiable credentials (OID4VCI, SD-JWT VC): types, offers, issued credentials and revocation' },
  { name: 'sso', description: 'Enterprise SSO connections (OIDC, SAML) per organization' },
  { name: 'mfa', description: "The tenant's multi-factor sign-in policy (organizations' own are under organizations)" },
  { name: 'branding', description: "The hosted pages' language: the tenant's default locale and its own texts per locale" },
];
