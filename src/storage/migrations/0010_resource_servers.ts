import type { Kysely } from 'kysely';

// Issue 11: resource servers (per-audience signing algorithm, lifetime, scopes, DPoP), strict
// secret-method matching per client, and the tenant's ID-token claim policy.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_resource_servers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('identifier', 'text', (c) => c.notNull())
    .addColumn('signing_alg', 'text', (c) => c.notNull())
    .addColumn('access_token_ttl_seconds', 'integer')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('dpop_required', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('oauth_resource_servers_identifier', ['tenant_id', 'identifier'])
    .execute();
  await db.schema
    .alterTable('oauth_clients')
    .addColumn('auth_method_strict', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('oauth_tenant_settings').addColumn('id_token_claims', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_tenant_settings').dropColumn('id_token_claims').execute();
  await db.schema.alterTable('oauth_clients').dropColumn('auth_method_strict').execute();
  await db.schema.dropTable('oauth_resource_servers').execute();
}
