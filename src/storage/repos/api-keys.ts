import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  organizationId: string | null;
  name: string;
  scopes: string[];
  keyHash: string;
  keyPrefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

type Row = Database['api_keys'];
const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  organizationId: r.organization_id,
  name: r.name,
  scopes: JSON.parse(r.scopes) as string[],
  keyHash: r.key_hash,
  keyPrefix: r.key_prefix,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export class ApiKeyRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(k: ApiKeyRecord, trx: Kysely<Database> = this.db): Promise<void> {
    await trx
      .insertInto('api_keys')
      .values({
        id: k.id,
        tenant_id: k.tenantId,
        organization_id: k.organizationId,
        name: k.name,
        scopes: JSON.stringify(k.scopes),
        key_hash: k.keyHash,
        key_prefix: k.keyPrefix,
        created_at: k.createdAt,
        last_used_at: k.lastUsedAt,
        revoked_at: k.revokedAt,
      })
      .execute();
  }

  /** Looks a key up by the hash of the presented secret, within one tenant. */
  async findByHash(tenantId: string, keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_hash', '=', keyHash)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Keys of one organization, or platform-bound keys when `organizationId` is null. */
  async list(tenantId: string, organizationId: string | null, after: string | undefined, limit: number): Promise<ApiKeyRecord[]> {
    let q = this.db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('revoked_at', 'is', null);
    q = organizationId === null ? q.where('organization_id', 'is', null) : q.where('organization_id', '=', organizationId);
    if (after) q = q.where('id', '>', after);
    const rows = await q.orderBy('id').limit(limit).execute();
    return rows.map(toRecord);
  }

  /** Revokes a live key; returns it, or undefined if there was no such live key. */
  async revoke(tenantId: string, organizationId: string | null, id: string, now: number): Promise<ApiKeyRecord | undefined> {
    let q = this.db.updateTable('api_keys').set({ revoked_at: now }).where('tenant_id', '=', tenantId).where('id', '=', id).where('revoked_at', 'is', null);
    q = organizationId === null ? q.where('organization_id', 'is', null) : q.where('organization_id', '=', organizationId);
    const row = await q.returningAll().executeTakeFirst();
    return row && toRecord(row);
  }

  async revokeAllOfOrganization(tenantId: string, organizationId: string, now: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /**
   * Records use at coarse resolution: writes only when the stored value is older than
   * `resolutionMs` (a conditional update, so concurrent instances write at most once).
   */
  async touch(id: string, now: number, resolutionMs: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - resolutionMs)]))
      .execute();
  }
}
