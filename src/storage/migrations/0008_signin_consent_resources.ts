import type { Kysely } from 'kysely';

// Remembered consents also record the resources (RFC 8707) the user approved for the client;
// refresh-token families are found by user (revoked with the user's sessions, consent or account).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('signin_consents')
    .addColumn('resources', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.createIndex('oauth_refresh_families_sub').on('oauth_refresh_families').columns(['tenant_id', 'sub']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('oauth_refresh_families_sub').execute();
  await db.schema.alterTable('signin_consents').dropColumn('resources').execute();
}
