import type { Kysely } from 'kysely';

// Issue 26 (finding 5): a SAML sign-in is bound to the browser that sent the AuthnRequest. The
// request records the hash of that browser's `keyhall_sso` cookie; the ACS (a cross-site post
// that carries no SameSite=Lax cookie) keeps the validated outcome under a one-time handle, and
// the session opens only on the same-site page the ACS redirects to, if the cookie there matches.
// sso_saml_requests only holds requests for 10 minutes: it is made again with the new column
// (requests in flight during the upgrade have no binding and could not be completed anyway).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function requests(db: Kysely<any>, bound: boolean): Promise<void> {
  await db.schema.dropTable('sso_saml_requests').execute();
  await db.schema
    .createTable('sso_saml_requests')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('sso_connections.id').onDelete('cascade'))
    .$call((t) => (bound ? t.addColumn('browser_hash', 'text', (c) => c.notNull()) : t))
    .addColumn('continuation_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('sso_saml_requests_expiry').on('sso_saml_requests').columns(['expires_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await requests(db, true);
  await db.schema
    .createTable('sso_saml_outcomes')
    .addColumn('handle_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('sso_connections.id').onDelete('cascade'))
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('outcome_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('sso_saml_outcomes_expiry').on('sso_saml_outcomes').columns(['expires_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_saml_outcomes').execute();
  await requests(db, false);
}
