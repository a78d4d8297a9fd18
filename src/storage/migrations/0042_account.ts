import type { Kysely } from 'kysely';

// The /account page (docs/account.md): a session records how its first factor was given
// (`method`: password, passkey, sso, social, setup_link…) for "Where you are signed in" and
// GET /v1/users/{id}/sessions. Sessions from before it have none: their method is read from
// their amr and idp (src/screens/account.ts, signInMethodOf).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_sessions').addColumn('method', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_sessions').dropColumn('method').execute();
}
