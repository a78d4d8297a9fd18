import type { Kysely } from 'kysely';

// Issue 31, points 4 and 5 (docs/authorization.md):
// - `oauth_clients.organization_id` / `organization_roles`: a client_credentials client bound to an
//   organization and the role keys it holds there (JSON array); its tokens carry org_id, org_roles
//   and permissions. No foreign key: a token is issued with the organization's claims only while
//   the organization exists (read in the statement that reads its roles).
// - `users.metadata` / `users.private_metadata`: JSON objects (NULL: none) an administrator sets.
// - `signin_client_settings.claims`: the client's declarative claims mapping (JSON array, NULL: none).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_clients').addColumn('organization_id', 'text').execute();
  await db.schema.alterTable('oauth_clients').addColumn('organization_roles', 'text').execute();
  await db.schema.createIndex('oauth_clients_org').on('oauth_clients').columns(['tenant_id', 'organization_id']).execute();
  await db.schema.alterTable('users').addColumn('metadata', 'text').execute();
  await db.schema.alterTable('users').addColumn('private_metadata', 'text').execute();
  await db.schema.alterTable('signin_client_settings').addColumn('claims', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_client_settings').dropColumn('claims').execute();
  await db.schema.alterTable('users').dropColumn('private_metadata').execute();
  await db.schema.alterTable('users').dropColumn('metadata').execute();
  await db.schema.dropIndex('oauth_clients_org').execute();
  await db.schema.alterTable('oauth_clients').dropColumn('organization_roles').execute();
  await db.schema.alterTable('oauth_clients').dropColumn('organization_id').execute();
}
