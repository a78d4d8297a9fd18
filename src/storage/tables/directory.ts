/** Tables of directory sync (SCIM 2.0): connections, SCIM users and groups, group members. */
export interface DirectoryConnectionsTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  name: string;
  /** JSON object: group displayName (lower case) → organization role. */
  group_roles: string;
  rate_limit_per_minute: number;
  /** SHA-256 hex of the current SCIM token; null before the first one is minted. */
  token_hash: string | null;
  token_created_at: number | null;
  /** Fixed-window rate limit: the window's start (epoch ms) and its request count. */
  rl_window: number;
  rl_count: number;
  created_at: number;
  updated_at: number;
}

export interface DirectoryUsersTable {
  /** The SCIM `id` (dsu_…). */
  id: string;
  tenant_id: string;
  connection_id: string;
  organization_id: string;
  /** The tenant user this SCIM user is linked to. */
  user_id: string;
  /** 1 when this SCIM user created the tenant user (then profile changes flow to it). */
  owns_user: number;
  user_name: string;
  /** userName lower-cased: unique per connection (caseExact false). */
  user_name_lc: string;
  external_id: string | null;
  display_name: string | null;
  given_name: string | null;
  family_name: string | null;
  /** The primary (else first) email, lower-cased, and its type. */
  email: string | null;
  email_type: string | null;
  active: number;
  /** JSON: the stored SCIM resource (without id, meta, password). */
  resource: string;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface DirectoryGroupsTable {
  id: string;
  tenant_id: string;
  connection_id: string;
  display_name: string;
  display_name_lc: string;
  external_id: string | null;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface DirectoryGroupMembersTable {
  tenant_id: string;
  group_id: string;
  member_id: string;
}

export interface DirectoryTables {
  directory_connections: DirectoryConnectionsTable;
  directory_users: DirectoryUsersTable;
  directory_groups: DirectoryGroupsTable;
  directory_group_members: DirectoryGroupMembersTable;
}
