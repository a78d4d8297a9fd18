/** Tables of verifiable credentials (docs/credentials.md). */
export interface CredentialTypesTable {
  tenant_id: string;
  /** The credential_configuration_id. */
  id: string;
  vct: string;
  display_name: string;
  /** JSON: claim name → { type, mandatory, display_name }. */
  claims: string;
  lifetime_seconds: number;
  created_at: number;
}

export interface CredentialOffersTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  configuration_id: string;
  user_id: string | null;
  /** JSON claims given at offer time (custom types); null for OrganizationMembership. */
  claims: string | null;
  /** SHA-256 hex of the pre-authorized code. */
  code_hash: string;
  /** The code under envelope encryption, for the offer served by reference. */
  code_enc: string;
  /** SHA-256 hex of the random reference in the offer's by-reference URI. */
  ref_hash: string;
  /** SHA-256 hex of the tx_code, or null when none is required. */
  tx_code_hash: string | null;
  tx_code_length: number | null;
  tx_code_input_mode: string | null;
  failed_attempts: number;
  /** pending | redeemed | issued | dead */
  state: string;
  expires_at: number;
  created_at: number;
  redeemed_at: number | null;
}

export interface CredentialNoncesTable {
  /** SHA-256 hex of the c_nonce. */
  nonce_hash: string;
  tenant_id: string;
  expires_at: number;
  used_at: number | null;
}

export interface CredentialStatusListsTable {
  id: string;
  tenant_id: string;
  size: number;
  allocated: number;
  /** Bumped whenever a bit changes; the signed token is reused only while it matches. */
  version: number;
  signed_jwt: string | null;
  signed_version: number | null;
  /** When the cached token is re-signed anyway (its exp minus a margin). */
  signed_until: number | null;
  created_at: number;
}

export interface CredentialsTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  offer_id: string;
  configuration_id: string;
  vct: string;
  format: string;
  /** The holder's DID. */
  subject: string;
  user_id: string | null;
  /** valid | revoked */
  status: string;
  status_list_id: string;
  status_index: number;
  /** The status list URI signed into the credential. */
  status_uri: string;
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface CredentialTables {
  credential_types: CredentialTypesTable;
  credential_offers: CredentialOffersTable;
  credential_nonces: CredentialNoncesTable;
  credential_status_lists: CredentialStatusListsTable;
  credentials: CredentialsTable;
}
