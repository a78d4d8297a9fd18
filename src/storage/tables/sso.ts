/**
 * Tables of enterprise SSO: per-organization connections to upstream identity providers, the
 * single-use states of upstream round trips, and upstream identities linked to users.
 */
export interface SsoConnectionsTable {
  /** sso_… */
  id: string;
  tenant_id: string;
  organization_id: string;
  /** oidc */
  protocol: string;
  name: string;
  enabled: number;
  /** Organization role given to a JIT member no group maps. */
  default_role: string;
  /** JSON object: upstream group (lower case) → organization role. */
  group_roles: string;
  /** JSON: the protocol's public settings (OIDC: issuer, client id, scopes, PKCE, claim names, the upstream's metadata). */
  config: string;
  /** The OIDC client secret under envelope encryption (bound to tenant and connection, src/sso/secrets.ts); null for a public client. */
  secret_enc: string | null;
  created_at: number;
  updated_at: number;
}

/** One upstream round trip: consumed once, by the browser that started it. */
export interface SsoLoginStatesTable {
  /** SHA-256 hex of the `state` sent upstream. */
  state_hash: string;
  tenant_id: string;
  connection_id: string;
  /** SHA-256 hex of the browser-binding cookie set when the round trip started. */
  browser_hash: string;
  /** JSON {nonce, code_verifier, flow, return_to} under envelope encryption (context `sso_state:<state_hash>`). */
  secrets_enc: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface SsoIdentitiesTable {
  connection_id: string;
  /** The upstream `sub`. */
  subject: string;
  tenant_id: string;
  user_id: string;
  created_at: number;
  last_login_at: number;
}

export interface SsoTables {
  sso_connections: SsoConnectionsTable;
  sso_login_states: SsoLoginStatesTable;
  sso_identities: SsoIdentitiesTable;
}
