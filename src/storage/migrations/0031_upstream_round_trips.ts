import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';

// Issue 28 (point 2): one store for every upstream round trip (SSO over OIDC and the
// connected-accounts vault) replaces `sso_login_states` and `connect_flows`. A row is bound to the
// browser that started it (`browser_hash`: the SHA-256 of the SSO binding cookie, or of the
// vault's session id) and consumed once by compare-and-set. Live rows move over as they are: the
// sealed secrets keep the envelope context they were sealed under (`sso_state:<hash>`,
// `connect_flow:<tenant>:<hash>`), which the store's users still open them with.

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

type Columns = Array<[name: string, type: 'text' | 'bigint', notNull: boolean, references?: string]>;

/**
 * A table of round trips: the `state` hash as key, the tenant, `columns`, then the times (with an
 * index on the expiry, for the sweeper). The new store and, going back, the two old ones.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function roundTripTable(db: Kysely<any>, name: string, columns: Columns): Promise<void> {
  let table = db.schema
    .createTable(name)
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'));
  for (const [column, type, notNull, references] of columns) {
    table = table.addColumn(column, type, (c) => {
      const typed = notNull ? c.notNull() : c;
      return references ? typed.references(references).onDelete('cascade') : typed;
    });
  }
  await table
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex(`${name}_expiry`).on(name).columns(['expires_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await roundTripTable(db, 'upstream_round_trips', [
    ['purpose', 'text', true],
    ['upstream_id', 'text', true],
    ['browser_hash', 'text', true],
    ['secrets_enc', 'text', true],
    ['resume', 'text', false],
  ]);
  const now = Date.now();
  const sso = await db.selectFrom('sso_login_states').selectAll().where('consumed_at', 'is', null).where('expires_at', '>', now).execute();
  const flows = await db.selectFrom('connect_flows').selectAll().where('consumed_at', 'is', null).where('expires_at', '>', now).execute();
  const rows = [
    ...sso.map((s) => ({
      state_hash: s.state_hash,
      tenant_id: s.tenant_id,
      purpose: 'sso',
      upstream_id: s.connection_id,
      browser_hash: s.browser_hash,
      secrets_enc: s.secrets_enc,
      resume: null,
      created_at: s.created_at,
      expires_at: s.expires_at,
      consumed_at: null,
    })),
    ...flows.map((f) => ({
      state_hash: f.state_hash,
      tenant_id: f.tenant_id,
      purpose: 'connect',
      upstream_id: f.provider_id,
      browser_hash: sha256Hex(f.session_id),
      secrets_enc: f.verifier_enc,
      resume: JSON.stringify({ userId: f.user_id, organizationId: f.organization_id, scopes: f.scope ? String(f.scope).split(' ') : [] }),
      created_at: f.created_at,
      expires_at: f.expires_at,
      consumed_at: null,
    })),
  ];
  for (let i = 0; i < rows.length; i += 100)
    await db
      .insertInto('upstream_round_trips')
      .values(rows.slice(i, i + 100))
      .execute();
  await db.schema.dropTable('sso_login_states').execute();
  await db.schema.dropTable('connect_flows').execute();
}

// Round trips live minutes: going back recreates the two tables empty.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('upstream_round_trips').execute();
  await roundTripTable(db, 'connect_flows', [
    ['provider_id', 'text', true, 'connect_providers.id'],
    ['user_id', 'text', true],
    ['session_id', 'text', true],
    ['organization_id', 'text', true],
    ['verifier_enc', 'text', true],
    ['scope', 'text', true],
  ]);
  await roundTripTable(db, 'sso_login_states', [
    ['connection_id', 'text', true, 'sso_connections.id'],
    ['browser_hash', 'text', true],
    ['secrets_enc', 'text', true],
  ]);
}
