import type { Kysely } from 'kysely';

// Issue 16: verifiable credentials (OID4VCI pre-authorized code flow, dc+sd-jwt) — credential
// types, offers, proof nonces, issued-credential records and Token Status Lists.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('credential_types')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('vct', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('claims', 'text', (c) => c.notNull())
    .addColumn('lifetime_seconds', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('credential_types_pk', ['tenant_id', 'id'])
    .execute();

  await db.schema
    .createTable('credential_offers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('configuration_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('claims', 'text')
    .addColumn('code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('code_enc', 'text', (c) => c.notNull())
    .addColumn('ref_hash', 'text', (c) => c.notNull().unique())
    .addColumn('tx_code_hash', 'text')
    .addColumn('tx_code_length', 'integer')
    .addColumn('tx_code_input_mode', 'text')
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('redeemed_at', 'bigint')
    .execute();
  await db.schema.createIndex('credential_offers_member').on('credential_offers').columns(['tenant_id', 'organization_id', 'user_id']).execute();

  await db.schema
    .createTable('credential_nonces')
    .addColumn('nonce_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('credential_nonces_expiry').on('credential_nonces').column('expires_at').execute();

  await db.schema
    .createTable('credential_status_lists')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('allocated', 'integer', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('signed_jwt', 'text')
    .addColumn('signed_version', 'integer')
    .addColumn('signed_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('credential_status_lists_tenant').on('credential_status_lists').columns(['tenant_id', 'allocated']).execute();

  await db.schema
    .createTable('credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('offer_id', 'text', (c) => c.notNull())
    .addColumn('configuration_id', 'text', (c) => c.notNull())
    .addColumn('vct', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_list_id', 'text', (c) => c.notNull().references('credential_status_lists.id'))
    .addColumn('status_index', 'integer', (c) => c.notNull())
    .addColumn('status_uri', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addUniqueConstraint('credentials_status_slot', ['status_list_id', 'status_index'])
    .execute();
  await db.schema.createIndex('credentials_org').on('credentials').columns(['tenant_id', 'organization_id', 'id']).execute();
  await db.schema.createIndex('credentials_member').on('credentials').columns(['tenant_id', 'organization_id', 'user_id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('credentials').execute();
  await db.schema.dropTable('credential_status_lists').execute();
  await db.schema.dropTable('credential_nonces').execute();
  await db.schema.dropTable('credential_offers').execute();
  await db.schema.dropTable('credential_types').execute();
}
