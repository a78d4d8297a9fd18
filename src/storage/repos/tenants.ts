import { type Kysely, sql } from 'kysely';
import type { Tenant } from '../../kernel/tenancy.js';
import { codec } from '../codec.js';
import type { Dialect } from '../db.js';
import type { Database } from '../schema.js';

export interface TenantRecord extends Tenant {
  createdAt: number;
}

const stored = codec<TenantRecord>()('tenants', { id: true, host: true, issuer: true, createdAt: true });

export class TenantRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Inside a transaction: serialises tenant-wide invariants (the last admin API key) by locking
   * the tenant row until commit. PostgreSQL: SELECT … FOR UPDATE. SQLite has one writer and
   * serialises write transactions already; there it only checks the tenant exists.
   */
  async lock(id: string): Promise<boolean> {
    const q = this.db.selectFrom('tenants').select('id').where('id', '=', id);
    const row = await (this.dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
    return row !== undefined;
  }

  async insert(t: TenantRecord, trx: Kysely<Database> = this.db): Promise<void> {
    await trx.insertInto('tenants').values(stored.toRow(t)).execute();
  }

  async findByHost(host: string): Promise<TenantRecord | undefined> {
    const row = await this.db.selectFrom('tenants').selectAll().where('host', '=', host).executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async findById(id: string): Promise<TenantRecord | undefined> {
    const row = await this.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async list(): Promise<TenantRecord[]> {
    const rows = await this.db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(stored.toRecord);
  }

  /** Changes a tenant's host and issuer; returns false when there is no such tenant. */
  async update(id: string, change: { host: string; issuer: string }): Promise<boolean> {
    const r = await this.db.updateTable('tenants').set(change).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Deletes a tenant and every row of its data: each table with a `tenant_id` column is emptied
   * of the tenant's rows (found by introspection, so tables added later are covered), then the
   * tenant row goes (foreign keys cascade). Run it in a transaction.
   */
  async deleteWithData(id: string): Promise<boolean> {
    const tables = await this.db.introspection.getTables();
    for (const t of tables) {
      if (t.name === 'tenants' || !t.columns.some((c) => c.name === 'tenant_id')) continue;
      await sql`delete from ${sql.table(t.name)} where tenant_id = ${id}`.execute(this.db);
    }
    const r = await this.db.deleteFrom('tenants').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('tenants')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
