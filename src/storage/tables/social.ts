/**
 * Tables of social sign-in (docs/social.md): the tenant's connections to upstream identity
 * providers (Google, GitHub, any OIDC or OAuth 2.0 provider), the upstream identities linked to
 * users, and the tenant's account-linking setting.
 */
export interface SocialConnectionsTable {
  /** soc_… */
  id: string;
  tenant_id: string;
  name: string;
  /** oidc | oauth2 */
  kind: string;
  /** The preset it was made from (google, github, …), or null for a generic provider. */
  preset: string | null;
  client_id: string;
  /** The client secret under envelope encryption (bound to tenant and connection); null: a public client. */
  secret_enc: string | null;
  /** JSON: endpoints, issuer, profile field paths, PKCE, the upstream's metadata (src/social/connection.ts). */
  config: string;
  /** JSON array of scopes. */
  scopes: string;
  sign_in: number;
  sign_up: number;
  display_order: number;
  /** The vault provider (cpr_…) whose connected account keeps a sign-in's upstream tokens, or null. */
  vault_provider_id: string | null;
  created_at: number;
  updated_at: number;
}

/** An upstream identity (connection + subject) linked to a user; never a token. */
export interface SocialIdentitiesTable {
  /** idn_… */
  id: string;
  tenant_id: string;
  connection_id: string;
  subject: string;
  user_id: string;
  /** The email as the upstream said it (null: none). */
  email: string | null;
  email_verified: number;
  name: string | null;
  picture: string | null;
  linked_at: number;
  last_login_at: number;
}

export interface SocialSettingsTable {
  tenant_id: string;
  /** verified_email | manual */
  account_linking: string;
  updated_at: number;
}

export interface SocialTables {
  social_connections: SocialConnectionsTable;
  social_identities: SocialIdentitiesTable;
  social_settings: SocialSettingsTable;
}
