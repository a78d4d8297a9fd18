import type { Kysely } from 'kysely';

// Issue 29 point 5: invitations to an organization (src/management/invitations/). The invitee
// may have no account yet, so the link's secret lives here rather than in `email_tokens` (whose
// rows belong to a user): only its SHA-256, replaced by each resend. An invitation is pending
// until accepted (accepted_at, accepted_by) or revoked (revoked_at); past expires_at it is expired.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('organization_invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('accepted_by', 'text')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('organization_invitations_token').on('organization_invitations').columns(['tenant_id', 'token_hash']).unique().execute();
  await db.schema.createIndex('organization_invitations_org').on('organization_invitations').columns(['tenant_id', 'organization_id', 'id']).execute();
  await db.schema.createIndex('organization_invitations_email').on('organization_invitations').columns(['tenant_id', 'organization_id', 'email']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('organization_invitations').execute();
}
