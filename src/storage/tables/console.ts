/** The administrators' console (docs/console.md). */

/** A user holding the tenant-level `tenant_admin` role. */
export interface TenantAdminsTable {
  tenant_id: string;
  user_id: string;
  created_at: number;
}

/** A one-time setup link that creates a tenant's first administrator. */
export interface ConsoleSetupTokensTable {
  /** SHA-256 hex of the token in the link (the token itself is never stored). */
  token_hash: string;
  tenant_id: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface ConsoleTables {
  tenant_admins: TenantAdminsTable;
  console_setup_tokens: ConsoleSetupTokensTable;
}
