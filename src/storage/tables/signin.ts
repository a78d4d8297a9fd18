import type { OutboxStateColumns } from './webhooks.js';

/**
 * Sign-in tables: pushed authorization requests, authorization flows (a validated /authorize
 * request waiting for login/consent), authorization codes, browser sessions, consents, per-client
 * sign-in settings and failed-login counters. Conventions as in foundation.ts: epoch
 * milliseconds, JSON as text, booleans as 0/1; secrets (request_uri, flow ids, codes, session
 * cookies) are stored only as SHA-256 hex.
 */

/** RFC 9126 request_uris: bound to the client, short-lived, consumed when a flow completes. */
export interface SigninParRequestsTable {
  uri_hash: string;
  tenant_id: string;
  client_id: string;
  /** JSON of the validated authorization request. */
  request: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

/** One authorization request in progress (the login and consent pages refer to it). */
export interface SigninFlowsTable {
  flow_hash: string;
  tenant_id: string;
  client_id: string;
  /** JSON of the validated authorization request. */
  request: string;
  /** The PAR request_uri hash this flow came from (consumed together with the flow). */
  par_hash: string | null;
  /** A login at or after this time is required (prompt=login, max_age). */
  login_after: number | null;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
}

export interface SigninCodesTable {
  code_hash: string;
  tenant_id: string;
  client_id: string;
  user_id: string;
  session_id: string | null;
  /** JSON: redirect_uri, scopes, nonce, code_challenge, dpop_jkt, resources, auth_time. */
  grant: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  /** What the first redemption issued, revoked when the code is presented again. */
  issued_jti: string | null;
  issued_exp: number | null;
  issued_family: string | null;
}

export interface SigninSessionsTable {
  id: string;
  tenant_id: string;
  token_hash: string;
  user_id: string;
  user_agent: string | null;
  ip: string | null;
  auth_time: number;
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  expires_at: number;
  revoked_at: number | null;
  /** JSON array of amr values (null: a password login from before MFA existed). */
  amr: string | null;
  /** 1 while the second factor is owed. */
  mfa_pending: number;
  /** The organization the session last signed in to (migration 0038), or null. */
  organization_id: string | null;
  /** The social connection the first factor came from (the ID token's `idp`); null otherwise. */
  idp: string | null;
  /** How the first factor was given (migration 0042): password, passkey, sso, social, setup_link…; null before it. */
  method: string | null;
}

export interface SigninConsentsTable {
  tenant_id: string;
  user_id: string;
  client_id: string;
  /** Space-separated scopes granted. */
  scope: string;
  created_at: number;
  updated_at: number;
}

/** Sign-in settings of an OAuth client (kept apart from oauth_clients; see docs/signin.md). */
export interface SigninClientSettingsTable {
  tenant_id: string;
  client_id: string;
  third_party: number;
  require_par: number;
  id_token_alg: string;
  /** JSON array of registered post_logout_redirect_uris. */
  post_logout_redirect_uris: string;
  /** OpenID Connect Back-Channel Logout 1.0: where logout tokens are POSTed, or null. */
  backchannel_logout_uri: string | null;
  /** 1: the client requires `sid` in logout tokens (Keyhall always sends it). */
  backchannel_logout_session_required: number;
  /** RFC 9101 §10.5: 1 when every authorization request must come as a signed request object. */
  require_signed_request_object: number;
  /** NULL, or `fapi2` (the FAPI 2.0 Security Profile). */
  profile: string | null;
  /** JSON array of the client's claims mapping (migration 0045), or null for none. */
  claims: string | null;
  updated_at: number;
}

/** Which clients redeemed a code issued in a session (they are told when it ends). */
export interface SigninSessionClientsTable {
  tenant_id: string;
  session_id: string;
  client_id: string;
  created_at: number;
}

/**
 * The back-channel logout outbox: one row per (ended session, client with a
 * backchannel_logout_uri), written in the transaction that ended the session, claimed with a
 * lease and retried on KEYHALL_LOGOUT_RETRY_SCHEDULE.
 */
export interface LogoutDeliveriesTable extends OutboxStateColumns {
  id: string;
  tenant_id: string;
  client_id: string;
  user_id: string;
  session_id: string;
  uri: string;
}

/** Fixed-window counters of failed logins, per tenant + key (account or IP). */
export interface SigninLoginFailuresTable {
  tenant_id: string;
  key_hash: string;
  count: number;
  window_ends_at: number;
}

/**
 * A sign-in in progress in the sign-in engine (src/signin/): its entry point, what it returns to,
 * and the step it reached. Every transition is a compare-and-set on `version`; a completed flow
 * is never resumed again.
 */
export interface SigninEngineFlowsTable {
  flow_hash: string;
  tenant_id: string;
  /** The entry point: `authorize` (/authorize, PAR included) — the only one with a stored flow today. */
  entry: string;
  /** The authorization flow (signin_flows) an `authorize` flow returns a code to. */
  authorize_flow_hash: string | null;
  /** The device authorization (oauth_device_codes) a `device` flow approves or denies. */
  device_code_hash: string | null;
  /** The last step the flow passed (src/signin/steps.ts). */
  step: string;
  version: number;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
}

export interface SigninTables {
  signin_engine_flows: SigninEngineFlowsTable;
  signin_par_requests: SigninParRequestsTable;
  signin_flows: SigninFlowsTable;
  signin_codes: SigninCodesTable;
  signin_sessions: SigninSessionsTable;
  signin_consents: SigninConsentsTable;
  signin_client_settings: SigninClientSettingsTable;
  signin_login_failures: SigninLoginFailuresTable;
  signin_session_clients: SigninSessionClientsTable;
  logout_deliveries: LogoutDeliveriesTable;
}
