import type { Kysely } from 'kysely';

// Remembered consents also record the resources (RFC 8707) the user approved for the client.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('signin_consents')
    .addColumn('resources', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_consents').dropColumn('resources').execute();
}
