/**
 * OAuth tables (clients, refresh-token families, replay cache, revoked access tokens).
 * Conventions as in foundation.ts: epoch milliseconds, JSON as text, booleans as 0/1.
 */
export interface OAuthClientsTable {
  id: string;
  tenant_id: string;
  client_name: string | null;
  /** SHA-256 hex of the client secret; null for `none` and `private_key_jwt` clients. */
  secret_hash: string | null;
  token_endpoint_auth_method: string;
  /** JSON arrays. */
  grant_types: string;
  redirect_uris: string;
  allowed_resources: string;
  /** Space-separated scopes the client may request. */
  scope: string;
  /** JSON JWK Set (public keys) for private_key_jwt, or null. */
  jwks: string | null;
  /** Where the client's keys are fetched (through the egress policy), or null. */
  jwks_uri: string | null;
  dpop_bound_access_tokens: number;
  /** JSON token-exchange policy, or null. */
  token_exchange: string | null;
  created_at: number;
  updated_at: number;
  secret_rotated_at: number | null;
  /** 1: the secret must come by the registered method only (basic or post); 0: either. */
  auth_method_strict: number;
  /** JSON array of browser origins (`scheme://host[:port]`) allowed to call /token, /revoke, /userinfo. */
  allowed_origins: string;
  /** The organization a client_credentials client is bound to (migration 0045), or null. */
  organization_id: string | null;
  /** JSON array of the role keys the bound client holds in it, or null. */
  organization_roles: string | null;
}

/**
 * One row per refresh-token grant ("family"). `generation` is the compare-and-set counter:
 * rotating moves it by one; a token of an older generation is a reuse.
 */
export interface OAuthRefreshFamiliesTable {
  id: string;
  tenant_id: string;
  client_id: string;
  sub: string;
  scope: string;
  /** JSON array of resource indicators granted. */
  resources: string;
  /** DPoP key thumbprint the family is bound to, or null. */
  jkt: string | null;
  /** JSON object of extra claims carried to each access token (e.g. act), or null. */
  extra: string | null;
  generation: number;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  /** The organization the grant signed in to (migration 0038), or null. */
  organization_id: string | null;
  /** The hosted-login session whose code started the family (back-channel logout), or null. */
  session_id: string | null;
}

export interface OAuthRefreshTokensTable {
  token_hash: string;
  tenant_id: string;
  family_id: string;
  generation: number;
  created_at: number;
  expires_at: number;
}

/** Single-use values (client-assertion and DPoP `jti`s), shared by all instances. */
export interface OAuthReplayTable {
  tenant_id: string;
  key_hash: string;
  expires_at: number;
}

/** Revoked access tokens (by `jti`), kept until the token would have expired. */
export interface OAuthRevokedTokensTable {
  tenant_id: string;
  jti: string;
  expires_at: number;
}

/** Per-tenant overrides of the token lifetimes (null: the configured default). */
export interface OAuthTenantSettingsTable {
  tenant_id: string;
  access_token_ttl_seconds: number | null;
  refresh_token_ttl_seconds: number | null;
  /** `scoped` | `minimal`; null: `scoped`. */
  id_token_claims: string | null;
  updated_at: number;
}

/** APIs that accept this tenant's access tokens: the audience, its algorithm, lifetime, scopes. */
export interface OAuthResourceServersTable {
  id: string;
  tenant_id: string;
  name: string;
  /** The audience URI (`resource` / `audience` parameter, `aud` claim). */
  identifier: string;
  signing_alg: string;
  /** null: the tenant's access-token lifetime. */
  access_token_ttl_seconds: number | null;
  /** Space-separated scopes the resource server defines. */
  scope: string;
  dpop_required: number;
  /** JSON {permission: description} of the declared permissions (migration 0038), or null. */
  permission_descriptions: string | null;
  created_at: number;
  updated_at: number;
}

export interface OAuthTables {
  oauth_clients: OAuthClientsTable;
  oauth_refresh_families: OAuthRefreshFamiliesTable;
  oauth_refresh_tokens: OAuthRefreshTokensTable;
  oauth_replay: OAuthReplayTable;
  oauth_revoked_tokens: OAuthRevokedTokensTable;
  oauth_tenant_settings: OAuthTenantSettingsTable;
  oauth_resource_servers: OAuthResourceServersTable;
}
