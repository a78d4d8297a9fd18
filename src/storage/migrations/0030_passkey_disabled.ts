import type { Kysely } from 'kysely';

// When a passkey was disabled because its signature counter went backwards (a possible clone):
// from then on it signs nothing in, until it is removed. NULL: usable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mfa_passkeys').addColumn('disabled_at', 'bigint').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mfa_passkeys').dropColumn('disabled_at').execute();
}
