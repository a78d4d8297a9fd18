import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('directory_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('group_roles', 'text', (c) => c.notNull())
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
    .addColumn('token_hash', 'text')
    .addColumn('token_created_at', 'bigint')
    .addColumn('rl_window', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rl_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('directory_connections_org').on('directory_connections').columns(['tenant_id', 'organization_id', 'id']).execute();
  await db.schema.createIndex('directory_connections_token').on('directory_connections').columns(['token_hash']).unique().execute();

  await db.schema
    .createTable('directory_users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull().references('directory_connections.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('owns_user', 'integer', (c) => c.notNull())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('user_name_lc', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('display_name', 'text')
    .addColumn('given_name', 'text')
    .addColumn('family_name', 'text')
    .addColumn('email', 'text')
    .addColumn('email_type', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('directory_users_user_name').on('directory_users').columns(['connection_id', 'user_name_lc']).unique().execute();
  await db.schema.createIndex('directory_users_user').on('directory_users').columns(['connection_id', 'user_id']).unique().execute();
  await db.schema.createIndex('directory_users_external').on('directory_users').columns(['connection_id', 'external_id']).execute();
  await db.schema.createIndex('directory_users_email').on('directory_users').columns(['connection_id', 'email']).execute();
  await db.schema.createIndex('directory_users_tenant_user').on('directory_users').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('directory_groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull().references('directory_connections.id').onDelete('cascade'))
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('display_name_lc', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('directory_groups_name').on('directory_groups').columns(['connection_id', 'display_name_lc']).unique().execute();
  await db.schema.createIndex('directory_groups_external').on('directory_groups').columns(['connection_id', 'external_id']).execute();

  await db.schema
    .createTable('directory_group_members')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('group_id', 'text', (c) => c.notNull().references('directory_groups.id').onDelete('cascade'))
    .addColumn('member_id', 'text', (c) => c.notNull().references('directory_users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('directory_group_members_pk', ['group_id', 'member_id'])
    .execute();
  await db.schema.createIndex('directory_group_members_member').on('directory_group_members').columns(['member_id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['directory_group_members', 'directory_groups', 'directory_users', 'directory_connections']) {
    await db.schema.dropTable(table).execute();
  }
}
