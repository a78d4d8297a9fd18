import { type Kysely, sql } from 'kysely';

// Issue 19: enterprise SSO. Per-organization OIDC connections, the single-use login states that
// bind an upstream round trip to the browser that started it, the upstream identities linked to
// users (JIT provisioning), and organization domain verification + "SSO required".
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A domain routes sign-ins only once verified; changing it clears the verification.
  await db.schema.alterTable('organizations').addColumn('domain_verified_at', 'bigint').execute();
  await db.schema
    .alterTable('organizations')
    .addColumn('sso_required', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // A verified domain belongs to one organization of the tenant.
  await db.schema
    .createIndex('organizations_verified_domain')
    .on('organizations')
    .columns(['tenant_id', 'domain'])
    .unique()
    .where(sql.ref('domain_verified_at'), 'is not', null)
    .execute();
  await db.schema
    .createTable('sso_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('default_role', 'text', (c) => c.notNull())
    .addColumn('group_roles', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('secret_enc', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_connections_org').on('sso_connections').columns(['tenant_id', 'organization_id', 'id']).execute();

  await db.schema
    .createTable('sso_login_states')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('sso_connections.id').onDelete('cascade'))
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('secrets_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('sso_login_states_expiry').on('sso_login_states').columns(['expires_at']).execute();

  await db.schema
    .createTable('sso_identities')
    .addColumn('connection_id', 'text', (c) => c.notNull().references('sso_connections.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_login_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('sso_identities_pk', ['connection_id', 'subject'])
    .execute();
  await db.schema.createIndex('sso_identities_user').on('sso_identities').columns(['tenant_id', 'user_id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_identities').execute();
  await db.schema.dropTable('sso_login_states').execute();
  await db.schema.dropTable('sso_connections').execute();
  await db.schema.dropIndex('organizations_verified_domain').execute();
  await db.schema.alterTable('organizations').dropColumn('sso_required').execute();
  await db.schema.alterTable('organizations').dropColumn('domain_verified_at').execute();
}
