import { type Kysely, sql } from 'kysely';
import { codec, computed, json, num } from '../codec.js';
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

const stored = codec<DirectoryConnectionRecord>()('directory_connections', {
  id: true,
  tenantId: true,
  organizationId: true,
  name: true,
  groupRoles: json<Record<string, string>>(),
  rateLimitPerMinute: num,
  hasToken: computed((r) => r.token_hash !== null),
  tokenCreatedAt: true,
  createdAt: true,
  updatedAt: true,
});

/** The fields `update` may change. */
const PATCHABLE = ['name', 'groupRoles', 'rateLimitPerMinute'] as const;

export class DirectoryConnectionRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(c: DirectoryConnectionRecord): Promise<void> {
    // A new connection has no token yet and an empty rate-limit window.
    const row = { ...stored.toRow({ ...c, tokenCreatedAt: null }), token_hash: null, rl_window: 0, rl_count: 0 };
    await this.db.insertInto('directory_connections').values(row).execute();
  }

  async find(tenantId: string, organizationId: string, id: string): Promise<DirectoryConnectionRecord | undefined> {
    const row = await this.db
      .selectFrom('directory_connections')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async list(tenantId: string, organizationId: string, after: string | undefined, limit: number): Promise<DirectoryConnectionRecord[]> {
    let q = this.db.selectFrom('directory_connections').selectAll().where('tenant_id', '=', tenantId).where('organization_id', '=', organizationId);
    if (after) q = q.where('id', '>', after);
    return (await q.orderBy('id').limit(limit).execute()).map(stored.toRecord);
  }

  async update(
    tenantId: string,
    organizationId: string,
    id: string,
    patch: Partial<Pick<DirectoryConnectionRecord, (typeof PATCHABLE)[number]>>,
    now: number,
  ): Promise<DirectoryConnectionRecord | undefined> {
    const row = await this.db
      .updateTable('directory_connections')
      .set({ updated_at: now, ...stored.toPatch(patch, PATCHABLE) })
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** Replaces the connection's token hash: the previous token stops working in the same statement. */
  async setToken(tenantId: string, organizationId: string, id: string, tokenHash: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('directory_connections')
      .set({ token_hash: tokenHash, token_created_at: now, updated_at: now })
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(tenantId: string, organizationId: string, id: string): Promise<DirectoryConnectionRecord | undefined> {
    const row = await this.db
      .deleteFrom('directory_connections')
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
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
    return row && { ...stored.toRecord(row), windowCount: Number(row.rl_count), windowStart: Number(row.rl_window) };
  }
}
