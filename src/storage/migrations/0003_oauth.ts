import type { Kysely } from 'kysely';

// OAuth clients, refresh-token families, the jti replay cache and the access-token deny-list.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_name', 'text')
    .addColumn('secret_hash', 'text')
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull())
    .addColumn('grant_types', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('allowed_resources', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('jwks', 'text')
    .addColumn('dpop_bound_access_tokens', 'integer', (c) => c.notNull())
    .addColumn('token_exchange', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('secret_rotated_at', 'bigint')
    .execute();
  await db.schema.createIndex('oauth_clients_tenant').on('oauth_clients').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('oauth_refresh_families')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('sub', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('resources', 'text', (c) => c.notNull())
    .addColumn('jkt', 'text')
    .addColumn('extra', 'text')
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('oauth_refresh_families_client').on('oauth_refresh_families').columns(['tenant_id', 'client_id']).execute();

  await db.schema
    .createTable('oauth_refresh_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('family_id', 'text', (c) => c.notNull().references('oauth_refresh_families.id').onDelete('cascade'))
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_refresh_tokens_family').on('oauth_refresh_tokens').columns(['family_id']).execute();

  await db.schema
    .createTable('oauth_replay')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_replay_pk', ['tenant_id', 'key_hash'])
    .execute();
  await db.schema.createIndex('oauth_replay_expiry').on('oauth_replay').columns(['expires_at']).execute();

  await db.schema
    .createTable('oauth_revoked_tokens')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_revoked_tokens_pk', ['tenant_id', 'jti'])
    .execute();
  await db.schema.createIndex('oauth_revoked_tokens_expiry').on('oauth_revoked_tokens').columns(['expires_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['oauth_revoked_tokens', 'oauth_replay', 'oauth_refresh_tokens', 'oauth_refresh_families', 'oauth_clients']) {
    await db.schema.dropTable(table).execute();
  }
}
