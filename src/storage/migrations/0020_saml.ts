import type { Kysely } from 'kysely';

// Issue 19 (SAML 2.0): the AuthnRequests an SSO connection sent (an IdP's answer must name one in
// InResponseTo, and each is consumed once), and the ids of the assertions accepted, kept until
// they expire so a replayed assertion is refused on every instance. SAML connections themselves
// live in sso_connections (protocol `saml`).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_saml_requests')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('sso_connections.id').onDelete('cascade'))
    .addColumn('continuation_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('sso_saml_requests_expiry').on('sso_saml_requests').columns(['expires_at']).execute();

  await db.schema
    .createTable('sso_saml_assertions')
    .addColumn('connection_id', 'text', (c) => c.notNull().references('sso_connections.id').onDelete('cascade'))
    .addColumn('assertion_hash', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('sso_saml_assertions_pk', ['connection_id', 'assertion_hash'])
    .execute();
  await db.schema.createIndex('sso_saml_assertions_expiry').on('sso_saml_assertions').columns(['expires_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_saml_assertions').execute();
  await db.schema.dropTable('sso_saml_requests').execute();
}
