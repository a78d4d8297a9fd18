import type { Kysely } from 'kysely';

// Issue 15: the connected-accounts vault (upstream providers, connect flows, accounts).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connect_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('preset', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text')
    .addColumn('authorization_endpoint', 'text', (c) => c.notNull())
    .addColumn('token_endpoint', 'text', (c) => c.notNull())
    .addColumn('revocation_endpoint', 'text')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret_enc', 'text')
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('pkce', 'integer', (c) => c.notNull())
    .addColumn('authorize_params', 'text', (c) => c.notNull())
    .addColumn('iss_parameter_supported', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('connect_providers_tenant').on('connect_providers').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('connect_flows')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('provider_id', 'text', (c) => c.notNull().references('connect_providers.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('verifier_enc', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('connect_flows_expiry').on('connect_flows').columns(['expires_at']).execute();

  await db.schema
    .createTable('connected_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider_id', 'text', (c) => c.notNull().references('connect_providers.id'))
    .addColumn('subject', 'text')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('access_token_enc', 'text', (c) => c.notNull())
    .addColumn('refresh_token_enc', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('refresh_owner', 'text')
    .addColumn('refresh_until', 'bigint')
    .addColumn('last_refreshed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('connected_accounts_org').on('connected_accounts').columns(['tenant_id', 'organization_id', 'id']).execute();
  await db.schema.createIndex('connected_accounts_user').on('connected_accounts').columns(['tenant_id', 'user_id']).execute();
  await db.schema.createIndex('connected_accounts_provider').on('connected_accounts').columns(['provider_id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['connected_accounts', 'connect_flows', 'connect_providers']) await db.schema.dropTable(t).execute();
}
