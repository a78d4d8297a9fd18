import { type Kysely, sql } from 'kysely';

// Issue 12: webhook endpoints can be edited (updated_at), and OAuth clients list the browser
// origins allowed to call /token, /revoke and /userinfo (CORS, docs/oauth.md).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update webhook_endpoints set updated_at = created_at`.execute(db);
  await db.schema
    .alterTable('oauth_clients')
    .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_clients').dropColumn('allowed_origins').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('updated_at').execute();
}
