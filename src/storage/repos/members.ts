import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface MemberRecord {
  tenantId: string;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: number;
  updatedAt: number;
}

export interface MemberWithUser extends MemberRecord {
  email: string;
  name: string | null;
}

type Row = Database['members'];
const toRecord = (r: Row): MemberRecord => ({
  tenantId: r.tenant_id,
  organizationId: r.organization_id,
  userId: r.user_id,
  role: r.role,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class MemberRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(m: MemberRecord): Promise<void> {
    await this.db
      .insertInto('members')
      .values({
        tenant_id: m.tenantId,
        organization_id: m.organizationId,
        user_id: m.userId,
        role: m.role,
        created_at: m.createdAt,
        updated_at: m.updatedAt,
      })
      .execute();
  }

  async find(tenantId: string, organizationId: string, userId: string): Promise<MemberRecord | undefined> {
    const row = await this.db
      .selectFrom('members')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(tenantId: string, organizationId: string, after: string | undefined, limit: number): Promise<MemberWithUser[]> {
    let q = this.db
      .selectFrom('members')
      .innerJoin('users', 'users.id', 'members.user_id')
      .selectAll('members')
      .select(['users.email', 'users.name'])
      .where('members.tenant_id', '=', tenantId)
      .where('members.organization_id', '=', organizationId);
    if (after) q = q.where('members.user_id', '>', after);
    const rows = await q.orderBy('members.user_id').limit(limit).execute();
    return rows.map((r) => ({ ...toRecord(r), email: r.email, name: r.name }));
  }

  /** Memberships of a user across organizations (for deleting a user). */
  async listByUser(tenantId: string, userId: string): Promise<MemberRecord[]> {
    const rows = await this.db.selectFrom('members').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).execute();
    return rows.map(toRecord);
  }

  async listByOrganization(tenantId: string, organizationId: string): Promise<MemberRecord[]> {
    const rows = await this.db
      .selectFrom('members')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .execute();
    return rows.map(toRecord);
  }

  /** Compare-and-set on the role: returns the updated row only if the role was `expectedRole`. */
  async setRole(tenantId: string, organizationId: string, userId: string, expectedRole: string, role: string, now: number) {
    const row = await this.db
      .updateTable('members')
      .set({ role, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .where('role', '=', expectedRole)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async delete(tenantId: string, organizationId: string, userId: string): Promise<MemberRecord | undefined> {
    const row = await this.db
      .deleteFrom('members')
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }
}
