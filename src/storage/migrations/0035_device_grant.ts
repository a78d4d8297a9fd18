import type { Kysely } from 'kysely';

// Issue 32: the device authorization grant (RFC 8628). A /device_authorization request is one
// row, keyed by SHA-256 hex of its device_code, found at /activate by SHA-256 hex of its user
// code; /token polls it until the person approves or denies. A sign-in flow of entry `device`
// names the row it decides (signin_engine_flows.device_code_hash).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_device_codes')
    .addColumn('device_code_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_code_hash', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('resources', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('session_id', 'text')
    .addColumn('auth_time', 'bigint')
    .addColumn('amr', 'text')
    .addColumn('decided_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('oauth_device_codes_user_code').on('oauth_device_codes').columns(['tenant_id', 'user_code_hash']).execute();
  await db.schema.createIndex('oauth_device_codes_expiry').on('oauth_device_codes').columns(['expires_at']).execute();
  await db.schema.alterTable('signin_engine_flows').addColumn('device_code_hash', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_engine_flows').dropColumn('device_code_hash').execute();
  await db.schema.dropTable('oauth_device_codes').execute();
}
