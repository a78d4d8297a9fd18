import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';

export interface DirectoryConnectionRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  name: string;
  /** group displayName (lower case) → organization role. */
  groupRoles: Record<string, string>;
  rateLimitPerMinute: number;
  hasToken: boolean;
  tokenCreatedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** What authenticating a SCIM token yields: the connection and its rate-limit window. */
export interface AuthenticatedConnection extends DirectoryConnectionRecord {
  windowCount: number;
  windowStart: number;
}

type Row = Database['directory_connections'];
const toRecord = (r: Row): DirectoryConnectionRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  organizationId: r.organization_id,
  name: r.name,
  groupRoles: JSON.parse(r.group_roles) as Record<string, string>,
  rateLimitPerMinute: Number(r.rate_limit_per_minute),
  hasToken: r.token_hash !== null,
  tokenCreatedAt: r.token_created_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class DirectoryConnectionRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(c: DirectoryConnectionRecord): Promise<void> {
    await this.db
      .insertInto('directory_connections')
      .values({
        id: c.id,
        tenant_id: c.tenantId,
        organization_id: c.organizationId,
        name: c.name,
        group_roles: JSON.stringify(c.groupRoles),
        rate_limit_per_minute: c.rateLimitPerMinute,
        token_hash: null,
        token_created_at: null,
        rl_window: 0,
        rl_count: 0,
        created_at: c.createdAt,
        updated_at: c.updatedAt,
      })
      .execute();
  }

  async find(tenantId: string, organizationId: string, id: string): Promise<DirectoryConnectionRecord | undefined> {
    const row = await this.db
      .selectFrom('directory_connections')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(tenantId: string, organizationId: string, after: string | undefined, limit: number): Promise<DirectoryConnectionRecord[]> {
    let q = this.db.selectFrom('directory_connections').selectAll().where('tenant_id', '=', tenantId).where('organization_id', '=', organizationId);
    if (after) q = q.where('id', '>', after);
    return (await q.orderBy('id').limit(limit).execute()).map(toRecord);
  }

  async update(
    tenantId: string,
    organizationId: string,
    id: string,
    patch: { name?: string; groupRoles?: Record<string, string>; rateLimitPerMinute?: number },
    now: number,
  ): Promise<DirectoryConnectionRecord | undefined> {
    const set: Partial<Row> = { updated_at: now };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.groupRoles !== undefined) set.group_roles = JSON.stringify(patch.groupRoles);
    if (patch.rateLimitPerMinute !== undefined) set.rate_limit_per_minute = patch.rateLimitPerMinute;
    const row = await this.db
      .updateTable('directory_connections')
      .set(set)
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Replaces the connection's token hash: the previous token stops working in the same statement. */
  async setToken(tenantId: string, organizationId: string, id: string, tokenHash: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('directory_connections')
      .set({ token_hash: tokenHash, token_created_at: now, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(tenantId: string, organizationId: string, id: string): Promise<DirectoryConnectionRecord | undefined> {
    const row = await this.db
      .deleteFrom('directory_connections')
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * Authenticates a token by its hash and counts the request in the connection's fixed
   * one-minute window, in one statement (atomic across instances). Undefined: no such token.
   */
  async authenticate(tenantId: string, tokenHash: string, windowStart: number): Promise<AuthenticatedConnection | undefined> {
    const row = await this.db
      .updateTable('directory_connections')
      .set({
        rl_count: sql<number>`case when rl_window = ${windowStart} then rl_count + 1 else 1 end`,
        rl_window: windowStart,
      })
      .where('tenant_id', '=', tenantId)
      .where('token_hash', '=', tokenHash)
      .returningAll()
      .executeTakeFirst();
    return row && { ...toRecord(row), windowCount: Number(row.rl_count), windowStart: Number(row.rl_window) };
  }
}
