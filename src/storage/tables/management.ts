/** Tables of the management API: organizations, users, members and the audit trail. */
export interface OrganizationsTable {
  id: string;
  tenant_id: string;
  name: string;
  slug: string | null;
  domain: string | null;
  did: string | null;
  status: string;
  brand_logo_url: string | null;
  brand_primary_color: string | null;
  brand_display_name: string | null;
  /** JSON array of AAGUIDs, or null (unrestricted). */
  webauthn_aaguid_allowlist: string | null;
  /** When `domain` was verified (DNS TXT or a platform key); null: it routes no sign-in. */
  domain_verified_at: number | null;
  /** 1: people of the verified domain must sign in through an SSO connection. */
  sso_required: number;
  created_at: number;
  updated_at: number;
}

export interface UsersTable {
  id: string;
  tenant_id: string;
  email: string;
  name: string | null;
  email_verified: number;
  /** argon2id PHC string; never leaves the server. */
  password_hash: string | null;
  /** JSON {type, id, every_permission}: who last set the password (migration 0026); null if unknown or none. */
  password_set_by: string | null;
  created_at: number;
  updated_at: number;
  /** JSON objects an administrator sets (migration 0045); null: none. */
  metadata: string | null;
  private_metadata: string | null;
}

export interface MembersTable {
  tenant_id: string;
  organization_id: string;
  user_id: string;
  /** The first of `roles` (what readers of a single role see). */
  role: string;
  /** JSON array of role keys (migration 0038). */
  roles: string;
  created_at: number;
  updated_at: number;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  /** Per-tenant commit order; the feed's cursor resolves to it. */
  seq: number;
  type: string;
  organization_id: string | null;
  actor_type: string;
  actor_id: string | null;
  /** JSON object. */
  data: string;
  created_at: number;
}

export interface ManagementTables {
  organizations: OrganizationsTable;
  users: UsersTable;
  members: MembersTable;
  events: EventsTable;
}
