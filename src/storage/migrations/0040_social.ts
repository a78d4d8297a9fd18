import type { Kysely } from 'kysely';

// Issue 30: social sign-in (docs/social.md). The tenant's social connections (a preset such as
// google or github, or a generic OIDC or OAuth 2.0 provider; the client secret sealed), the
// upstream identities linked to users, the tenant's account-linking setting, and the connection
// a session's first factor came from (`idp` of its ID tokens).
// The permissions `social:read` / `social:write` are new: every live platform key that held the
// whole catalogue before them gets them (docs/permissions.md, "Upgrades"). The catalogue is
// frozen here: a later release that adds permissions ships its own migration.
export const CATALOGUE_BEFORE_SOCIAL = [
  'organizations:read',
  'organizations:write',
  'domains:verify',
  'users:read',
  'users:write',
  'members:read',
  'members:write',
  'api_keys:read',
  'api_keys:write',
  'clients:read',
  'clients:write',
  'clients:register',
  'resource_servers:read',
  'resource_servers:write',
  'webhooks:read',
  'webhooks:write',
  'directory:read',
  'directory:write',
  'connect_providers:read',
  'connect_providers:write',
  'sso:read',
  'sso:write',
  'connected_accounts:read',
  'connected_accounts:write',
  'connected_accounts:token',
  'webauthn_policy:read',
  'webauthn_policy:write',
  'mfa_policy:read',
  'mfa_policy:write',
  'credentials:issue',
  'credentials:read',
  'credentials:revoke',
  'events:read',
  'branding:read',
  'branding:write',
  // 0038_organization_roles, which runs first.
  'roles:read',
  'roles:write',
];
const ADDED = ['social:read', 'social:write'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('social_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('preset', 'text')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('secret_enc', 'text')
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('sign_in', 'integer', (c) => c.notNull())
    .addColumn('sign_up', 'integer', (c) => c.notNull())
    .addColumn('display_order', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('social_connections_tenant').on('social_connections').columns(['tenant_id', 'display_order']).execute();
  await db.schema
    .createTable('social_identities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('social_connections.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text')
    .addColumn('email_verified', 'integer', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('picture', 'text')
    .addColumn('linked_at', 'bigint', (c) => c.notNull())
    .addColumn('last_login_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('social_identities_subject', ['connection_id', 'subject'])
    .execute();
  await db.schema.createIndex('social_identities_user').on('social_identities').columns(['tenant_id', 'user_id']).execute();
  await db.schema
    .createTable('social_settings')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('account_linking', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('signin_sessions').addColumn('idp', 'text').execute();

  const keys = (await db.selectFrom('api_keys').select(['id', 'scopes', 'organization_id']).where('revoked_at', 'is', null).execute()) as {
    id: string;
    scopes: string;
    organization_id: string | null;
  }[];
  for (const key of keys) {
    const scopes = JSON.parse(key.scopes) as string[];
    if (key.organization_id !== null || !CATALOGUE_BEFORE_SOCIAL.every((p) => scopes.includes(p))) continue;
    const missing = ADDED.filter((p) => !scopes.includes(p));
    if (missing.length > 0)
      await db
        .updateTable('api_keys')
        .set({ scopes: JSON.stringify([...scopes, ...missing]) })
        .where('id', '=', key.id)
        .execute();
  }
}

// The grant is not taken back: a key may have been given these permissions since.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_sessions').dropColumn('idp').execute();
  await db.schema.dropTable('social_settings').execute();
  await db.schema.dropTable('social_identities').execute();
  await db.schema.dropTable('social_connections').execute();
}
