import type { Kysely } from 'kysely';
import { codec, json } from '../codec.js';
import type { Database } from '../schema.js';

/** A permission a role grants: one a resource server declares. */
export interface RolePermission {
  resource_server_id: string;
  permission: string;
}

export interface RoleRecord {
  id: string;
  tenantId: string;
  /** null: tenant-wide. */
  organizationId: string | null;
  key: string;
  name: string;
  description: string | null;
  permissions: RolePermission[];
  createdAt: number;
  updatedAt: number;
}

const stored = codec<RoleRecord>()('roles', {
  id: true,
  tenantId: true,
  organizationId: true,
  key: true,
  name: true,
  description: true,
  permissions: json<RolePermission[]>(),
  createdAt: true,
  updatedAt: true,
});

type RoleRow = Database['roles'];

const scopeOf = (organizationId: string | null) => organizationId ?? '*';

/** Role definitions and the tenant's role settings: every query filters on tenant_id. */
export class RoleRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The default roles every tenant starts with: `admin` and `member`, granting no permission. */
  async seedDefaults(tenantId: string, now: number, id: (now: number) => string): Promise<void> {
    for (const [key, name] of [
      ['admin', 'Admin'],
      ['member', 'Member'],
    ] as const) {
      await this.insert({ id: id(now), tenantId, organizationId: null, key, name, description: null, permissions: [], createdAt: now, updatedAt: now });
    }
  }

  async insert(r: RoleRecord): Promise<void> {
    await this.db
      .insertInto('roles')
      .values({ ...stored.toRow(r), scope: scopeOf(r.organizationId) })
      .execute();
  }

  /** The role `key` defined at exactly this level (tenant-wide when `organizationId` is null). */
  async find(tenantId: string, organizationId: string | null, key: string): Promise<RoleRecord | undefined> {
    const row = await this.db
      .selectFrom('roles')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, scope: scopeOf(organizationId), key }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** Roles usable in an organization: its own and the tenant-wide ones (an own role overrides a tenant-wide one of the same key). */
  async usableIn(tenantId: string, organizationId: string): Promise<Map<string, RoleRecord>> {
    const rows = await this.db.selectFrom('roles').selectAll().where('tenant_id', '=', tenantId).where('scope', 'in', ['*', organizationId]).execute();
    const out = new Map<string, RoleRecord>();
    for (const r of rows.map(stored.toRecord).sort((a, b) => (a.organizationId === null ? 0 : 1) - (b.organizationId === null ? 0 : 1))) out.set(r.key, r);
    return out;
  }

  /**
   * The roles usable in the organization, in one statement that also finds the organization
   * (the client_credentials hot path): undefined when the organization does not exist.
   */
  async usableInExisting(tenantId: string, organizationId: string): Promise<Map<string, RoleRecord> | undefined> {
    const rows = await this.db
      .selectFrom('organizations')
      .leftJoin('roles', (join) => join.onRef('roles.tenant_id', '=', 'organizations.tenant_id').on('roles.scope', 'in', ['*', organizationId]))
      .selectAll('roles')
      .where((eb) => eb.and({ 'organizations.tenant_id': tenantId, 'organizations.id': organizationId }))
      .execute();
    if (rows.length === 0) return undefined;
    const out = new Map<string, RoleRecord>();
    const found = rows.flatMap((r) => (r.id === null ? [] : [stored.toRecord(r as RoleRow)]));
    for (const r of found.sort((a, b) => (a.organizationId === null ? 0 : 1) - (b.organizationId === null ? 0 : 1))) out.set(r.key, r);
    return out;
  }

  /** Defined at this level, ordered by key, after `after`. */
  async list(tenantId: string, organizationId: string | null, after: string | undefined, limit: number): Promise<RoleRecord[]> {
    let q = this.db
      .selectFrom('roles')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, scope: scopeOf(organizationId) }));
    if (after) q = q.where('key', '>', after);
    return (await q.orderBy('key').limit(limit).execute()).map(stored.toRecord);
  }

  async update(r: RoleRecord): Promise<boolean> {
    const res = await this.db
      .updateTable('roles')
      .set({ name: r.name, description: r.description, permissions: JSON.stringify(r.permissions), updated_at: r.updatedAt })
      .where((eb) => eb.and({ id: r.id, tenant_id: r.tenantId }))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const res = await this.db
      .deleteFrom('roles')
      .where((eb) => eb.and({ id, tenant_id: tenantId }))
      .executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }

  async defaultRole(tenantId: string): Promise<string> {
    const row = await this.db.selectFrom('role_settings').select('default_role').where('tenant_id', '=', tenantId).executeTakeFirst();
    return row?.default_role ?? 'member';
  }

  async setDefaultRole(tenantId: string, key: string, now: number): Promise<void> {
    await this.db
      .insertInto('role_settings')
      .values({ tenant_id: tenantId, default_role: key, updated_at: now })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ default_role: key, updated_at: now }))
      .execute();
  }
}
