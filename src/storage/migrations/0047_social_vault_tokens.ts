import type { Kysely } from 'kysely';

// Issue 30 points 4 and 5, and the device grant's per-client limit (SECURITY-CHECKLIST §21).
// - `social_connections.vault_provider_id`: the vault provider a sign-in's upstream tokens are
//   kept under, as the user's connected account (docs/social.md, "Tokens for the vault"); the
//   provider's removal unsets it.
// - `connect_providers.userinfo_endpoint` / `subject_field`: where a generic OAuth 2.0 provider
//   names the person (a field path of its userinfo document), so two upstream accounts of one
//   user stay two connected accounts (docs/connected-accounts.md).
// - `oauth_device_codes_client`: counting a client's undecided user codes (docs/device-grant.md).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('social_connections')
    .addColumn('vault_provider_id', 'text', (c) => c.references('connect_providers.id').onDelete('set null'))
    .execute();
  await db.schema.alterTable('connect_providers').addColumn('userinfo_endpoint', 'text').execute();
  await db.schema.alterTable('connect_providers').addColumn('subject_field', 'text').execute();
  await db.schema.createIndex('oauth_device_codes_client').on('oauth_device_codes').columns(['tenant_id', 'client_id', 'created_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('oauth_device_codes_client').execute();
  await db.schema.alterTable('connect_providers').dropColumn('subject_field').execute();
  await db.schema.alterTable('connect_providers').dropColumn('userinfo_endpoint').execute();
  await db.schema.alterTable('social_connections').dropColumn('vault_provider_id').execute();
}
