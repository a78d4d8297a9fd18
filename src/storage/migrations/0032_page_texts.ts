import type { Kysely } from 'kysely';

// Issue 28: the hosted pages are localizable. Per tenant: the default locale and the messages it
// replaces (`/v1/branding/texts`); no row: English and the catalogue's texts.
// The permissions `branding:read` / `branding:write` are new: every live platform key that held
// the whole catalogue before them gets them (docs/permissions.md, "Upgrades").
// The catalogue is frozen here: a later release that adds permissions ships its own migration.
export const CATALOGUE_BEFORE_BRANDING = [
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
];
const ADDED = ['branding:read', 'branding:write'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('page_texts')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('default_locale', 'text', (c) => c.notNull())
    .addColumn('overrides', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  const keys = (await db.selectFrom('api_keys').select(['id', 'scopes', 'organization_id']).where('revoked_at', 'is', null).execute()) as {
    id: string;
    scopes: string;
    organization_id: string | null;
  }[];
  for (const key of keys) {
    const scopes = JSON.parse(key.scopes) as string[];
    if (key.organization_id !== null || !CATALOGUE_BEFORE_BRANDING.every((p) => scopes.includes(p))) continue;
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
  await db.schema.dropTable('page_texts').execute();
}
