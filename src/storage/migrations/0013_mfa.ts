import type { Kysely } from 'kysely';

/**
 * Passkeys, TOTP, recovery codes, WebAuthn challenges, MFA policies, and the authentication
 * methods of a session (docs/passkeys.md).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const tenant = (c: any) => c.notNull().references('tenants.id').onDelete('cascade'); // eslint-disable-line @typescript-eslint/no-explicit-any
  const user = (c: any) => c.notNull().references('users.id').onDelete('cascade'); // eslint-disable-line @typescript-eslint/no-explicit-any

  // JSON array of RFC 8176 amr values; null on sessions from before this migration (password).
  await db.schema.alterTable('signin_sessions').addColumn('amr', 'text').execute();
  // 1 while the password was checked but the second factor is still owed (/mfa/challenge).
  await db.schema
    .alterTable('signin_sessions')
    .addColumn('mfa_pending', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('mfa_passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('user_id', 'text', user)
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull())
    .addColumn('transports', 'text', (c) => c.notNull())
    .addColumn('aaguid', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('backed_up', 'integer', (c) => c.notNull())
    .addColumn('attestation_format', 'text', (c) => c.notNull())
    .addColumn('attestation_verified', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('mfa_passkeys_credential').unique().on('mfa_passkeys').columns(['tenant_id', 'credential_id']).execute();
  await db.schema.createIndex('mfa_passkeys_user').on('mfa_passkeys').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('mfa_totp')
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('user_id', 'text', user)
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('confirmed_at', 'bigint')
    .addColumn('last_time_step', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('mfa_totp_pk', ['tenant_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('mfa_recovery_codes')
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('user_id', 'text', user)
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addPrimaryKeyConstraint('mfa_recovery_codes_pk', ['tenant_id', 'user_id', 'code_hash'])
    .execute();

  await db.schema
    .createTable('mfa_challenges')
    .addColumn('challenge', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('binding', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('attestation', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('mfa_challenges_expires').on('mfa_challenges').column('expires_at').execute();

  // off | optional | required, per tenant (organization_id '') and per organization.
  await db.schema
    .createTable('mfa_policies')
    .addColumn('tenant_id', 'text', tenant)
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('mfa_policies_pk', ['tenant_id', 'organization_id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['mfa_policies', 'mfa_challenges', 'mfa_recovery_codes', 'mfa_totp', 'mfa_passkeys']) await db.schema.dropTable(t).execute();
  await db.schema.alterTable('signin_sessions').dropColumn('mfa_pending').execute();
  await db.schema.alterTable('signin_sessions').dropColumn('amr').execute();
}
