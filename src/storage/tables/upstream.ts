/**
 * One upstream round trip (SSO over OIDC, the connected-accounts vault): the `state` sent to an
 * upstream identity provider, what the callback must bring back, and what to resume. Consumed
 * once, by the browser that started it.
 */
export interface UpstreamRoundTripsTable {
  /** SHA-256 hex of the `state` sent upstream. */
  state_hash: string;
  tenant_id: string;
  /** `sso` | `connect`: who started it. */
  purpose: string;
  /** The SSO connection or the vault provider the round trip went to. */
  upstream_id: string;
  /** SHA-256 hex of the browser binding: the SSO binding cookie, or the vault's session id. */
  browser_hash: string;
  /** The nonce and PKCE verifier (with the continuation, for SSO) under envelope encryption; the context is the purpose's. */
  secrets_enc: string;
  /** JSON of what to resume that is not secret, or null. */
  resume: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface UpstreamTables {
  upstream_round_trips: UpstreamRoundTripsTable;
}
