import type { Kysely } from 'kysely';

// Who last set a user's password: the actor (an API key, the console's administrator, Keyhall
// itself) and whether it held every permission. The console shows it before granting the
// administrator role: a narrower users:write key that set the password knows it. NULL: no
// password, or one set before this column existed.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('password_set_by', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('password_set_by').execute();
}
