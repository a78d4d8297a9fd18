import type { Kysely } from 'kysely';

// Client `jwks_uri` (fetched through the egress policy) and per-tenant token lifetimes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_clients').addColumn('jwks_uri', 'text').execute();
  await db.schema
    .createTable('oauth_tenant_settings')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('access_token_ttl_seconds', 'integer')
    .addColumn('refresh_token_ttl_seconds', 'integer')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oauth_tenant_settings').execute();
  await db.schema.alterTable('oauth_clients').dropColumn('jwks_uri').execute();
}
