import type { Kysely } from 'kysely';
import { codec, json } from '../codec.js';
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

const stored = codec<ApiKeyRecord>()('api_keys', {
  id: true,
  tenantId: true,
  organizationId: true,
  name: true,
  scopes: json<string[]>(),
  keyHash: true,
  keyPrefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
});

export class ApiKeyRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(k: ApiKeyRecord, trx: Kysely<Database> = this.db): Promise<void> {
    await trx.insertInto('api_keys').values(stored.toRow(k)).execute();
  }

  /** Looks a key up by the hash of the presented secret, within one tenant. */
  async findByHash(tenantId: string, keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where((eb) => eb.and({ key_hash: keyHash, tenant_id: tenantId }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async find(tenantId: string, id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** How many live (unrevoked) platform-bound keys the tenant has (the console overview). */
  async countLivePlatform(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('organization_id', 'is', null), eb('revoked_at', 'is', null)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Keys of one organization, or platform-bound keys when `organizationId` is null. */
  async list(tenantId: string, organizationId: string | null, after: string | undefined, limit: number): Promise<ApiKeyRecord[]> {
    let q = this.db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('revoked_at', 'is', null);
    q = organizationId === null ? q.where('organization_id', 'is', null) : q.where('organization_id', '=', organizationId);
    if (after) q = q.where('id', '>', after);
    return (await q.orderBy('id').limit(limit).execute()).map(stored.toRecord);
  }

  /** Revokes a live key; returns it, or undefined if there was no such live key. */
  async revoke(tenantId: string, organizationId: string | null, id: string, now: number): Promise<ApiKeyRecord | undefined> {
    let q = this.db.updateTable('api_keys').set({ revoked_at: now }).where('tenant_id', '=', tenantId).where('id', '=', id).where('revoked_at', 'is', null);
    q = organizationId === null ? q.where('organization_id', 'is', null) : q.where('organization_id', '=', organizationId);
    const row = await q.returningAll().executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** The ids of a tenant's live platform-bound keys holding `scope`. */
  async livePlatformKeysHolding(tenantId: string, scope: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('organization_id', 'is', null)
      .where('revoked_at', 'is', null)
      .execute();
    return rows
      .map(stored.toRecord)
      .filter((k) => k.scopes.includes(scope))
      .map((k) => k.id);
  }

  async revokeAllOfOrganization(tenantId: string, organizationId: string, now: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('organization_id', '=', organizationId), eb('revoked_at', 'is', null)]))
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
