import type { Kysely } from 'kysely';

// Sign-in: PAR request_uris, flows, codes, sessions, consents, client settings, login failures.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const tenant = (c: import('kysely').ColumnDefinitionBuilder) => c.notNull().references('tenants.id').onDelete('cascade');
  await db.schema
    .createTable('signin_par_requests')
    .addColumn('uri_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('signin_par_requests_expiry').on('signin_par_requests').columns(['expires_at']).execute();

  await db.schema
    .createTable('signin_flows')
    .addColumn('flow_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('par_hash', 'text')
    .addColumn('login_after', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  await db.schema.createIndex('signin_flows_expiry').on('signin_flows').columns(['expires_at']).execute();

  await db.schema
    .createTable('signin_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('grant', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .addColumn('issued_jti', 'text')
    .addColumn('issued_exp', 'bigint')
    .addColumn('issued_family', 'text')
    .execute();
  await db.schema.createIndex('signin_codes_expiry').on('signin_codes').columns(['expires_at']).execute();

  await db.schema
    .createTable('signin_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('user_agent', 'text')
    .addColumn('ip', 'text')
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('idle_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('signin_sessions_user').on('signin_sessions').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('signin_consents')
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('signin_consents_pk', ['tenant_id', 'user_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('signin_client_settings')
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('third_party', 'integer', (c) => c.notNull())
    .addColumn('require_par', 'integer', (c) => c.notNull())
    .addColumn('id_token_alg', 'text', (c) => c.notNull())
    .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('signin_client_settings_pk', ['tenant_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('signin_login_failures')
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('window_ends_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('signin_login_failures_pk', ['tenant_id', 'key_hash'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'signin_login_failures',
    'signin_client_settings',
    'signin_consents',
    'signin_sessions',
    'signin_codes',
    'signin_flows',
    'signin_par_requests',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
