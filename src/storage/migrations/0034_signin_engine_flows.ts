import type { Kysely } from 'kysely';

// Issue 28: the sign-in engine's flows (src/signin/). A hosted page names a `flw_…` flow; its row
// says which entry point started it and where it returns (today: an /authorize flow), and moves
// from step to step by compare-and-set on `version`. The flow id is stored only as SHA-256 hex.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signin_engine_flows')
    .addColumn('flow_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('entry', 'text', (c) => c.notNull())
    .addColumn('authorize_flow_hash', 'text')
    .addColumn('step', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  await db.schema.createIndex('signin_engine_flows_expiry').on('signin_engine_flows').columns(['expires_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('signin_engine_flows').execute();
}
