import type { Kysely } from 'kysely';
import type { Tenant } from '../../kernel/tenancy.js';
import type { Database } from '../schema.js';

export interface TenantRecord extends Tenant {
  createdAt: number;
}

type Row = Database['tenants'];
const toRecord = (r: Row): TenantRecord => ({ id: r.id, host: r.host, issuer: r.issuer, createdAt: r.created_at });

export class TenantRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(t: TenantRecord, trx: Kysely<Database> = this.db): Promise<void> {
    await trx.insertInto('tenants').values({ id: t.id, host: t.host, issuer: t.issuer, created_at: t.createdAt }).execute();
  }

  async findByHost(host: string): Promise<TenantRecord | undefined> {
    const row = await this.db.selectFrom('tenants').selectAll().where('host', '=', host).executeTakeFirst();
    return row && toRecord(row);
  }

  async findById(id: string): Promise<TenantRecord | undefined> {
    const row = await this.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(): Promise<TenantRecord[]> {
    const rows = await this.db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(toRecord);
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('tenants').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
