/**
 * The device authorization grant (RFC 8628): one row per /device_authorization request, keyed by
 * SHA-256 hex of its device_code and found at /activate by SHA-256 hex of its user code.
 * Conventions as in foundation.ts.
 */
export interface OAuthDeviceCodesTable {
  device_code_hash: string;
  tenant_id: string;
  client_id: string;
  user_code_hash: string;
  /** Space-separated scopes. */
  scopes: string;
  /** JSON array of resource indicators. */
  resources: string;
  created_at: number;
  expires_at: number;
  interval_seconds: number;
  last_polled_at: number | null;
  /** `pending`, `approved` or `denied`. */
  status: string;
  user_id: string | null;
  session_id: string | null;
  auth_time: number | null;
  /** JSON array of RFC 8176 methods, or null. */
  amr: string | null;
  decided_at: number | null;
  consumed_at: number | null;
}

export interface DeviceTables {
  oauth_device_codes: OAuthDeviceCodesTable;
}
