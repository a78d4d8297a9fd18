/**
 * Table types. Conventions (both dialects): times are integer epoch milliseconds, JSON is text,
 * booleans are 0/1 integers, secrets are stored only as SHA-256 hex or as envelope ciphertext.
 */
export interface TenantsTable {
  id: string;
  host: string;
  issuer: string;
  created_at: number;
}

export interface SigningKeysTable {
  kid: string;
  tenant_id: string;
  /** 'EdDSA' (access tokens) or 'RS256' (ID tokens). */
  alg: string;
  /** 'active' or 'retired'. */
  status: string;
  public_jwk: string;
  private_jwk_enc: string;
  created_at: number;
  retired_at: number | null;
  /** Retired keys leave the JWKS at this time. */
  expires_at: number | null;
  /** The latest expiry of a credential this key signed: it stays in jwt-vc-issuer until then. */
  published_until: number | null;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  name: string;
  /** JSON array of permission names. */
  scopes: string;
  key_hash: string;
  key_prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface FoundationTables {
  tenants: TenantsTable;
  signing_keys: SigningKeysTable;
  api_keys: ApiKeysTable;
  keyhall_meta: MetaTable;
}
