/** Tables of the connected-accounts vault: upstream providers, connect flows, accounts. */
export interface ConnectProvidersTable {
  /** cpr_… */
  id: string;
  tenant_id: string;
  name: string;
  /** google | microsoft | github | slack, or null for a custom provider. */
  preset: string | null;
  /** oauth2 | oidc */
  kind: string;
  /** The upstream issuer (discovered for oidc; optional for oauth2, used for the RFC 9207 check). */
  issuer: string | null;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint: string | null;
  client_id: string;
  /** The upstream client secret under envelope encryption (null for auth method none). */
  client_secret_enc: string | null;
  /** client_secret_basic | client_secret_post | none */
  token_endpoint_auth_method: string;
  /** Space-separated default scopes. */
  scope: string;
  pkce: number;
  /** JSON object of extra authorization request parameters. */
  authorize_params: string;
  /** 1 when the upstream's metadata says it sends `iss` in authorization responses (RFC 9207). */
  iss_parameter_supported: number;
  /** A generic OAuth 2.0 provider's userinfo endpoint, read for the upstream subject when no ID token names it. */
  userinfo_endpoint: string | null;
  /** The field path of the subject in that document (`id`, `user.id`). */
  subject_field: string | null;
  created_at: number;
  updated_at: number;
}

export interface ConnectedAccountsTable {
  /** acct_… */
  id: string;
  tenant_id: string;
  organization_id: string;
  user_id: string;
  provider_id: string;
  /** The upstream subject (ID token `sub`), when the upstream told it. */
  subject: string | null;
  scope: string;
  /** active | needs_reauthorization */
  status: string;
  access_token_enc: string;
  refresh_token_enc: string | null;
  /** When the access token expires (ms), or null when the upstream gave no lifetime. */
  expires_at: number | null;
  /** Bumped by every token change: the compare-and-set key of refreshes. */
  version: number;
  /** The refresh lease: who is refreshing, and until when the claim holds. */
  refresh_owner: string | null;
  refresh_until: number | null;
  last_refreshed_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ConnectTables {
  connect_providers: ConnectProvidersTable;
  connected_accounts: ConnectedAccountsTable;
}
