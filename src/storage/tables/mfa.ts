/**
 * Multi-factor authentication: passkeys (WebAuthn credentials), TOTP secrets (envelope
 * ciphertext), recovery codes (SHA-256 only), consume-once WebAuthn challenges and MFA policies.
 */

export interface MfaPasskeysTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** base64url credential id (unique per tenant). */
  credential_id: string;
  /** base64url COSE public key. */
  public_key: string;
  counter: number;
  /** JSON array of transports. */
  transports: string;
  aaguid: string;
  name: string;
  backed_up: number;
  attestation_format: string;
  attestation_verified: number;
  created_at: number;
  last_used_at: number | null;
  /** Set when its signature counter went backwards (a possible clone): it signs nothing in. */
  disabled_at: number | null;
}

export interface MfaTotpTable {
  tenant_id: string;
  user_id: string;
  /** Envelope ciphertext of the base32 secret. */
  secret: string;
  /** Null while enrolment waits for its first code. */
  confirmed_at: number | null;
  /** The last RFC 6238 time step accepted (a code is accepted once). */
  last_time_step: number | null;
  created_at: number;
}

export interface MfaRecoveryCodesTable {
  tenant_id: string;
  user_id: string;
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

export interface MfaChallengesTable {
  /** base64url of 256 random bits, as sent to the browser. */
  challenge: string;
  tenant_id: string;
  purpose: string;
  /** SHA-256 of the browser binding (its CSRF cookie). */
  binding: string;
  user_id: string | null;
  /** The attestation conveyance the options asked for (`none` or `direct`). */
  attestation: string;
  expires_at: number;
  consumed_at: number | null;
}

export interface MfaPoliciesTable {
  tenant_id: string;
  /** '' for the tenant-wide policy. */
  organization_id: string;
  policy: string;
  updated_at: number;
}

export interface MfaTables {
  mfa_passkeys: MfaPasskeysTable;
  mfa_totp: MfaTotpTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_challenges: MfaChallengesTable;
  mfa_policies: MfaPoliciesTable;
}
