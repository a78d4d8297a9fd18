import type { Kysely } from 'kysely';
import { CATALOGUE_BEFORE_BRANDING } from './0032_page_texts.js';

// Issue 33: user import with existing password hashes, and tenant export (docs/import-export.md).
// `transfer_jobs`: one row per import (`imp_…`) or export (`exp_…`): its status, counts, the
// report of rejected rows (never a hash) and, for an export, its JSONL under envelope encryption.
// `import_external_ids`: the source system's id of each imported user or organization, so a
// re-run updates what it created instead of duplicating it.
// The permissions `imports:write` and `exports:read` are new: every live platform key that held
// the whole catalogue before them gets them (docs/permissions.md, "Upgrades").
// The catalogue is frozen here: a later release that adds permissions ships its own migration.
export const CATALOGUE_BEFORE_IMPORTS = [
  ...CATALOGUE_BEFORE_BRANDING,
  'branding:read',
  'branding:write',
  // 0038_organization_roles and 0040_social, which run first.
  'roles:read',
  'roles:write',
  'social:read',
  'social:write',
];
const ADDED = ['imports:write', 'exports:read'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('transfer_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('dry_run', 'integer', (c) => c.notNull())
    .addColumn('include_secrets', 'integer', (c) => c.notNull())
    .addColumn('counts', 'text', (c) => c.notNull())
    .addColumn('report', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('output_enc', 'text')
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('transfer_jobs_tenant').on('transfer_jobs').columns(['tenant_id', 'kind', 'id']).execute();
  await db.schema
    .createTable('import_external_ids')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('import_external_ids_pk', ['tenant_id', 'source', 'kind', 'external_id'])
    .execute();
  const keys = (await db.selectFrom('api_keys').select(['id', 'scopes', 'organization_id']).where('revoked_at', 'is', null).execute()) as {
    id: string;
    scopes: string;
    organization_id: string | null;
  }[];
  for (const key of keys) {
    const scopes = JSON.parse(key.scopes) as string[];
    if (key.organization_id !== null || !CATALOGUE_BEFORE_IMPORTS.every((p) => scopes.includes(p))) continue;
    const missing = ADDED.filter((p) => !scopes.includes(p));
    if (missing.length > 0)
      await db
        .updateTable('api_keys')
        .set({ scopes: JSON.stringify([...scopes, ...missing]) })
        .where('id', '=', key.id)
        .execute();
  }
}

// The grant is not taken back: a key may have been given these permissions since.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('import_external_ids').execute();
  await db.schema.dropTable('transfer_jobs').execute();
}
