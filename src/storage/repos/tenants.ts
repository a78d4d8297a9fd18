import type { Kysely } from 'kysely';
import type { Tenant } from '../../kernel/tenancy.js';
import { codec } from '../codec.js';
import type { Database } from '../schema.js';

export interface TenantRecord extends Tenant {
  createdAt: number;
}

const stored = codec<TenantRecord>()('tenants', { id: true, host: true, issuer: true, createdAt: true });

export class TenantRepo {
  constructor(private readonly db: Kysely<Database>) {}

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

  async count(): Promise<number> {
    const row = await this.db.selectFrom('tenants').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
