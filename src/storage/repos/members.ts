import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import { compareAndSetRow } from '../atomic.js';
import { codec, json } from '../codec.js';
import type { Database } from '../schema.js';

export interface MemberRecord {
  tenantId: string;
  organizationId: string;
  userId: string;
  /** The first of `roles`. */
  role: string;
  /** Role keys, at least one (migration 0038). */
  roles: string[];
  createdAt: number;
  updatedAt: number;
}

export interface MemberWithUser extends MemberRecord {
  email: string;
  name: string | null;
}

const stored = codec<MemberRecord>()('members', {
  tenantId: true,
  organizationId: true,
  userId: true,
  role: true,
  roles: json<string[]>(),
  createdAt: true,
  updatedAt: true,
});

/** A membership to insert: `roles` defaults to `[role]`. */
export type NewMember = Omit<MemberRecord, 'roles'> & { roles?: string[] };

export class MemberRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(m: NewMember): Promise<void> {
    await this.db
      .insertInto('members')
      .values(stored.toRow({ ...m, roles: m.roles ?? [m.role] }))
      .execute();
  }

  async find(tenantId: string, organizationId: string, userId: string): Promise<MemberRecord | undefined> {
    return this.#find(tenantId, organizationId, userId, false);
  }

  /**
   * The membership, read `FOR SHARE` on PostgreSQL: a concurrent removal waits for this
   * transaction, so what it attaches to the membership (an issued credential) is seen by the
   * removal and revoked with it.
   */
  findShared(tenantId: string, organizationId: string, userId: string, dialect: Dialect): Promise<MemberRecord | undefined> {
    return this.#find(tenantId, organizationId, userId, dialect === 'postgres');
  }

  async #find(tenantId: string, organizationId: string, userId: string, share: boolean): Promise<MemberRecord | undefined> {
    const q = this.db
      .selectFrom('members')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, user_id: userId }));
    const row = await (share ? q.forShare() : q).executeTakeFirst();
    return row && stored.toRecord(row);
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
    const found = await q.orderBy('members.user_id').limit(limit).execute();
    return found.map((r) => ({ ...stored.toRecord(r), email: r.email, name: r.name }));
  }

  /** Memberships of a user across organizations (for deleting a user). */
  async listByUser(tenantId: string, userId: string): Promise<MemberRecord[]> {
    return (
      await this.db
        .selectFrom('members')
        .selectAll()
        .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
        .execute()
    ).map(stored.toRecord);
  }

  /**
   * The user's first `limit` memberships with the organization's name (by name, then id), and how
   * many there are in all: the console's administrator look-up. Served by `members_user`
   * (tenant_id, user_id).
   */
  async organizationsOf(
    tenantId: string,
    userId: string,
    limit: number,
  ): Promise<{ total: number; first: Array<{ organizationId: string; name: string; role: string }> }> {
    const rows = await this.db
      .selectFrom('members')
      .innerJoin('organizations', (j) => j.onRef('organizations.id', '=', 'members.organization_id').onRef('organizations.tenant_id', '=', 'members.tenant_id'))
      .select(['members.organization_id', 'organizations.name', 'members.role'])
      .where('members.tenant_id', '=', tenantId)
      .where('members.user_id', '=', userId)
      .orderBy('organizations.name')
      .orderBy('members.organization_id')
      .limit(limit)
      .execute();
    const first = rows.map((r) => ({ organizationId: r.organization_id, name: r.name, role: r.role }));
    if (first.length < limit) return { total: first.length, first };
    const n = await this.db
      .selectFrom('members')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .executeTakeFirstOrThrow();
    return { total: Number(n.n), first };
  }

  async listByOrganization(tenantId: string, organizationId: string): Promise<MemberRecord[]> {
    const found = await this.db
      .selectFrom('members')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }))
      .execute();
    return found.map(stored.toRecord);
  }

  /** Compare-and-set on the role: returns the updated row only if the role was `expectedRole`. The member then has that one role. */
  async setRole(tenantId: string, organizationId: string, userId: string, expectedRole: string, role: string, now: number) {
    const row = await compareAndSetRow(this.db, 'members', {
      key: { tenant_id: tenantId, organization_id: organizationId, user_id: userId },
      seen: { role: expectedRole },
      set: { role, roles: JSON.stringify([role]), updated_at: now },
    });
    return row && stored.toRecord(row);
  }

  /** Compare-and-set on the role list: returns the updated row only if the roles were `expected`. */
  async setRoles(tenantId: string, organizationId: string, userId: string, expected: string[], roles: string[], now: number) {
    const row = await compareAndSetRow(this.db, 'members', {
      key: { tenant_id: tenantId, organization_id: organizationId, user_id: userId },
      seen: { roles: JSON.stringify(expected) },
      set: { role: roles[0]!, roles: JSON.stringify(roles), updated_at: now },
    });
    return row && stored.toRecord(row);
  }

  /** Members of the tenant holding role `key` (in `organizationId` only, or in any organization when null). */
  async holding(tenantId: string, key: string, organizationId: string | null): Promise<MemberRecord[]> {
    let q = this.db.selectFrom('members').selectAll().where('tenant_id', '=', tenantId);
    if (organizationId !== null) q = q.where('organization_id', '=', organizationId);
    const rows = await q.where('roles', 'like', `%${JSON.stringify(key)}%`).execute();
    return rows.map(stored.toRecord).filter((m) => m.roles.includes(key));
  }

  async delete(tenantId: string, organizationId: string, userId: string): Promise<MemberRecord | undefined> {
    const row = await this.db
      .deleteFrom('members')
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, user_id: userId }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }
}
