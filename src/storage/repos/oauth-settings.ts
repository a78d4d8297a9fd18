import type { Kysely } from 'kysely';
import { codec } from '../codec.js';
import type { Database } from '../schema.js';

export interface TenantLifetimes {
  accessTokenTtlSeconds: number | null;
  refreshTokenTtlSeconds: number | null;
}

const stored = codec<TenantLifetimes>()('oauth_tenant_settings', { accessTokenTtlSeconds: true, refreshTokenTtlSeconds: true });

/** Per-tenant overrides of token lifetimes (null: the configured default). */
export class OAuthSettingsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(tenantId: string): Promise<TenantLifetimes> {
    const row = await this.db.selectFrom('oauth_tenant_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return row ? stored.toRecord(row) : { accessTokenTtlSeconds: null, refreshTokenTtlSeconds: null };
  }

  async put(tenantId: string, l: TenantLifetimes, now: number): Promise<void> {
    const values = { ...stored.toRow(l), updated_at: now };
    await this.db
      .insertInto('oauth_tenant_settings')
      .values({ tenant_id: tenantId, ...values })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
      .execute();
  }
}
