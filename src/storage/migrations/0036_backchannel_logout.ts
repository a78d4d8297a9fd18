import type { Kysely } from 'kysely';

// Issue 32 (points 2 and 5): OpenID Connect Back-Channel Logout 1.0. A client registers a
// `backchannel_logout_uri` (a sign-in setting); every client a session's code was redeemed by is
// remembered with the session (`signin_session_clients`); a refresh-token family remembers the
// session it was issued in; a session's end writes one `logout_deliveries` row per such client
// (the outbox, claimed with a lease and retried on KEYHALL_LOGOUT_RETRY_SCHEDULE).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_client_settings').addColumn('backchannel_logout_uri', 'text').execute();
  await db.schema
    .alterTable('signin_client_settings')
    .addColumn('backchannel_logout_session_required', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('oauth_refresh_families').addColumn('session_id', 'text').execute();
  await db.schema.createIndex('oauth_refresh_families_session').on('oauth_refresh_families').columns(['tenant_id', 'session_id']).execute();

  await db.schema
    .createTable('signin_session_clients')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.notNull().references('signin_sessions.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('signin_session_clients_pk', ['session_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('logout_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    // No foreign keys: the session and the user may be gone (a deleted user) while the token is owed.
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('uri', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('attempt_limit', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('logout_deliveries_due').on('logout_deliveries').columns(['status', 'next_attempt_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('logout_deliveries').execute();
  await db.schema.dropTable('signin_session_clients').execute();
  await db.schema.dropIndex('oauth_refresh_families_session').execute();
  await db.schema.alterTable('oauth_refresh_families').dropColumn('session_id').execute();
  await db.schema.alterTable('signin_client_settings').dropColumn('backchannel_logout_session_required').execute();
  await db.schema.alterTable('signin_client_settings').dropColumn('backchannel_logout_uri').execute();
}
