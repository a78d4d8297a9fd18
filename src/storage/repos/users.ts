import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface UserRecord {
  id: string;
  tenantId: string;
  email: string;
  name: string | null;
  emailVerified: boolean;
  passwordHash: string | null;
  createdAt: number;
  updatedAt: number;
}

type Row = Database['users'];
const toRecord = (r: Row): UserRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  email: r.email,
  name: r.name,
  emailVerified: Number(r.email_verified) === 1,
  passwordHash: r.password_hash,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export type UserPatch = Partial<Pick<UserRecord, 'email' | 'name' | 'passwordHash'>>;

export class UserRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(u: UserRecord): Promise<void> {
    await this.db
      .insertInto('users')
      .values({
        id: u.id,
        tenant_id: u.tenantId,
        email: u.email,
        name: u.name,
        email_verified: u.emailVerified ? 1 : 0,
        password_hash: u.passwordHash,
        created_at: u.createdAt,
        updated_at: u.updatedAt,
      })
      .execute();
  }

  async find(tenantId: string, id: string): Promise<UserRecord | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async findByEmail(tenantId: string, email: string): Promise<UserRecord | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).where('email', '=', email).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(tenantId: string, after: string | undefined, limit: number, email?: string): Promise<UserRecord[]> {
    let q = this.db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId);
    if (after) q = q.where('id', '>', after);
    if (email !== undefined) q = q.where('email', '=', email);
    const rows = await q.orderBy('id').limit(limit).execute();
    return rows.map(toRecord);
  }

  async update(tenantId: string, id: string, patch: UserPatch, now: number): Promise<UserRecord | undefined> {
    const set: Partial<Row> = { updated_at: now };
    if (patch.email !== undefined) set.email = patch.email;
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.passwordHash !== undefined) set.password_hash = patch.passwordHash;
    const row = await this.db.updateTable('users').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
    return row && toRecord(row);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('users').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
