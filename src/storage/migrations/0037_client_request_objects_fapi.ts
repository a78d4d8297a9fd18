import type { Kysely } from 'kysely';

// Per-client sign-in settings of issue 32 (docs/oauth.md "Signed request objects" and
// "FAPI 2.0"): `require_signed_request_object` (RFC 9101 §10.5; 0 = not required) and
// `profile` (NULL: none; 'fapi2': the FAPI 2.0 Security Profile).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('signin_client_settings')
    .addColumn('require_signed_request_object', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('signin_client_settings').addColumn('profile', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_client_settings').dropColumn('profile').execute();
  await db.schema.alterTable('signin_client_settings').dropColumn('require_signed_request_object').execute();
}
