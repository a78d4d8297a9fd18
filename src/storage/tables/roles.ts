/** Organizations' roles (docs/authorization.md). */

/** A role definition: tenant-wide (`organization_id` null, `scope` '*') or an organization's own (`scope` = its id). */
export interface RolesTable {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  /** '*' for a tenant-wide role, else the organization id: unique (tenant_id, scope, key). */
  scope: string;
  key: string;
  name: string;
  description: string | null;
  /** JSON array of {resource_server_id, permission}. */
  permissions: string;
  created_at: number;
  updated_at: number;
}

/** The tenant's role settings (no row: `member` is the default role). */
export interface RoleSettingsTable {
  tenant_id: string;
  default_role: string;
  updated_at: number;
}

export interface RoleTables {
  roles: RolesTable;
  role_settings: RoleSettingsTable;
}
