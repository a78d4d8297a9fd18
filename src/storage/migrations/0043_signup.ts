import type { Kysely } from 'kysely';

// Issue 29 points 4 and 6 (docs/signup.md): the tenant's sign-in policy (self sign-up off, open or
// limited to domains; passwordless methods by email; a verified email required before sign-in
// completes) and the emailed challenges of a sign-up waiting for its address to be confirmed and
// of a passwordless sign-in. A challenge holds a 6-digit code and (optionally) a link token, both
// stored as SHA-256 only; a pending sign-up also holds the chosen password's argon2id hash until
// the account is created. `browser_hash` binds the challenge to the browser that asked for it (a
// link opened elsewhere asks for the code); `sealed_context` is the sign-in's flow handle and
// return_to, encrypted with a key only that browser's cookie can derive.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signin_policies')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('signup', 'text', (c) => c.notNull())
    .addColumn('signup_domains', 'text', (c) => c.notNull())
    .addColumn('passwordless', 'text', (c) => c.notNull())
    .addColumn('require_verified_email', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('email_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('password_hash', 'text')
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('link_hash', 'text')
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('sealed_context', 'text')
    .addColumn('failed_attempts', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('code_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('link_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('email_challenges_link').on('email_challenges').columns(['tenant_id', 'link_hash']).unique().execute();
  await db.schema.createIndex('email_challenges_email').on('email_challenges').columns(['tenant_id', 'purpose', 'email']).execute();
  await db.schema.createIndex('email_challenges_expiry').on('email_challenges').columns(['link_expires_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['email_challenges', 'signin_policies']) await db.schema.dropTable(t).execute();
}
