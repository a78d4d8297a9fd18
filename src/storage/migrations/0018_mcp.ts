import type { Kysely } from 'kysely';

// Issue 17: /mcp. The tenant's client-onboarding policy for MCP clients: dynamic client
// registration (RFC 7591: open, initial_access_token, off) and Client ID Metadata Documents.
// A tenant without a row has the defaults (initial_access_token, documents on).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mcp_settings')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('client_registration', 'text', (c) => c.notNull())
    .addColumn('client_id_metadata_documents', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mcp_settings').execute();
}
