import { type Kysely, sql } from 'kysely';
import { newId } from '../../kernel/ids.js';
import { CATALOGUE_BEFORE_BRANDING } from './0032_page_texts.js';

// Issue 31: organizations' roles and permissions (docs/authorization.md).
// - `roles`: role definitions, tenant-wide (`organization_id` null, `scope` '*') or an
//   organization's own (`scope` = its id); `permissions` is JSON [{resource_server_id, permission}].
//   `admin` and `member`, the two fixed roles until now, become ordinary tenant-wide roles of every
//   existing tenant (no permission, as before: nothing a member could do changes).
// - `members.roles`: JSON array of role keys; each existing member gets `[role]`. `members.role`
//   stays the first of them, so everything reading it keeps working.
// - `role_settings`: the tenant's default role for new members.
// - `oauth_resource_servers.permission_descriptions`: JSON {permission: description} of the
//   resource server's declared permissions (its scopes).
// - `oauth_refresh_families.organization_id`: the organization a refresh token signs in to, so
//   removal from the organization revokes its refresh tokens.
// - `signin_sessions.organization_id`: the organization the browser session last signed in to
//   (prompt=none may not switch organization).
// The permissions `roles:read` / `roles:write` are new: every live platform key that held the
// whole catalogue before them gets them (docs/permissions.md, "Upgrades").
export const DEFAULT_ROLES = ['admin', 'member'] as const;
export const CATALOGUE_BEFORE_ROLES = [...CATALOGUE_BEFORE_BRANDING, 'branding:read', 'branding:write'];
const ADDED = ['roles:read', 'roles:write'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('roles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('roles_key', ['tenant_id', 'scope', 'key'])
    .execute();

  await db.schema
    .createTable('role_settings')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('default_role', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .alterTable('members')
    .addColumn('roles', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  // A role key is a [a-z0-9_-] token, so the JSON array is the key in quotes and brackets.
  await db
    .updateTable('members')
    .set({ roles: sql`'["' || role || '"]'` })
    .execute();

  await db.schema.alterTable('oauth_resource_servers').addColumn('permission_descriptions', 'text').execute();
  await db.schema.alterTable('oauth_refresh_families').addColumn('organization_id', 'text').execute();
  await db.schema.createIndex('oauth_refresh_families_org').on('oauth_refresh_families').columns(['tenant_id', 'organization_id', 'sub']).execute();
  await db.schema.alterTable('signin_sessions').addColumn('organization_id', 'text').execute();

  const keys = (await db.selectFrom('api_keys').select(['id', 'scopes', 'organization_id']).where('revoked_at', 'is', null).execute()) as {
    id: string;
    scopes: string;
    organization_id: string | null;
  }[];
  for (const key of keys) {
    const scopes = JSON.parse(key.scopes) as string[];
    if (key.organization_id !== null || !CATALOGUE_BEFORE_ROLES.every((p) => scopes.includes(p))) continue;
    const missing = ADDED.filter((p) => !scopes.includes(p));
    if (missing.length > 0)
      await db
        .updateTable('api_keys')
        .set({ scopes: JSON.stringify([...scopes, ...missing]) })
        .where('id', '=', key.id)
        .execute();
  }

  const tenants = (await db.selectFrom('tenants').select(['id']).execute()) as { id: string }[];
  const now = Date.now();
  for (const t of tenants) {
    for (const key of DEFAULT_ROLES) {
      await db
        .insertInto('roles')
        .values({
          id: newId('rol', now),
          tenant_id: t.id,
          organization_id: null,
          scope: '*',
          key,
          name: key === 'admin' ? 'Admin' : 'Member',
          description: null,
          permissions: '[]',
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_sessions').dropColumn('organization_id').execute();
  await db.schema.dropIndex('oauth_refresh_families_org').execute();
  await db.schema.alterTable('oauth_refresh_families').dropColumn('organization_id').execute();
  await db.schema.alterTable('oauth_resource_servers').dropColumn('permission_descriptions').execute();
  await db.schema.alterTable('members').dropColumn('roles').execute();
  await db.schema.dropTable('role_settings').execute();
  await db.schema.dropTable('roles').execute();
}
